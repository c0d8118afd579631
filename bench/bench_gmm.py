#!/usr/bin/env python3
"""Gaussian mixture benchmark: statgpu's EM against scikit-learn and PyTorch.

50 EM iterations (full covariances) of statgpu on the CPU and on CUDA,
scikit-learn's GaussianMixture (all cores) and two PyTorch EMs on the GPU
(float64), from the same data and the same initial parameters, side by side.

Every peer starts from the same given weights, means and precisions (the true
mixture's, perturbed), with reg_covar 1e-6, tolerance 0 and at most 50
iterations, so each does exactly 50 E-steps and M-steps and then one final
E-step, and all end at the same mixture. The script prints each peer's final
mean log-likelihood (of the returned parameters) and its lower bound (the mean
log-likelihood of the 50th E-step, scikit-learn's lower_bound_) and flags a
peer whose figures differ from the reference peer's (the first measured of
scikit-learn, statgpu on the CPU, the torch EMs, statgpu on CUDA) by more than
1e-6 relative, or that did not do 50 iterations.

Peers:
- scikit-learn GaussianMixture(covariance_type='full', tol=0, max_iter=50,
  n_init=1, weights_init, means_init, precisions_init). Its fit also runs the
  initialisation named by init_params before applying the given parameters
  (scikit-learn 1.9: k-means for the default 'kmeans'); 'random_from_data' is
  used, which costs one extra pass for the covariances of k single rows, about
  1% of the 50 iterations.
- statgpu on the CPU (all threads) and on CUDA: statgpu_gmm with
  STATGPU_GMM_INIT_GIVEN. The CUDA context is first probed with a small call
  (a few thousand rows, one iteration); where the engine ran it on the CPU, or
  failed, the CUDA row says "n/a (no GPU path)" and the full call is not made.
  On CUDA: the engine's own device time (the backend report's
  last_compute_seconds, its copies in last_transfer_seconds) and the wall
  time of the whole call from host memory.
- PyTorch, float64, data already on the device: "as commonly written"
  (covariances' batched Cholesky, a triangular solve for the Mahalanobis
  terms, logsumexp, einsum over an n x k x d array of differences for the
  covariances), and "best effort" (precision factors: the E-step as one
  matrix product x @ [U_1 ... U_k] per chunk of rows, the covariances as k
  products (r_j (x - mu_j))^T (x - mu_j), never an n x k x d array). CUDA
  events around the 50 iterations and the final E-step, after a warm-up;
  --torch-device cpu runs them on the CPU (wall clock) to test the code. One
  E-step is timed first (on a tenth of the rows, then on all): a peer whose
  50 iterations would take longer than --torch-limit seconds is reported as
  too slow, with the projection, instead of being run.

Times are medians of the repeats; repeats stop once a peer's runs have taken
10 s (a peer slower than that runs once).

Writes gmm.csv and gmm.md under --out and prints a markdown table.
"""
import argparse
import csv
import math
import os
import statistics
import sys
import time
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from statgpu_ctypes import Engine, StatgpuError, gmm  # noqa: E402

ITERATIONS = 50
REG_COVAR = 1e-6
AGREEMENT = 1e-6       # relative difference of mean log-likelihoods that counts as the same mixture
REPEAT_BUDGET_SECONDS = 10  # repeats stop once the runs so far took longer (one run at least)
PROBE_ROWS = 4096
# name: (n, d, k, CPU peers by default)
CASES = {
    "1e5x8k8": (100_000, 8, 8, True),
    "1e6x8k8": (1_000_000, 8, 8, True),
    "1e7x16k16": (10_000_000, 16, 16, False),
}
QUICK_CASES = "1e5x8k8"
TARGETS = {"1e6x8k8": "GPU <= 5 ms device, <= 50 ms whole call; CPU >= 5x scikit-learn"}
NO_GPU_PATH = "n/a (no GPU path)"


def log(*parts):
    print(*parts, flush=True)


