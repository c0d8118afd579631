#!/usr/bin/env python3
"""Least trimmed squares benchmark: statgpu on the CPU and on the GPU against
R's robustbase::ltsReg (defaults), on regression data with 20% vertical
outliers and 5% bad leverage points.

Every fit is scored by the same LTS objective, the sum of the h smallest
squared residuals of its raw coefficients, computed here in one way for all,
next to the objective of the true coefficients. statgpu's repeats use seeds
0, 1, ...; its objective column is the worst of them (ltsReg: one run, R's
seed 1). Times are wall-clock medians
of the repeats for the whole call (statgpu: data on the host, copy included;
ltsReg: its default call, which also computes robust distances and an R^2);
cuda_device_s is the part of a GPU call spent in the copies and C-steps on
the device (CUDA events), the rest being the host's share (starts, p x p
solves, standardisation, the final QR fits and reweighting).

  bench/bench_lts.py --lib build/lib/libstatgpu.so [--sizes 1000,10000]
                     [--ps 5,10] [--backends cpu,cuda] [--no-r] [--out DIR]
"""
import argparse
import csv
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import statgpu_ctypes  # noqa: E402


def make_data(n, p, seed):
    """y = 1 + x . 1 + N(0,1); then 20% of the rows get y shifted by
    N(20, 5^2) (vertical outliers) and 5% get x shifted by +10 in every
    predictor with y left at N(0,1) (bad leverage points)."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, p))
    beta = np.ones(p)
    y = 1.0 + x @ beta + rng.standard_normal(n)
    rows = rng.permutation(n)
    vertical = rows[: n // 5]
    leverage = rows[n // 5: n // 5 + n // 20]
    y[vertical] += rng.normal(20.0, 5.0, vertical.size)
    x[leverage] += 10.0
    y[leverage] = rng.standard_normal(leverage.size)
    return np.asfortranarray(x), y, np.concatenate(([1.0], beta))


def lts_objective(x, y, coefficients, h):
    residuals = y - coefficients[0] - x @ np.asarray(coefficients[1:])
    squared = residuals * residuals
    return float(np.sum(np.partition(squared, h - 1)[:h]))


def run_ltsreg(x, y, script):
    n, p = x.shape
    with tempfile.TemporaryDirectory() as folder:
        np.asarray(x, order="F").T.tofile(os.path.join(folder, "x.f64"))  # column-major bytes
        y.tofile(os.path.join(folder, "y.f64"))
        output = subprocess.run(["Rscript", script, folder, str(n), str(p)], check=True, capture_output=True,
                                text=True).stdout.split()
    return float(output[0]), [float(v) for v in output[1:]]


def r_available():
    if shutil.which("Rscript") is None:
        return False
    probe = subprocess.run(["Rscript", "-e", "library(robustbase)"], capture_output=True)
    return probe.returncode == 0


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lib", required=True)
    parser.add_argument("--sizes", default="1000,10000,100000,1000000")
    parser.add_argument("--ps", default="5,10")
    parser.add_argument("--backends", default="cpu,cuda")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--no-r", action="store_true", help="leave ltsReg out")
    parser.add_argument("--r-max-n", type=int, default=1000000, help="largest n given to ltsReg")
    parser.add_argument("--out", default=None)
    args = parser.parse_args()

    engine = statgpu_ctypes.Engine(args.lib)
    contexts = {}
    for backend in [b for b in args.backends.split(",") if b]:
        context = engine.context(backend=backend)
        if backend == "cuda":
            probe_x, probe_y, _ = make_data(2000, 2, 0)
            statgpu_ctypes.lts(context, probe_y, probe_x)
            if context.report().last_used != statgpu_ctypes.BACKEND["cuda"]:
                print(f"# cuda: not available ({context.report().note.decode()})")
                context.close()
                continue
            print(f"# cuda: {context.report().device_name.decode()}")
        contexts[backend] = context
    use_r = not args.no_r and r_available()
    if not args.no_r and not use_r:
        print("# ltsReg: not installed (Rscript with robustbase)")
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "lts_ltsreg.R")

    rows = []
    for n in [int(v) for v in args.sizes.split(",")]:
        for p in [int(v) for v in args.ps.split(",")]:
            x, y, truth = make_data(n, p, seed=n + p)
            h = (n + p + 2) // 2  # p + 1 coefficients with the intercept
            row = {"n": n, "p": p, "h": h, "truth_objective": lts_objective(x, y, truth, h)}
            if use_r and n <= args.r_max_n:
                seconds, coefficients = run_ltsreg(x, y, script)
                row["ltsreg_s"] = seconds
                row["ltsreg_objective"] = lts_objective(x, y, coefficients, h)
            for backend, context in contexts.items():
                times, device_times, objectives = [], [], []
                repeats = args.repeats if n * p <= 10**6 or backend == "cuda" else 1
                for repeat in range(repeats + (1 if backend == "cuda" else 0)):
                    start = time.perf_counter()
                    coefficients, _, h_engine = statgpu_ctypes.lts(context, y, x, seed=repeat)
                    elapsed = time.perf_counter() - start
                    assert h_engine == h, (h_engine, h)
                    if backend == "cuda" and repeat == 0:
                        continue  # warm-up: module load, context, first allocations
                    times.append(elapsed)
                    if backend == "cuda":
                        report = context.report()
                        device_times.append(report.last_transfer_seconds + report.last_compute_seconds)
                    objectives.append(lts_objective(x, y, coefficients, h))
                row[f"{backend}_s"] = statistics.median(times)
                if device_times:
                    row["cuda_device_s"] = statistics.median(device_times)
                row[f"{backend}_objective"] = max(objectives)  # the worst seed
            rows.append(row)
            print(row, flush=True)

    columns = ["n", "p", "h", "truth_objective"]
    if use_r:
        columns += ["ltsreg_s", "ltsreg_objective"]
    for backend in contexts:
        columns += [f"{backend}_s", f"{backend}_objective"]
        if backend == "cuda":
            columns.insert(-1, "cuda_device_s")  # copies and C-steps on the GPU, CUDA events
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    for row in rows:
        cells = []
        for column in columns:
            value = row.get(column)
            if value is None:
                cells.append("–")
            elif column.endswith("_s"):
                cells.append(f"{value:.3f}")
            elif column.endswith("objective"):
                cells.append(f"{value:,.1f}")
            else:
                cells.append(str(value))
        lines.append("| " + " | ".join(cells) + " |")
    table = "\n".join(lines)
    print(table)
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, "lts.md"), "w") as handle:
            handle.write(table + "\n")
        with open(os.path.join(args.out, "lts.csv"), "w", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=columns)
            writer.writeheader()
            for row in rows:
                writer.writerow({c: row.get(c, "") for c in columns})


if __name__ == "__main__":
    main()
