#!/usr/bin/env python3
"""Model choice for Gaussian mixtures: statgpu_gmm_select against the same
candidates fitted one after another, and against scikit-learn.

Every (k, covariance type) for k = 1..9 and the four types (36 candidates,
one k-means start each, the default stopping rule) on mixtures of four
Gaussians (bench_gmm.make_mixture): statgpu_gmm_select (candidates side by
side on worker contexts where the data have fewer than 65,536 rows), a loop
of statgpu_gmm over the same candidates on the same context (the engine's
way before, one fit at a time), and scikit-learn's GaussianMixture in a loop
(what a Python user writes; all cores). Wall time of the whole choice,
median of --repeats (fewer once they have taken 10 s), after one warm-up
call (a warm-up longer than 10 s is the one timing); the chosen model is printed
beside each, and the select and loop choices must agree (same bits, as
tests/test_gmm.c checks).

    python3 bench/bench_gmm_select.py --lib build/lib/libstatgpu.so [--backends cpu,cuda]
"""
import argparse
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from statgpu_ctypes import Engine, gmm, gmm_select  # noqa: E402
from bench_gmm import make_mixture, repeat_runs  # noqa: E402

TYPES = ("full", "tied", "diag", "spherical")
KS = tuple(range(1, 10))


def timed(run, repeats):
    """Median ms of run() over up to repeats calls after a warm-up call (fewer
    once they have taken 10 s; a warm-up call longer than that is the one
    timing), and run()'s last result."""
    def once():
        start = time.perf_counter()
        result = run()
        return 1e3 * (time.perf_counter() - start), result
    warm_ms, result = once()
    runs = [(warm_ms, result)] if warm_ms > 1e4 else repeat_runs(once, repeats)
    return statistics.median(ms for ms, _ in runs), runs[-1][1]


def loop(context, data):
    best = None
    for k in KS:
        for covariance in TYPES:
            fit = gmm(context, data, k, covariance=covariance)
            n, d = data.shape
            bic = -2.0 * fit["log_likelihood"] + parameter_count(covariance, k, d) * np.log(n)
            if best is None or bic < best[2]:
                best = (k, covariance, bic)
    return best


def parameter_count(covariance, k, d):
    cov = {"full": k * d * (d + 1) / 2, "tied": d * (d + 1) / 2, "diag": k * d, "spherical": k}[covariance]
    return cov + k * d + k - 1


def sklearn_loop(data):
    from sklearn.mixture import GaussianMixture
    best = None
    for k in KS:
        for covariance in TYPES:
            model = GaussianMixture(n_components=k, covariance_type=covariance, random_state=0).fit(data)
            bic = model.bic(data)
            if best is None or bic < best[2]:
                best = (k, covariance, bic)
    return best


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lib", required=True)
    parser.add_argument("--sizes", default="272x2,5000x8,20000x8")
    parser.add_argument("--backends", default="cpu,cuda")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--skip-sklearn", action="store_true")
    args = parser.parse_args()
    engine = Engine(args.lib)
    rows = []
    for size in args.sizes.split(","):
        n, d = (int(part) for part in size.split("x"))
        _, data, _ = make_mixture(n, d, 4, 7)
        for backend in args.backends.split(","):
            context = engine.context(backend=backend)
            ms_select, chosen = timed(lambda: gmm_select(context, data, KS, TYPES), args.repeats)
            ms_loop, best = timed(lambda: loop(context, data), args.repeats)
            if (chosen["k"], chosen["covariance"]) != best[:2]:
                raise SystemExit(f"{size} {backend}: select chose {chosen}, the loop {best}")
            rows.append((f"{n} x {d}", f"statgpu {backend}, side by side", ms_select, f"k = {chosen['k']}, "
                         f"{chosen['covariance']}"))
            rows.append((f"{n} x {d}", f"statgpu {backend}, one after another", ms_loop, ""))
            print(f"{size} {backend}: select {ms_select:.1f} ms, loop {ms_loop:.1f} ms", flush=True)
        if not args.skip_sklearn:
            ms, best = timed(lambda: sklearn_loop(np.ascontiguousarray(data)), 1)
            rows.append((f"{n} x {d}", "scikit-learn loop", ms, f"k = {best[0]}, {best[1]}"))
            print(f"{size} scikit-learn: {ms:.1f} ms", flush=True)
    print("\n| data | how | ms (median) | chosen |\n|---|---|---|---|")
    for data_name, how, ms, chosen in rows:
        print(f"| {data_name} | {how} | {ms:.1f} | {chosen} |")


if __name__ == "__main__":
    main()
