#!/usr/bin/env python3
"""Best subset regression benchmark: statgpu_bestsubset against R's
leaps::regsubsets, exhaustive, side by side on the same data in one run.

The issue's cases, n = 10,000 rows, an intercept, nbest = 1, every size
(nvmax = p):
  a  p = 40, 8 strong: 8 coefficients well above the noise, the other 32 zero
  b  p = 40, all small: every coefficient small against the noise (the
     bounds prune badly; leaps took 100.7 s on a 2-core machine)
  c  p = 50, 8 strong (leaps needs really.big = TRUE)
  d  p = 60, 8 strong
Data: x standard normal (independent columns), y = 1 + x beta + N(0, 1);
strong coefficients +-U(0.5, 1), placed at random; small ones +-U(0.005,
0.03) (about 0.5 to 3 standard errors at n = 10^4). Every case from its own
fixed numpy seed. The values are written once per case as raw little-endian
doubles (x column-major, y), which R reads with readBin; statgpu is given the
very arrays written, so both see the same bits (a decimal CSV would make R's
parser a party to the comparison).

Peers:
- leaps: bench/bestsubset_leaps.R, regsubsets(x, y, method = "exhaustive",
  nbest = 1, nvmax = p, really.big = TRUE), timed inside R around the
  regsubsets call alone (system.time's elapsed). Once per case by default
  (--leaps-repeats); a run longer than --leaps-max-seconds is stopped and
  the case's leaps time reported as a lower bound; leaps then runs again
  with nvmax = --leaps-partial-nvmax (10) to check the sizes up to it.
- statgpu CPU on all the context's threads and on one: the wall time of the
  statgpu_bestsubset call (ctypes, data in host memory; its defaults, so the
  call also computes the exact PRESS of each reported subset and the chosen
  model's coefficients), median of --repeats (fewer once the runs have
  taken 10 s: case d on one thread runs once).
- statgpu CUDA: a small probe call first (34 predictors, above the engine's
  AUTO threshold for the GPU), then the whole call timed as the CPU's; its
  subsets must be the CPU's. Where the engine finds no CUDA device the row
  says "n/a (no GPU here)", where it has one but ran the search on the CPU
  "n/a (no GPU path)".

Checks: per size, the subset statgpu reports (all threads) against leaps's
which matrix, and its RSS within 1e-9 relative of leaps's; OK or MISMATCH per
case (a mismatch lists the size, both subsets and both RSS, and each
subset's RSS recomputed by numpy's least squares). statgpu on one thread must
give the same subsets and RSS bits as on all threads.

  bench/bench_bestsubset.py --lib build/lib/libstatgpu.so [--cases a,b,c,d]
      [--repeats 5] [--leaps-max-seconds 600] [--leaps-partial-nvmax 10]
      [--skip-leaps] [--out DIR]

Writes bestsubset.md and bestsubset.csv under --out and prints the table.
"""
import argparse
import csv
import ctypes
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_gmm import NO_GPU_PATH, log, repeat_runs  # noqa: E402
from statgpu_ctypes import BACKEND, Engine, StatgpuError  # noqa: E402

N_OBS = 10_000
NBEST = 1
NO_GPU_HERE = "n/a (no GPU here)"
RSS_AGREEMENT = 1e-9   # relative difference of a size's RSS that counts as the same
# name: (p, description, strong coefficients (None: all small))
CASES = {"a": (40, "8 strong", 8), "b": (40, "all small", None), "c": (50, "8 strong", 8), "d": (60, "8 strong", 8)}
TARGETS = "statgpu CPU >= 10x leaps on the same machine; statgpu GPU <= 0.1 s for (a) and <= 1 s for (b)"
R_SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bestsubset_leaps.R")


# ----- data -----

