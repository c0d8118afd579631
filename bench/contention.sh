#!/usr/bin/env bash
# Contention: N copies of representative k-means and LTS runs (the statgpu
# CLI, default threads) started together, against the same N runs one after
# another, for N = 1, 2, C/2, C and 2C on a machine of C cores. Prints a table
# of total wall times; "together / in turn" at or below 1 is the goal. First,
# the engine's time in a lone run of each kind (median of 9).
#   bench/contention.sh [STATGPU-BINARY ...]   (default: build/bin/statgpu)
# Several binaries (say, two versions) are measured side by side in one run.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
binaries=("$@")
[ ${#binaries[@]} -gt 0 ] || binaries=("$root/build/bin/statgpu")
cores=$(nproc)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

python3 - "$work" <<'PY'
import random, sys
random.seed(7)
folder = sys.argv[1]
with open(folder + "/kmeans.csv", "w") as out:          # 200000 x 8, 8 clusters
    for i in range(200000):
        centre = i % 8
        out.write(",".join("%.6f" % random.gauss(3.0 * centre + v, 1.0) for v in range(8)) + "\n")
with open(folder + "/lts.csv", "w") as out:             # 100000 x 4 predictors, 20% outliers
    for i in range(100000):
        x = [random.gauss(0.0, 1.0) for _ in range(4)]
        y = 1.0 + sum((v + 1) * xv for v, xv in enumerate(x)) + random.gauss(0.0, 0.5)
        if i % 5 == 0:
            y += 25.0
        out.write(",".join("%.6f" % value for value in x + [y]) + "\n")
PY

one_run() {  # binary, index: alternate k-means and LTS
  if (( $2 % 2 == 0 )); then
    "$1" kmeans 8 "$work/kmeans.csv" --backend cpu --restarts 3 --seed "$2" >/dev/null
  else
    "$1" lts "$work/lts.csv" --backend cpu --y-column 5 --alpha 0.75 --seed "$2" >/dev/null
  fi
}
seconds() { date +%s.%N; }
# A binary's label: the two folders above its bin/ (before-pool/build, main/build).
label_of() { local build; build=$(dirname "$(dirname "$1")"); echo "$(basename "$(dirname "$build")")/$(basename "$build")"; }

# A lone run of each kind: the engine's time (the CLI's --time), median of 9.
lone_median() {  # binary, index
  for ((r = 0; r < 9; ++r)); do
    if (( $2 % 2 == 0 )); then
      "$1" kmeans 8 "$work/kmeans.csv" --backend cpu --restarts 3 --seed 0 --time 2>&1 >/dev/null
    else
      "$1" lts "$work/lts.csv" --backend cpu --y-column 5 --alpha 0.75 --seed 1 --time 2>&1 >/dev/null
    fi | sed -n 's/.*computed in \([0-9.]*\) s.*/\1/p'
  done | sort -g | sed -n 5p
}
printf '%-24s %16s %16s\n' version "k-means engine s" "LTS engine s"
for binary in "${binaries[@]}"; do
  label=$(label_of "$binary")
  printf '%-24s %16.4f %16.4f\n' "$label" "$(lone_median "$binary" 0)" "$(lone_median "$binary" 1)"
done
echo

counts=(1 2 $(( cores / 2 > 2 ? cores / 2 : 3 )) "$cores" $(( 2 * cores )))
printf '%-24s %4s %12s %12s %8s\n' version N "together s" "in turn s" ratio
for binary in "${binaries[@]}"; do
  label=$(label_of "$binary")
  one_run "$binary" 0; one_run "$binary" 1   # warm the page cache
  for n in "${counts[@]}"; do
    start=$(seconds)
    for ((i = 0; i < n; ++i)); do one_run "$binary" "$i" & done
    wait
    together=$(awk -v a="$(seconds)" -v b="$start" 'BEGIN { print a - b }')
    start=$(seconds)
    for ((i = 0; i < n; ++i)); do one_run "$binary" "$i"; done
    in_turn=$(awk -v a="$(seconds)" -v b="$start" 'BEGIN { print a - b }')
    printf '%-24s %4d %12.2f %12.2f %8.2f\n' "$label" "$n" "$together" "$in_turn" "$(awk -v a="$together" -v b="$in_turn" 'BEGIN { print a / b }')"
  done
done
