#!/usr/bin/env bash
# k-means' data check alone (bench/bench_kmeans_scan.c with
# engine/src/methods/kmeans_cpu.c compiled in), at -O3 as the Release build
# compiles it. With BASELINE=<commit>, that commit's kmeans_cpu.c is built
# too and the two take turns. Arguments: N_OBS N_VARS REPEATS OFFSET ROUNDS
# (defaults 10^7 x 16, 9 repeats, offset 0, 3 rounds); each round runs every
# build at 1 thread, then at 2.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
n=${1:-10000000} d=${2:-16} repeats=${3:-9} offset=${4:-0} rounds=${5:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
build() {  # build NAME KMEANS_CPU_C
  gcc -O3 -std=c11 -ffp-contract=off -DNDEBUG -I"$root/engine/include" -I"$root/engine/src" \
    "$root/bench/bench_kmeans_scan.c" "$2" "$root/engine/src/methods/kmeans_screen.c" \
    "$root/engine/src/core/pool.c" -o "$work/$1" -lm -lpthread
}
build current "$root/engine/src/methods/kmeans_cpu.c"
builds=(current)
if [ -n "${BASELINE:-}" ]; then
  mkdir -p "$work/source/methods"
  git -C "$root" show "$BASELINE:engine/src/methods/kmeans_cpu.c" > "$work/source/methods/kmeans_cpu.c"
  build baseline "$work/source/methods/kmeans_cpu.c"
  builds=(baseline current)
fi
for round in $(seq "$rounds"); do
  for threads in 1 2; do
    for name in "${builds[@]}"; do
      printf '%-8s ' "$name"
      "$work/$name" "$n" "$d" "$threads" "$repeats" "$offset"
    done
  done
done