def make_case(name, seed):
    """x (n x p, column-major), y and the true coefficients of a case."""
    p, _, strong = CASES[name]
    rng = np.random.default_rng([seed, ord(name)])
    x = np.asfortranarray(rng.standard_normal((N_OBS, p)))
    sign = rng.choice([-1.0, 1.0], size=p)
    if strong is None:
        beta = sign * rng.uniform(0.005, 0.03, size=p)
    else:
        beta = np.zeros(p)
        where = rng.choice(p, size=strong, replace=False)
        beta[where] = sign[where] * rng.uniform(0.5, 1.0, size=strong)
    y = 1.0 + x @ beta + rng.standard_normal(N_OBS)
    return x, y, beta


def subset_rss(x, y, columns):
    """The RSS of y's least squares fit on an intercept and x's columns."""
    design = np.column_stack([np.ones(len(y)), x[:, columns]])
    coefficients, *_ = np.linalg.lstsq(design, y, rcond=None)
    residuals = y - design @ coefficients
    return float(residuals @ residuals)


# ----- statgpu (ctypes) -----

class BestsubsetParams(ctypes.Structure):
    _fields_ = [
        ("struct_bytes", ctypes.c_size_t),
        ("intercept", ctypes.c_int),
        ("max_size", ctypes.c_size_t),
        ("nbest", ctypes.c_size_t),
        ("force", ctypes.c_void_p),
        ("validation", ctypes.c_int),
        ("holdout_fraction", ctypes.c_double),
        ("fold_count", ctypes.c_size_t),
        ("criterion", ctypes.c_int),
        ("seed", ctypes.c_uint64),
    ]


class BestsubsetResult(ctypes.Structure):
    _fields_ = [
        ("n_obs", ctypes.c_size_t),
        ("n_vars", ctypes.c_size_t),
        ("intercept", ctypes.c_int),
        ("nbest", ctypes.c_size_t),
        ("min_size", ctypes.c_size_t),
        ("max_size", ctypes.c_size_t),
        ("subset_count", ctypes.c_size_t),
        ("sizes", ctypes.POINTER(ctypes.c_size_t)),
        ("ranks", ctypes.POINTER(ctypes.c_size_t)),
        ("which", ctypes.POINTER(ctypes.c_uint8)),
        ("rss", ctypes.POINTER(ctypes.c_double)),
        ("r_squared", ctypes.POINTER(ctypes.c_double)),
        ("adjusted_r_squared", ctypes.POINTER(ctypes.c_double)),
        ("cp", ctypes.POINTER(ctypes.c_double)),
        ("bic_leaps", ctypes.POINTER(ctypes.c_double)),
        ("bic", ctypes.POINTER(ctypes.c_double)),
        ("press", ctypes.POINTER(ctypes.c_double)),
        ("validation_error", ctypes.POINTER(ctypes.c_double)),
        ("null_rss", ctypes.c_double),
        ("full_rss", ctypes.c_double),
        ("sigma2", ctypes.c_double),
        ("validation", ctypes.c_int),
        ("criterion", ctypes.c_int),
        ("fold_count", ctypes.c_size_t),
        ("holdout_count", ctypes.c_size_t),
        ("chosen", ctypes.c_size_t),
        ("coefficient_count", ctypes.c_size_t),
        ("coefficients", ctypes.POINTER(ctypes.c_double)),
        ("standard_errors", ctypes.POINTER(ctypes.c_double)),
        ("coefficient_vars", ctypes.POINTER(ctypes.c_size_t)),
        ("dropped", ctypes.POINTER(ctypes.c_uint8)),
        ("dropped_count", ctypes.c_size_t),
        ("subsets_evaluated", ctypes.c_uint64),
    ]


def bind(engine):
    lib = engine.lib
    lib.statgpu_bestsubset_params_init.argtypes = [ctypes.POINTER(BestsubsetParams)]
    lib.statgpu_bestsubset.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t,
                                       ctypes.c_size_t, ctypes.c_size_t, ctypes.POINTER(BestsubsetParams),
                                       ctypes.POINTER(ctypes.POINTER(BestsubsetResult))]
    lib.statgpu_bestsubset_result_destroy.argtypes = [ctypes.POINTER(BestsubsetResult)]


