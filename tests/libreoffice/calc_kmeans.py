"""calc_kmeans.py: the LibreOffice checks of KMEANS, run by test_calc.py in its
office session (statgpu.oxt installed).

  - the sample samples/kmeans.ods: its centroids, sizes, summary and labels
    on Old Faithful equal R's stats::kmeans (tests/reference/kmeans_r.csv:
    Lloyd to convergence, the optimum for k = 2); the chart has a series per
    cluster and one for the centroids;
  - a workbook built here: a fixed Seed, the optional arguments left out,
    rows with a blank or a text cell (left out, their label empty), every
    Output word in any case, a run stopped by MaxIter (converged 0, not an
    error), and every bad argument (Err:502; text for a number, #VALUE!).

R's centres are compared within 1e-10 relative, as the engine test does;
clusters are numbered in no particular order, so they are matched by their
eruption time first.
"""

import csv
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from reference_checks import same_partition  # noqa: E402

ILLEGAL_ARGUMENT = 502    # Err:502
ILLEGAL_PARAMETER = 504   # Err:504: Calc's own, for a missing argument or an error cell in a range
NO_VALUE = 519            # #VALUE!

RELATIVE_TOLERANCE = 1e-10
SUMMARY_NAMES = ["inertia (within-cluster sum of squares)", "total sum of squares",
                 "between / total sum of squares", "iterations", "converged (1 yes, 0 no)", "restarts",
                 "best restart", "observations used", "rows left out (missing values)"]


def close(a, b, tolerance=RELATIVE_TOLERANCE):
    return a == b or abs(a - b) <= tolerance * abs(b)


def read_faithful(source_dir):
    with open(os.path.join(source_dir, "tests", "reference", "faithful.csv"), newline="") as source:
        return [(float(row["eruptions"]), float(row["waiting"])) for row in csv.DictReader(source)]


