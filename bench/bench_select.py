#!/usr/bin/env python3
"""Order-statistics benchmark: statgpu's selection methods against cupy.median,
torch.median, torch.kthvalue and numpy.median, side by side in one run, every
result checked against a sort. Reproduces the shape of Beliakov's tables:
time of the median of n = 2^13 .. 2^27 floats and doubles per method, plus
101 percentiles, per-distribution times, the host-data path with its transfer
reported separately, and the CPU backend against numpy.

Writes select.csv, select.png (log-log, like the paper's Figures 2 and 3) and
select.log under --out, and prints the tables.

GPU timings: data already on the device, CUDA events around each call after
warm-up, median of the repeats. statgpu's calls are synchronous; their device
time is also read from the engine's own events (backend report).
"""
import argparse
import csv
import math
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from statgpu_ctypes import Engine  # noqa: E402

OUR_METHODS = ["radix", "cutting_plane", "sort", "auto"]


def log(*parts):
    print(*parts, flush=True)


class Timer:
    """Median of repeated timings, with CUDA events where a GPU is used."""

    def __init__(self, torch, warmup, repeats):
        self.torch = torch
        self.warmup = warmup
        self.repeats = repeats

    def gpu(self, function):
        torch = self.torch
        for _ in range(self.warmup):
            function()
        torch.cuda.synchronize()
        times = []
        for _ in range(self.repeats):
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            start.record()
            function()
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end))
        return statistics.median(times)

    def host(self, function, repeats=None):
        for _ in range(max(1, self.warmup // 2)):
            function()
        times = []
        for _ in range(repeats or self.repeats):
            start = time.perf_counter()
            function()
            times.append((time.perf_counter() - start) * 1e3)
        return statistics.median(times)


def exact_median(sorted_values):
    """Calc's MEDIAN on sorted values (python floats, exact for float32 too)."""
    n = len(sorted_values)
    upper = float(sorted_values[n // 2])
    if n % 2:
        return upper
    lower = float(sorted_values[n // 2 - 1])
    total = upper + lower
    return total / 2 if math.isfinite(total) else upper / 2 + lower / 2


def make_distribution(torch, name, n, dtype, generator):
    """The distributions of the robustness table, generated on the GPU."""
    device = "cuda"
    normal = lambda: torch.randn(n, dtype=torch.float64, device=device, generator=generator)  # noqa: E731
    uniform = lambda: torch.rand(n, dtype=torch.float64, device=device, generator=generator)  # noqa: E731
    pick = lambda fraction: uniform() < fraction  # noqa: E731
    if name == "uniform":
        x = uniform()
    elif name == "normal":
        x = normal()
    elif name == "half-normal":
        x = normal().abs()
    elif name == "beta(2,5)":
        x = torch.distributions.Beta(torch.tensor(2.0, device=device, dtype=torch.float64),
                                     torch.tensor(5.0, device=device, dtype=torch.float64)).sample((n,))
    elif name == "mix: 0.5 N(0,1) + 0.5 N(10,1)":
        x = torch.where(pick(0.5), normal(), normal() + 10)
    elif name == "mix: 0.9 N(0,1) + 0.1 N(0,100^2)":
        x = torch.where(pick(0.9), normal(), normal() * 100)
    elif name == "mix: 0.95 U(0,1) + 0.05 N(1000,1)":
        x = torch.where(pick(0.95), uniform(), normal() + 1000)
    elif name == "mix: 0.5 N(0,1e-6^2) + 0.5 N(0,1e6^2)":
        x = torch.where(pick(0.5), normal() * 1e-6, normal() * 1e6)
    elif name == "mix: 0.99 N(0,1) + 0.01 Cauchy":
        x = torch.where(pick(0.99), normal(), torch.tan(math.pi * (uniform() - 0.5)))
    elif name.startswith("normal + a few "):
        x = normal()
        huge = float(name.rsplit(" ", 1)[1])
        index = torch.randint(0, n, (8,), device=device, generator=generator)
        x[index] = torch.tensor([huge, -huge, 2 * huge, -2 * huge, 3 * huge, huge, -huge, huge],
                                dtype=torch.float64, device=device)
    elif name == "sorted":
        x = torch.sort(normal()).values
    elif name == "reverse-sorted":
        x = torch.sort(normal(), descending=True).values
    elif name == "all-equal":
        x = torch.full((n,), 3.25, dtype=torch.float64, device=device)
    elif name == "two-valued":
        x = torch.where(pick(0.5), 1.0, -1.0).to(torch.float64)
    elif name == "-0.0 next to +0.0":
        x = torch.where(pick(0.5), torch.tensor(-0.0, dtype=torch.float64, device=device),
                        torch.tensor(0.0, dtype=torch.float64, device=device))
        x = torch.where(pick(0.1), normal(), x)
    elif name == "subnormal":
        x = (uniform() - 0.5) * 2.0 ** -1060
    else:
        raise ValueError(name)
    return x.to(dtype).contiguous()


DISTRIBUTIONS = [
    "uniform", "normal", "half-normal", "beta(2,5)",
    "mix: 0.5 N(0,1) + 0.5 N(10,1)", "mix: 0.9 N(0,1) + 0.1 N(0,100^2)",
    "mix: 0.95 U(0,1) + 0.05 N(1000,1)", "mix: 0.5 N(0,1e-6^2) + 0.5 N(0,1e6^2)",
    "mix: 0.99 N(0,1) + 0.01 Cauchy",
    "normal + a few 1e9", "normal + a few 1e20", "normal + a few 1e300",
    "sorted", "reverse-sorted", "all-equal", "two-valued", "-0.0 next to +0.0", "subnormal",
]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lib", required=True, help="path of libstatgpu.so")
    parser.add_argument("--out", default="bench-out")
    parser.add_argument("--max-log2", type=int, default=27)
    parser.add_argument("--distribution-log2", type=int, default=25)
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--skip-numpy-large", action="store_true")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)

    engine = Engine(args.lib)
    rows = []  # (table, case, dtype, n, method, ms, exact)
    failures = []

    def record(table, case, dtype, n, method, ms, exact):
        rows.append(dict(table=table, case=case, dtype=dtype, n=n, method=method, ms=ms, exact=exact))
        # A peer's inexact answer (cupy's float32 median is computed in
        # float32) is marked in the tables; only statgpu's must be exact.
        if exact is False and method.startswith("statgpu"):
            failures.append(f"{table} {case} {dtype} n={n} {method}")

    try:
        import torch
        have_gpu = torch.cuda.is_available()
    except ImportError:
        torch, have_gpu = None, False
    try:
        import cupy
    except ImportError:
        cupy = None

    contexts = {}
    if have_gpu:
        for method in OUR_METHODS:
            contexts[method] = engine.context("cuda", method)
        report = contexts["auto"].report()
        log(f"# GPU: {report.device_name.decode()}  CUDA runtime {report.cuda_runtime_version} "
            f"driver {report.cuda_driver_version}; cupy {cupy.__version__ if cupy else 'absent'}; "
            f"torch {torch.__version__}; numpy {np.__version__}")
        if not report.cuda_available:
            log(f"# statgpu CUDA backend unavailable: {report.note.decode()}")
            have_gpu = False
    cpu_context = engine.context("cpu", "auto")

    timer = Timer(torch, warmup=3, repeats=args.repeats)

    if have_gpu:
        generator = torch.Generator(device="cuda")
        generator.manual_seed(1)
        # ---- Table 1: the median per method, n = 2^13 .. 2^max, float and double.
        for dtype_name, torch_dtype in (("float32", torch.float32), ("float64", torch.float64)):
            for log2 in range(13, args.max_log2 + 1, 2):
                n = 1 << log2
                x = torch.randn(n, dtype=torch_dtype, device="cuda", generator=generator)
                expected = exact_median(torch.sort(x).values.cpu().numpy())
                vector = contexts["auto"].vector(x.data_ptr(), n, dtype_name, "device")
                for method in OUR_METHODS:
                    context = contexts[method]
                    got = context.median(vector)
                    ms = timer.gpu(lambda: context.median(vector))
                    record("median", "normal", dtype_name, n, f"statgpu {method}", ms, got == expected)
                if cupy is not None:
                    cx = cupy.asarray(x)
                    got = float(cupy.median(cx))
                    ms = timer.gpu(lambda: cupy.median(cx))
                    record("median", "normal", dtype_name, n, "cupy.median", ms, got == expected)
                got_lower = float(torch.median(x))
                ms = timer.gpu(lambda: torch.median(x))
                lower_expected = float(torch.sort(x).values[(n - 1) // 2])
                record("median", "normal", dtype_name, n, "torch.median (lower)", ms, got_lower == lower_expected)
                k = n // 2
                ms = timer.gpu(lambda: torch.kthvalue(x, k))
                record("median", "normal", dtype_name, n, "torch.kthvalue", ms,
                       float(torch.kthvalue(x, k).values) == lower_expected)
                log(f"median {dtype_name} 2^{log2} done")
                del x

        # ---- 101 percentiles of 2^max doubles.
        n = 1 << args.max_log2
        x = torch.randn(n, dtype=torch.float64, device="cuda", generator=generator)
        probabilities = [j / 100 for j in range(101)]
        sorted_host = torch.sort(x).values.cpu().numpy()
        expected = np.percentile(sorted_host, [100 * p for p in probabilities], method="linear")
        vector = contexts["auto"].vector(x.data_ptr(), n, "float64", "device")
        for method in OUR_METHODS:
            context = contexts[method]
            got = context.quantiles(vector, probabilities)
            exact = all(abs(a - b) <= 4e-16 * max(1.0, abs(b)) for a, b in zip(got, expected))
            ms = timer.gpu(lambda: context.quantiles(vector, probabilities))
            record("101 percentiles", "normal", "float64", n, f"statgpu {method}", ms, exact)
        if cupy is not None:
            cx = cupy.asarray(x)
            q = cupy.asarray([100 * p for p in probabilities])
            got = cupy.percentile(cx, q).get()
            ms = timer.gpu(lambda: cupy.percentile(cx, q))
            record("101 percentiles", "normal", "float64", n, "cupy.percentile", ms,
                   bool(np.allclose(got, expected, rtol=1e-15, atol=0)))
        del x, sorted_host
        log("percentiles done")

        # ---- Per-distribution times at 2^distribution_log2 doubles.
        n = 1 << args.distribution_log2
        for name in DISTRIBUTIONS:
            x = make_distribution(torch, name, n, torch.float64, generator)
            expected = exact_median(torch.sort(x).values.cpu().numpy())
            vector = contexts["auto"].vector(x.data_ptr(), n, "float64", "device")
            for method in OUR_METHODS:
                context = contexts[method]
                got = context.median(vector)
                ms = timer.gpu(lambda: context.median(vector))
                record("distribution", name, "float64", n, f"statgpu {method}", ms, got == expected)
            if cupy is not None:
                cx = cupy.asarray(x)
                ms = timer.gpu(lambda: cupy.median(cx))
                record("distribution", name, "float64", n, "cupy.median", ms, float(cupy.median(cx)) == expected)
            del x
        log("distributions done")

        # ---- Host data: the transfer is part of the work and reported separately.
        n = 1 << args.max_log2
        host = torch.randn(n, dtype=torch.float64, generator=torch.Generator().manual_seed(3)).numpy()
        expected = exact_median(np.sort(host))
        for label, array in (("pageable", host), ("pinned", torch.from_numpy(host).pin_memory().numpy())):
            vector = contexts["auto"].vector(array.ctypes.data, n, "float64", "host")
            context = contexts["auto"]
            got = context.median(vector)
            ms = timer.host(lambda: context.median(vector), repeats=5)
            report = context.report()
            record("host data", f"{label} (transfer {report.last_transfer_seconds * 1e3:.1f} ms, "
                                f"device {report.last_compute_seconds * 1e3:.2f} ms)",
                   "float64", n, "statgpu auto", ms, got == expected)
        log("host data done")

    # ---- CPU: statgpu's CPU backend (all cores) against numpy.median (one thread).
    rng = np.random.default_rng(5)
    for log2 in (20, 23, args.max_log2):
        n = 1 << log2
        host = rng.standard_normal(n)
        expected = exact_median(np.sort(host))
        vector = cpu_context.vector(host.ctypes.data, n, "float64", "host")
        got = cpu_context.median(vector)
        ms = timer.host(lambda: cpu_context.median(vector), repeats=5)
        record("cpu", "normal", "float64", n, f"statgpu cpu ({cpu_context.report().cpu_thread_count} threads)", ms,
               got == expected)
        if not (args.skip_numpy_large and log2 > 23):
            ms = timer.host(lambda: np.median(host), repeats=3)
            record("cpu", "normal", "float64", n, "numpy.median (1 thread)", ms, float(np.median(host)) == expected)
    log("cpu done")

    # ---- Output: CSV, tables, plot.
    with open(os.path.join(args.out, "select.csv"), "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0].keys()))
        writer.writeheader()
        writer.writerows(rows)

    def table(title, selected, columns_key, rows_key):
        columns = sorted({r[columns_key] for r in selected}, key=lambda c: (isinstance(c, str), c))
        methods = list(dict.fromkeys(r[rows_key] for r in selected))
        log(f"\n## {title} (ms, median of repeats; * = result not exact)")
        header = f"| {rows_key} | " + " | ".join(str(c) if not isinstance(c, int) else f"2^{c.bit_length() - 1}"
                                                 for c in columns) + " |"
        log(header)
        log("|" + "---|" * (len(columns) + 1))
        for method in methods:
            cells = []
            for column in columns:
                match = [r for r in selected if r[rows_key] == method and r[columns_key] == column]
                cells.append("" if not match else f"{match[0]['ms']:.3f}{'' if match[0]['exact'] else '*'}")
            log(f"| {method} | " + " | ".join(cells) + " |")

    for dtype_name in ("float32", "float64"):
        table(f"median of n normal {dtype_name}s, data on the GPU",
              [r for r in rows if r["table"] == "median" and r["dtype"] == dtype_name], "n", "method")
    table("101 percentiles", [r for r in rows if r["table"] == "101 percentiles"], "n", "method")
    distribution_rows = [r for r in rows if r["table"] == "distribution"]
    if distribution_rows:
        log(f"\n## median per distribution, n = 2^{args.distribution_log2} doubles (ms; * = not exact)")
        methods = list(dict.fromkeys(r["method"] for r in distribution_rows))
        log("| distribution | " + " | ".join(methods) + " |")
        log("|" + "---|" * (len(methods) + 1))
        for name in DISTRIBUTIONS:
            cells = []
            for method in methods:
                match = [r for r in distribution_rows if r["case"] == name and r["method"] == method]
                cells.append("" if not match else f"{match[0]['ms']:.3f}{'' if match[0]['exact'] else '*'}")
            log(f"| {name} | " + " | ".join(cells) + " |")
    for r in rows:
        if r["table"] == "host data":
            log(f"host data, {r['case']}: {r['ms']:.1f} ms wall{'' if r['exact'] else ' NOT EXACT'}")
    table("CPU: median of n doubles", [r for r in rows if r["table"] == "cpu"], "n", "method")

    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        figure, axes = plt.subplots(1, 2, figsize=(12, 5))
        for axis, dtype_name in zip(axes, ("float32", "float64")):
            selected = [r for r in rows if r["table"] == "median" and r["dtype"] == dtype_name]
            for method in dict.fromkeys(r["method"] for r in selected):
                points = sorted((r["n"], r["ms"]) for r in selected if r["method"] == method)
                axis.loglog([p[0] for p in points], [p[1] for p in points], marker="o", label=method, base=2)
            axis.set_title(f"median of n {dtype_name}s on the GPU")
            axis.set_xlabel("n")
            axis.set_ylabel("ms")
            axis.grid(True, which="both", alpha=0.3)
            axis.legend(fontsize=8)
        figure.tight_layout()
        figure.savefig(os.path.join(args.out, "select.png"), dpi=110)
    except Exception as error:  # the plot is a convenience; the CSV and tables are the record
        log(f"# no plot: {error}")

    if failures:
        log("\nNOT EXACT: " + "; ".join(failures))
        return 1
    log(f"\nall {len(rows)} results exact")
    return 0


if __name__ == "__main__":
    sys.exit(main())
