#!/usr/bin/env python3
"""k-means benchmark: 50 Lloyd iterations of statgpu on CUDA and on the CPU,
scikit-learn's KMeans (algorithm='lloyd', all cores) and a PyTorch Lloyd on the
GPU (torch.cdist + argmin + index_add_, float64), from the same data and the
same initial centroids, side by side.

Every peer does exactly 50 iterations: max_iterations = 50, tolerance 0 and
given initial centroids; statgpu and scikit-learn would stop earlier only if
no label changed, which the overlapping blobs rule out, and the script checks
the iteration count each one reports (a peer that did fewer is flagged). The
final inertias are printed next to each other as a check that the peers did
the same work.

Times: medians of the repeats. statgpu on CUDA: the engine's own CUDA-event
times (compute = the iterations on the device, transfer = the data's copy in
and the result's copy out) and the wall time of the whole call (which also
includes the data check on the CPU). PyTorch: CUDA events around the 50
iterations after a warm-up, data already on the device. CPU peers: wall time,
the peers taking turns within each repeat (--baseline-lib adds another build
of statgpu on the CPU, for a before and after in one run).

--skip-gpu leaves out the GPU peers (a machine without CUDA), --skip-cpu the
CPU peers; --threads N runs statgpu's CPU backend and scikit-learn (through
threadpoolctl) on the same N threads (0: each one's default, all cores).

Writes kmeans.csv under --out and prints a markdown table.
"""
import argparse
import csv
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from statgpu_ctypes import Engine, StatgpuError, kmeans  # noqa: E402

ITERATIONS = 50
CASES = {"1e6x16k16": (1_000_000, 16, 16), "1e6x16k64": (1_000_000, 16, 64), "2e6x16k64": (2_000_000, 16, 64),
         "1e7x16k64": (10_000_000, 16, 64), "small": (100_000, 8, 8)}


def log(*parts):
    print(*parts, flush=True)