def r_reference(source_dir, dataset="faithful", k=2):
    """R's centres (k rows), labels (1-based) and tot.withinss of the first
    converged case of dataset and k."""
    with open(os.path.join(source_dir, "tests", "reference", "kmeans_r.csv"), newline="") as source:
        for row in csv.DictReader(source):
            if row["dataset"] == dataset and int(row["k"]) == k and row["converged"] == "1":
                flat = [float(value) for value in row["centers"].split()]
                centres = [tuple(flat[j + k * v] for v in range(len(flat) // k)) for j in range(k)]
                return centres, [int(label) for label in row["labels"].split()], float(row["tot_withinss"])
    raise LookupError("no converged R case for %s, k=%d" % (dataset, k))


def cells(cell_range, rows, columns):
    return [[cell_range.getCellByPosition(c, r) for c in range(columns)] for r in range(rows)]


def values_of(cell_range, rows, columns):
    """The numbers of a range, or None when any cell is an error or text."""
    table = []
    for row in cells(cell_range, rows, columns):
        if any(cell.getError() or cell.getType().value != "FORMULA" for cell in row):
            return None
        table.append([cell.getValue() for cell in row])
    return table


def check_centroids(results, name, table, r_centres):
    if table is None:
        results.check(name, False, "not a table of numbers")
        return None
    ours = sorted(table)
    theirs = sorted(r_centres)
    ok = len(ours) == len(theirs) and all(close(a, b) for row, ref in zip(ours, theirs) for a, b in zip(row, ref))
    results.check(name, ok, "statgpu %r, R %r" % (ours, theirs))
    return table


def labels_of(cell_range, rows):
    """A column of labels: numbers, '' for an empty cell, or an error code."""
    labels = []
    for r in range(rows):
        cell = cell_range.getCellByPosition(0, r)
        if cell.getError():
            labels.append(("error", cell.getError()))
        elif cell.getString() == "":
            labels.append("")
        else:
            labels.append(cell.getValue())
    return labels


def summary_of(cell_range):
    """{name: value} of a 9 x 2 summary range (values, then names), or None."""
    table = {}
    for r in range(len(SUMMARY_NAMES)):
        value_cell, name_cell = cell_range.getCellByPosition(0, r), cell_range.getCellByPosition(1, r)
        if name_cell.getError() or value_cell.getError():
            return None
        table[name_cell.getString()] = value_cell.getValue()
    return table


# ---- the sample workbook --------------------------------------------------------------

def kmeans_formula_ranges(sheet):
    """{Output word: the array range} of the sample's KMEANS cells."""
    import lo_session
    return lo_session.array_formula_ranges(sheet, "KMEANS", "centroids", ("labels", "sizes", "summary"))


def check_sample(results, office, source_dir):
    path = os.path.join(source_dir, "samples", "kmeans.ods")
    r_centres, r_labels, r_inertia = r_reference(source_dir)
    document = office.load(path)
    try:
        document.calculateAll()
        sheet = document.Sheets.getByIndex(0)
        ranges = kmeans_formula_ranges(sheet)
        results.check("kmeans.ods has KMEANS centroids, labels, sizes and summary",
                      set(ranges) == {"centroids", "labels", "sizes", "summary"}, ", ".join(sorted(ranges)))
        if "centroids" in ranges:
            check_centroids(results, "kmeans.ods centroids of Old Faithful equal R's kmeans (1e-10)",
                            values_of(ranges["centroids"], 2, 2), r_centres)
        if "labels" in ranges:
            labels = labels_of(ranges["labels"], len(r_labels))
            results.check("kmeans.ods labels: the same partition as R's, 272 rows", same_partition(labels, r_labels)
                          and all(label in (1.0, 2.0) for label in labels), "first %r" % labels[:8])
        if "sizes" in ranges:
            sizes = values_of(ranges["sizes"], 2, 1)
            expected = sorted([r_labels.count(1), r_labels.count(2)])
            results.check("kmeans.ods sizes equal R's", sizes is not None and sorted(s[0] for s in sizes) == expected,
                          "statgpu %r, R %r" % (sizes, expected))
        if "summary" in ranges:
            summary = summary_of(ranges["summary"])
            ok = summary is not None and list(summary) == SUMMARY_NAMES and \
                close(summary[SUMMARY_NAMES[0]], r_inertia) and summary["converged (1 yes, 0 no)"] == 1 and \
                summary["restarts"] == 10 and summary["observations used"] == 272 and \
                summary["rows left out (missing values)"] == 0
            results.check("kmeans.ods summary: inertia equals R's tot.withinss, converged, 10 restarts", ok,
                          "%r; R's tot.withinss %r" % (summary, r_inertia))
        charts = sheet.getCharts()
        series = 0
        if charts.getCount() == 1:
            chart = charts.getByIndex(0).getEmbeddedObject()
            series = len(chart.getFirstDiagram().getCoordinateSystems()[0].getChartTypes()[0].getDataSeries())
        results.check("kmeans.ods has a scatter chart with a series per cluster and the centroids", series == 3,
                      "%d charts, %d series" % (charts.getCount(), series))
    finally:
        document.close(True)


# ---- the workbook of cases --------------------------------------------------------------

def fill(sheet, faithful):
    """A1:B272 Old Faithful; D1:E12 two groups with a blank (row 4) and text
    (row 8); G1:H5 constant; J1:J3 text only; L1:L5 empty; N1:O3 with =1/0."""
    sheet.getCellRangeByName("A1:B%d" % len(faithful)).setDataArray(tuple(faithful))
    small = [(1.0, 1.2), (1.1, 0.9), (0.8, 1.0), ("", 1.1), (10.0, 10.3), (10.2, 9.8), (9.9, 10.1),
             ("n/a", 10.0), (1.2, 1.1), (10.1, 10.0), (0.9, 0.8), (9.8, 9.9)]
    sheet.getCellRangeByName("D1:E%d" % len(small)).setDataArray(tuple(small))
    sheet.getCellRangeByName("G1:H5").setDataArray(tuple((2.5, 7.0) for _ in range(5)))
    sheet.getCellRangeByName("J1:J3").setDataArray((("a",), ("b",), ("c",)))
    sheet.getCellRangeByName("N1:O2").setDataArray(((1.0, 2.0), (3.0, 4.0)))
    sheet.getCellRangeByName("N3").setFormula("=1/0")
    sheet.getCellRangeByName("O3").setValue(5.0)
    return small


FAITHFUL = "$A$1:$B$272"
SMALL = "$D$1:$E$12"

# (name, formula, expected error) for single cells.
BAD_CASES = [
    ("k = 0", "=KMEANS(%s;0)" % FAITHFUL, ILLEGAL_ARGUMENT),
    ("k = -1", "=KMEANS(%s;-1)" % FAITHFUL, ILLEGAL_ARGUMENT),
    ("k = 0.5 (rounded down to 0)", "=KMEANS(%s;0.5)" % FAITHFUL, ILLEGAL_ARGUMENT),
    ("k more than the rows", "=KMEANS(%s;273)" % FAITHFUL, ILLEGAL_ARGUMENT),
    ("k more than the complete rows (10 of 12)", "=KMEANS(%s;11)" % SMALL, ILLEGAL_ARGUMENT),
    ("unknown Output word", "=KMEANS(%s;2;\"centres\")" % FAITHFUL, ILLEGAL_ARGUMENT),
    ("Output a number", "=KMEANS(%s;2;5)" % FAITHFUL, ILLEGAL_ARGUMENT),
    ("Restarts = 0.5 (0 after rounding down; 0 itself is an empty cell: the default)", "=KMEANS(%s;2;;0.5)" % FAITHFUL, ILLEGAL_ARGUMENT),
    ("Restarts = 1001", "=KMEANS(%s;2;;1001)" % FAITHFUL, ILLEGAL_ARGUMENT),
    ("MaxIter = 0.5 (0 after rounding down)", "=KMEANS(%s;2;;;0.5)" % FAITHFUL, ILLEGAL_ARGUMENT),
    ("MaxIter = -5", "=KMEANS(%s;2;;;-5)" % FAITHFUL, ILLEGAL_ARGUMENT),
    ("Seed = -1", "=KMEANS(%s;2;;;;-1)" % FAITHFUL, ILLEGAL_ARGUMENT),
    ("an empty range", "=KMEANS($L$1:$L$5;1)", ILLEGAL_ARGUMENT),
    ("a range of text only", "=KMEANS($J$1:$J$3;1)", ILLEGAL_ARGUMENT),
    ("constant data, k = 2 (fewer distinct rows than k)", "=KMEANS($G$1:$H$5;2)", ILLEGAL_ARGUMENT),
    ("Restarts given as text", "=KMEANS(%s;2;;\"ten\")" % FAITHFUL, NO_VALUE),
    ("k left out: Calc's own Err:504", "=KMEANS(%s)" % FAITHFUL, ILLEGAL_PARAMETER),
    ("a range holding =1/0: Calc's own Err:504", "=KMEANS($N$1:$O$3;1)", ILLEGAL_PARAMETER),
]


def check_cases(results, office, source_dir):
    r_centres, r_labels, r_inertia = r_reference(source_dir)
    faithful = read_faithful(source_dir)
    document = office.new_spreadsheet()
    try:
        sheet = document.Sheets.getByIndex(0)
        small = fill(sheet, faithful)
        column = 16  # Q onwards: one array per column block

        placed = {}

        def place(key, formula, rows, columns):
            nonlocal column
            cell_range = sheet.getCellRangeByPosition(column, 0, column + columns - 1, rows - 1)
            cell_range.setArrayFormula(formula)
            placed[key] = cell_range
            column += columns + 1

        place("seeded", "=KMEANS(%s;2;\"centroids\";10;300;7)" % FAITHFUL, 2, 2)
        place("omitted", "=KMEANS(%s;2)" % FAITHFUL, 2, 2)
        place("empty arguments", "=KMEANS(%s;2;;;;)" % FAITHFUL, 2, 2)
        place("fraction k", "=KMEANS(%s;2.7)" % FAITHFUL, 2, 2)
        place("upper case", "=KMEANS(%s;2;\"CENTROIDS\")" % FAITHFUL, 2, 2)
        place("labels", "=KMEANS(%s;2;\"labels\";;;7)" % FAITHFUL, len(faithful), 1)
        place("sizes", "=KMEANS(%s;2;\" Sizes \")" % FAITHFUL, 2, 1)
        place("summary", "=KMEANS(%s;2;\"summary\")" % FAITHFUL, 9, 2)
        place("small labels", "=KMEANS(%s;2;\"Labels\")" % SMALL, len(small), 1)
        place("small summary", "=KMEANS(%s;2;\"summary\";1)" % SMALL, 9, 2)
        place("stopped", "=KMEANS(%s;3;\"summary\";1;1;0)" % FAITHFUL, 9, 2)
        place("single cell", "=KMEANS(%s;2)" % FAITHFUL, 1, 1)
        bad_column = column
        for row, (_, formula, _) in enumerate(BAD_CASES):
            sheet.getCellByPosition(bad_column, row).setFormula(formula)
        document.calculateAll()

        check_centroids(results, "=KMEANS(Old Faithful;2;\"centroids\";10;300;7) equals R's centres (1e-10)",
                        values_of(placed["seeded"], 2, 2), r_centres)
        check_centroids(results, "=KMEANS(Old Faithful;2), the optional arguments left out, equals R's centres",
                        values_of(placed["omitted"], 2, 2), r_centres)
        results.check("=KMEANS(Old Faithful;2;;;;) with empty arguments equals =KMEANS(Old Faithful;2) exactly",
                      values_of(placed["empty arguments"], 2, 2) == values_of(placed["omitted"], 2, 2))
        results.check("k = 2.7 is rounded down: the same as k = 2",
                      values_of(placed["fraction k"], 2, 2) == values_of(placed["omitted"], 2, 2))
        results.check("Output \"CENTROIDS\" (any case) is the centroids",
                      values_of(placed["upper case"], 2, 2) == values_of(placed["omitted"], 2, 2))

        labels = labels_of(placed["labels"], len(faithful))
        results.check("labels of Old Faithful (1-based): the same partition as R's",
                      same_partition(labels, r_labels) and set(labels) == {1.0, 2.0}, "first %r" % labels[:8])
        seeded = values_of(placed["seeded"], 2, 2)
        if seeded is not None and same_partition(labels, r_labels):
            # A label names its centroid's row: the mean of its rows is that centroid.
            means = []
            for cluster in (1.0, 2.0):
                members = [row for row, label in zip(faithful, labels) if label == cluster]
                means.append([sum(values) / len(members) for values in zip(*members)])
            results.check("label j's rows average to row j of the centroids (same Seed)",
                          all(close(a, b, 1e-12) for row, ref in zip(means, seeded) for a, b in zip(row, ref)),
                          "%r vs %r" % (means, seeded))

        sizes = values_of(placed["sizes"], 2, 1)
        results.check("Output \" Sizes \" (spaces, any case): the cluster sizes, as R's",
                      sizes is not None and sorted(s[0] for s in sizes) == sorted([r_labels.count(1),
                                                                                   r_labels.count(2)]),
                      repr(sizes))

        summary = summary_of(placed["summary"])
        results.check("summary: its names, inertia = R's tot.withinss (1e-10), converged, 10 restarts, 272 rows",
                      summary is not None and list(summary) == SUMMARY_NAMES
                      and close(summary[SUMMARY_NAMES[0]], r_inertia) and summary["converged (1 yes, 0 no)"] == 1
                      and summary["restarts"] == 10 and summary["observations used"] == 272
                      and summary["rows left out (missing values)"] == 0
                      and 0.0 < summary["between / total sum of squares"] < 1.0, repr(summary))

        small_labels = labels_of(placed["small labels"], len(small))
        expected_groups = [1 if y < 5 else 2 for _, y in small]
        complete = [isinstance(x, float) for x, _ in small]
        ok = all((label == "") == (not full) for label, full in zip(small_labels, complete)) and \
            same_partition([l for l in small_labels if l != ""], [g for g, full in zip(expected_groups, complete)
                                                                    if full])
        results.check("labels with a blank and a text cell: those rows empty, the others in their group", ok,
                      repr(small_labels))
        small_summary = summary_of(placed["small summary"])
        results.check("summary of that range: 10 observations used, 2 rows left out, 1 restart",
                      small_summary is not None and small_summary["observations used"] == 10
                      and small_summary["rows left out (missing values)"] == 2 and small_summary["restarts"] == 1,
                      repr(small_summary))

        stopped = summary_of(placed["stopped"])
        results.check("MaxIter = 1 stops before convergence: converged 0, 1 iteration, no error",
                      stopped is not None and stopped["converged (1 yes, 0 no)"] == 0 and stopped["iterations"] == 1,
                      repr(stopped))
        single = placed["single cell"].getCellByPosition(0, 0)
        results.check("in a single cell, KMEANS shows the first centroid's first value",
                      not single.getError() and single.getValue() in [row[0] for row in (seeded or [])],
                      single.getString())

        for row, (name, formula, expected) in enumerate(BAD_CASES):
            cell = sheet.getCellByPosition(bad_column, row)
            results.check("%s: %s is %s" % (name, formula.replace(FAITHFUL, "Old Faithful"),
                                            {502: "Err:502", 504: "Err:504", 519: "#VALUE!"}[expected]),
                          cell.getError() == expected, cell.getString())
    finally:
        document.close(True)


def check(results, office, source_dir):
    """Every KMEANS check; results.check(name, ok, detail) records each."""
    check_sample(results, office, source_dir)
    check_cases(results, office, source_dir)
