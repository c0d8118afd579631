#!/usr/bin/env bash
# k-means' product-form screen against BLAS's dgemm on one tile
# (bench/bench_kmeans_screen.c): reference BLAS (static), and OpenBLAS where
# installed (Debian's libopenblas-dev), on one thread.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
lib=/usr/lib/x86_64-linux-gnu
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
sources=("$root/bench/bench_kmeans_screen.c" "$root/engine/src/methods/kmeans_screen.c")
gcc -O3 -I"$root/engine/src" "${sources[@]}" -o "$work/reference" "$lib/blas/libblas.a" -lgfortran -lm
echo "== reference BLAS, static"
"$work/reference"
if [ -f "$lib/openblas-pthread/libopenblas.a" ]; then
  gcc -O3 -I"$root/engine/src" "${sources[@]}" -o "$work/openblas" "$lib/openblas-pthread/libopenblas.a" \
    -lgfortran -lm -lpthread
  echo "== OpenBLAS 1 thread"
  OPENBLAS_NUM_THREADS=1 "$work/openblas"
fi