def bestsubset(context, y, x, nbest=NBEST):
    """statgpu_bestsubset of y on x (column-major float64) with the defaults
    and nbest. Returns (seconds of the call, dict: sizes, ranks, which
    (subsets x p uint8), rss, subsets_evaluated)."""
    lib = context.engine.lib
    if not x.flags["F_CONTIGUOUS"] or x.dtype != np.float64 or y.dtype != np.float64:
        raise ValueError("x must be float64 in column-major order, y float64")
    n, p = x.shape
    params = BestsubsetParams()
    lib.statgpu_bestsubset_params_init(ctypes.byref(params))
    params.nbest = nbest
    result = ctypes.POINTER(BestsubsetResult)()
    begin = time.perf_counter()
    status = lib.statgpu_bestsubset(context.handle, y.ctypes.data, x.ctypes.data, n, p, n, ctypes.byref(params),
                                    ctypes.byref(result))
    seconds = time.perf_counter() - begin
    context._check(status)
    try:
        r = result.contents
        count = r.subset_count

        def copy(pointer, shape):
            return np.ctypeslib.as_array(pointer, shape=shape).copy()
        return seconds, {"sizes": copy(r.sizes, (count,)), "ranks": copy(r.ranks, (count,)),
                         "which": copy(r.which, (count, p)), "rss": copy(r.rss, (count,)),
                         "subsets_evaluated": int(r.subsets_evaluated)}
    finally:
        lib.statgpu_bestsubset_result_destroy(result)


def statgpu_cpu(engine, x, y, repeats, threads):
    context = engine.context(backend="cpu", threads=threads)
    try:
        runs = repeat_runs(lambda: bestsubset(context, y, x), repeats)
        thread_count = context.report().cpu_thread_count
    finally:
        context.close()
    result = runs[0][1]
    same = all(np.array_equal(run[1]["which"], result["which"]) and np.array_equal(run[1]["rss"], result["rss"])
               for run in runs[1:])
    return {"seconds": statistics.median(run[0] for run in runs), "runs": len(runs), "threads": thread_count,
            "result": result, "repeats_same": same, "spread": (min(run[0] for run in runs), max(run[0] for run in runs))}


def statgpu_cuda(engine, x, y, repeats):
    """The GPU row, or why there is none: "n/a (no GPU here)" where the
    engine finds no CUDA device or module, "n/a (no GPU path)" where it has
    one but ran the search on the CPU."""
    def why_not(context, detail):
        available = context is not None and context.report().cuda_available
        return f"{NO_GPU_PATH if available else NO_GPU_HERE}: {detail}"

    try:
        context = engine.context(backend="cuda")
    except StatgpuError as error:
        return why_not(None, error)
    try:
        columns = min(x.shape[1], 34)  # above the engine's AUTO threshold for the GPU (32 free predictors)
        probe_x, probe_y = np.asfortranarray(x[:500, :columns]), np.ascontiguousarray(y[:500])
        try:
            bestsubset(context, probe_y, probe_x)  # also the warm-up: module load, device set-up
        except StatgpuError as error:
            return why_not(context, error)
        report = context.report()
        if report.last_used != BACKEND["cuda"]:
            return why_not(context, report.note.decode() or "the engine ran it on the CPU")
        runs, device = [], []
        for _ in range(repeats):
            runs.append(bestsubset(context, y, x))
            report = context.report()
            device.append(report.last_transfer_seconds + report.last_compute_seconds)
        return {"seconds": statistics.median(run[0] for run in runs), "runs": len(runs),
                "device_seconds": statistics.median(device), "result": runs[0][1],
                "device": report.device_name.decode()}
    finally:
        context.close()


# ----- leaps -----

