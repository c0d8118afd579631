#!/usr/bin/env bash
# The test command: installs what is missing, builds, and runs every test tier
# (engine tests on the CPU, the CUDA tier -- skipped without a GPU --, and the
# LibreOffice test) through ctest, which prints the counts.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=${STATGPU_BUILD_DIR:-$root/build}

bash "$root/scripts/install-dependencies.sh"
bash "$root/scripts/build.sh"
cd "$build_dir"
ctest --output-on-failure --timeout 1800
