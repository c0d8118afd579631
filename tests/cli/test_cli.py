#!/usr/bin/env python3
"""Tests of the statgpu command-line tool: order statistics on CSV and raw
binary input against Python's exact sorting; kmeans against groups whose means
are known and R's kmeans (tests/reference/kmeans_r.csv); gmm against groups whose means are
known and R's mclust on Old Faithful (tests/reference/gmm_mclust.csv); lts against R's
robustbase::ltsReg on stackloss (tests/reference/ltsfit_stackloss_r.csv) and a
brute-force search for least median of squares; and a clear message with a
non-zero exit status for every bad file or argument (never a crash).

usage: test_cli.py PATH-TO-statgpu
"""
import csv
import io
import itertools
import math
import os
import pty
import random
import re
import select
import signal
import struct
import subprocess
import sys
import tempfile
import time

TOOL = sys.argv[1]
passed = failed = 0


def run(*args, stdin=None):
    done = subprocess.run([TOOL, *args], capture_output=True, text=True, input=stdin, timeout=120)
    return done.returncode, done.stdout, done.stderr


def check(name, condition, detail=""):
    global passed, failed
    if condition:
        passed += 1
    else:
        failed += 1
        print(f"FAIL {name}: {detail}")


def percentile_inc(sorted_values, p):
    """PERCENTILE.INC for p whose position is not within rounding of an integer."""
    n = len(sorted_values)
    if n == 1:
        return sorted_values[0]
    h = p * (n - 1)
    i = math.floor(h)
    f = h - i
    if f == 0:
        return sorted_values[i]
    return sorted_values[i] + f * (sorted_values[i + 1] - sorted_values[i])