def leaps_available():
    if shutil.which("Rscript") is None:
        return "Rscript not installed"
    probe = subprocess.run(["Rscript", "-e", "library(leaps)"], capture_output=True)
    return None if probe.returncode == 0 else "R package leaps not installed"


def run_leaps(x, y, max_seconds, nvmax=None):
    """One regsubsets run (sizes up to nvmax, default p): dict (seconds,
    sizes, which, rss), or dict (capped: the seconds after which it was
    stopped), or why it failed."""
    n, p = x.shape
    with tempfile.TemporaryDirectory() as folder:
        x.T.astype("<f8").tofile(os.path.join(folder, "x.f64"))  # x is column-major: its transpose's rows
        y.astype("<f8").tofile(os.path.join(folder, "y.f64"))
        # its own process group, so that a capped run is stopped with R and all
        process = subprocess.Popen(["Rscript", R_SCRIPT, folder, str(n), str(p), str(NBEST), str(nvmax or p)],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                   start_new_session=True)
        try:
            out, err = process.communicate(timeout=max_seconds)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.communicate()
            return {"capped": max_seconds}
        if process.returncode != 0:
            lines = err.strip().splitlines()
            return f"failed: {lines[-1] if lines else process.returncode}"
        with open(os.path.join(folder, "leaps.csv")) as file:
            rows = list(csv.DictReader(file))
    return {"seconds": float(out.split()[0]), "sizes": np.array([int(r["size"]) for r in rows]),
            "ranks": np.array([int(r["rank"]) for r in rows]),
            "which": np.array([[c == "1" for c in r["which"]] for r in rows], dtype=np.uint8),
            "rss": np.array([float(r["rss"]) for r in rows])}


def leaps_peer(x, y, repeats, max_seconds):
    runs = []
    for _ in range(repeats):
        run = run_leaps(x, y, max_seconds)
        if not isinstance(run, dict) or "capped" in run:
            return run if not runs else runs[0]
        runs.append(run)
    first = dict(runs[0])
    first["runs"] = len(runs)
    first["seconds"] = statistics.median(run["seconds"] for run in runs)
    return first


# ----- checks -----

def names(row):
    return "{" + ", ".join(f"x{j + 1}" for j in np.flatnonzero(row)) + "}"


def compare(statgpu, leaps, x, y, max_size=None):
    """(OK or MISMATCH, a line per mismatching size), over the sizes up to
    max_size (default all)."""
    problems = []
    key = {(s, r): i for i, (s, r) in enumerate(zip(leaps["sizes"], leaps["ranks"]))}
    for i, (size, rank) in enumerate(zip(statgpu["sizes"], statgpu["ranks"])):
        if max_size is not None and size > max_size:
            continue
        j = key.pop((int(size), int(rank)), None)
        if j is None:
            problems.append(f"size {size} rank {rank}: statgpu {names(statgpu['which'][i])}, leaps has no such row")
            continue
        ours, theirs = statgpu["rss"][i], leaps["rss"][j]
        same_subset = np.array_equal(statgpu["which"][i], leaps["which"][j])
        difference = abs(ours - theirs) / abs(theirs)
        if not same_subset or not difference <= RSS_AGREEMENT:
            recomputed = [subset_rss(x, y, np.flatnonzero(w)) for w in (statgpu["which"][i], leaps["which"][j])]
            problems.append(f"size {size} rank {rank}: statgpu {names(statgpu['which'][i])} RSS {ours:.12g} "
                            f"(numpy {recomputed[0]:.12g}); leaps {names(leaps['which'][j])} RSS {theirs:.12g} "
                            f"(numpy {recomputed[1]:.12g}); relative RSS difference {difference:.1e}")
    for size, rank in key:
        problems.append(f"size {size} rank {rank}: leaps has it, statgpu does not")
    return ("OK" if not problems else "MISMATCH"), problems


# ----- the table -----

def seconds_text(value):
    return f"{value:,.3f}" if value < 10 else f"{value:,.1f}"


