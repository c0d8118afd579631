#!/usr/bin/env python3
"""The CPU backend's median of N(0, 1) doubles from host memory, AUTO (window
select for a few ranks from 2^16 values) against RADIX (radix select), side
by side in one process: medians of 7 calls (3 at 2^27 and above), each
checked against numpy.median up to 2^24.

    bench_cpu_select.py --lib build/lib/libstatgpu.so [--sizes 16,20,24,27] [--threads N]
"""
import argparse
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from statgpu_ctypes import Engine  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lib", required=True)
    parser.add_argument("--sizes", default="16,18,20,22,24,27", help="log2 of the counts")
    parser.add_argument("--threads", type=int, default=0, help="CPU threads (0: all)")
    args = parser.parse_args()
    engine = Engine(args.lib)
    contexts = {m: engine.context(backend="cpu", method=m, threads=args.threads) for m in ("auto", "radix")}
    print("| n | AUTO (window select) | RADIX |\n|---|---|---|")
    for log2 in (int(x) for x in args.sizes.split(",")):
        n = 1 << log2
        host = np.random.default_rng(3).standard_normal(n)
        expected = float(np.median(host)) if log2 <= 24 else None
        cells = []
        for method, context in contexts.items():
            vector = context.vector(host.ctypes.data, n, "float64", "host")
            context.median(vector)
            times = []
            for _ in range(3 if log2 >= 27 else 7):
                start = time.perf_counter()
                got = context.median(vector)
                times.append((time.perf_counter() - start) * 1e3)
            if expected is not None and got != expected:
                raise SystemExit(f"{method} at 2^{log2}: {got!r}, numpy {expected!r}")
            cells.append(f"{statistics.median(times):.2f} ms")
        print(f"| 2^{log2} | {cells[0]} | {cells[1]} |", flush=True)
    for context in contexts.values():
        context.close()


if __name__ == "__main__":
    main()