def make_mixture(n, d, k, seed):
    """n rows drawn from a mixture of k Gaussians (means N(0, 2 / d) in each
    variable, random full covariances A A^T / d + 0.2 I scaled by U(0.5, 1.5),
    weights Dirichlet(5)), and initial parameters: the true means moved by
    N(0, 0.5^2), the true covariances times 1.5, equal weights. The
    components overlap, so EM still moves late (at d = 8 the lower bound
    changes by about 1e-7 at iteration 30). Returns the data twice (row-major
    for the Python peers, column-major for statgpu) and the initial weights,
    means (k x d) and precisions (k x d x d)."""
    rng = np.random.default_rng(seed)
    means = rng.normal(0.0, math.sqrt(2.0 / d), size=(k, d))
    a = rng.normal(size=(k, d, d)) / math.sqrt(d)
    covariances = (a @ a.transpose(0, 2, 1) + 0.2 * np.eye(d)) * rng.uniform(0.5, 1.5, size=(k, 1, 1))
    weights = rng.dirichlet(np.full(k, 5.0))
    component = rng.choice(k, size=n, p=weights)
    data = rng.standard_normal((n, d))
    for j in range(k):
        rows = np.flatnonzero(component == j)
        data[rows] = data[rows] @ np.linalg.cholesky(covariances[j]).T + means[j]
    initial_means = means + rng.normal(0.0, 0.5, size=(k, d))
    initial_precisions = np.linalg.inv(1.5 * covariances)
    initial_precisions = 0.5 * (initial_precisions + initial_precisions.transpose(0, 2, 1))
    initial_weights = np.full(k, 1.0 / k)
    return data, np.asfortranarray(data), (initial_weights, initial_means, initial_precisions)


def repeat_runs(run, repeats, budget_seconds=REPEAT_BUDGET_SECONDS):
    """Calls run() up to repeats times, and no more once the calls so far have
    taken budget_seconds (a peer that takes 30 s a run runs once, one of 6 s
    twice); returns the list of its results."""
    start = time.perf_counter()
    results = [run()]
    while len(results) < repeats and time.perf_counter() - start < budget_seconds:
        results.append(run())
    return results


# ----- statgpu -----

def statgpu_peer(engine, backend, data, initial, repeats):
    weights, means, precisions = initial
    k = weights.shape[0]
    context = engine.context(backend=backend)

    def call(rows):
        start = time.perf_counter()
        result = gmm(context, rows, k, weights, means, precisions, max_iterations=ITERATIONS, tolerance=0.0,
                     reg_covar=REG_COVAR)
        wall = (time.perf_counter() - start) * 1e3
        report = context.report()
        used = {0: "auto", 1: "cpu", 2: "cuda"}.get(report.last_used, "?")
        return result, wall, used, report

    try:
        if backend == "cuda":
            try:
                _, _, used, report = call(np.asfortranarray(data[:max(PROBE_ROWS, k)]))
            except StatgpuError as error:
                return {"error": f"{NO_GPU_PATH}: {error}"}
            if used != "cuda":
                note = report.note.decode() or "the engine ran it on the CPU"
                return {"error": f"{NO_GPU_PATH}: {note}"}

        def run():
            result, wall, used, report = call(data)
            if used != backend:
                raise StatgpuError(f"ran on {used}, not {backend}: {report.note.decode()}")
            return result, wall, report.last_compute_seconds * 1e3, report.last_transfer_seconds * 1e3

        runs = repeat_runs(run, repeats)
        first = runs[0][0]
        row = {"ms": statistics.median(r[1] for r in runs), "repeats": len(runs), "iterations": first["iterations"],
               "mean_log_likelihood": first["mean_log_likelihood"], "lower_bound": first["lower_bound"]}
        notes = []
        if backend == "cuda":
            row["compute_ms"] = statistics.median(r[2] for r in runs)
            row["transfer_ms"] = statistics.median(r[3] for r in runs)
        if first["regularised_count"]:
            notes.append(f"{first['regularised_count']} covariances regularised beyond reg_covar")
        if len(runs) > 1:
            same = all(r[0]["log_likelihood"] == first["log_likelihood"] and r[0]["means"] == first["means"]
                       for r in runs)
            notes.append("repeats: same bits" if same else "repeats DIFFER")
        notes.append(f"{context.report().cpu_thread_count} threads" if backend == "cpu" else "")
        row["note"] = "; ".join(note for note in notes if note)
        return row
    finally:
        context.close()


# ----- scikit-learn -----