def markdown(rows, threads):
    lines = [f"| case | p | leaps s (runs) | statgpu CPU, {threads} threads s (runs) | statgpu CPU, 1 thread s (runs) "
             "| statgpu CUDA s | speed-up over leaps (all threads; 1 thread) | nodes (subsets evaluated) "
             "| subsets agree |",
             "|---|---|---|---|---|---|---|---|---|"]
    for row in rows:
        leaps = row.get("leaps")
        cells = [f"{row['case']} ({row['description']})", str(row["p"])]
        if isinstance(leaps, dict) and "seconds" in leaps:
            cells.append(f"{seconds_text(leaps['seconds'])} ({leaps['runs']})")
        elif isinstance(leaps, dict):
            cells.append(f"> {leaps['capped']:,.0f} (stopped)")
        else:
            cells.append(leaps or "not run")
        for key in ("cpu", "cpu1"):
            peer = row.get(key)
            cells.append(f"{seconds_text(peer['seconds'])} ({peer['runs']})" if peer else "not run")
        cuda = row.get("cuda")
        if isinstance(cuda, dict):
            cells.append(f"{seconds_text(cuda['seconds'])} ({cuda['runs']})")
        else:
            cells.append((cuda or "not run").split(":")[0])
        speedups = []
        for key in ("cpu", "cpu1"):
            peer = row.get(key)
            if peer and isinstance(leaps, dict) and "seconds" in leaps:
                speedups.append(f"{leaps['seconds'] / peer['seconds']:,.0f}x")
            elif peer and isinstance(leaps, dict):
                speedups.append(f"> {leaps['capped'] / peer['seconds']:,.0f}x")
            else:
                speedups.append("–")
        cells.append("; ".join(speedups))
        nodes = [row[key]["result"]["subsets_evaluated"] for key in ("cpu", "cpu1") if row.get(key)]
        cells.append(" / ".join(f"{v:,}" for v in dict.fromkeys(nodes)))  # both when the thread counts differ
        agree = row.get("agree", "–")
        if isinstance(cuda, dict) and not cuda["same"]:
            agree += "; CUDA differs from CPU"
        cells.append(agree)
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def cpu_name():
    try:
        with open("/proc/cpuinfo") as file:
            for line in file:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "CPU"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lib", required=True, help="path of libstatgpu.so")
    parser.add_argument("--out", default="bench-out", help="folder for bestsubset.md and bestsubset.csv")
    parser.add_argument("--cases", default=",".join(CASES), help="comma-separated: " + ", ".join(CASES))
    parser.add_argument("--repeats", type=int, default=5, help="runs of each statgpu measurement (the median is "
                                                               "quoted)")
    parser.add_argument("--leaps-repeats", type=int, default=1, help="runs of leaps per case")
    parser.add_argument("--leaps-max-seconds", type=float, default=600,
                        help="stop a leaps run after this long and report the case's leaps time as a lower bound")
    parser.add_argument("--leaps-partial-nvmax", type=int, default=10,
                        help="where leaps was stopped, run it again with this nvmax and check the sizes up to it "
                             "(0: do not)")
    parser.add_argument("--skip-leaps", action="store_true", help="leave leaps out")
    parser.add_argument("--skip-one-thread", action="store_true", help="leave out statgpu CPU on one thread")
    parser.add_argument("--skip-gpu", action="store_true", help="leave out statgpu CUDA")
    parser.add_argument("--seed", type=int, default=2026, help="the data's seed")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    engine = Engine(args.lib)
    bind(engine)
    leaps_missing = "skipped" if args.skip_leaps else leaps_available()
    leaps_version = ""
    if not leaps_missing:
        leaps_version = subprocess.run(["Rscript", "-e", 'cat(R.version.string, "; leaps ",'
                                        ' format(packageVersion("leaps")), sep = "")'],
                                       capture_output=True, text=True).stdout.strip()
    header = (f"statgpu {engine.lib.statgpu_version_string().decode()}; n = {N_OBS:,}, nbest = {NBEST}, "
              f"every size, an intercept; {cpu_name()}, {os.cpu_count()} CPUs; "
              f"{leaps_version or 'leaps: ' + leaps_missing}")
    log(header)

    rows, details = [], []
    threads = None
    for name in args.cases.split(","):
        p, description, _ = CASES[name]
        x, y, beta = make_case(name, args.seed)
        log(f"\n## case {name}: {description}, n = {N_OBS:,}, p = {p} "
            f"(|beta| of the non-zero: {np.abs(beta[beta != 0]).min():.3g} .. {np.abs(beta).max():.3g}); "
            f"load average {os.getloadavg()[0]:.2f}")
        row = {"case": name, "description": description, "p": p}
        row["cpu"] = statgpu_cpu(engine, x, y, args.repeats, threads=0)
        threads = row["cpu"]["threads"]
        log(f"  statgpu CPU ({threads} threads): {row['cpu']['seconds']:.3f} s (median of {row['cpu']['runs']}, "
            f"{row['cpu']['spread'][0]:.3f}-{row['cpu']['spread'][1]:.3f}), "
            f"{row['cpu']['result']['subsets_evaluated']:,} subsets evaluated"
            f"{'' if row['cpu']['repeats_same'] else '; repeats DIFFER'}")
        if not args.skip_one_thread:
            row["cpu1"] = statgpu_cpu(engine, x, y, args.repeats, threads=1)
            one, every = row["cpu1"]["result"], row["cpu"]["result"]
            same = np.array_equal(one["which"], every["which"]) and np.array_equal(one["rss"], every["rss"])
            log(f"  statgpu CPU (1 thread): {row['cpu1']['seconds']:.3f} s (median of {row['cpu1']['runs']}, "
                f"{row['cpu1']['spread'][0]:.3f}-{row['cpu1']['spread'][1]:.3f}), "
                f"{one['subsets_evaluated']:,} subsets evaluated; "
                f"{'same subsets and RSS bits as all threads' if same else 'DIFFERS from all threads'}")
            if not same:
                details.append(f"- case {name}: statgpu on 1 thread differs from {threads} threads")
        if not args.skip_gpu:
            row["cuda"] = statgpu_cuda(engine, x, y, args.repeats)
            cuda = row["cuda"]
            if isinstance(cuda, dict):
                ours, cpu = cuda["result"], row["cpu"]["result"]
                cuda["same"] = (np.array_equal(ours["which"], cpu["which"])
                                and bool(np.all(np.abs(ours["rss"] - cpu["rss"]) <= RSS_AGREEMENT * cpu["rss"])))
                log(f"  statgpu CUDA ({cuda['device']}): {cuda['seconds']:.3f} s (median of {cuda['runs']}; device "
                    f"{cuda['device_seconds']:.3f} s), "
                    f"{ours['subsets_evaluated']:,} subsets evaluated; "
                    f"{'same subsets as the CPU' if cuda['same'] else 'DIFFERS from the CPU'}")
                if not cuda["same"]:
                    details.append(f"- case {name}: statgpu CUDA's subsets or RSS differ from statgpu CPU's")
            else:
                log(f"  statgpu CUDA: {cuda}")
        if leaps_missing:
            row["leaps"] = f"n/a ({leaps_missing})"
        else:
            row["leaps"] = leaps_peer(x, y, args.leaps_repeats, args.leaps_max_seconds)
            leaps = row["leaps"]
            if isinstance(leaps, dict) and "seconds" in leaps:
                log(f"  leaps: {leaps['seconds']:.3f} s ({leaps['runs']} run{'s' if leaps['runs'] > 1 else ''})")
                row["agree"], problems = compare(row["cpu"]["result"], leaps, x, y)
                log(f"  subsets: {row['agree']}")
                for problem in problems:
                    log(f"    {problem}")
                    details.append(f"- case {name}, {problem}")
            elif isinstance(leaps, dict):
                log(f"  leaps: stopped after {leaps['capped']:,.0f} s")
                row["agree"] = "n/a (leaps stopped)"
                k = min(args.leaps_partial_nvmax, p)
                partial = run_leaps(x, y, args.leaps_max_seconds, nvmax=k) if k > 0 else None
                if isinstance(partial, dict) and "seconds" in partial:
                    verdict, problems = compare(row["cpu"]["result"], partial, x, y, max_size=k)
                    row["agree"] = f"{verdict} for sizes 1-{k} (leaps with nvmax = {k}: {partial['seconds']:.1f} s)"
                    log(f"  subsets: {row['agree']}")
                    for problem in problems:
                        log(f"    {problem}")
                        details.append(f"- case {name}, {problem}")
                elif partial is not None:
                    log(f"  leaps with nvmax = {k}: {partial}")
            else:
                log(f"  leaps: {leaps}")
        rows.append(row)

    lines = markdown(rows, threads)
    report = "\n".join(lines)
    met = []
    for row in rows:
        leaps = row.get("leaps")
        if not isinstance(leaps, dict) or not row.get("cpu"):
            continue
        ratio = leaps.get("seconds", leaps.get("capped")) / row["cpu"]["seconds"]
        if "seconds" in leaps:
            met.append(f"- case {row['case']}: statgpu CPU {ratio:,.0f}x leaps ({'met' if ratio >= 10 else 'missed'})")
        else:
            met.append(f"- case {row['case']}: statgpu CPU > {ratio:,.0f}x leaps "
                       f"({'met' if ratio >= 10 else 'not known'}: leaps stopped after {leaps['capped']:,.0f} s)")
    footer = [f"Times: the call alone, median of the runs in brackets (statgpu), leaps timed inside R around "
              f"regsubsets. Agreement: per size the same subset as leaps's which and RSS within "
              f"{RSS_AGREEMENT:g} relative. Targets: {TARGETS}."] + met + details
    log("\n" + report + "\n\n" + "\n".join(footer))
    with open(os.path.join(args.out, "bestsubset.md"), "w") as file:
        file.write(f"# Best subset regression: statgpu_bestsubset and leaps::regsubsets\n\n{header}\n\n{report}\n\n"
                   + "\n".join(footer) + "\n")
    with open(os.path.join(args.out, "bestsubset.csv"), "w", newline="") as file:
        writer = csv.writer(file)
        writer.writerow(["case", "description", "n", "p", "leaps_s", "leaps_runs", "leaps_stopped_after_s",
                         "statgpu_cpu_s", "statgpu_cpu_runs", "statgpu_cpu_threads", "statgpu_cpu_1thread_s",
                         "statgpu_cpu_1thread_runs", "statgpu_cuda_s", "subsets_evaluated",
                         "subsets_evaluated_1thread", "subsets_agree"])
        for row in rows:
            leaps = row.get("leaps") if isinstance(row.get("leaps"), dict) else {}
            cpu, cpu1 = row.get("cpu") or {}, row.get("cpu1") or {}
            cuda = row.get("cuda")
            writer.writerow([row["case"], row["description"], N_OBS, row["p"], leaps.get("seconds", ""),
                             leaps.get("runs", ""), leaps.get("capped", ""), cpu.get("seconds", ""),
                             cpu.get("runs", ""), cpu.get("threads", ""), cpu1.get("seconds", ""),
                             cpu1.get("runs", ""),
                             cuda["seconds"] if isinstance(cuda, dict) else (cuda or "").split(":")[0],
                             cpu["result"]["subsets_evaluated"] if cpu else "",
                             cpu1["result"]["subsets_evaluated"] if cpu1 else "", row.get("agree", "")])
    log(f"\nwrote bestsubset.md and bestsubset.csv under {args.out}")


if __name__ == "__main__":
    main()
