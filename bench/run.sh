#!/usr/bin/env bash
# The benchmark command: builds statgpu with its CUDA backend (no add-in, no
# tests) and runs the benchmarks: order statistics against cupy, torch and
# numpy; k-means and Gaussian mixtures against scikit-learn and torch; LTS
# against R's ltsReg; inverse Gaussian mixtures against R's reference EM
# (Rscript with statmod) and torch; best subset regression against R's
# leaps::regsubsets (Rscript with leaps); and last the host-data table: each
# method's whole call from pageable memory against the bus time of its input,
# with the targets beside them. Each script's wall time goes to
# OUTPUT-FOLDER/timings.log.
#   bench/run.sh [OUTPUT-FOLDER] [extra bench_select.py arguments]
# Needs nvcc, a CUDA GPU, and a python3 with torch (cupy and matplotlib optional).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=${1:-$root/bench/out}
shift || true
build_dir=${STATGPU_BUILD_DIR:-$root/build-bench}

cmake -S "$root" -B "$build_dir" -DCMAKE_BUILD_TYPE=Release -DSTATGPU_CUDA=ON \
      -DSTATGPU_ADDIN=OFF -DBUILD_TESTING=OFF >/dev/null
started=$SECONDS
cmake --build "$build_dir" --parallel "$(nproc)"
mkdir -p "$out"
echo "[run.sh] build: $((SECONDS - started)) s" | tee "$out/timings.log"
lib=$build_dir/lib/libstatgpu.so
# One benchmark script, its output into OUT/<log>.log, its wall time into OUT/timings.log.
bench() {
  local log=$1 script=$2 start=$SECONDS
  shift 2
  PYTHONUNBUFFERED=1 python3 "$root/bench/$script" --lib "$lib" "$@" 2>&1 | tee "$out/$log.log"
  echo "[run.sh] $script: $((SECONDS - start)) s" | tee -a "$out/timings.log"
}
bench select bench_select.py --out "$out" "$@"
bench kmeans bench_kmeans.py --out "$out"
bench gmm bench_gmm.py --out "$out"
bench gmm_select bench_gmm_select.py
bench lts bench_lts.py --out "$out"
bench igmm bench_igmm.py --out "$out"
bench bestsubset bench_bestsubset.py --out "$out"
bench host bench_host.py --out "$out"
echo "[run.sh] all: $((SECONDS - started)) s" | tee -a "$out/timings.log"