def median(sorted_values):
    n = len(sorted_values)
    if n % 2:
        return sorted_values[n // 2]
    return (sorted_values[n // 2] + sorted_values[n // 2 - 1]) / 2


def same(text, value):
    try:
        return float(text) == value
    except ValueError:
        return False


# ---- kmeans and lts: CSV tables --------------------------------------------------

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests"))
from reference_checks import read_lts_stackloss_reference, same_partition, solve  # noqa: E402


def table(text):
    """The rows of a CSV output as lists of strings."""
    return list(csv.reader(io.StringIO(text)))


def close(a, b, relative):
    return a == b or abs(a - b) <= relative * max(abs(b), 1e-300)


def check_kmeans(write):
    # Three groups far apart: the clustering is obvious, the centroids are the
    # groups' means and the inertia their squared deviations (to 1e-12). Line 4
    # has an empty field, line 8 an NA, and a blank line is not a row.
    groups = [[(0.0, 0.1), (0.2, -0.1), (-0.1, 0.0), (0.1, 0.2)],
              [(10.0, 10.0), (10.3, 9.8), (9.9, 10.1)],
              [(-5.0, 20.0), (-5.2, 20.3), (-4.9, 19.8), (-5.1, 19.9)]]
    rows = []
    for group, members in enumerate(groups):
        rows += [(group, x, y) for x, y in members]
    random.Random(3).shuffle(rows)
    lines = ['"east","north"']
    expected = []
    for index, (group, x, y) in enumerate(rows):
        if index == 2:
            lines.append(",4.5")
            expected.append(None)
        if index == 6:
            lines += ["7.5,NA", ""]
            expected.append(None)
        lines.append("%r,%r" % (x, y))
        expected.append(group)
    path = write("three.csv", "\n".join(lines) + "\n")
    means = sorted(tuple(sum(v) / len(members) for v in zip(*members)) for members in groups)
    inertia = sum((x - mx) ** 2 + (y - my) ** 2 for members in groups
                  for (mx, my) in [tuple(sum(v) / len(members) for v in zip(*members))] for x, y in members)
    points = [(x, y) for _, x, y in rows]
    cx, cy = sum(x for x, _ in points) / len(points), sum(y for _, y in points) / len(points)
    total_ss = sum((x - cx) ** 2 + (y - cy) ** 2 for x, y in points)

    code, out, err = run("kmeans", "3", path)
    got = table(out)
    check("kmeans centroids: header with the column names", code == 0 and got[0] == ["cluster", "east", "north"],
          out + err)
    centroids = sorted(tuple(float(v) for v in row[1:]) for row in got[1:])
    check("kmeans centroids are the groups' means (1e-12)", len(centroids) == 3 and all(
        close(a, b, 1e-12) for row, ref in zip(centroids, means) for a, b in zip(row, ref)), repr(centroids))
    check("kmeans reports the rows left out", "left out 2 rows" in err, err)

    code, out, _ = run("kmeans", "3", path, "--output", "labels")
    got = table(out)
    labels = [row[1] for row in got[1:]]
    check("kmeans labels: a line per data row, numbered", code == 0 and got[0] == ["row", "cluster"]
          and [row[0] for row in got[1:]] == [str(i + 1) for i in range(len(expected))], out)
    check("kmeans labels: rows with an empty or NA field have an empty label",
          [label == "" for label in labels] == [group is None for group in expected], repr(labels))
    check("kmeans labels: the obvious partition", same_partition(
        [label for label in labels if label], [group for group in expected if group is not None])
        and set(label for label in labels if label) == {"1", "2", "3"}, repr(labels))

    code, out, _ = run("kmeans", "3", path, "--output", "sizes")
    got = table(out)
    check("kmeans sizes", code == 0 and got[0] == ["cluster", "size"]
          and sorted(int(row[1]) for row in got[1:]) == [3, 4, 4], out)

    code, out, _ = run("kmeans", "3", path, "--output", "summary", "--restarts", "4", "--init", "parallel")
    summary = dict(table(out)[1:]) if code == 0 else {}
    check("kmeans summary: inertia and total_ss (1e-12), converged, restarts, init, rows",
          summary and close(float(summary["inertia"]), inertia, 1e-12)
          and close(float(summary["total_ss"]), total_ss, 1e-12) and summary["converged"] == "1"
          and summary["restarts"] == "4" and summary["init"] == "k-means||" and summary["observations"] == "11"
          and summary["rows_left_out"] == "2" and int(summary["iterations"]) >= 1, out)
    code, out, _ = run("kmeans", "3", path, "--output", "summary", "--init", "++", "--tol", "0", "--max-iter", "50")
    summary = dict(table(out)[1:]) if code == 0 else {}
    check("kmeans --init ++ --tol 0: the same inertia", summary.get("init") == "k-means++"
          and close(float(summary.get("inertia", "nan")), inertia, 1e-12), out)
    code, out, _ = run("kmeans", "3", path, "--output", "summary", "--max-iter", "1", "--restarts", "1",
                       "--init", "++")
    summary = dict(table(out)[1:]) if code == 0 else {}
    check("kmeans --max-iter 1: one iteration, not an error", summary.get("iterations") == "1", out)

    # Old Faithful against R's kmeans (tests/reference/kmeans_r.csv): the
    # optimum for k = 2 from any start, centres to 1e-10 as the engine test.
    reference = os.path.join(ROOT, "tests", "reference")
    faithful = os.path.join(reference, "faithful.csv")
    with open(os.path.join(reference, "kmeans_r.csv"), newline="") as source:
        r_case = next(row for row in csv.DictReader(source) if row["dataset"] == "faithful" and row["k"] == "2")
    flat = [float(v) for v in r_case["centers"].split()]
    r_centres = sorted([(flat[0], flat[2]), (flat[1], flat[3])])
    code, out, _ = run("kmeans", "2", faithful, "--seed", "11", "--threads", "1")
    got = table(out)
    centroids = sorted(tuple(float(v) for v in row[1:]) for row in got[1:]) if code == 0 else []
    check("kmeans on Old Faithful equals R's centres (1e-10)", got[0] == ["cluster", "eruptions", "waiting"]
          and len(centroids) == 2 and all(close(a, b, 1e-10) for row, ref in zip(centroids, r_centres)
                                          for a, b in zip(row, ref)), out)
    code, again, _ = run("kmeans", "2", faithful, "--seed", "11")
    check("kmeans: the same bits with one thread and all", code == 0 and again == out, again)
    code, out, _ = run("kmeans", "2", faithful, "--output", "labels")
    labels = [row[1] for row in table(out)[1:]]
    check("kmeans on Old Faithful: R's partition", same_partition(labels, r_case["labels"].split()), out[:80])
    code, out, _ = run("kmeans", "2", faithful, "--output", "summary")
    summary = dict(table(out)[1:]) if code == 0 else {}
    check("kmeans on Old Faithful: inertia equals R's tot.withinss (1e-10)",
          close(float(summary.get("inertia", "nan")), float(r_case["tot_withinss"]), 1e-10), out)
    code, out, _ = run("kmeans", "2", faithful, "--columns", "waiting,1")
    got = table(out)
    swapped = sorted(tuple(float(v) for v in row[:0:-1]) for row in got[1:]) if code == 0 else []
    check("kmeans --columns by name and number, in that order", got[0] == ["cluster", "waiting", "eruptions"]
          and all(close(a, b, 1e-10) for row, ref in zip(swapped, r_centres) for a, b in zip(row, ref)), out)
    code, out, _ = run("kmeans", "1", "-", "--header", "no", stdin="1;2\n3;4\n")
    check("kmeans from standard input, ';' separated, no header: k = 1 is the mean",
          code == 0 and table(out) == [["cluster", "x1", "x2"], ["1", "2", "3"]], out)

    constant = write("constant.csv", "a,b\n1,2\n1,2\n1,2\n")
    text = write("kmtext.csv", "a,b\n1,2\n3,x\n")
    cases = [
        (("kmeans", "0", path), 1, "at least one cluster"),
        (("kmeans", "-2", path), 1, "at least one cluster"),
        (("kmeans", "12", path), 1, "more than the 11 observations"),
        (("kmeans", "2", constant), 1, "distinct"),
        (("kmeans", "two", path), 2, "K must be"),
        (("kmeans", path), 2, "kmeans needs"),
        (("kmeans", "2", path, "--output", "centres"), 2, "--output"),
        (("kmeans", "2", path, "--init", "random"), 2, "--init"),
        (("kmeans", "2", path, "--restarts", "many"), 2, "--restarts"),
        (("kmeans", "2", path, "--restarts", "0"), 1, "restart"),
        (("kmeans", "2", path, "--max-iter", "0"), 1, "max_iterations"),
        (("kmeans", "2", path, "--tol", "-1"), 1, "tolerance"),
        (("kmeans", "2", path, "--seed", "-1"), 2, "--seed"),
        (("kmeans", "2", path, "--columns", "west"), 2, "no column named"),
        (("kmeans", "2", path, "--columns", "1,1"), 2, "twice"),
        (("kmeans", "2", path, "--columns", "9"), 2, "no column 9"),
        (("kmeans", "2", path, "--format", "f64"), 2, "CSV only"),
        (("kmeans", "2", path, "--alpha", "0.5"), 2, "only for lts"),
        (("kmeans", "1", text), 2, "not a number"),
        (("kmeans", "1", write("kmempty.csv", "")), 1, "no observations"),
        (("median", path, "--restarts", "3"), 2, "only for kmeans"),
        (("median", path, "--table"), 2, "only for kmeans"),
    ]
    for args, expected_code, expected_text in cases:
        code, out, err = run(*args)
        check(f"kmeans bad input {args}", code == expected_code and expected_text in err and out == "",
              f"exit {code}, stderr {err!r}")


def check_gmm(write):
    # Three tight groups far apart: every responsibility is 0 or 1 to within
    # exp(-hundreds), so the means are the groups' means (1e-9) and the labels
    # the obvious partition. Lines 3 and 8 have a missing field.
    groups = [[(0.0, 0.1), (0.2, -0.1), (-0.1, 0.0), (0.1, 0.2)],
              [(10.0, 10.0), (10.3, 9.8), (9.9, 10.1)],
              [(-5.0, 20.0), (-5.2, 20.3), (-4.9, 19.8), (-5.1, 19.9)]]
    rows = [(group, x, y) for group, members in enumerate(groups) for x, y in members]
    random.Random(5).shuffle(rows)
    lines = ["east,north"]
    expected = []
    for index, (group, x, y) in enumerate(rows):
        if index in (2, 6):
            lines.append("1.5," if index == 2 else "NA,3")
            expected.append(None)
        lines.append("%r,%r" % (x, y))
        expected.append(group)
    path = write("gmm_three.csv", "\n".join(lines) + "\n")
    means = sorted(tuple(sum(v) / len(members) for v in zip(*members)) for members in groups)

    code, out, err = run("gmm", "3", path)
    summary = {row[2]: row[1] for row in table(out)[1:]} if code == 0 else {}
    check("gmm summary: name/value rows, the rows used and left out",
          code == 0 and table(out)[0] == ["row", "value", "name"]
          and summary.get("observations used") == "11" and summary.get("rows left out (missing values)") == "2"
          and summary.get("components") == "3" and math.isfinite(float(summary.get("log-likelihood", "nan"))),
          out + err)
    code, out, err = run("gmm", "3", path, "--output", "means")
    got = table(out)
    check("gmm means: a row per component, the groups' means (1e-9)",
          code == 0 and got[0] == ["component", "east", "north"] and len(got) == 4
          and all(close(float(a), b, 1e-9) for row, mean in zip(sorted(got[1:], key=lambda r: float(r[1])), means)
                  for a, b in zip(row[1:], mean)), out + err)
    code, out, _ = run("gmm", "3", path, "--output", "labels")
    labels = [row[1] for row in table(out)[1:]]
    check("gmm labels: a line per data row, empty where a field is missing",
          code == 0 and len(labels) == len(expected)
          and all((label == "") == (group is None) for label, group in zip(labels, expected)), out)
    check("gmm labels: the obvious partition", code == 0 and same_partition(
        [label for label in labels if label], [group for group in expected if group is not None]), out)
    code, out, _ = run("gmm", "3", path, "--output", "probabilities")
    got = table(out)
    check("gmm probabilities: k columns that sum to 1 (1e-12), empty rows left out",
          code == 0 and got[0] == ["row", "1", "2", "3"] and len(got) == len(expected) + 1
          and all((row[1] == "") if group is None else abs(sum(map(float, row[1:])) - 1) < 1e-12
                  for row, group in zip(got[1:], expected)), out)
    for covariance, shape in (("full", (7, 3)), ("tied", (3, 3)), ("diag", (4, 3)), ("spherical", (4, 2))):
        code, out, err = run("gmm", "3", path, "--covariance", covariance, "--output", "covariances")
        got = table(out)
        check(f"gmm --covariance {covariance}: the covariances' table is {shape[0] - 1} rows",
              code == 0 and (len(got), len(got[0])) == shape, out + err)

    # Old Faithful, two full components run to convergence (tol 1e-12): R's
    # mclust reaches the same optimum (tests/reference/gmm_mclust.csv, model
    # VVV, G = 2), to 1e-6 relative in the log-likelihood and BIC.
    faithful = os.path.join(ROOT, "tests", "reference", "faithful.csv")
    with open(os.path.join(ROOT, "tests", "reference", "gmm_mclust.csv"), newline="") as source:
        mclust = {(row["data"], row["model"], row["G"]): row for row in csv.DictReader(source)}
    reference = mclust[("faithful", "VVV", "2")]
    code, out, err = run("gmm", "2", faithful, "--tol", "1e-12", "--max-iter", "2000")
    summary = {row[2]: row[1] for row in table(out)[1:]} if code == 0 else {}
    check("gmm on Old Faithful reaches mclust's optimum (log-likelihood and -BIC, 1e-6)",
          close(float(summary.get("log-likelihood", "nan")), float(reference["loglik"]), 1e-6)
          and close(float(summary.get("BIC (lower is better; mclust's is its negative)", "nan")),
                    -float(reference["bic"]), 1e-6), out + err)
    for init in ("++", "random"):
        code, out_init, err = run("gmm", "2", faithful, "--tol", "1e-12", "--max-iter", "5000", "--init", init)
        got = {row[2]: row[1] for row in table(out_init)[1:]} if code == 0 else {}
        check(f"gmm --init {init} reaches the same optimum (1e-6)",
              close(float(got.get("log-likelihood", "nan")), float(reference["loglik"]), 1e-6), out_init + err)
    code, again, _ = run("gmm", "2", faithful, "--tol", "1e-12", "--max-iter", "2000", "--threads", "1")
    check("gmm: the same bits with one thread and all", code == 0 and again == out, again)

    # Other units give the same fit: the regulariser is 1e-6 of each column's
    # variance, not scikit-learn's 1e-6 whatever the units, which swamps the
    # variances of eruptions in units of 10^4 minutes (the two components
    # would collapse into one). Means times the factors, the log-likelihood
    # less n sum log factor (1e-8); data near 1e-130 are fitted scaled by a
    # power of two; near 1e-200 the variances are not doubles: an error.
    with open(faithful, newline="") as source:
        rows = [tuple(map(float, row)) for row in list(csv.reader(source))[1:]]
    code, out, err = run("gmm", "2", faithful, "--tol", "1e-12", "--max-iter", "2000", "--output", "means")
    means = [list(map(float, row[1:])) for row in table(out)[1:]] if code == 0 else []
    for factors in ((1e-4, 60.0), (1e-130, 1e-130)):
        other = write("faithful_units.csv", "eruptions,waiting\n" + "".join(
            "%r,%r\n" % (x * factors[0], y * factors[1]) for x, y in rows))
        code, out, err = run("gmm", "2", other, "--tol", "1e-12", "--max-iter", "2000", "--output", "means")
        got = [list(map(float, row[1:])) for row in table(out)[1:]] if code == 0 else []
        code, out_summary, _ = run("gmm", "2", other, "--tol", "1e-12", "--max-iter", "2000")
        other_summary = {row[2]: row[1] for row in table(out_summary)[1:]} if code == 0 else {}
        shift = -len(rows) * (math.log(factors[0]) + math.log(factors[1]))
        check(f"gmm in other units (eruptions x {factors[0]:g}, waiting x {factors[1]:g}): the same fit (1e-8)",
              len(got) == 2 and len(means) == 2
              and all(close(g, m * f, 1e-8) for grow, mrow in zip(got, means) for g, m, f in zip(grow, mrow, factors))
              and close(float(other_summary.get("log-likelihood", "nan")),
                        float(summary.get("log-likelihood", "nan")) + shift, 1e-8), out + err + out_summary)
    tiny = write("faithful_tiny.csv", "eruptions,waiting\n" + "".join("%r,%r\n" % (x * 1e-200, y * 1e-200)
                                                                       for x, y in rows))
    code, out, err = run("gmm", "2", tiny)
    check("gmm on data near 1e-200: the variances are beyond a double, said as an error",
          code == 1 and out == "" and "beyond the range of a double" in err, out + err)

    # Model choice: K a list, --covariance all: a row per candidate, k by k;
    # the chosen one marked and printed by the other outputs. Old Faithful
    # chooses mclust's model among these (EEE, that is tied, with 3).
    code, out, err = run("gmm", "1-3,5", faithful, "--covariance", "all", "--output", "selection")
    got = table(out)
    best = [row for row in got[1:] if row[9] == "1"]
    check("gmm 1-3,5 --covariance all --output selection: 16 candidates, the lowest BIC marked, none singular",
          code == 0 and got[0] == ["candidate", "k", "covariance", "log-likelihood", "parameters", "BIC", "AIC",
                                   "iterations", "converged", "best", "singular components"]
          and [row[10] for row in got[1:]] == ["0"] * 16
          and [row[1] for row in got[1:]] == [k for k in ("1", "2", "3", "5") for _ in range(4)]
          and [row[2] for row in got[1:5]] == ["full", "tied", "diag", "spherical"]
          and len(best) == 1 and float(best[0][5]) == min(float(row[5]) for row in got[1:])
          and best[0][1:3] == ["3", "tied"], out + err)
    code, out, err = run("gmm", "1-3,5", faithful, "--covariance", "all")
    summary = {row[2]: row[1] for row in table(out)[1:]} if code == 0 else {}
    check("gmm with candidates: the summary is the chosen model's",
          code == 0 and summary.get("components") == "3" and best and
          summary.get("BIC (lower is better; mclust's is its negative)") == best[0][5], out + err)
    code, out, err = run("gmm", "2,300", faithful, "--output", "selection")
    got = table(out)
    check("gmm 2,300: the candidate above the rows is listed unfitted", code == 0 and len(got) == 3
          and got[2][1:3] == ["300", "full"] and got[2][3:9] == [""] * 6 and got[2][9:] == ["0", ""], out + err)

    # --table: any Output as the engine's table, titled and aligned; the
    # numbers those of the CSV to 10 digits.
    code, csv_out, _ = run("gmm", "3", path, "--output", "means")
    code_t, out, err = run("gmm", "3", path, "--output", "means", "--table")
    lines = out.splitlines()
    check("gmm --table: the title, the header, a line per component, the CSV's numbers (1e-9)",
          code == 0 and code_t == 0 and lines[0] == "Component means" and lines[1].split() == ["component", "east",
                                                                                                  "north"]
          and len(lines) == 5 and all(close(float(a), float(b), 1e-9) for line, row in zip(lines[2:], table(csv_out)[1:])
                                      for a, b in zip(line.split()[1:], row[1:]))
          and len({len(line.rstrip()) for line in lines[1:]}) >= 1, out + err)
    code, out, err = run("gmm", "2", path, "--output", "labels", "--table")
    lines = out.splitlines()
    check("gmm --table labels: a line per data row, blank where a row was left out",
          code == 0 and lines[0] == "Most likely component of each row" and len(lines) == 2 + len(expected)
          and all((len(line.split()) == 1) == (group is None) for line, group in zip(lines[2:], expected)), out + err)

    cases = [
        (("gmm", "0", path), 1, "at least one"),
        (("gmm", "4-2", path), 2, "K must be"),
        (("gmm", "2,x", path), 2, "K must be"),
        (("gmm", "300,400", path, "--output", "selection"), 1, "no candidate"),
        (("gmm", "12", path), 1, "11"),
        (("gmm", "two", path), 2, "K must be"),
        (("gmm", path), 2, "gmm needs"),
        (("gmm", "2", path, "--output", "centroids"), 2, "--output"),
        (("gmm", "2", path, "--covariance", "VVV"), 2, "--covariance"),
        (("gmm", "2,0", path), 1, "k = 0"),
        (("gmm", "2", path, "--restarts", "0"), 1, "restart"),
        (("gmm", "2", path, "--max-iter", "0"), 1, "max_iterations"),
        (("gmm", "2", path, "--tol", "-1"), 1, "tolerance"),
        (("gmm", "2", path, "--init", "parallel"), 2, "--init must be kmeans, ++ or random"),
        (("kmeans", "2", path, "--init", "random"), 2, "--init must be auto, ++ or parallel"),
        (("kmeans", "2", path, "--covariance", "full"), 2, "only for gmm"),
    ]
    for args, expected_code, expected_text in cases:
        code, out, err = run(*args)
        check(f"gmm bad input {args}", code == expected_code and expected_text in err and out == "",
              f"exit {code}, stderr {err!r}")


def check_igmm(write):
    # Every column a data set, of different lengths: with k = 1 each column's
    # fit is its inverse Gaussian maximum likelihood estimate (1e-12): mu the
    # mean, lambda n / sum(1/x - 1/mean). A column with a 0 is unfitted with
    # its status.
    with open(os.path.join(ROOT, "tests", "reference", "igmm_data.csv"), newline="") as source:
        rows = list(csv.DictReader(source))
    sets = {name: [float(row["value"]) for row in rows if row["set"] == name] for name in ("one", "two")}
    bad = [1.0 + i for i in range(30)]
    bad[4] = 0.0
    columns = [sets["one"], sets["two"], bad]
    longest = max(map(len, columns))
    lines = ["short,long,bad"] + [",".join("%r" % c[i] if i < len(c) else "" for c in columns)
                                    for i in range(longest)]
    path = write("igmm.csv", "\n".join(lines) + "\n")
    code, out, err = run("igmm", "1", path)
    got = table(out)
    ok = code == 0 and got[0] == ["row", "data set", "component", "alpha", "mu", "lambda"] and len(got) == 4
    for row, values in zip(got[1:3], columns[:2]):
        mean = sum(values) / len(values)
        shape = len(values) / sum(1 / x - 1 / mean for x in values)
        ok = ok and close(float(row[4]), mean, 1e-12) and close(float(row[5]), shape, 1e-12)
    check("igmm 1: each column its maximum likelihood estimate (1e-12); an unfitted column empty",
          ok and got[3][1] == "bad" and got[3][3:] == ["", "", ""], out + err)
    code, out, err = run("igmm", "2", path, "--output", "summary", "--starts", "3", "--seed", "4")
    got = table(out)
    check("igmm summary: values per column, the statuses",
          code == 0 and [row[2] for row in got[1:]] == ["500", "2000", "30"]
          and [row[-1] for row in got[1:]] == ["fitted", "fitted", "a value is not positive"], out + err)
    code, out, err = run("igmm", "2", path, "--output", "labels")
    got = table(out)
    check("igmm labels: a column per data set, a row per value, empty past a column's end",
          code == 0 and got[0] == ["value", "short", "long", "bad"] and len(got) == 2001
          and all(row[1] in ("1", "2") for row in got[1:501]) and all(row[1] == "" for row in got[501:])
          and all(row[3] == "" for row in got[1:]), out[:200] + err)
    code, again, _ = run("igmm", "2", path, "--output", "summary", "--starts", "3", "--seed", "4", "--threads", "1")
    code2, first, _ = run("igmm", "2", path, "--output", "summary", "--starts", "3", "--seed", "4")
    check("igmm: the same bits with one thread and all", code == 0 and again == first, again)
    # Far from ordinary size: the short column times 1e200 and 1e-200, its
    # maximum likelihood estimate in those units (1e-12; before, the
    # E-step's squares overflowed near 1e154) and its log-likelihood, the
    # closed form's, within 1e-10 relative.
    far = [[x * 1e200 for x in sets["one"]], [x * 1e-200 for x in sets["one"]]]
    far_path = write("igmm_far.csv", "big,small\n" + "".join("%r,%r\n" % pair for pair in zip(*far)))
    code, out, err = run("igmm", "1", far_path)
    got = table(out)
    code_summary, summary_out, _ = run("igmm", "1", far_path, "--output", "summary")
    summary = table(summary_out)
    ok = code == 0 and code_summary == 0 and len(got) == 3 and len(summary) == 3
    # The closed form on the unscaled values (Python's squares overflow
    # too), less n log factor: the inverse Gaussian is a scale family.
    values = sets["one"]
    mean = sum(values) / len(values)
    shape = len(values) / sum(1 / x - 1 / mean for x in values)
    unscaled = sum(0.5 * math.log(shape / (2 * math.pi)) - 1.5 * math.log(x)
                   - shape * (x - mean) ** 2 / (2 * mean * mean * x) for x in values)
    for row, summary_row, factor in zip(got[1:], summary[1:], (1e200, 1e-200)):
        ok = ok and close(float(row[4]), mean * factor, 1e-12) and close(float(row[5]), shape * factor, 1e-12) \
            and close(float(summary_row[3]), unscaled - len(values) * math.log(factor), 1e-10)
    check("igmm 1 on values near 1e200 and 1e-200: the estimate in their units (1e-12), the log-likelihood "
          "(1e-10)", ok, out + summary_out + err)
    only_bad = write("igmm_bad.csv", "bad\n" + "".join("%r\n" % x for x in bad))
    cases = [
        (("igmm", "2", only_bad), 1, "data set bad not fitted: a value is not positive"),
        (("igmm", "0", path), 1, "at least one"),
        (("igmm", "x", path), 2, "K must be"),
        (("igmm", path), 2, "igmm needs"),
        (("igmm", "2", path, "--output", "means"), 2, "--output"),
        (("igmm", "2", path, "--starts", "0"), 1, "start_count"),
        (("igmm", "2", path, "--covariance", "full"), 2, "only for gmm"),
        (("igmm", "2", path, "--restarts", "2"), 2, "only for kmeans"),
        (("gmm", "2", path, "--starts", "2"), 2, "only for lts"),
    ]
    for args, expected_code, expected_text in cases:
        code, out, err = run(*args)
        check(f"igmm bad input {args}", code == expected_code and expected_text in err and out == "",
              f"exit {code}, stderr {err!r}")


def check_bestsubset(write):
    # R's leaps::regsubsets on stackloss (nbest = 2): the subsets by size and
    # rank and their RSS (1e-10), the predictors named from the header.
    stackloss = os.path.join(ROOT, "samples", "stackloss.csv")
    leaps = [("1", "1", 319.11610582370309, "Air.Flow"), ("1", "2", 483.15061963775037, "Water.Temp"),
             ("2", "1", 188.79533386239373, "Air.Flow, Water.Temp"),
             ("2", "2", 309.13760169018872, "Air.Flow, Acid.Conc."),
             ("3", "1", 178.82996159835866, "Air.Flow, Water.Temp, Acid.Conc.")]
    code, out, err = run("bestsubset", stackloss, "--y-column", "stack.loss", "--nbest", "2")
    got = table(out)
    ok = code == 0 and len(got) == 6 and got[0][1:4] == ["size", "rank", "RSS"] and got[0][-1] == "predictors"
    for row, (size, rank, rss, names) in zip(got[1:], leaps):
        ok = ok and row[1] == size and row[2] == rank and close(float(row[3]), rss, 1e-10) and row[-1] == names
    check("bestsubset: leaps's subsets and RSS on stackloss (1e-10), named", ok, out + err)
    # Acid.Conc. forced in (leaps's force.in): sizes 1 to 3, the forced one in each.
    code, out, err = run("bestsubset", stackloss, "--y-column", "stack.loss", "--force-in", "Acid.Conc.",
                         "--output", "which")
    got = table(out)
    check("bestsubset --force-in: the forced predictor in every subset",
          code == 0 and len(got) == 4 and all(row[-1] == "1" for row in got[1:]), out + err)
    code, out, err = run("bestsubset", stackloss, "--y-column", "stack.loss", "--force-out", "1", "--output", "which")
    got = table(out)
    check("bestsubset --force-out 1 (a position): Air.Flow in no subset",
          code == 0 and len(got) == 3 and all(row[3] == "0" for row in got[1:]), out + err)
    code, first, _ = run("bestsubset", stackloss, "--y-column", "stack.loss", "--validation", "kfold", "--folds", "4")
    code2, again, _ = run("bestsubset", stackloss, "--y-column", "stack.loss", "--validation", "kfold", "--folds", "4",
                          "--threads", "1")
    check("bestsubset kfold: the same bits with one thread and all", code == 0 and code2 == 0 and first == again, first)
    code, out, err = run("bestsubset", stackloss, "--y-column", "stack.loss", "--output", "coefficients",
                         "--criterion", "cp")
    got = table(out)
    # No row labels: the tool numbers the rows; the term is the table's first column.
    check("bestsubset --criterion cp: the model of lowest Cp (Air.Flow, Water.Temp), coefficients with "
          "standard errors, the terms a column",
          code == 0 and got[0] == ["row", "term", "coefficient", "standard error", "t value"]
          and [row[1] for row in got[1:]] == ["(Intercept)", "Air.Flow", "Water.Temp"]
          and close(float(got[2][2]), 0.67115444089792387, 1e-9), out + err)
    # A predictor that the rank test drops (a copy, a sum of others, a
    # constant) is named on stderr whatever the output, not in the summary
    # alone; the search goes on without it.
    rng = random.Random(11)
    lines = ["y,a,b,a_plus_b,level,d"]
    for _ in range(30):
        a, b, d = rng.gauss(0, 1), rng.gauss(0, 1), rng.gauss(0, 1)
        lines.append("%r,%r,%r,%r,7,%r" % (a + 2 * b + rng.gauss(0, 1), a, b, a + b, d))
    dependent = write("dependent.csv", "\n".join(lines) + "\n")
    for output in ("subsets", "which", "coefficients", "summary"):
        code, out, err = run("bestsubset", dependent, "--output", output)
        check(f"bestsubset --output {output}: the dropped predictors named on stderr",
              code == 0 and out != "" and "predictors 'a_plus_b', 'level' left out of the search: each a linear "
              "combination of the predictors before it, or constant" in err, f"exit {code}, {err!r}")
    code, out, err = run("bestsubset", dependent, "--columns", "a,b,d")
    check("bestsubset with no predictor dropped: no such note", code == 0 and "left out of the search" not in err, err)
    # --max-size 0 is the engine's "every size", as the help says; --holdout
    # and --folds without their validation are errors that name the fix.
    code, out, err = run("bestsubset", stackloss, "--y-column", "stack.loss", "--max-size", "0")
    check("bestsubset --max-size 0: every size", code == 0 and [row[1] for row in table(out)[1:]] == ["1", "2", "3"],
          out + err)
    code, out, _ = run("--help")
    max_size_help = [line for line in out.splitlines() if "--max-size N" in line]
    check("the help says --max-size 0 means every size",
          len(max_size_help) == 1 and "0: every size" in max_size_help[0], repr(max_size_help))
    for args, text in ((("--holdout", "0.3"), "--holdout needs --validation holdout: 0.3"),
                       (("--validation", "kfold", "--holdout", "0.3"), "--holdout needs --validation holdout"),
                       (("--folds", "5"), "--folds needs --validation kfold: 5"),
                       (("--validation", "holdout", "--folds", "5"), "--folds needs --validation kfold")):
        code, out, err = run("bestsubset", stackloss, *args)
        check(f"bestsubset {' '.join(args)}: an error naming the fix", code == 2 and text in err and out == "",
              f"exit {code}, {err!r}")
    code, out, err = run("bestsubset", stackloss, "--y-column", "stack.loss", "--validation", "holdout",
                         "--holdout", "0.3", "--output", "summary")
    check("bestsubset --validation holdout --holdout 0.3: 6 rows held out",
          code == 0 and ["5", "6", "rows held out (holdout)"] in table(out), out + err)
    twins = write("twins.csv", "y,x,z,x\n" + "".join("%d,%d,%d,%d\n" % (i * i % 7, i, i * i % 5, i % 3)
                                                     for i in range(12)))
    code, out, err = run("bestsubset", twins, "--force-in", "x")
    check("bestsubset --force-in a name two predictors have: an error naming both positions",
          code == 2 and "--force-in: predictors 1 and 3 are both named 'x'" in err and out == "", err)
    code, out, err = run("bestsubset", twins, "--force-in", "3", "--output", "which")
    check("bestsubset --force-in 3 (the second x by position)",
          code == 0 and all(row[-1] == "1" for row in table(out)[1:]), out + err)
    constant = write("constant.csv", "y,a,b\n" + "".join("1,%d,%d\n" % (i, i * i) for i in range(10)))
    cases = [
        (("bestsubset", stackloss, "--validation", "loo"), 2, "--validation"),
        (("bestsubset", stackloss, "--criterion", "aic"), 2, "--criterion"),
        (("bestsubset", stackloss, "--force-in", "nothing"), 2, "names no predictor"),
        (("bestsubset", stackloss, "--force-in", "1", "--force-out", "1"), 2, "both"),
        (("bestsubset", stackloss, "--output", "labels"), 2, "--output"),
        (("bestsubset", stackloss, "--nbest", "0"), 1, "nbest"),
        (("bestsubset", stackloss, "--validation", "kfold", "--folds", "1"), 1, "fold_count"),
        (("bestsubset", constant), 1, "constant"),
        (("bestsubset", stackloss, "--alpha", "0.5"), 2, "only for lts"),
    ]
    for args, expected_code, expected_text in cases:
        code, out, err = run(*args)
        check(f"bestsubset bad input {args[2:]}", code == expected_code and expected_text in err and out == "",
              f"exit {code}, stderr {err!r}")


def check_tables_of_every_output():
    # kmeans' summary and lts' coefficients and subset, the tool's own in CSV,
    # print as the engine's tables with --table.
    faithful = os.path.join(ROOT, "tests", "reference", "faithful.csv")
    stackloss = os.path.join(ROOT, "samples", "stackloss.csv")
    expected_titles = [
        (("kmeans", "2", faithful, "--output", "summary"), "k-means summary", "inertia (within-cluster sum of squares)"),
        (("lts", stackloss, "--y-column", "stack.loss"), "Coefficients (reweighted fit)", "Air.Flow"),
        (("lts", stackloss, "--y-column", "stack.loss", "--output", "subset"), None, None),
    ]
    for args, title, text in expected_titles:
        code, out, err = run(*args, "--table")
        lines = out.splitlines()
        check(f"--table {args[0]} {args[-1]}: the engine's table, titled", code == 0 and len(lines) >= 3
              and (title is None or lines[0] == title) and (text is None or text in out), out + err)


def check_lts(write):
    # R's robustbase::ltsReg on stackloss. Tolerances: 1e-9 relative for the
    # coefficients, scales and objective (least squares on the same rows, solved
    # another way), 1e-9 absolute for residuals (of size 0.1 to 9); the 0/1
    # weights and the h-subset exactly.
    r = read_lts_stackloss_reference(ROOT)
    stackloss = os.path.join(ROOT, "samples", "stackloss.csv")
    with open(stackloss, newline="") as source:
        data = [[float(v) for v in row] for row in list(csv.reader(source))[1:]]
    y = [row[3] for row in data]
    x = [row[:3] for row in data]

    def coefficients(*options):
        code, out, err = run("lts", stackloss, "--y-column", "stack.loss", *options)
        got = table(out)
        return code, got, out + err

    code, got, detail = coefficients()
    check("lts coefficients: a term per row", code == 0 and [row[0] for row in got] ==
          ["term", "(Intercept)", "Air.Flow", "Water.Temp", "Acid.Conc."] and got[0][1:] == ["coefficient",
                                                                                             "raw_coefficient"],
          detail)
    if code == 0:
        ours = [float(row[1]) for row in got[1:]]
        raw = [float(row[2]) for row in got[1:]]
        check("lts stackloss: the reweighted coefficients equal ltsReg's (1e-9)",
              all(close(a, b, 1e-9) for a, b in zip(ours, r["default"]["coefficients"])),
              "%r vs R %r" % (ours, r["default"]["coefficients"]))
        check("lts stackloss: the raw coefficients equal ltsReg's (1e-9)",
              all(close(a, b, 1e-9) for a, b in zip(raw, r["default"]["raw_coefficients"])),
              "%r vs R %r" % (raw, r["default"]["raw_coefficients"]))
    code, out, err = run("lts", stackloss, "--y-column", "4", "--output", "weights")
    got = table(out)
    check("lts weights: a 0/1 line per row, as ltsReg's lts.wt", code == 0 and got[0] == ["row", "weight"]
          and [row[0] for row in got[1:]] == [str(i) for i in range(1, 22)]
          and [float(row[1]) for row in got[1:]] == r["default"]["weights"], out + err)
    code, out, err = run("lts", stackloss, "--y-column", "4", "--output", "residuals")
    got = table(out)
    check("lts residuals equal ltsReg's (1e-9 absolute)", code == 0 and got[0] == ["row", "residual"]
          and len(got) == 22 and all(abs(float(row[1]) - ref) <= 1e-9
                                     for row, ref in zip(got[1:], r["default"]["residuals"])), out + err)
    code, out, err = run("lts", stackloss, "--y-column", "4", "--output", "subset")
    got = table(out)
    check("lts subset: the h rows of ltsReg's best", code == 0 and got[0] == ["row"]
          and [float(row[0]) for row in got[1:]] == r["default"]["best"], out + err)
    code, out, err = run("lts", stackloss, "--y-column", "4", "--output", "summary")
    summary = dict(table(out)[1:]) if code == 0 else {}
    reference = r["default"]
    check("lts summary: criterion, h, objective, scales, outliers as ltsReg's",
          summary.get("criterion") == "lts" and summary.get("h") == "13" and summary.get("alpha") == "0.5"
          and close(float(summary.get("objective", "nan")), reference["objective"][0], 1e-9)
          and close(float(summary.get("scale", "nan")), reference["scale"][0], 1e-9)
          and close(float(summary.get("raw_scale", "nan")), reference["raw_scale"][0], 1e-9)
          and summary.get("outliers") == "4" and summary.get("exact_fit") == "0"
          and summary.get("intercept") == "1" and summary.get("observations") == "21"
          and summary.get("rows_left_out") == "0", out + err)

    for case, options, h in (("alpha75", ("--alpha", "0.75"), 17), ("no_intercept", ("--no-intercept",), 12)):
        code, got, detail = coefficients(*options)
        terms = [row[0] for row in got[1:]]
        ours = [float(row[1]) for row in got[1:]] if code == 0 else []
        raw = [float(row[2]) for row in got[1:]] if code == 0 else []
        check("lts %s: coefficients and raw coefficients equal ltsReg's (1e-9)" % " ".join(options),
              len(ours) == len(r[case]["coefficients"])
              and ("(Intercept)" in terms) == (case != "no_intercept")
              and all(close(a, b, 1e-9) for a, b in zip(ours, r[case]["coefficients"]))
              and all(close(a, b, 1e-9) for a, b in zip(raw, r[case]["raw_coefficients"])), detail)
        code, out, err = run("lts", stackloss, "--y-column", "4", "--output", "summary", *options)
        summary = dict(table(out)[1:]) if code == 0 else {}
        check("lts %s: h = %d" % (" ".join(options), h), summary.get("h") == str(h), out + err)

    # The response first (the default), rows 3 and 10 with an empty and an NA
    # field: left out, their per-row outputs empty; the fit is ltsReg's
    # without those rows.
    lines = ["loss;air;water;acid"]
    for index, row in enumerate(data):
        fields = ["%r" % row[3]] + ["%r" % v for v in row[:3]]
        if index == 2:
            fields[2] = ""
        if index == 9:
            fields[0] = "NA"
        lines.append(";".join(fields))
    dropped = write("stackloss_missing.csv", "\n".join(lines) + "\n")
    code, out, err = run("lts", dropped)
    got = table(out)
    ours = [float(row[1]) for row in got[1:]] if code == 0 else []
    check("lts with rows left out: ltsReg's fit without them (1e-9); y the first column",
          [row[0] for row in got[1:]] == ["(Intercept)", "air", "water", "acid"]
          and all(close(a, b, 1e-9) for a, b in zip(ours, r["rows_dropped"]["coefficients"]))
          and "left out 2 rows" in err, out + err)
    code, out, err = run("lts", dropped, "--output", "weights")
    weights = [row[1] for row in table(out)[1:]]
    expected = [str(int(w)) for w in r["rows_dropped"]["weights"]]
    expected.insert(2, "")
    expected.insert(9, "")
    check("lts weights with rows left out: 21 lines, rows 3 and 10 empty", weights == expected, repr(weights))
    code, out, err = run("lts", dropped, "--output", "subset")
    subset = [int(row[0]) for row in table(out)[1:]] if code == 0 else []
    expected = [b + (b >= 3) + (b >= 9) for b in map(int, r["rows_dropped"]["best"])]
    check("lts subset with rows left out: numbered as the file's rows", subset == expected,
          "%r vs %r" % (subset, expected))
    code, out, _ = run("lts", dropped, "--columns", "water,acid,air")
    got = table(out)
    check("lts --columns chooses and orders the predictors", code == 0 and [row[0] for row in got[1:]] ==
          ["(Intercept)", "water", "acid", "air"] and close(float(got[4][1]), r["rows_dropped"]["coefficients"][1],
                                                            1e-9), out)

    # LMS: with more starts than elemental subsets (5985), every one is
    # tried; the objective is then no more than the best elemental fit's h-th
    # smallest squared residual (found here by brute force), and it is the
    # h-th smallest squared residual of the raw coefficients it reports.
    h = 13
    best = math.inf
    design = [[1.0] + row for row in x]
    for rows in itertools.combinations(range(len(y)), 4):
        beta = solve([design[i] for i in rows], [y[i] for i in rows])
        if beta is None:
            continue
        squares = sorted((yi - sum(b * v for b, v in zip(beta, di))) ** 2 for yi, di in zip(y, design))
        best = min(best, squares[h - 1])
    code, got, detail = coefficients("--lms", "--starts", "6000")
    code_s, out, err = run("lts", stackloss, "--y-column", "4", "--lms", "--starts", "6000", "--output", "summary")
    summary = dict(table(out)[1:]) if code_s == 0 else {}
    if code == 0 and summary:
        raw = [float(row[2]) for row in got[1:]]
        squares = sorted((yi - sum(b * v for b, v in zip(raw, di))) ** 2 for yi, di in zip(y, design))
        objective = float(summary["objective"])
        check("lts --lms: criterion lms, objective the h-th smallest squared raw residual (1e-9)",
              summary["criterion"] == "lms" and close(objective, squares[h - 1], 1e-9), out)
        check("lts --lms over every elemental subset: objective <= the brute-force best (%.6g)" % best,
              objective <= best * (1 + 1e-9), out)
    else:
        check("lts --lms runs", False, detail + err)

    code, first, _ = run("lts", stackloss, "--y-column", "4", "--seed", "5", "--output", "summary")
    code2, second, _ = run("lts", stackloss, "--y-column", "4", "--seed", "5", "--output", "summary")
    check("lts: the same seed gives the same output", code == 0 and code2 == 0 and first == second, second)

    # An exact fit: 15 of 20 rows on y = 1 + 2x.
    rows = ["y,x"] + ["%r,%r" % (1 + 2 * i, float(i)) for i in range(15)] + \
           ["%r,%r" % (40.0 + 3 * i, float(i)) for i in range(5)]
    exact = write("exact.csv", "\n".join(rows) + "\n")
    code, out, err = run("lts", exact, "--output", "summary")
    summary = dict(table(out)[1:]) if code == 0 else {}
    check("lts exact fit: exact_fit 1, scale 0, 5 outliers", summary.get("exact_fit") == "1"
          and float(summary.get("scale", "nan")) == 0.0 and summary.get("outliers") == "5", out + err)
    code, out, err = run("lts", exact)
    got = table(out)
    check("lts exact fit: the line y = 1 + 2x (1e-12)", code == 0 and close(float(got[1][2]), 1.0, 1e-12)
          and close(float(got[2][2]), 2.0, 1e-12), out + err)

    few = write("few.csv", "y,a,b\n1,2,3\n2,3,1\n3,1,2\n4,5,5\n5,4,1\n")
    constant = write("ltsconstant.csv", "y,a,b\n" + "".join("%d,%d,7\n" % (i * i % 7, i) for i in range(12)))
    only_y = write("onlyy.csv", "y\n1\n2\n3\n")
    text = write("ltstext.csv", "y,x\n1,2\nthree,4\n")
    cases = [
        (("lts", stackloss, "--y-column", "4", "--alpha", "0.4"), 1, "alpha"),
        (("lts", stackloss, "--y-column", "4", "--alpha", "1.5"), 1, "alpha"),
        (("lts", stackloss, "--alpha", "half"), 2, "--alpha"),
        (("lts", stackloss, "--output", "coef"), 2, "--output"),
        (("lts", stackloss, "--y-column", "loss"), 2, "no column named"),
        (("lts", stackloss, "--y-column", "5"), 2, "no column 5"),
        (("lts", stackloss, "--starts", "-3"), 2, "--starts"),
        (("lts", stackloss, "--seed", "x"), 2, "--seed"),
        (("lts", stackloss, "--restarts", "3"), 2, "only for kmeans"),
        (("lts", stackloss, "--format", "f32"), 2, "CSV only"),
        (("lts", few), 1, "invalid argument"),
        (("lts", constant), 1, "invalid argument"),
        (("lts", only_y, "--no-intercept"), 2, "predictor"),
        (("lts", text), 2, "not a number"),
        (("lts", os.path.join(ROOT, "no-such-file.csv")), 2, "cannot open"),
        (("lts",), 2, "no input file"),
        (("median", stackloss, "--lms"), 2, "only for lts"),
    ]
    for args, expected_code, expected_text in cases:
        code, out, err = run(*args)
        check(f"lts bad input {args[1:]}", code == expected_code and expected_text in err and out == "",
              f"exit {code}, stderr {err!r}")


def check_csv_rules(write):
    """The CSV rules of the help and README: any number of columns, a header
    only when the first line cannot be data, strict numbers, line ends."""
    # Item: no fixed limit on columns. 60 x 5000, two groups of 30 rows far
    # apart: k = 2 finds the groups, whose means are the centroids (1e-12).
    rng = random.Random(5)
    width = 5000
    rows = [[rng.randint(0, 9) + (1000 if i < 30 else 0) for _ in range(width)] for i in range(60)]
    wide = write("wide.csv", "".join(",".join(map(str, row)) + "\n" for row in rows))
    means = sorted([[sum(row[c] for row in group) / 30 for c in range(width)] for group in (rows[:30], rows[30:])])
    code, out, err = run("kmeans", "2", wide, "--output", "centroids", "--restarts", "2")
    got = table(out)
    check("kmeans on 5000 columns: 5000 centroid columns", code == 0 and len(got) == 3
          and all(len(row) == width + 1 for row in got) and got[0][-1] == "x5000", err)
    if code == 0 and len(got) == 3:
        centroids = sorted([[float(v) for v in row[1:]] for row in got[1:]])
        check("kmeans on 5000 columns: the groups' means (1e-12)", all(
            close(a, b, 1e-12) for row, ref in zip(centroids, means) for a, b in zip(row, ref)), err)
    code, out, err = run("kmeans", "2", wide, "--columns", "4999,5000")
    got = table(out)
    centroids = sorted([[float(v) for v in row[1:]] for row in got[1:]]) if code == 0 else []
    check("kmeans --columns 4999,5000", code == 0 and got[0] == ["cluster", "x4999", "x5000"]
          and all(close(a, b, 1e-12) for row, ref in zip(centroids, means) for a, b in zip(row, ref[4998:])),
          out + err)
    code, out, err = run("median", wide, "--column", "5000")
    check("median --column 5000", code == 0 and same(out, median(sorted(row[4999] for row in rows))), out + err)

    # Item: header and numbers. A UTF-8 byte-order mark is not part of the
    # first field.
    code, out, err = run("median", "-", stdin="\ufeff5\n1\n2\n")
    check("a byte-order mark is dropped: the median of 5, 1, 2", code == 0 and same(out, 2.0), out + err)
    code, out, err = run("median", "-", "--column", "y", stdin="\ufeffy,x\n1,2\n2,3\n4,0\n")
    check("a byte-order mark before a header: column y found", code == 0 and same(out, 2.0), out + err)
    # A number beyond the range of a double, on the first line or any other,
    # is an error naming line and column (it was taken for a header).
    for args, text, where in ((("median", "-"), "1e309\n1\n2\n", "-:1: column 1"),
                              (("median", "-"), "1\n2\n-1e400\n", "-:3: column 1"),
                              (("median", "-"), "1\n1e-400\n2\n", "-:2: column 1"),
                              (("kmeans", "1", "-"), "a,b\n1,2\n\n3,1e999\n", "-:4: column 2"),
                              (("lts", "-"), "1,2\n2,3e308\n", "-:2: column 2")):
        code, out, err = run(*args, stdin=text)
        check(f"out of range {text!r}: an error at {where}", code == 2 and where in err and "beyond the range" in err
              and out == "", f"exit {code}, {out!r} {err!r}")
    code, out, err = run("median", "-", stdin="4.9e-324\n0\n1\n")
    check("a subnormal number is read", code == 0 and same(out, 4.9e-324), out + err)
    # The first line is a header only when it cannot be data: a field that is
    # text. A header of numbers in the column read is still a header.
    code, out, err = run("median", "-", "--column", "2", stdin="name,2011\nx,1\ny,3\nz,5\n")
    check("a header whose column is named 2011 is not data: the median of 1, 3, 5", code == 0 and same(out, 3.0)
          and "first line taken as a header" in err and "'name'" in err, out + err)
    for text, expected in (("NA,5\n1,2\n3,4\n", 4.0), ("\n\n5\n1\n2\n", 2.0), (",7\n,1\n,3\n", 3.0),
                           ("nan,5\n1,2\n1,4\n", 4.0)):
        code, out, err = run("median", "-", "--column", "2" if "," in text.strip() else "1", stdin=text)
        check(f"first line {text.split(chr(10))[0]!r} can be data: it is read", code == 0 and same(out, expected)
              and "header" not in err, out + err)
    code, out, err = run("median", "-", "--column", "2", "--header", stdin="1;2\n3;4\n5;9\n")
    check("--header: a first line of numbers is a header", code == 0 and same(out, 6.5), out + err)
    code, out, err = run("median", "-", "--column", "2", "--no-header", stdin="a,2\nb,4\nc,9\n")
    check("--no-header: a first line with text is data", code == 0 and same(out, 4.0) and "header" not in err,
          out + err)
    code, out, err = run("median", "-", "--header", "no", "--column", "1", stdin="a\n1\n")
    check("--header no: text on the first line is an error naming it", code == 2 and "-:1: column 1: 'a'" in err, err)
    code, out, err = run("kmeans", "1", "-", "--no-header", stdin="1,2\n3,4\n")
    check("kmeans --no-header", code == 0 and table(out) == [["cluster", "x1", "x2"], ["1", "2", "3"]], out + err)

    # Item: the first line sets the count of fields. A data line with more
    # is an error naming the line and both counts (a decimal comma or a
    # thousands separator in a one-column file read as a second column, before
    # silently); fewer is a row with missing fields; empty fields at the end
    # (a delimiter ending the lines) do not count.
    for args, text, expected in (
            (("median", "-"), "Wert\n1,5\n2,5\n3,5\n", "-:2: 2 fields, but the header has 1 (field 2 is '5')"),
            (("median", "-"), "price\n1,234\n2,500\n3,000\n", "-:2: 2 fields, but the header has 1"),
            (("kmeans", "1", "-"), "a\n1,5\n2,5\n", "-:2: 2 fields, but the header has 1"),
            (("lts", "-"), "y,x\n1,2\n2,3\n3,4,5\n4,4\n", "-:4: 3 fields, but the header has 2"),
            (("igmm", "1", "-"), "a,b\n1,2\n2,3,4\n", "-:3: 3 fields, but the header has 2"),
            (("median", "-", "--column", "2"), "1,2\n3,4,5\n", "-:2: 3 fields, but the first line has 2")):
        code, out, err = run(*args, stdin=text)
        check(f"{args[0]} on {text!r}: more fields than the first line is an error", code == 2 and expected in err
              and "may be a decimal comma or a thousands separator" in err and "--delimiter" in err and out == "",
              f"exit {code}, {out!r} {err!r}")
    code, out, err = run("kmeans", "1", "-", stdin="a;b\n1;2\n3;4;5\n")
    check("a ';' file with a line of more fields: the error, no decimal comma hint", code == 2
          and "-:3: 3 fields, but the header has 2 (field 3 is '5')" in err and "decimal comma" not in err, err)
    code, out, err = run("median", "-", stdin="1,5\n2,5\n3,5\n")
    check("a first line of data '1,5': a table of two columns, column 1 read", code == 0 and same(out, 2.0)
          and err == "", out + err)
    for args, text, expected in ((("median", "-", "--column", "b"), "a,b,\n1,2,\n3,4,\n", ["3"]),
                                 (("median", "-"), "Wert\n1,\n2,\n", ["1.5"]),
                                 (("kmeans", "1", "-"), "a,b\n1,2,\n3,4,\n", ["cluster,a,b", "1,2,3"]),
                                 (("kmeans", "1", "-"), "a,b,\n1,2,\n3,4,\n", ["cluster,a,b", "1,2,3"]),
                                 (("kmeans", "1", "-"), "1,2,\n3,4,\n", ["cluster,x1,x2", "1,2,3"]),
                                 (("kmeans", "1", "-"), "a\tb\n1\t2\t\n3\t4\n", ["cluster,a,b", "1,2,3"]),
                                 (("median", "-", "--column", "2"), '"n","v"\n"a, b",1\n"c,d",3\n', ["2"])):
        code, out, err = run(*args, stdin=text)
        check(f"{args[0]} on {text!r}: read", code == 0 and out.splitlines() == expected, out + err)
    code, out, err = run("kmeans", "1", "-", stdin="a,b,\n1,2,\n3,4,9\n")
    check("a value under a header's trailing empty field: more fields than the header", code == 2
          and "-:3: 3 fields, but the header has 2 (field 3 is '9')" in err, err)
    code, out, err = run("kmeans", "1", "-", stdin="a,b\n1,2\n3\n5,6\n7,NA\n")
    check("kmeans: a line of fewer fields is a row left out, said so", code == 0
          and table(out) == [["cluster", "a", "b"], ["1", "3", "4"]]
          and "left out 2 rows with empty or NA fields, 1 of them lines with fewer fields than the header (2)" in err,
          out + err)
    code, out, err = run("median", "-", "--column", "2", stdin="a,b\n1,2\n3\n5,6\n")
    check("median: a line without the column is skipped, said so", code == 0 and same(out, 4.0)
          and "skipped 1 lines that have no column 2" in err, out + err)

    # Item: a name that two columns of the header have is an error naming
    # both, whichever option names it; the number still reads either.
    twins = write("twin_columns.csv", "x,y,x\n1,2,30\n4,5,60\n7,8,90\n")
    for args in (("median", twins, "--column", "x"), ("kmeans", "1", twins, "--columns", "y,x"),
                 ("lts", twins, "--y-column", "x"), ("gmm", "1", twins, "--columns", "x")):
        code, out, err = run(*args)
        check(f"{' '.join(args[:1] + args[-2:])}: a name of two columns is an error naming both", code == 2
              and "columns 1 and 3 of the header are both named 'x': give the number of the one meant" in err
              and out == "", f"exit {code}, {err!r}")
    code, out, err = run("median", twins, "--column", "3")
    check("median --column 3 (the second x by number)", code == 0 and same(out, 60.0), out + err)

    # Item: messages that name the right thing.
    forty = write("forty.csv", "".join("%d\n" % i for i in range(40)))
    for command in ("large", "small"):
        code, out, err = run(command, forty, "-k", "100")
        check(f"{command} -k 100 of 40 values: k = 100 named", code == 1 and "k = 100 lies outside 1..40" in err, err)
    three = write("threecolumns.csv", "a,b,c\n1,2,3\n4,5,6\n")
    code, out, err = run("median", three, "--column", "4")
    check("median --column 4 of 3 columns: no column 4", code == 2 and "no column 4 (the header has 3 columns)" in err
          and "empty" not in err, err)
    years = write("years.csv", "name,2010,2011\nx,1,2\ny,3,4\nz,5,7\n")
    code, out, err = run("median", years, "--column", "2011")
    check("--column 2011, a header name: that column", code == 0 and same(out, 4.0), out + err)
    code, out, err = run("kmeans", "1", years, "--columns", "2010,2011")
    check("--columns 2010,2011, header names: those columns", code == 0
          and table(out) == [["cluster", "2010", "2011"], ["1", "3", "4.333333333333333"]], out + err)
    numbered = write("numbered.csv", "3,1,2\n10,20,30\n11,21,31\n")
    code, out, err = run("median", numbered, "--column", "1", "--header")
    check("--column 1 with a header of numbers: the column named 1 (the second), said so",
          code == 0 and same(out, 20.5) and "named so, not column 1" in err, out + err)
    code, out, err = run("median", write("yearsonly.csv", "2010,2011\n1,2\n3,4\n"), "--column", "2011")
    check("--column 2011 where the first line is read as data: no column 2011, and the hint",
          code == 2 and "no column 2011 (the first line has 2 fields)" in err and "--header yes" in err, err)
    code, out, err = run("median", write("cr.csv", "v\r1\r2\r3\r4\r"))
    check("CR-only line ends are line ends", code == 0 and same(out, 2.5), out + err)
    code, out, err = run("kmeans", "1", write("crlf.csv", "a;b\r\n1;2\r\n3;4\r\n"))
    check("CR LF line ends", code == 0 and table(out) == [["cluster", "a", "b"], ["1", "2", "3"]], out + err)
    empty = write("empty2.csv", "")
    code, out, err = run("lts", empty)
    check("lts on an empty file: the file is empty", code == 1 and "is empty" in err and "needs" not in err, err)
    code, out, err = run("median", three, "--bogus")
    check("an unknown option given last: unknown option", code == 2 and "unknown option: --bogus" in err, err)
    code, out, err = run("median", three, "--columns")
    check("an option of another command given last: not for median", code == 2 and "only for kmeans" in err, err)
    nan32 = os.path.join(os.path.dirname(empty), "nan.f32")
    with open(nan32, "wb") as handle:
        handle.write(struct.pack("<3f", 1.0, math.nan, 2.0))
    code, out, err = run("median", nan32, "--format", "f32")
    check("NaN in a float32 file: said once", code == 1 and err.count("contain NaN") == 1, err)

    # Item: what a field may be. nan like NA (numpy and Julia write it);
    # hexadecimal, infinities and a NUL byte are errors.
    code, out, err = run("median", "-", stdin="1\nnan\nNaN\n\"NA\"\n2\n4\n")
    check("nan, NaN and NA are skipped", code == 0 and same(out, 2.0) and "skipped 3" in err, out + err)
    for text, where in (("1\n0x10\n2\n", "-:2: column 1: '0x10'"), ("1\ninf\n2\n", "-:2: column 1: 'inf'"),
                        ("1\n-Infinity\n", "-:2: column 1: '-Infinity'"), ("1\n2\n1e5x\n", "-:3: column 1")):
        code, out, err = run("median", "-", stdin=text)
        check(f"{text!r} is an error", code == 2 and where in err and out == "", err)
    code, out, err = run("median", "-", stdin="1\n2\x00junk\n5\n")
    check("a NUL byte is an error naming its line", code == 2 and "-:2:" in err and "NUL" in err, err)
    code, out, _ = run("--help")
    check("the help names the CSV rules", "nan" in out and "hexadecimal" in out and "--no-header" in out, out)


def run_on_terminal(args, seconds, until=None, slow_input=None):
    """Runs the tool with stderr on a pseudo-terminal (stdout a pipe) for at
    most seconds, or until that text has come on stderr, then Ctrl-C (SIGINT,
    its default action restored: a background job may have inherited it
    ignored). slow_input, when given, is standard input: its first line, then
    after 1.2 s the rest, so that the run is past its first second once it
    computes, however fast the machine. The exit code (None when it did not
    end within 5 s of the SIGINT), stdout and stderr's bytes, and whether the
    SIGINT was sent."""
    master, terminal = pty.openpty()
    reader, writer = os.pipe()
    done = subprocess.Popen([TOOL, *args], stdin=reader, stdout=subprocess.PIPE, stderr=terminal,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    os.close(terminal)
    os.close(reader)
    feed_slowly(writer, slow_input or "\n")
    err, interrupted, started = b"", False, time.monotonic()
    while time.monotonic() - started < seconds and (until is None or until not in err):
        if select.select([master], [], [], 0.1)[0]:
            try:
                chunk = os.read(master, 4096)
            except OSError:  # the terminal closed: the tool has ended
                chunk = b""
            if not chunk:
                break
            err += chunk
    if done.poll() is None and until is not None and until in err:
        done.send_signal(signal.SIGINT)
        interrupted = True
    try:
        out = done.communicate(timeout=5)[0].decode()
    except subprocess.TimeoutExpired:
        done.kill()
        out = done.communicate()[0].decode()
        return None, out, err, interrupted
    finally:
        os.close(master)
    return done.returncode, out, err, interrupted


def feed_slowly(descriptor, text):
    """Writes text's first line to a pipe, waits 1.2 s when there is more,
    writes the rest and closes the pipe."""
    first, rest = text.split("\n", 1)
    os.write(descriptor, (first + "\n").encode())
    if rest:
        time.sleep(1.2)
        os.write(descriptor, rest.encode())
    os.close(descriptor)


def check_progress(write):
    # A long run shows its progress on stderr when stderr is a terminal: after
    # about a second, one line that rewrites itself ("statgpu: bestsubset
    # 37%"); Ctrl-C (SIGINT's default action) ends it at once. Best subsets of
    # 60 noise predictors take minutes on any machine.
    rng = random.Random(17)
    noise = write("noise60.csv", ",".join(["y"] + ["x%d" % j for j in range(60)]) + "\n" + "".join(
        ",".join("%.4f" % rng.gauss(0, 1) for _ in range(61)) + "\n" for _ in range(120)))
    code, out, err, interrupted = run_on_terminal(("bestsubset", noise), 30, until=b"%")
    check("bestsubset on a terminal: a progress line within 30 s, rewritten in place, and Ctrl-C ends it at once",
          interrupted and code == -signal.SIGINT and out == ""
          and re.search(rb"\r\n(\rstatgpu: bestsubset +\d+%)+$", err) is not None,
          f"exit {code}, interrupted {interrupted}, stderr {err[-200:]!r}")
    # A run that ends clears its line before the output; its file read
    # slowly (1.2 s) puts it past the second on any machine.
    rows = "a,b\n" + "".join("%d,%d\n" % (i % 7, i % 5) for i in range(200))
    code, out, err, _ = run_on_terminal(("kmeans", "2", "-", "--output", "sizes"), 60, slow_input=rows)
    check("kmeans on a terminal past a second: the progress line, cleared at the end, the output whole",
          code == 0 and len(table(out)) == 3
          and re.search(rb"\r\n(\rstatgpu: kmeans +\d+%)+\r {20}\r$", err) is not None,
          f"exit {code}, {out!r}, stderr {err[-200:]!r}")
    # Not a terminal: the same run prints nothing but its usual note.
    reader, writer = os.pipe()
    done = subprocess.Popen([TOOL, "kmeans", "2", "-", "--output", "sizes"], stdin=reader,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    os.close(reader)
    feed_slowly(writer, rows)
    out, err = done.communicate(timeout=60)
    check("kmeans with stderr a pipe: no progress line", done.returncode == 0
          and err.decode().splitlines() == ["statgpu: -: first line taken as a header (field 1, 'a', is not a number);"
                                            " --header no reads it as data"], repr(err))


def main():
    rng = random.Random(7)
    with tempfile.TemporaryDirectory() as folder:
        def write(name, text):
            path = os.path.join(folder, name)
            with open(path, "w") as handle:
                handle.write(text)
            return path

        # A CSV with a header, blanks, NA, quotes, a second column.
        values = [rng.gauss(10, 3) for _ in range(2001)]
        lines = ["id;\"height\""]
        for index, value in enumerate(values):
            lines.append(f"{index};{value!r}")
        lines.insert(5, "x;")
        lines.insert(9, "y;NA")
        path = write("heights.csv", "\n".join(lines) + "\n")
        ordered = sorted(values)

        code, out, err = run("median", path, "--column", "height")
        check("median by column name", code == 0 and same(out, median(ordered)), out + err)
        check("skipped fields are reported", "skipped 2" in err, err)
        code, out, _ = run("median", path, "--column", "2", "--delimiter", ";")
        check("median by column number", code == 0 and same(out, median(ordered)), out)
        for k in (1, 2, 1000, 2001):
            code, out, _ = run("small", path, "--column", "2", "-k", str(k))
            check(f"small k={k}", code == 0 and same(out, ordered[k - 1]), out)
            code, out, _ = run("large", path, "--column", "2", "-k", str(k))
            check(f"large k={k}", code == 0 and same(out, ordered[-k]), out)
        probabilities = [0.0, 0.013, 0.25, 0.5, 0.8125, 1.0]
        code, out, _ = run("quantile", path, "--column", "2", "-p", ",".join(map(str, probabilities)))
        rows = out.split("\n")
        check("quantile rows", code == 0 and len(rows) == 7, out)
        for row, p in zip(rows, probabilities):
            fields = row.split("\t")
            check(f"quantile p={p}", len(fields) == 2 and same(fields[1], percentile_inc(ordered, p)), row)

        # Standard input, no header, comma separated.
        code, out, _ = run("median", "-", stdin="5\n1\n4\n2\n3\n")
        check("stdin median", code == 0 and same(out, 3.0), out)

        # Raw binary doubles and floats, including -0.0, infinities and huge values.
        raw = [rng.uniform(-1, 1) for _ in range(100000)] + [-0.0, 0.0, math.inf, -math.inf, 1e300, -1.7e308]
        rng.shuffle(raw)
        f64 = os.path.join(folder, "data.f64")
        with open(f64, "wb") as handle:
            handle.write(struct.pack(f"<{len(raw)}d", *raw))
        ordered_raw = sorted(raw)
        code, out, _ = run("median", f64, "--format", "f64", "--backend", "cpu")
        check("binary f64 median", code == 0 and same(out, median(ordered_raw)), out)
        code, out, _ = run("small", f64, "--format", "f64", "-k", "1")
        check("binary f64 minimum is -inf", code == 0 and out.strip() == "-inf", out)
        f32_values = [struct.unpack("<f", struct.pack("<f", v))[0] for v in raw[:50001] if abs(v) < 1e38 or math.isinf(v)]
        f32 = os.path.join(folder, "data.f32")
        with open(f32, "wb") as handle:
            handle.write(struct.pack(f"<{len(f32_values)}f", *f32_values))
        code, out, _ = run("median", f32, "--format", "f32")
        check("binary f32 median", code == 0 and same(out, median(sorted(f32_values))), out)
        code, out, _ = run("median", f64, "--format", "f64", "--threads", "1")
        check("one thread agrees", code == 0 and same(out, median(ordered_raw)), out)

        # Bad input: a message and exit status 2 (usage) or 1 (computation), never a crash.
        empty = write("empty.csv", "")
        header_only = write("header.csv", "value\n")
        text = write("text.csv", "value\n1\nabc\n")
        nan = os.path.join(folder, "nan.f64")
        with open(nan, "wb") as handle:
            handle.write(struct.pack("<3d", 1.0, math.nan, 2.0))
        odd = write("odd.f64", "12345")
        cases = [
            (("median", empty), 1, "no observations"),
            (("median", header_only), 1, "no observations"),
            (("median", text), 2, "not a number"),
            (("median", nan, "--format", "f64"), 1, "NaN"),
            (("median", odd, "--format", "f64"), 2, "whole number"),
            (("median", os.path.join(folder, "missing.csv")), 2, "cannot open"),
            (("small", path, "--column", "2", "-k", "0"), 2, "-k"),
            (("small", path, "--column", "2", "-k", "9999"), 1, "outside"),
            (("large", path, "--column", "2", "-k", "abc"), 2, "-k"),
            (("quantile", path, "--column", "2", "-p", "2"), 1, "outside [0, 1]"),
            (("quantile", path, "--column", "2", "-p", "x"), 2, "-p"),
            (("quantile", path, "--column", "2"), 2, "-p"),
            (("median", path, "--column", "nosuch"), 2, "no column"),
            (("median", path, "--backend", "gpu"), 2, "--backend"),
            (("median", path, "--format", "xml"), 2, "--format"),
            (("median",), 2, "no input file"),
            (("frobnicate",), 2, "unknown command"),
            (("median", path, "--bogus", "1"), 2, "unknown option"),
            (("median", path, "--threads"), 2, "needs a value"),
            (("median", path, "--threads", "1025"), 2, "from 1 to 1024"),
            # Lists with an empty item, a K beyond a long, a misread --header
            # word, a folder or a device as the file, a stream with no line
            # break (refused at its first NUL, not read to the end).
            (("quantile", path, "--column", "2", "-p", "0.5,,0.9"), 2, "-p has an empty item"),
            (("quantile", path, "--column", "2", "-p", "0.5,"), 2, "-p has an empty item"),
            (("kmeans", "2", path, "--columns", ",1"), 2, "--columns has an empty item"),
            (("gmm", "99999999999999999999", path), 2, "K must be a whole number"),
            (("gmm", "2,", path), 2, "K must be a whole number"),
            (("median", path, "--header", "maybe"), 2, "--header takes yes, no or auto"),
            (("median", folder), 2, "is a directory"),
            (("median", folder, "--format", "f64"), 2, "not a regular file"),
            (("median", "/dev/zero"), 2, "NUL byte"),
            (("median", "/dev/zero", "--format", "f64"), 2, "not a regular file"),
            (("bestsubset", empty), 1, "needs a column for y"),
            (("bestsubset", write("one_column.csv", "x\n5\n6\n")), 2, "needs a column for y"),
        ]
        for args, expected_code, expected_text in cases:
            code, out, err = run(*args)
            check(f"bad input {args[1:] or args}", code == expected_code and expected_text in err,
                  f"exit {code}, stderr {err!r}")

        # --table prints names whole, however long (150 characters that
        # differ only at the end).
        names = ["n" + "x" * 148 + str(j) for j in range(3)]
        long_names = write("long_names.csv", ",".join(names) + "\n" + "".join(
            f"{i % 7},{(i * 3) % 5},{(i * 5) % 11}\n" for i in range(40)))
        code, out, err = run("kmeans", "2", long_names, "--table")
        header = out.splitlines()[1].split() if code == 0 and len(out.splitlines()) > 1 else []
        check("--table prints 150-character names whole", header[1:] == names, out + err)

        check_kmeans(write)
        check_gmm(write)
        check_igmm(write)
        check_bestsubset(write)
        check_tables_of_every_output()
        check_lts(write)
        check_csv_rules(write)
        check_progress(write)

        code, out, _ = run("info")
        check("info names a backend", code == 0 and "backend: " in out, out)
        code, out, _ = run("--help")
        check("help", code == 0 and "usage: statgpu" in out, out)

    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
