#!/usr/bin/env bash
# The benchmark command: builds statgpu with its CUDA backend (no add-in, no
# tests) and runs the benchmarks: order statistics against cupy, torch and
# numpy; k-means and Gaussian mixtures against scikit-learn and torch; LTS
# against R's ltsReg; inverse Gaussian mixtures against R's reference EM
# (Rscript with statmod) and torch; best subset regression against R's
# leaps::regsubsets (Rscript with leaps); and last the host-data table: each
# method's whole call from pageable memory against the bus time of its input,
# with the targets beside them.
#   bench/run.sh [OUTPUT-FOLDER] [extra bench_select.py arguments]
# Needs nvcc, a CUDA GPU, and a python3 with torch (cupy and matplotlib optional).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=${1:-$root/bench/out}
shift || true
build_dir=${STATGPU_BUILD_DIR:-$root/build-bench}

cmake -S "$root" -B "$build_dir" -DCMAKE_BUILD_TYPE=Release -DSTATGPU_CUDA=ON \
      -DSTATGPU_ADDIN=OFF -DBUILD_TESTING=OFF >/dev/null
cmake --build "$build_dir" --parallel "$(nproc)"
mkdir -p "$out"
PYTHONUNBUFFERED=1 python3 "$root/bench/bench_select.py" --lib "$build_dir/lib/libstatgpu.so" --out "$out" "$@" \
  2>&1 | tee "$out/select.log"
PYTHONUNBUFFERED=1 python3 "$root/bench/bench_kmeans.py" --lib "$build_dir/lib/libstatgpu.so" --out "$out" \
  2>&1 | tee "$out/kmeans.log"
PYTHONUNBUFFERED=1 python3 "$root/bench/bench_gmm.py" --lib "$build_dir/lib/libstatgpu.so" --out "$out" \
  2>&1 | tee "$out/gmm.log"
PYTHONUNBUFFERED=1 python3 "$root/bench/bench_gmm_select.py" --lib "$build_dir/lib/libstatgpu.so" \
  2>&1 | tee "$out/gmm_select.log"
PYTHONUNBUFFERED=1 python3 "$root/bench/bench_lts.py" --lib "$build_dir/lib/libstatgpu.so" --out "$out" \
  2>&1 | tee "$out/lts.log"
PYTHONUNBUFFERED=1 python3 "$root/bench/bench_igmm.py" --lib "$build_dir/lib/libstatgpu.so" --out "$out" \
  2>&1 | tee "$out/igmm.log"
PYTHONUNBUFFERED=1 python3 "$root/bench/bench_bestsubset.py" --lib "$build_dir/lib/libstatgpu.so" --out "$out" \
  2>&1 | tee "$out/bestsubset.log"
PYTHONUNBUFFERED=1 python3 "$root/bench/bench_host.py" --lib "$build_dir/lib/libstatgpu.so" --out "$out" \
  2>&1 | tee "$out/host.log"