def make_blobs(n, d, k, seed):
    """k overlapping Gaussian blobs (centres N(0, 0.5^2), unit noise): labels
    keep changing for many iterations. Column-major (order='F') float64."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(0.0, 0.5, size=(k, d))
    which = rng.integers(0, k, size=n)
    data = np.empty((n, d), dtype=np.float64, order="F")
    for v in range(d):
        data[:, v] = centres[which, v] + rng.standard_normal(n)
    initial = np.asfortranarray(data[rng.choice(n, size=k, replace=False), :])
    return data, initial


def ours(engine, backend, data, initial, repeats, threads):
    context = engine.context(backend=backend, threads=threads)
    try:
        walls, computes, transfers, runs = [], [], [], []
        for _ in range(repeats):
            start = time.perf_counter()
            result = kmeans(context, data, initial.shape[0], initial_centroids=initial, max_iterations=ITERATIONS,
                            tolerance=0.0)
            walls.append((time.perf_counter() - start) * 1e3)
            report = context.report()
            used = {0: "auto", 1: "cpu", 2: "cuda"}.get(report.last_used, "?")
            if used != backend:
                raise StatgpuError(f"ran on {used}, not {backend}: {report.note.decode()}")
            computes.append(report.last_compute_seconds * 1e3)
            transfers.append(report.last_transfer_seconds * 1e3)
            runs.append(result)
        row = {"ms": statistics.median(walls), "iterations": runs[0]["iterations"], "inertia": runs[0]["inertia"]}
        if backend == "cuda":
            row["compute_ms"] = statistics.median(computes)
            row["transfer_ms"] = statistics.median(transfers)
            row["same_bits"] = all(r["inertia"] == runs[0]["inertia"] and r["centroids"] == runs[0]["centroids"]
                                   for r in runs)
        return row
    finally:
        context.close()


def statgpu_cpu_once(engine, data, initial, threads):
    """One timed CPU call per use of the function returned; the context stays."""
    context = engine.context(backend="cpu", threads=threads)

    def once():
        start = time.perf_counter()
        result = kmeans(context, data, initial.shape[0], initial_centroids=initial, max_iterations=ITERATIONS,
                        tolerance=0.0)
        return (time.perf_counter() - start) * 1e3, {"iterations": result["iterations"], "inertia": result["inertia"]}
    return once


def sklearn_once(data, initial, threads):
    """One timed fit per use of the function returned, or None without scikit-learn."""
    try:
        from sklearn.cluster import KMeans
        import sklearn
        from threadpoolctl import threadpool_limits
    except ImportError:
        return None
    x = np.ascontiguousarray(data)
    c = np.ascontiguousarray(initial)

    def once():
        model = KMeans(n_clusters=c.shape[0], init=c, n_init=1, max_iter=ITERATIONS, tol=0.0, algorithm="lloyd")
        start = time.perf_counter()
        if threads > 0:
            with threadpool_limits(limits=threads):
                model.fit(x)
        else:
            model.fit(x)
        return (time.perf_counter() - start) * 1e3, {"iterations": int(model.n_iter_),
                                                       "inertia": float(model.inertia_),
                                                       "version": sklearn.__version__}
    return once


def cpu_peers_in_turn(peers, repeats):
    """The CPU peers (name, once or None) taking turns within each repeat, so
    that each sees the machine as the others do; medians."""
    runnable = [(name, once) for name, once in peers if once is not None]
    times = {name: [] for name, _ in runnable}
    last = {}
    for _ in range(repeats):
        for name, once in runnable:
            ms, last[name] = once()
            times[name].append(ms)
    return {name: (dict(last[name], ms=statistics.median(times[name])) if name in last else None)
            for name, _ in peers}


def torch_peer(data, initial, repeats):
    try:
        import torch
    except ImportError:
        return None
    if not torch.cuda.is_available():
        return {"error": "no CUDA device for torch"}
    x = torch.from_numpy(np.ascontiguousarray(data)).cuda()
    c0 = torch.from_numpy(np.ascontiguousarray(initial)).cuda()
    k, d = c0.shape

    def lloyd(iterations):
        c = c0.clone()
        for _ in range(iterations):
            labels = torch.cdist(x, c).argmin(dim=1)
            sums = torch.zeros((k, d), dtype=torch.float64, device=x.device).index_add_(0, labels, x)
            counts = torch.bincount(labels, minlength=k).to(torch.float64).unsqueeze(1)
            c = torch.where(counts > 0, sums / counts.clamp(min=1.0), c)
        return c

    lloyd(3)  # warm-up
    torch.cuda.synchronize()
    times, c = [], None
    for _ in range(repeats):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        c = lloyd(ITERATIONS)
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    labels = torch.cdist(x, c).argmin(dim=1)
    inertia = float(((x - c[labels]) ** 2).sum())
    del x
    torch.cuda.empty_cache()
    return {"ms": statistics.median(times), "iterations": ITERATIONS, "inertia": inertia, "version": torch.__version__}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lib", required=True, help="path of libstatgpu.so")
    parser.add_argument("--out", default="bench-out")
    parser.add_argument("--cases", default="1e6x16k16,1e7x16k64", help="comma-separated: " + ", ".join(CASES))
    parser.add_argument("--repeats", type=int, default=5, help="repeats of the GPU peers")
    parser.add_argument("--cpu-repeats", type=int, default=3, help="repeats of the CPU peers")
    parser.add_argument("--skip-cpu", action="store_true", help="leave out statgpu on the CPU and scikit-learn")
    parser.add_argument("--skip-gpu", action="store_true", help="leave out statgpu on CUDA and torch")
    parser.add_argument("--baseline-lib", help="another libstatgpu.so, run on the CPU beside --lib (before and after)")
    parser.add_argument("--threads", type=int, default=0,
                        help="threads of statgpu's CPU backend and of scikit-learn (threadpoolctl); 0: their defaults")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    engine = Engine(args.lib)
    baseline = Engine(args.baseline_lib) if args.baseline_lib else None
    log(f"statgpu {engine.lib.statgpu_version_string().decode()}; {ITERATIONS} Lloyd iterations from given centroids")

    rows = []
    for name in args.cases.split(","):
        n, d, k = CASES[name]
        log(f"\n## n = {n}, d = {d}, k = {k}")
        data, initial = make_blobs(n, d, k, seed=2024)
        peers = []
        if not args.skip_gpu:
            peers.append(("statgpu CUDA", lambda: ours(engine, "cuda", data, initial, args.repeats, args.threads)))
            peers.append(("torch Lloyd (GPU, float64)", lambda: torch_peer(data, initial, args.repeats)))
        if not args.skip_cpu:
            cpu_peers = [("statgpu CPU", statgpu_cpu_once(engine, data, initial, args.threads))]
            if baseline is not None:
                cpu_peers.append(("statgpu CPU (baseline)", statgpu_cpu_once(baseline, data, initial, args.threads)))
            cpu_peers.append(("scikit-learn lloyd (CPU)", sklearn_once(data, initial, args.threads)))
            cpu_results = {}

            def cpu_result(peer):
                if not cpu_results:
                    cpu_results.update(cpu_peers_in_turn(cpu_peers, args.cpu_repeats))
                return cpu_results[peer]
            for peer, _ in cpu_peers:
                peers.append((peer, lambda peer=peer: cpu_result(peer)))
        for peer, run in peers:
            try:
                result = run()
            except StatgpuError as error:
                result = {"error": str(error)}
            row = {"case": name, "n": n, "d": d, "k": k, "peer": peer}
            if result is None:
                row["note"] = "not installed"
            elif "error" in result:
                row["note"] = result["error"]
            else:
                row.update(result)
                notes = []
                if result["iterations"] != ITERATIONS:
                    notes.append(f"did {result['iterations']} iterations, not {ITERATIONS}")
                if "same_bits" in result:
                    notes.append("repeats: same bits" if result["same_bits"] else "repeats DIFFER")
                if "version" in result:
                    notes.append(result["version"])
                row["note"] = "; ".join(notes)
            rows.append(row)
            log(f"  {peer}: {row.get('ms', float('nan')):.2f} ms  {row.get('note', '')}")

    log("\n| case | peer | 50 iterations (ms) | per iteration (ms) | device compute (ms) | transfer (ms) "
        "| iterations | inertia | note |")
    log("|---|---|---|---|---|---|---|---|---|")
    for row in rows:
        def cell(key, fmt="{:.2f}"):
            return fmt.format(row[key]) if key in row else ""
        per_iteration = f"{row['ms'] / ITERATIONS:.3f}" if "ms" in row else ""
        if "compute_ms" in row:
            per_iteration = f"{row['compute_ms'] / ITERATIONS:.3f} (device)"
        log(f"| {row['case']} | {row['peer']} | {cell('ms')} | {per_iteration} | {cell('compute_ms')} | "
            f"{cell('transfer_ms')} | {cell('iterations', '{}')} | {cell('inertia', '{:.10g}')} | {row.get('note', '')} |")

    fields = ["case", "n", "d", "k", "peer", "ms", "compute_ms", "transfer_ms", "iterations", "inertia", "note"]
    with open(os.path.join(args.out, "kmeans.csv"), "w", newline="") as file:
        writer = csv.DictWriter(file, fieldnames=fields, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
    log(f"\nwrote {os.path.join(args.out, 'kmeans.csv')}")


if __name__ == "__main__":
    main()
