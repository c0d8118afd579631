#!/usr/bin/env bash
# Configures and builds statgpu into build/ (engine, CUDA module where nvcc is
# found, Calc add-in, statgpu.oxt and the tests). Extra arguments go to cmake.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=${STATGPU_BUILD_DIR:-$root/build}
jobs=${STATGPU_JOBS:-$(nproc)}

cmake -S "$root" -B "$build_dir" -DCMAKE_BUILD_TYPE=Release "$@"
cmake --build "$build_dir" --parallel "$jobs"
