#!/usr/bin/env python3
"""Inverse Gaussian mixture benchmark: statgpu_igmm against R's reference EM
and a batched PyTorch EM.

Issue 13's cases: (a) 100 data sets x 2,000 observations, k = 2, 1 start;
(b) 40,000 data sets x 2,000 observations, k = 2, 10 starts; 100 EM
iterations per fit in both (tolerance 0, so every fit does exactly 100 E- and
M-steps and a final E-step). Targets: statgpu on the CPU at least 100x the R
reference on the same machine; case (b) on the GPU in at most 1 s.

Data: per data set a two-component inverse Gaussian mixture (numpy's wald;
weights, means and shapes drawn around (0.4, 0.6), (0.55, 2.1), (2.2, 8)),
generated in blocks of 1,000 data sets, each block from its own seed, so that
the first m data sets are the same whatever the case's size.

Starts: given, the same for every peer. statgpu's params.initial_alpha/mu/
lambda give one start shared by all data sets, so a case of T starts is T
calls, start t for every data set in call t; R and torch fit every data set
from the same T starts. Every fit's final log-likelihood is compared with
statgpu CPU's (relative 1e-8). Case (b) also times the engine's own shape, one
call with start_count 10 (bulkem's random starts, which no peer reproduces:
not compared).

Peers:
- statgpu CPU (all threads) and statgpu CUDA: wall time of the calls from
  host memory. CUDA is first probed with a small call; where the engine ran
  it on the CPU or failed, the row says "n/a (no GPU path)". Case (b)'s
  one-call rows give CUDA's copy and device times too.
  statgpu CPU on one thread too (--one-thread-max-fits), to set beside R's
  one core: a ratio per core that other machines can be read from.
- R: bench/igmm_reference.R, the EM of tests/reference/igmm_reference.R
  (statmod's dinvgauss in log space), fit by fit, one data set after another,
  timed inside R with proc.time around each fit.
- torch: a float64 EM batched over data sets and starts (device: --torch-
  device, cuda by default), the same updates; wall time around
  synchronisations, after a warm-up. A batch's data sets x starts x k x n
  arrays hold at most 2^26 values on the GPU and 2^18 on the CPU (the
  2-core machine, case b: 1.1 ms a fit at 2^18, 1.9 at 2^20, 7.0 at 2^26,
  presumably as the smaller arrays stay in cache).

A peer may run the first m data sets of a case only (--cpu-max-fits,
--r-max-fits, --torch-max-fits: at most that many fits, whole data sets with
all their starts); its whole-case time is then extrapolated per fit and
labelled so. Times are medians of the repeats (R runs once: its fits are
timed one by one); repeats stop once a peer's runs have taken 10 s.

Writes igmm.csv and igmm.md under --out and prints a markdown table.
"""
import argparse
import csv
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_gmm import NO_GPU_PATH, log, repeat_runs  # noqa: E402
from statgpu_ctypes import Engine, StatgpuError, igmm  # noqa: E402

ITERATIONS = 100
AGREEMENT = 1e-8       # relative difference of a fit's final log-likelihood that counts as the same fit
BLOCK_SETS = 1000      # data sets generated from one seed
PROBE_SETS = 4
# name: (data sets, observations per data set, k, starts)
CASES = {"a": (100, 2000, 2, 1), "b": (40_000, 2000, 2, 10)}
TARGETS = {"a": "statgpu CPU >= 100x R; statgpu CUDA <= 5 ms",
           "b": "statgpu CPU >= 100x R; statgpu CUDA <= 1 s in the engine's shape"}
# The GPU's bound per case, judged on the engine's own shape where the case has
# one (case b: one call, every start at once), else on the given starts' calls.
GPU_BOUND = {"a": 0.005, "b": 1.0}
R_SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "igmm_reference.R")


# ----- data and starts -----

