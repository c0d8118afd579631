"""reference_checks.py: what the CLI test (tests/cli/test_cli.py) and the
LibreOffice checks (tests/libreoffice/calc_*.py) share: R's ltsReg results on
stackloss, a small linear solver for the brute-force checks, and the test that
two clusterings group the rows alike."""

import csv
import os


def read_lts_stackloss_reference(source_dir):
    """{case: {quantity: [values]}} of R's robustbase::ltsReg on stackloss
    (tests/reference/ltsfit_stackloss_r.csv)."""
    reference = {}
    path = os.path.join(source_dir, "tests", "reference", "ltsfit_stackloss_r.csv")
    with open(path, newline="") as source:
        for row in csv.DictReader(source):
            reference.setdefault(row["case"], {})[row["quantity"]] = [float(v) for v in row["values"].split()]
    return reference


def solve(matrix, vector):
    """x of matrix x = vector by Gaussian elimination with partial pivoting; None when singular."""
    n = len(vector)
    a = [list(row) + [value] for row, value in zip(matrix, vector)]
    for column in range(n):
        pivot = max(range(column, n), key=lambda r: abs(a[r][column]))
        if abs(a[pivot][column]) < 1e-12:
            return None
        a[column], a[pivot] = a[pivot], a[column]
        for r in range(column + 1, n):
            factor = a[r][column] / a[column][column]
            for c in range(column, n + 1):
                a[r][c] -= factor * a[column][c]
    x = [0.0] * n
    for r in reversed(range(n)):
        x[r] = (a[r][n] - sum(a[r][c] * x[c] for c in range(r + 1, n))) / a[r][r]
    return x


def same_partition(labels, reference):
    """True when labels and reference group the rows alike (cluster numbers may differ)."""
    mapping, backward = {}, {}
    for ours, theirs in zip(labels, reference):
        if mapping.setdefault(ours, theirs) != theirs or backward.setdefault(theirs, ours) != ours:
            return False
    return len(labels) == len(reference)