def sklearn_peer(data, initial, repeats):
    try:
        import sklearn
        from sklearn.exceptions import ConvergenceWarning
        from sklearn.mixture import GaussianMixture
    except ImportError:
        return None
    weights, means, precisions = initial

    def run():
        model = GaussianMixture(n_components=weights.shape[0], covariance_type="full", tol=0.0, reg_covar=REG_COVAR,
                                max_iter=ITERATIONS, n_init=1, init_params="random_from_data", random_state=0,
                                weights_init=weights, means_init=means, precisions_init=precisions)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)  # tol = 0 never converges, by design
            start = time.perf_counter()
            model.fit(data)
            wall = (time.perf_counter() - start) * 1e3
        return model, wall

    runs = repeat_runs(run, repeats)
    model = runs[0][0]
    return {"ms": statistics.median(r[1] for r in runs), "repeats": len(runs), "iterations": int(model.n_iter_),
            "mean_log_likelihood": float(model.score(data)), "lower_bound": float(model.lower_bound_),
            "note": f"scikit-learn {sklearn.__version__}"}


# ----- PyTorch -----

LOG_2PI = math.log(2.0 * math.pi)
EPSILON_NK = 10.0 * float(np.finfo(np.float64).eps)  # scikit-learn's nk floor


def torch_common(torch, x, initial, iterations=ITERATIONS):
    """EM as commonly written: parameters as covariances, the E-step by
    batched Cholesky and a triangular solve, the covariances by an einsum over
    the n x k x d differences. Returns (lower bound of the last iteration,
    final mean log-likelihood)."""
    n, d = x.shape
    weights, means, covariances = initial
    eye = torch.eye(d, dtype=x.dtype, device=x.device)

    def e_step(weights, means, covariances):
        chol = torch.linalg.cholesky(covariances)                                   # k x d x d
        diff = (x.unsqueeze(1) - means.unsqueeze(0)).permute(1, 2, 0)              # k x d x n
        solved = torch.linalg.solve_triangular(chol, diff, upper=False)            # k x d x n
        mahalanobis = solved.square().sum(dim=1).T                                  # n x k
        log_det = 2.0 * torch.log(torch.diagonal(chol, dim1=-2, dim2=-1)).sum(dim=-1)
        log_prob = -0.5 * (d * LOG_2PI + mahalanobis + log_det) + torch.log(weights)
        log_norm = torch.logsumexp(log_prob, dim=1)
        return log_norm.mean(), torch.exp(log_prob - log_norm.unsqueeze(1))

    def m_step(resp):
        nk = resp.sum(dim=0) + EPSILON_NK
        means = (resp.T @ x) / nk.unsqueeze(1)
        diff = x.unsqueeze(1) - means.unsqueeze(0)                                 # n x k x d
        covariances = torch.einsum("nk,nkd,nke->kde", resp, diff, diff) / nk.view(-1, 1, 1) + REG_COVAR * eye
        return nk / nk.sum(), means, covariances

    bound = None
    for _ in range(iterations):
        bound, resp = e_step(weights, means, covariances)
        weights, means, covariances = m_step(resp)
    final, _ = e_step(weights, means, covariances)
    return bound, final


def torch_best(torch, x, initial, iterations=ITERATIONS, chunk_rows=1 << 20):
    """EM without an n x k x d array: the E-step from the precisions' upper
    factors U_j (precision = U_j U_j^T, scikit-learn's precisions_cholesky_)
    as one matrix product per chunk of rows, (x @ [U_1 .. U_k]) - [mu_j U_j];
    the covariances as k products (r_j (x - mu_j))^T (x - mu_j)."""
    n, d = x.shape
    weights, means, covariances = initial
    k = weights.shape[0]
    eye = torch.eye(d, dtype=x.dtype, device=x.device)
    resp = torch.empty((n, k), dtype=x.dtype, device=x.device)

    def precision_factors(covariances):
        chol = torch.linalg.cholesky_ex(covariances).L  # no check, so no wait for the device
        upper = torch.linalg.solve_triangular(chol, eye.expand(k, d, d), upper=False).transpose(1, 2)
        return upper, torch.log(torch.diagonal(upper, dim1=-2, dim2=-1)).sum(dim=-1)

    def e_step(weights, means, covariances):
        upper, log_det = precision_factors(covariances)
        stacked = upper.permute(1, 0, 2).reshape(d, k * d)                          # [U_1 .. U_k]
        shift = torch.einsum("kd,kde->ke", means, upper).reshape(1, k * d)          # [mu_j U_j]
        offset = -0.5 * d * LOG_2PI + log_det + torch.log(weights)
        total = torch.zeros((), dtype=x.dtype, device=x.device)
        for begin in range(0, n, chunk_rows):
            rows = x[begin:begin + chunk_rows]
            y = torch.addmm(-shift, rows, stacked).view(rows.shape[0], k, d)
            log_prob = offset - 0.5 * y.square().sum(dim=2)
            log_norm = torch.logsumexp(log_prob, dim=1, keepdim=True)
            total += log_norm.sum()
            torch.exp(log_prob - log_norm, out=resp[begin:begin + chunk_rows])
        return total / n

    def m_step():
        nk = resp.sum(dim=0) + EPSILON_NK
        means = (resp.T @ x) / nk.unsqueeze(1)
        covariances = torch.empty((k, d, d), dtype=x.dtype, device=x.device)
        for j in range(k):
            diff = x - means[j]
            covariances[j] = (diff * resp[:, j:j + 1]).T @ diff
        covariances = covariances / nk.view(-1, 1, 1) + REG_COVAR * eye
        return nk / nk.sum(), means, covariances

    bound = None
    for _ in range(iterations):
        bound = e_step(weights, means, covariances)
        weights, means, covariances = m_step()
    final = e_step(weights, means, covariances)
    return bound, final


