#!/usr/bin/env python3
"""Host data at the speed of the bus: the whole call from ordinary (pageable)
host memory against the time its bytes take across the bus, measured in the
same run, with each figure's target beside it.

For each case: the bus time of its input (page-locked host memory to the
device, torch's copy timed with CUDA events, median of repeats), the whole
call from pageable numpy memory (wall clock, median), the copy and device
times the engine reports for it, the ratio of the whole call to the bus
time, and torch's whole call on the same data where torch has the method
(from the same pageable array: its copy to the GPU plus the work). Targets
are those of bench/NOTES.md "Host data"; a figure is never asserted.

    bench_host.py --lib build/lib/libstatgpu.so [--cases median,...] [--out DIR]
"""
import argparse
import csv
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from statgpu_ctypes import Engine, gmm, igmm, kmeans, lts  # noqa: E402
from bench_gmm import make_mixture  # noqa: E402
from bench_igmm import make_sets  # noqa: E402
from bench_kmeans import make_blobs  # noqa: E402
from bench_lts import make_data as make_lts_data  # noqa: E402
from bench_select import Timer  # noqa: E402

CASES = ("median", "percentiles", "median32", "kmeans", "gmm", "lts", "igmm", "auto")


def log(*parts):
    print(*parts, flush=True)


def bus_ms(torch, clock, nbytes):
    """Page-locked host memory to the device, nbytes, CUDA events."""
    source = torch.empty(nbytes // 8, dtype=torch.float64).pin_memory()
    target = torch.empty(nbytes // 8, dtype=torch.float64, device="cuda")
    return clock.gpu(lambda: target.copy_(source, non_blocking=True))


def engine_call(context, clock, function, repeats=None):
    """Wall time of function() with the engine's copy and device times of its
    last run, which must have run on CUDA."""
    wall = clock.host(function, repeats)
    report = context.report()
    if report.last_used != 2:
        raise RuntimeError(f"ran on the CPU: {report.note.decode()}")
    if report.note:
        log(f"  note: {report.note.decode()}")
    return wall, report.last_transfer_seconds * 1e3, report.last_compute_seconds * 1e3


def auto_table(engine, clock):
    """Each method at sizes around its CPU/GPU crossover, on the CPU backend
    (all threads), on CUDA and on AUTO: AUTO should be within 10% of the
    faster."""
    contexts = {name: engine.context(backend=name) for name in ("cpu", "cuda", "auto")}
    rng = np.random.default_rng(17)
    cases = []
    for log2 in (12, 14, 16, 18, 20, 22, 24, 27):
        host = rng.standard_normal(1 << log2)
        cases.append((f"median, 2^{log2}", host.nbytes,
                      lambda c, host=host: c.median(c.vector(host.ctypes.data, host.size, "float64", "host"))))
    for n, d, k in ((2_000, 4, 4), (20_000, 8, 8), (200_000, 16, 16), (1_000_000, 16, 16)):
        data, initial = make_blobs(n, d, k, 5)
        cases.append((f"k-means {n} x {d}, k = {k}, 20 iterations", data.nbytes,
                      lambda c, data=data, initial=initial, k=k: kmeans(
                          c, data, k, initial_centroids=initial, max_iterations=20, tolerance=0.0)))
    for n in (2_000, 20_000, 200_000):
        _, data, initial = make_mixture(n, 8, 8, 3)
        cases.append((f"GMM {n} x 8, k = 8, 20 iterations", data.nbytes,
                      lambda c, data=data, initial=initial: gmm(c, data, 8, *initial, max_iterations=20,
                                                                 tolerance=0.0)))
    for n in (2_000, 20_000, 200_000):
        x, y, _ = make_lts_data(n, 5, 9)
        cases.append((f"LTS n = {n}, p = 5", x.nbytes + y.nbytes, lambda c, x=x, y=y: lts(c, y, x)))
    for sets in (10, 100, 1000):
        data = make_sets(sets, 2000, 1)
        cases.append((f"IGMM {sets} x 2,000, k = 2, 1 start", data.nbytes,
                      lambda c, data=data: igmm(c, data, 2, starts=1, max_iterations=100, tolerance=0.0)))
    names = {0: "auto", 1: "CPU", 2: "CUDA"}
    lines = ["| case | CPU | CUDA | AUTO | AUTO ran (timed calls; ms where on both) | AUTO's choice / faster | AUTO / faster |",
             "|---|---|---|---|---|---|---|"]
    for name, _, call in cases:
        # The backends take turns within each repeat, so a drift of the
        # machine's speed falls on all three alike; calls under 50 ms get 15
        # repeats (3 gave AUTO / faster of 0.71 to 1.32 at 2^20 and 2^22,
        # where AUTO ran the faster backend: the spread of sub-millisecond
        # timings; 7 gave 1.10 at 2^27 between backends within 5% of each
        # other), longer ones 7.
        samples = {backend: [] for backend in contexts}
        for backend, context in contexts.items():
            # Warm-up; AUTO's eight calls also let it measure both backends
            # where it chooses by measurement (order statistics of 2^20
            # values or more: CUDA and the CPU in turn, three calls each,
            # after CUDA's set-up).
            for _ in range(8 if backend == "auto" else 1):
                call(context)
        repeats, ran, order = 7, [], list(contexts)
        for r in range(15):
            if r == repeats:
                break
            # Each repeat starts on the next backend, so that whatever the
            # order does (bench/NOTES.md, "AUTO measured v2") falls on all
            # three.
            for backend in order[r % 3:] + order[:r % 3]:
                start = time.perf_counter()
                call(contexts[backend])
                samples[backend].append((time.perf_counter() - start) * 1e3)
                if backend == "auto":
                    ran.append(names.get(contexts["auto"].report().last_used, "?"))
            if r == 0 and max(min(t) for t in samples.values()) < 50.0:
                repeats = 15
        times = {backend: statistics.median(t) for backend, t in samples.items()}
        # Where AUTO's timed calls ran, and when on both backends, the
        # median of each backend's share: AUTO's own calls against the
        # columns of the same backend.
        by_backend = {name: [t for n, t in zip(ran, samples["auto"]) if n == name] for name in dict.fromkeys(ran)}
        used = next(iter(by_backend)) if len(by_backend) == 1 else ", ".join(
            f"{n} {len(t)} ({statistics.median(t):.2f})" for n, t in by_backend.items())
        faster = min(times["cpu"], times["cuda"])
        # The cost of AUTO's choice alone: the backends' own columns for the
        # backends its timed calls ran on, against the faster. AUTO / faster
        # adds what differs between two contexts on the same route (each
        # has its own buffers): where both ran CUDA, AUTO took 0.83 to 1.13
        # times the CUDA context's time over four machine starts.
        column = {"CPU": times["cpu"], "CUDA": times["cuda"]}
        chosen = statistics.mean(column.get(n, float("nan")) for n in ran)
        lines.append(f"| {name} | {times['cpu']:.2f} | {times['cuda']:.2f} | {times['auto']:.2f} | {used} | "
                     f"{chosen / faster:.2f} | {times['auto'] / faster:.2f} |")
        log(lines[-1])
    for context in contexts.values():
        context.close()
    return lines


def met(target, ms, ratio=None):
    """"yes" or "no" for a target such as "<= 30 ms, <= 1.2x bus" (every bound
    of it must hold), given the figure in ms and its ratio to the bus."""
    for bound in target.split(","):
        value, unit = bound.strip().removeprefix("<=").split(maxsplit=1)
        if (ms if unit == "ms" else ratio) > float(value.rstrip("x")):
            return "no"
    return "yes"


def cpu_kmeans_lines(folder):
    """The CPU backend's k-means against scikit-learn's, 10^7 x 16, k = 64, as
    bench_kmeans.py measured them in the same run (its kmeans.csv in folder),
    as one more row of the table; none where that file is not there."""
    path = folder and os.path.join(folder, "kmeans.csv")
    if not path or not os.path.exists(path):
        return []
    with open(path, newline="") as handle:
        ms = {row["peer"]: float(row["ms"]) for row in csv.DictReader(handle) if row["case"] == "1e7x16k64"}
    ours, theirs = ms.get("statgpu CPU"), ms.get("scikit-learn lloyd (CPU)")
    if ours is None or theirs is None:
        return []
    return [f"| k-means 10^7 x 16, k = 64, 50 iterations, CPU backend (bench_kmeans.py, all threads) | | | "
            f"{ours:.0f} ms | | | scikit-learn {theirs:.0f} ms | <= scikit-learn | | "
            f"{'yes' if ours <= theirs else 'no'} |"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lib", required=True)
    parser.add_argument("--cases", default=",".join(CASES))
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--out", default=None, help="folder for host.md")
    args = parser.parse_args()
    import torch

    clock = Timer(torch, 2, args.repeats)  # 1 warm-up call for wall times, 2 for device times
    # The device-data rows take half a millisecond to two: two warm-up calls
    # are too short for the GPU's clocks to rise on a machine just started
    # (the first such run on a start was 10-15% slower, Host data v21), so
    # they are timed after 200 calls and as the median of 15, as
    # bench_select.py times them.
    fine_clock = Timer(torch, 200, 15)
    engine = Engine(args.lib)
    context = engine.context(backend="cuda")
    rows = []

    def row(case, nbytes, target, whole, transfer, device, peer=None, device_target=None, split=None):
        bus = bus_ms(torch, clock, nbytes)
        split = split or f"{transfer:.1f}, {device:.2f} ms"
        rows.append({"case": case, "bytes": nbytes, "bus": bus, "whole": whole, "split": split,
                     "device": device, "peer": peer, "target": target, "device_target": device_target})
        log(f"{case}: whole {whole:.1f} ms (copy, device: {split}), bus {bus:.1f} ms"
            + (f", torch {peer:.1f} ms" if peer is not None else ""))

    cases = args.cases.split(",")
    if "median" in cases or "percentiles" in cases or "median32" in cases:
        n = 1 << 27
        host = np.random.default_rng(3).standard_normal(n)
        if "median" in cases:
            vector = context.vector(host.ctypes.data, n, "float64", "host")
            whole, transfer, device = engine_call(context, clock, lambda: context.median(vector))
            expected = np.partition(host, [n // 2 - 1, n // 2])
            assert context.median(vector) == 0.5 * (expected[n // 2 - 1] + expected[n // 2])

            def torch_median():
                x = torch.from_numpy(host).cuda()
                torch.kthvalue(x, n // 2)
                torch.cuda.synchronize()
            peer = clock.host(torch_median, 3)
            row("median of 2^27 doubles", host.nbytes, "<= 30 ms, <= 1.2x bus", whole, transfer, device, peer)
            # The same call under AUTO, the backend Calc's calls get: from
            # 2^20 values of host data it measures both backends and runs
            # the faster (bench/NOTES.md, "AUTO measured"), after a warm-up
            # that sets CUDA up and lets it measure each three times.
            auto = engine.context(backend="auto")
            auto_vector = auto.vector(host.ctypes.data, n, "float64", "host")
            for _ in range(8):
                auto.median(auto_vector)
            ran, times = [], []
            for _ in range(9):
                start = time.perf_counter()
                auto.median(auto_vector)
                times.append((time.perf_counter() - start) * 1e3)
                ran.append({1: "CPU", 2: "CUDA"}.get(auto.report().last_used, "?"))
            counts = ", ".join(f"{name} {ran.count(name)}" for name in dict.fromkeys(ran))
            row("median of 2^27 doubles, AUTO (Calc's backend)", host.nbytes, "<= 30 ms, <= 1.2x bus",
                statistics.median(times), None, None, split=f"ran on {counts}")
            auto.close()
        if "percentiles" in cases:
            x = torch.from_numpy(host).cuda()
            vector = context.vector(x.data_ptr(), n, "float64", "device")
            probabilities = [j / 100 for j in range(101)]
            ms = fine_clock.gpu(lambda: context.quantiles(vector, probabilities))
            rows.append({"case": "101 percentiles of 2^27 doubles, device data", "device": ms,
                         "device_target": "<= 2.0 ms"})
            log(f"101 percentiles: {ms:.2f} ms")
            del x
        if "median32" in cases:
            x = torch.from_numpy(host).cuda().float()
            vector = context.vector(x.data_ptr(), n, "float32", "device")
            ms = fine_clock.gpu(lambda: context.median(vector))
            rows.append({"case": "median of 2^27 floats, device data", "device": ms, "device_target": "<= 0.5 ms"})
            log(f"float32 median: {ms:.3f} ms")
            del x
        del host

    if "kmeans" in cases:
        data, initial = make_blobs(10_000_000, 16, 64, 11)
        whole, transfer, device = engine_call(
            context, clock, lambda: kmeans(context, data, 64, initial_centroids=initial, max_iterations=50,
                                           tolerance=0.0), 3)
        row("k-means 10^7 x 16, k = 64, 50 iterations", data.nbytes, "<= 150 ms", whole, transfer, device,
            device_target="<= 40 ms")
        del data

    if "gmm" in cases:
        _, data, initial = make_mixture(1_000_000, 8, 8, 7)
        whole, transfer, device = engine_call(
            context, clock, lambda: gmm(context, data, 8, *initial, max_iterations=50, tolerance=0.0))
        row("GMM 10^6 x 8, k = 8, full, 50 iterations", data.nbytes, "<= 50 ms", whole, transfer, device,
            device_target="<= 5 ms")
        del data

    if "lts" in cases:
        x, y, _ = make_lts_data(1_000_000, 10, 5)
        whole, transfer, device = engine_call(context, clock, lambda: lts(context, y, x), 3)
        row("LTS n = 10^6, p = 10", x.nbytes + y.nbytes, "<= 350 ms", whole, transfer, device)
        del x, y

    if "igmm" in cases:
        sets = make_sets(40_000, 2000, 2026)
        whole, transfer, device = engine_call(
            context, clock, lambda: igmm(context, sets, 2, starts=10, max_iterations=100, tolerance=0.0, seed=0), 3)
        row("IGMM 40,000 x 2,000, k = 2, 10 starts, 100 iterations", sets.nbytes, "<= 1000 ms", whole, transfer,
            device)
        del sets

    auto_lines = []
    if "auto" in cases:
        auto_lines = auto_table(engine, clock)

    lines = ["| case | input | bus (pinned) | whole call (pageable) | of it: copy, device | whole / bus | "
             "torch whole call | target (whole) | target (device) | met |", "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if "whole" not in r:
            lines.append(f"| {r['case']} | | | | device {r['device']:.3f} ms | | | | {r['device_target']} | "
                         f"{met(r['device_target'], r['device'])} |")
            continue
        gb = r["bytes"] / 1e9
        verdicts = [met(r["target"], r["whole"], r["whole"] / r["bus"])]
        if r["device_target"]:
            verdicts.append(met(r["device_target"], r["device"]))
        lines.append(
            f"| {r['case']} | {gb:.2f} GB | {r['bus']:.1f} ms ({gb / r['bus'] * 1e3:.1f} GB/s) | {r['whole']:.1f} ms | "
            f"{r['split']} | {r['whole'] / r['bus']:.2f}x | "
            f"{'' if r['peer'] is None else format(r['peer'], '.1f') + ' ms'} | {r['target']} | "
            f"{r['device_target'] or ''} | {', '.join(verdicts)} |")
    lines += cpu_kmeans_lines(args.out)
    lines.append("\nGPUMEDIAN in Calc against MEDIAN needs LibreOffice and the add-in: bench/bench_calc.py "
                 "(bench/NOTES.md, \"In Calc\").")
    log("\n## Host data: whole calls from pageable memory against the bus (H2D), medians\n")
    log("\n".join(lines))
    if auto_lines:
        log("\n## AUTO against the faster backend (wall ms from pageable memory, medians)\n")
        log("\n".join(auto_lines))
        lines += [""] + auto_lines
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, "host.md"), "w") as handle:
            handle.write("\n".join(lines) + "\n")
    context.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