def make_sets(set_count, length, seed):
    """set_count data sets (rows) of length values, each a two-component
    inverse Gaussian mixture with its own weights, means and shapes."""
    sets = np.empty((set_count, length))
    for first in range(0, set_count, BLOCK_SETS):
        count = min(BLOCK_SETS, set_count - first)
        rng = np.random.default_rng([seed, first // BLOCK_SETS])
        weight = rng.uniform(0.3, 0.5, size=(count, 1))
        mu = np.stack([rng.uniform(0.4, 0.7, count), rng.uniform(1.6, 2.6, count)], axis=1)
        shape = np.stack([rng.uniform(1.5, 3.0, count), rng.uniform(6.0, 10.0, count)], axis=1)
        first_component = rng.random((count, length)) < weight
        values = [rng.wald(mu[:, j:j + 1], shape[:, j:j + 1], size=(count, length)) for j in range(2)]
        sets[first:first + count] = np.where(first_component, values[0], values[1])
    return sets


def make_starts(start_count, k, seed):
    """start_count starts (alpha, mu, lambda; each start_count x k): the
    first is the engine's reference test's (weights 1/k, means from 0.8 to
    1.5, shapes 1), the others means and shapes drawn at random, weights 1/k."""
    rng = np.random.default_rng([seed, 1 << 20])
    alpha = np.full((start_count, k), 1.0 / k)
    mu = np.sort(rng.uniform(0.3, 3.0, size=(start_count, k)), axis=1)
    shape = rng.uniform(0.5, 4.0, size=(start_count, k))
    mu[0] = np.linspace(0.8, 1.5, k) if k > 1 else 1.0
    shape[0] = 1.0
    return alpha, mu, shape


def fitted_sets(set_count, start_count, max_fits):
    """How many whole data sets a peer limited to max_fits fits (0: no
    limit) runs."""
    if not max_fits:
        return set_count
    return max(1, min(set_count, max_fits // start_count))


# ----- statgpu -----

def threads_text(context):
    count = context.report().cpu_thread_count
    return f"{count} thread{'s' if count != 1 else ''}"


def statgpu_given(engine, backend, sets, starts, repeats, threads=0):
    """Every data set from every given start: one call per start. Returns a
    row dict (seconds, repeats, loglik: sets x starts) or why it did not run."""
    alpha, mu, shape = starts
    k = alpha.shape[1]
    context = engine.context(backend=backend, threads=threads)

    def call(rows, t):
        result = igmm(context, rows, k, alpha[t], mu[t], shape[t], max_iterations=ITERATIONS, tolerance=0.0)
        report = context.report()
        return result, {0: "auto", 1: "cpu", 2: "cuda"}.get(report.last_used, "?"), report

    try:
        if backend == "cuda":
            try:
                _, used, report = call(sets[:PROBE_SETS], 0)
            except StatgpuError as error:
                return f"{NO_GPU_PATH}: {error}"
            if used != "cuda":
                return f"{NO_GPU_PATH}: {report.note.decode() or 'the engine ran it on the CPU'}"

        def run():
            begin = time.perf_counter()
            results = []
            for t in range(alpha.shape[0]):
                result, used, report = call(sets, t)
                if used != backend:
                    raise StatgpuError(f"ran on {used}, not {backend}: {report.note.decode()}")
                results.append(result)
            return results, time.perf_counter() - begin

        runs = repeat_runs(run, repeats)
        results = runs[0][0]
        loglik = np.stack([r["log_likelihood"] for r in results], axis=1)
        flags = []
        iterations = np.concatenate([r["iterations"] for r in results])
        if np.any(iterations != ITERATIONS):
            flags.append(f"{np.count_nonzero(iterations != ITERATIONS)} fits did not do {ITERATIONS} iterations")
        reseeds = sum(int(r["reseed_count"].sum()) for r in results)
        if reseeds:
            flags.append(f"{reseeds} components re-seeded (the peers do not re-seed)")
        unfitted = sum(int(np.count_nonzero(r["status"])) for r in results)
        if unfitted:
            flags.append(f"{unfitted} fits not fitted (status)")
        if len(runs) > 1:
            same = all(np.array_equal(np.stack([r["log_likelihood"] for r in other[0]], axis=1), loglik)
                       for other in runs[1:])
            flags.append("repeats: same bits" if same else "repeats DIFFER")
        if backend == "cpu":
            flags.append(threads_text(context))
        return {"seconds": statistics.median(r[1] for r in runs), "repeats": len(runs), "loglik": loglik,
                "note": "; ".join(flags)}
    finally:
        context.close()


def statgpu_random(engine, backend, sets, start_count, k, repeats):
    """The engine's own shape: one call, start_count random starts per data
    set (bulkem's), seed 0."""
    context = engine.context(backend=backend)
    try:
        def run():
            begin = time.perf_counter()
            result = igmm(context, sets, k, starts=start_count, max_iterations=ITERATIONS, tolerance=0.0, seed=0)
            return result, time.perf_counter() - begin

        runs = repeat_runs(run, repeats)
        result = runs[0][0]
        notes = [f"random starts, not compared; median best log-likelihood {np.median(result['log_likelihood']):.6f}"]
        if result["reseed_count"].any():
            notes.append(f"{np.count_nonzero(result['reseed_count'])} kept starts re-seeded a component")
        report = context.report()
        if backend == "cuda":
            if report.last_used != 2:
                return f"{NO_GPU_PATH}: {report.note.decode() or 'the engine ran it on the CPU'}"
            notes.append(f"of the last run: copies {report.last_transfer_seconds:.3f} s, device work "
                         f"{report.last_compute_seconds:.3f} s")
        else:
            notes.append(threads_text(context))
        return {"seconds": statistics.median(r[1] for r in runs), "repeats": len(runs), "note": "; ".join(notes)}
    finally:
        context.close()


# ----- R -----

def r_peer(sets, starts):
    """bench/igmm_reference.R over every data set and start, fit by fit."""
    if shutil.which("Rscript") is None:
        return "n/a (Rscript not installed)"
    alpha, mu, shape = starts
    set_count, length = sets.shape
    with tempfile.TemporaryDirectory() as folder:
        data_file, starts_file, out_file = (os.path.join(folder, name) for name in ("data.bin", "starts.csv", "r.csv"))
        sets.astype("<f8").tofile(data_file)
        np.savetxt(starts_file, np.hstack([alpha, mu, shape]), delimiter=",", fmt="%.17g")
        completed = subprocess.run(["Rscript", R_SCRIPT, data_file, str(set_count), str(length), starts_file,
                                    str(ITERATIONS), out_file], capture_output=True, text=True)
        if completed.returncode != 0:
            return f"failed: {completed.stderr.strip().splitlines()[-1] if completed.stderr else ''}"
        with open(out_file) as file:
            rows = list(csv.DictReader(file))
    loglik = np.array([float(row["loglik"]) for row in rows]).reshape(set_count, alpha.shape[0])
    seconds = [float(row["seconds"]) for row in rows]
    return {"seconds": sum(seconds), "repeats": 1, "loglik": loglik,
            "note": f"{completed.stdout.strip()}; a fit: median {statistics.median(seconds) * 1e3:.0f} ms, "
                    f"{min(seconds) * 1e3:.0f}-{max(seconds) * 1e3:.0f} ms"}


# ----- PyTorch -----

LOG_2PI = math.log(2.0 * math.pi)


def torch_em(torch, x, alpha, mu, shape, iterations=ITERATIONS):
    """EM of every data set (a row of x) from every start at once: alpha, mu
    and shape are starts x k. The engine's updates: log-space densities,
    log-sum-exp responsibilities, the exact M-step. Returns the final
    log-likelihoods, data sets x starts."""
    set_count, n = x.shape
    x4 = x.view(set_count, 1, 1, n)
    log_x = x4.log()
    columns = torch.stack([x, 1.0 / x], dim=2)                                   # sets x n x 2
    alpha, mu, shape = (a.expand(set_count, -1, -1).unsqueeze(-1) for a in (alpha, mu, shape))  # sets x T x k x 1
    for iteration in range(iterations + 1):
        difference = x4 - mu
        log_p = (alpha.log() + 0.5 * (shape.log() - LOG_2PI) - 1.5 * log_x
                 - shape * difference * difference / (2.0 * mu * mu * x4))        # sets x T x k x n
        largest = log_p.amax(dim=2, keepdim=True)
        scaled = (log_p - largest).exp_()
        total = scaled.sum(dim=2, keepdim=True)
        if iteration == iterations:
            return (largest + total.log()).sum(dim=-1).squeeze(-1)
        resp = scaled.div_(total)
        w = resp.sum(dim=-1, keepdim=True)
        starts, k = resp.shape[1], resp.shape[2]
        sums = torch.bmm(resp.view(set_count, starts * k, n), columns).view(set_count, starts, k, 2)
        mu = sums[..., 0:1] / w
        shape = w / (sums[..., 1:2] - w / mu)
        alpha = w / w.sum(dim=2, keepdim=True)


def torch_peer(sets, starts, repeats, device, chunk_elements):
    """The batched EM on device, timed; a note instead where it cannot run."""
    try:
        import torch
    except ImportError:
        return "n/a (torch not installed)"
    on_gpu = device.startswith("cuda")
    if on_gpu and not torch.cuda.is_available():
        return "n/a (torch has no CUDA device)"
    try:
        return torch_timed(torch, sets, starts, repeats, device, chunk_elements)
    except torch.cuda.OutOfMemoryError as error:
        return f"n/a (out of device memory): {str(error).splitlines()[0][:160]}"
    finally:
        if on_gpu:
            torch.cuda.empty_cache()  # the next case's statgpu CUDA gets the memory back


def torch_timed(torch, sets, starts, repeats, device, chunk_elements):
    on_gpu = device.startswith("cuda")
    set_count, n = sets.shape
    start_arrays = [torch.from_numpy(np.ascontiguousarray(a)).to(device) for a in starts]
    chunk = max(1, chunk_elements // (starts[0].size * n))  # data sets per batch: starts x k x n each
    x = torch.from_numpy(sets).to(device)

    def run(rows=set_count, iterations=ITERATIONS):
        if on_gpu:
            torch.cuda.synchronize()
        begin = time.perf_counter()
        loglik = torch.cat([torch_em(torch, x[first:min(rows, first + chunk)], *start_arrays, iterations)
                            for first in range(0, rows, chunk)]).cpu()  # the copy back waits for the device
        return loglik.numpy(), time.perf_counter() - begin

    if on_gpu:
        torch.cuda.reset_peak_memory_stats()
    run(rows=min(set_count, chunk), iterations=2)  # warm-up: kernels, the caching allocator
    runs = repeat_runs(run, repeats)
    notes = [f"torch {torch.__version__}", "float64", device, f"{min(chunk, set_count)} data sets a batch",
             f"peak {torch.cuda.max_memory_allocated() / 2**30:.1f} GiB" if on_gpu
             else f"{torch.get_num_threads()} threads"]
    return {"seconds": statistics.median(r[1] for r in runs), "repeats": len(runs), "loglik": runs[0][0],
            "note": ", ".join(notes)}


# ----- the table -----

def compare(loglik, reference):
    """The largest relative difference of the fits both ran, and their count."""
    sets = min(loglik.shape[0], reference.shape[0])
    difference = np.abs(loglik[:sets] - reference[:sets]) / np.abs(reference[:sets])
    return float(difference.max()), difference.size


def thousands(value, digits):
    return f"{value:,.{digits}f}"


def markdown(rows):
    lines = ["| case | peer | fits timed (of) | time for them (s) | per fit (ms) | whole case (s) | R / peer | runs "
             "| max rel. diff. vs statgpu CPU (fits) | note |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for row in rows:
        if "seconds" not in row:
            note = row.get("note", "")
            head, _, rest = note.partition(": ") if note.startswith("n/a") else ("n/a", "", note)
            lines.append(f"| {row['case']} | {row['peer']} | {head} | | | | | | | {rest} |")
            continue
        whole = thousands(row["whole_seconds"], 3 if row["whole_seconds"] < 10 else 1)
        if row["fits"] < row["case_fits"]:
            whole += " (extrapolated)"
        ratio = f"{row['r_ratio']:,.1f}x" if "r_ratio" in row else ""
        difference = f"{row['difference']:.1e} ({row['compared']:,})" if "difference" in row else ""
        lines.append(f"| {row['case']} | {row['peer']} | {row['fits']:,} ({row['case_fits']:,}) | "
                     f"{thousands(row['seconds'], 3)} | {row['seconds'] / row['fits'] * 1e3:.3f} | {whole} | {ratio} | "
                     f"{row['repeats']} | {difference} | {row.get('note', '')} |")
    return lines


def summary(case, measured):
    """The case's figures against its targets, one line, or None."""
    parts = []
    cpu, gpu, r = (measured.get(peer) for peer in ("statgpu CPU", "statgpu CUDA", "R reference"))
    if cpu and r:
        extrapolated = "; from extrapolated times" if min(cpu["fits"], r["fits"]) < cpu["case_fits"] else ""
        parts.append(f"statgpu CPU is {cpu['r_ratio']:,.1f}x R ({'met' if cpu['r_ratio'] >= 100 else 'missed'}"
                     f"{extrapolated})")
    one_call = next((row for peer, row in measured.items()
                     if peer.startswith("statgpu CUDA, ") and peer.endswith(" in one call")), None)
    if gpu:
        parts.append(f"statgpu CUDA {gpu['whole_seconds']:.3f} s for the whole case"
                     + (" from the given starts, a call per start" if one_call else
                        f" ({'met' if gpu['whole_seconds'] <= GPU_BOUND[case] else 'missed'})"))
    if one_call:
        parts.append(f"in the engine's shape (one call, every start at once) {one_call['whole_seconds']:.3f} s "
                     f"({'met' if one_call['whole_seconds'] <= GPU_BOUND[case] else 'missed'})")
    return f"- case {case}: " + "; ".join(parts) + f" (target: {TARGETS[case]})" if parts else None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lib", required=True, help="path of libstatgpu.so")
    parser.add_argument("--out", default="bench-out", help="folder for igmm.csv and igmm.md")
    parser.add_argument("--cases", default=",".join(CASES), help="comma-separated: " + ", ".join(CASES))
    parser.add_argument("--repeats", type=int, default=3, help="repeats of statgpu and torch")
    parser.add_argument("--cpu-max-fits", type=int, default=40_000,
                        help="at most this many fits for statgpu CPU per case (0: all), whole data sets")
    parser.add_argument("--one-thread-max-fits", type=int, default=1000,
                        help="at most this many fits for statgpu CPU on one thread, a row beside R's one core "
                             "(0: leave the row out)")
    parser.add_argument("--r-max-fits", type=int, default=100, help="at most this many fits for R per case (0: all)")
    parser.add_argument("--torch-max-fits", type=int, default=0, help="at most this many fits for torch (0: all)")
    parser.add_argument("--skip-gpu", action="store_true", help="leave out statgpu CUDA and torch")
    parser.add_argument("--skip-r", action="store_true", help="leave out R")
    parser.add_argument("--torch-device", default="cuda", help="torch's device: cuda (default) or cpu, to test")
    parser.add_argument("--torch-chunk-elements", type=int,
                        help="torch batches data sets so that one data sets x starts x k x n array holds at most "
                             "this many values (default 2^26 on the GPU, 2^18 on the CPU)")
    parser.add_argument("--seed", type=int, default=2026, help="the data's and the starts' seed")
    args = parser.parse_args()
    if args.torch_chunk_elements is None:
        args.torch_chunk_elements = 1 << (26 if args.torch_device.startswith("cuda") else 18)
    os.makedirs(args.out, exist_ok=True)
    engine = Engine(args.lib)
    log(f"statgpu {engine.lib.statgpu_version_string().decode()}; {ITERATIONS} EM iterations a fit (tolerance 0) "
        f"from given starts; {os.cpu_count()} CPUs")

    rows, summaries = [], []
    for name in args.cases.split(","):
        set_count, length, k, start_count = CASES[name]
        log(f"\n## case {name}: {set_count:,} data sets x {length:,} observations, k = {k}, "
            f"{start_count} start{'s' if start_count > 1 else ''}")
        starts = make_starts(start_count, k, args.seed)
        peers = []  # (name, data sets it runs, how)
        if not args.skip_gpu:
            peers.append(("statgpu CUDA", set_count, lambda s: statgpu_given(engine, "cuda", s, starts, args.repeats)))
        cpu_sets = fitted_sets(set_count, start_count, args.cpu_max_fits)
        peers.append(("statgpu CPU", cpu_sets, lambda s: statgpu_given(engine, "cpu", s, starts, args.repeats)))
        if args.one_thread_max_fits:
            peers.append(("statgpu CPU, 1 thread", fitted_sets(set_count, start_count, args.one_thread_max_fits),
                          lambda s: statgpu_given(engine, "cpu", s, starts, args.repeats, threads=1)))
        if start_count > 1:
            if not args.skip_gpu:
                peers.append((f"statgpu CUDA, {start_count} random starts in one call", set_count,
                              lambda s: statgpu_random(engine, "cuda", s, start_count, k, args.repeats)))
            peers.append((f"statgpu CPU, {start_count} random starts in one call", cpu_sets,
                          lambda s: statgpu_random(engine, "cpu", s, start_count, k, args.repeats)))
        if not args.skip_r:
            peers.append(("R reference", fitted_sets(set_count, start_count, args.r_max_fits),
                          lambda s: r_peer(s, starts)))
        if not args.skip_gpu:
            peers.append(("torch EM", fitted_sets(set_count, start_count, args.torch_max_fits),
                          lambda s: torch_peer(s, starts, args.repeats, args.torch_device,
                                               args.torch_chunk_elements)))
        sets = make_sets(max(count for _, count, _ in peers), length, args.seed)
        log(f"  data: {sets.shape[0]:,} data sets generated, {sets.nbytes / 2**20:,.0f} MiB")

        case_rows = []
        for peer, count, run in peers:
            try:
                result = run(sets[:count])
            except StatgpuError as error:
                result = f"failed: {error}"
            row = {"case": name, "peer": peer, "case_fits": set_count * start_count}
            if isinstance(result, str):  # why the peer did not run
                row["note"] = result
            else:
                row.update(result, fits=count * start_count, whole_seconds=result["seconds"] * set_count / count)
            case_rows.append(row)
            timing = (f"{row['seconds']:.3f} s for {row['fits']:,} fits, {row['whole_seconds']:,.3f} s for the case"
                      if "seconds" in row else "n/a")
            log(f"  {peer}: {timing}  {row.get('note', '')}")

        measured = {row["peer"]: row for row in case_rows if "seconds" in row}
        reference = measured.get("statgpu CPU")
        for row in case_rows:
            if "seconds" not in row:
                continue
            if "R reference" in measured and row["peer"] != "R reference":
                row["r_ratio"] = measured["R reference"]["whole_seconds"] / row["whole_seconds"]
            if reference is not None and row is not reference and "loglik" in row:
                row["difference"], row["compared"] = compare(row["loglik"], reference["loglik"])
                if not row["difference"] <= AGREEMENT:
                    flag = f"DISAGREES with statgpu CPU ({row['difference']:.1e} relative)"
                    log(f"  ** {row['peer']}: {flag}")
                    row["note"] = f"{flag}; {row['note']}"
        if reference is not None:
            log(f"  statgpu CPU: median final log-likelihood {np.median(reference['loglik']):.10f}")
        rows.extend(case_rows)
        summaries.append(summary(name, measured))

    report = "\n".join(markdown(rows) + [""] + [line for line in summaries if line])
    log("\n" + report)
    with open(os.path.join(args.out, "igmm.md"), "w") as file:
        file.write(f"# Inverse Gaussian mixtures: {ITERATIONS} EM iterations a fit ({os.cpu_count()} CPUs)\n\n{report}\n")
    with open(os.path.join(args.out, "igmm.csv"), "w", newline="") as file:
        writer = csv.DictWriter(file, extrasaction="ignore", fieldnames=[
            "case", "peer", "fits", "case_fits", "seconds", "whole_seconds", "r_ratio", "repeats", "difference",
            "compared", "note"])
        writer.writeheader()
        writer.writerows(rows)
    log(f"\nwrote {os.path.join(args.out, 'igmm.csv')} and igmm.md")

if __name__ == "__main__":
    main()