def torch_peer(fit, data, initial, repeats, device, limit_seconds):
    try:
        import torch
    except ImportError:
        return None
    on_gpu = device.startswith("cuda")
    if on_gpu and not torch.cuda.is_available():
        return {"error": "n/a (torch has no CUDA device)"}
    weights, means, precisions = initial
    start_parameters = tuple(torch.from_numpy(np.ascontiguousarray(a)).to(device)
                             for a in (weights, means, np.linalg.inv(precisions)))
    x = None
    try:
        x = torch.from_numpy(np.ascontiguousarray(data)).to(device)
        if on_gpu:
            torch.cuda.reset_peak_memory_stats()

        def run(rows=None, iterations=ITERATIONS):
            rows = x if rows is None else x[:rows]
            if on_gpu:
                begin = torch.cuda.Event(enable_timing=True)
                end = torch.cuda.Event(enable_timing=True)
                begin.record()
                bound, final = fit(torch, rows, start_parameters, iterations=iterations)
                end.record()
                end.synchronize()
                return bound, final, begin.elapsed_time(end)
            begin = time.perf_counter()
            bound, final = fit(torch, rows, start_parameters, iterations=iterations)
            return bound, final, (time.perf_counter() - begin) * 1e3

        # A peer may take minutes where a library call leaves its fast path (the
        # batched triangular solve over 10^6 columns does on CUDA): one E-step on a
        # tenth of the rows, then on all of them, and a peer whose 50 iterations
        # would take longer than limit_seconds is not run.
        n = x.shape[0]
        run(rows=min(n, 1000), iterations=1)  # library handles
        for rows in ([n // 10] if n >= 1_000_000 else []) + [n]:
            step_ms = run(rows=rows, iterations=0)[2]
            projected_seconds = step_ms * (n / rows) * (ITERATIONS + 1) / 1e3
            if projected_seconds > limit_seconds:
                return {"error": f"n/a (too slow): one E-step on {rows} rows took {step_ms:.0f} ms, so 50 iterations "
                                 f"would take about {projected_seconds:.0f} s or more (--torch-limit is "
                                 f"{limit_seconds:g} s)"}
        run(iterations=2)  # warm-up: kernels, the caching allocator
        runs = repeat_runs(run, repeats)
        row = {"ms": statistics.median(r[2] for r in runs), "repeats": len(runs), "iterations": ITERATIONS,
               "mean_log_likelihood": float(runs[0][1]), "lower_bound": float(runs[0][0])}
        notes = [f"torch {torch.__version__}", "float64", device]
        if on_gpu:
            notes.append(f"peak {torch.cuda.max_memory_allocated() / 2**30:.1f} GiB")
        row["note"] = ", ".join(notes)
        return row
    except torch.cuda.OutOfMemoryError as error:
        return {"error": f"n/a (out of device memory): {str(error).splitlines()[0][:160]}"}
    finally:
        del x
        if on_gpu:
            torch.cuda.empty_cache()


# ----- the table -----

def agreement(row, reference):
    """The largest relative difference of the final mean log-likelihood and the
    lower bound from the reference peer's."""
    return max(abs(row[key] - reference[key]) / abs(reference[key]) for key in ("mean_log_likelihood", "lower_bound"))


def markdown(rows):
    lines = ["| case | peer | 50 iterations (ms) | per iteration (ms) | device compute (ms) | transfer (ms) | runs "
             "| iterations | final mean log-likelihood | lower bound | rel. diff. | note |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for row in rows:
        def cell(key, fmt="{:.2f}"):
            return fmt.format(row[key]) if key in row else ""
        if "ms" not in row:
            note = row.get("note", "")
            head, _, rest = note.partition(": ") if note.startswith("n/a") else ("n/a", "", note)
            lines.append(f"| {row['case']} | {row['peer']} | {head} | | | | | | | | | {rest} |")
            continue
        per_iteration = f"{row['ms'] / ITERATIONS:.3f}"
        if "compute_ms" in row:
            per_iteration = f"{row['compute_ms'] / ITERATIONS:.3f} (device)"
        lines.append(f"| {row['case']} | {row['peer']} | {cell('ms')} | {per_iteration} | {cell('compute_ms')} | "
                     f"{cell('transfer_ms')} | {cell('repeats', '{}')} | {cell('iterations', '{}')} | "
                     f"{cell('mean_log_likelihood', '{:.12g}')} | {cell('lower_bound', '{:.12g}')} | "
                     f"{cell('difference', '{:.1e}')} | {row.get('note', '')} |")
    return lines


def summary(rows):
    """Ratios against the targets, one line per case that has the figures."""
    lines = []
    for case in dict.fromkeys(row["case"] for row in rows):
        by_peer = {row["peer"]: row for row in rows if row["case"] == case and "ms" in row}
        parts = []
        cpu, sklearn = by_peer.get("statgpu CPU"), by_peer.get("scikit-learn")
        if cpu and sklearn:
            parts.append(f"statgpu CPU is {sklearn['ms'] / cpu['ms']:.2f}x scikit-learn")
        gpu = by_peer.get("statgpu CUDA")
        if gpu:
            parts.append(f"statgpu CUDA {gpu['compute_ms']:.2f} ms device, {gpu['ms']:.2f} ms whole call")
            for peer in ("torch EM as commonly written", "torch EM best effort"):
                if peer in by_peer:
                    parts.append(f"{by_peer[peer]['ms'] / gpu['compute_ms']:.1f}x faster than {peer} (device)")
        if parts:
            target = f" (target: {TARGETS[case]})" if case in TARGETS else ""
            lines.append(f"- {case}: " + "; ".join(parts) + target)
    return lines


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lib", required=True, help="path of libstatgpu.so")
    parser.add_argument("--out", default="bench-out", help="folder for gmm.csv and gmm.md")
    parser.add_argument("--cases", default=",".join(CASES), help="comma-separated: " + ", ".join(CASES))
    parser.add_argument("--quick", action="store_true", help=f"only the small case ({QUICK_CASES})")
    parser.add_argument("--all", action="store_true",
                        help="run the CPU peers on every case (at 1e7x16k16 scikit-learn takes many minutes)")
    parser.add_argument("--repeats", type=int, default=5, help="repeats of statgpu and torch")
    parser.add_argument("--cpu-repeats", type=int, default=3,
                        help=f"repeats of the CPU peers (fewer once they have taken {REPEAT_BUDGET_SECONDS} s)")
    parser.add_argument("--skip-cpu", action="store_true", help="leave out statgpu on the CPU and scikit-learn")
    parser.add_argument("--skip-sklearn", action="store_true", help="leave out scikit-learn")
    parser.add_argument("--skip-gpu", action="store_true", help="leave out statgpu on CUDA and torch")
    parser.add_argument("--torch-device", default="cuda", help="torch's device: cuda (default) or cpu, to test")
    parser.add_argument("--torch-limit", type=float, default=120.0,
                        help="seconds: a torch peer whose 50 iterations would take longer (projected from one "
                             "E-step) is not run")
    parser.add_argument("--seed", type=int, default=2024, help="the data's and the initial parameters' seed")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    engine = Engine(args.lib)
    log(f"statgpu {engine.lib.statgpu_version_string().decode()}; {ITERATIONS} EM iterations (full covariances, "
        f"reg_covar {REG_COVAR:g}, tolerance 0) from given weights, means and precisions; {os.cpu_count()} CPUs")

    rows = []
    for name in (QUICK_CASES if args.quick else args.cases).split(","):
        n, d, k, cpu_by_default = CASES[name]
        log(f"\n## n = {n}, d = {d}, k = {k}")
        data, data_by_columns, initial = make_mixture(n, d, k, seed=args.seed)
        peers = []
        if not args.skip_gpu:
            peers.append(("statgpu CUDA", lambda: statgpu_peer(engine, "cuda", data_by_columns, initial, args.repeats)))
            peers.append(("torch EM as commonly written",
                          lambda: torch_peer(torch_common, data, initial, args.repeats, args.torch_device,
                                             args.torch_limit)))
            peers.append(("torch EM best effort",
                          lambda: torch_peer(torch_best, data, initial, args.repeats, args.torch_device,
                                             args.torch_limit)))
        if not args.skip_cpu and (cpu_by_default or args.all):
            peers.append(("statgpu CPU",
                          lambda: statgpu_peer(engine, "cpu", data_by_columns, initial, args.cpu_repeats)))
            if not args.skip_sklearn:
                peers.append(("scikit-learn", lambda: sklearn_peer(data, initial, args.cpu_repeats)))
        elif not args.skip_cpu:
            log("  (statgpu CPU and scikit-learn left out of this case; --all runs them)")
        case_rows = []
        for peer, run in peers:
            try:
                result = run()
            except StatgpuError as error:
                result = {"error": f"failed: {error}"}
            row = {"case": name, "n": n, "d": d, "k": k, "peer": peer}
            if result is None:
                row["note"] = "n/a (not installed)"
            elif "error" in result:
                row["note"] = result["error"]
            else:
                row.update(result)
            case_rows.append(row)
            timing = f"{row['ms']:.2f} ms" if "ms" in row else "n/a"
            if "compute_ms" in row:
                timing += f" (device {row['compute_ms']:.2f} ms)"
            figures = (f"  final mean log-likelihood {row['mean_log_likelihood']:.15g}, lower bound "
                       f"{row['lower_bound']:.15g}" if "ms" in row else "")
            log(f"  {peer}: {timing}{figures}  {row.get('note', '')}")

        measured = {row["peer"]: row for row in case_rows if "ms" in row}
        order = ("scikit-learn", "statgpu CPU", "torch EM best effort", "torch EM as commonly written", "statgpu CUDA")
        reference = next((measured[peer] for peer in order if peer in measured), None)
        for row in case_rows:
            if "ms" not in row:
                continue
            flags = []
            if row["iterations"] != ITERATIONS:
                flags.append(f"did {row['iterations']} iterations, not {ITERATIONS}")
            if row is not reference:
                row["difference"] = agreement(row, reference)
                if not row["difference"] <= AGREEMENT:
                    flags.append(f"DISAGREES with {reference['peer']} ({row['difference']:.1e} relative)")
            if flags:
                log(f"  ** {row['peer']}: " + "; ".join(flags))
                row["note"] = "; ".join(flags + [row.get("note", "")]).rstrip("; ")
        if reference is not None:
            log(f"  (log-likelihoods compared with {reference['peer']}'s)")
        rows.extend(case_rows)

    table = markdown(rows)
    lines = summary(rows)
    log("")
    log("\n".join(table))
    if lines:
        log("")
        log("\n".join(lines))
    with open(os.path.join(args.out, "gmm.md"), "w") as file:
        file.write(f"# Gaussian mixtures: {ITERATIONS} EM iterations, full covariances ({os.cpu_count()} CPUs)\n\n")
        file.write("\n".join(table) + "\n")
        if lines:
            file.write("\n" + "\n".join(lines) + "\n")
    fields = ["case", "n", "d", "k", "peer", "ms", "compute_ms", "transfer_ms", "repeats", "iterations",
              "mean_log_likelihood", "lower_bound", "difference", "note"]
    with open(os.path.join(args.out, "gmm.csv"), "w", newline="") as file:
        writer = csv.DictWriter(file, fieldnames=fields, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
    log(f"\nwrote {os.path.join(args.out, 'gmm.csv')} and gmm.md")


if __name__ == "__main__":
    main()
