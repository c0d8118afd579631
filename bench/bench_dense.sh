#!/usr/bin/env bash
# The engine's QR and normal equations against LAPACK (bench/bench_dense.c):
# reference LAPACK and BLAS (static), and OpenBLAS where installed.
# Needs Debian's liblapacke-dev (and libopenblas-dev for the second run).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
lib=/usr/lib/x86_64-linux-gnu
[ -f /usr/include/lapacke.h ] || { echo "bench_dense: needs liblapacke-dev (apt-get install liblapacke-dev)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
sources=("$root/bench/bench_dense.c" "$root/engine/src/math/dense.c" "$root/engine/src/core/pool.c")
gcc -O2 -I"$root/engine/src" "${sources[@]}" -o "$work/reference" \
  "$lib/liblapacke.a" "$lib/liblapack_pic.a" "$lib/blas/libblas.a" -lgfortran -lm -lpthread
echo "== reference LAPACK and BLAS, static"
"$work/reference"
if [ -f "$lib/openblas-pthread/libopenblas.a" ]; then
  gcc -O2 -I"$root/engine/src" "${sources[@]}" -o "$work/openblas" \
    "$lib/liblapacke.a" "$lib/openblas-pthread/libopenblas.a" -lgfortran -lm -lpthread
  echo "== OpenBLAS 1 thread"
  OPENBLAS_NUM_THREADS=1 "$work/openblas"
fi
