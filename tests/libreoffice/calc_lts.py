"""calc_lts.py: the LibreOffice checks of LTSFIT, run by test_calc.py in its
office session (statgpu.oxt installed).

  - the sample samples/lts.ods: LTSFIT's coefficients, weights, residuals and
    summary on the stack loss data equal R's robustbase::ltsReg, LINEST beside
    them equals R's lm; the outliers' rows are conditionally formatted and the
    residual plot has its four series;
  - a workbook built here: the optional arguments left out or empty, Alpha
    0.75, no intercept (FALSE or 0), a fixed Seed, Output words in any case,
    rows with an empty X cell or a text Y cell (left out, their weight and
    residual empty), least median of squares, an exact fit, and every bad
    argument (Err:502; text for a number, #VALUE!; Calc's own Err:504).

The reference values are R's (tests/reference/ltsfit_stackloss_r.csv, made
by tests/reference/ltsfit_stackloss.R with robustbase 0.95). Tolerances:
coefficients, scales and objectives within 1e-9 relative (least squares on
the same rows, solved another way), residuals within 1e-9 absolute (they are
0.1 to 9 in size), the 0/1 weights exactly. Least median of squares has no R
reference here: on a line of 20 points every elemental subset is tried (190,
fewer than the 500 starts), and its objective must be no more than the best
found by trying them all in this file.
"""

import csv
import itertools
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from calc_kmeans import labels_of, values_of  # noqa: E402
from reference_checks import read_lts_stackloss_reference as read_reference, solve  # noqa: E402

ILLEGAL_ARGUMENT = 502    # Err:502
ILLEGAL_PARAMETER = 504   # Err:504: Calc's own, for a missing argument or an error cell in a range
NO_VALUE = 519            # #VALUE!

RELATIVE_TOLERANCE = 1e-9
RESIDUAL_TOLERANCE = 1e-9
SUMMARY_NAMES = ["objective (sum of the h smallest squared residuals)", "h (rows the raw fit explains)",
                 "scale (reweighted fit)", "raw scale", "outliers (weight 0)",
                 "least median of squares (1 yes, 0 no)", "exact fit (1 yes, 0 no)", "observations used",
                 "rows left out (missing values)"]
LMS_OBJECTIVE_NAME = "objective (h-th smallest squared residual)"


def close(a, b, tolerance=RELATIVE_TOLERANCE):
    return a == b or abs(a - b) <= tolerance * abs(b)


def all_close(ours, theirs, tolerance=RELATIVE_TOLERANCE):
    return ours is not None and len(ours) == len(theirs) and all(close(a, b, tolerance)
                                                                 for a, b in zip(ours, theirs))


def read_stackloss(source_dir):
    """Rows (air flow, water temperature, acid concentration, stack loss)."""
    with open(os.path.join(source_dir, "samples", "stackloss.csv"), newline="") as source:
        return [tuple(float(v) for v in row) for row in list(csv.reader(source))[1:]]


def column_of(cell_range, rows):
    """The numbers of a one-column range, or None when any cell is not a number."""
    table = values_of(cell_range, rows, 1)
    return None if table is None else [row[0] for row in table]


def summary_of(cell_range):
    """[(name, value)] of a 9 x 2 summary range (values, then names), or None when a cell is an error."""
    table = []
    for r in range(len(SUMMARY_NAMES)):
        value_cell, name_cell = cell_range.getCellByPosition(0, r), cell_range.getCellByPosition(1, r)
        if name_cell.getError() or value_cell.getError():
            return None
        table.append((name_cell.getString(), value_cell.getValue()))
    return table


def summary_matches(summary, expected, lms=False):
    """True when summary (from summary_of) has the names, and the values of
    expected {row index: value} (floats compared within the tolerance)."""
    if summary is None:
        return False
    names = [LMS_OBJECTIVE_NAME if lms else SUMMARY_NAMES[0]] + SUMMARY_NAMES[1:]
    return [name for name, _ in summary] == names and all(close(summary[index][1], value)
                                                          for index, value in expected.items())


def best_elemental_lms(points, h):
    """The least h-th smallest squared residual of the lines through two of points."""
    best = float("inf")
    for (x1, y1), (x2, y2) in itertools.combinations(points, 2):
        line = solve([[1.0, x1], [1.0, x2]], [y1, y2])
        if line is None:
            continue
        squares = sorted((y - line[0] - line[1] * x) ** 2 for x, y in points)
        best = min(best, squares[h - 1])
    return best


# ---- the sample workbook --------------------------------------------------------------

def lts_formula_ranges(sheet):
    """{Output word: the array range} of the sample's LTSFIT cells."""
    import lo_session
    return lo_session.array_formula_ranges(sheet, "LTSFIT", "coefficients", ("weights", "residuals", "summary"))


def check_sample(results, office, source_dir):
    reference = read_reference(source_dir)
    r = reference["default"]
    document = office.load(os.path.join(source_dir, "samples", "lts.ods"))
    try:
        document.calculateAll()
        sheet = document.Sheets.getByIndex(0)
        ranges = lts_formula_ranges(sheet)
        results.check("lts.ods has LTSFIT coefficients, weights, residuals and summary",
                      set(ranges) == {"coefficients", "weights", "residuals", "summary"}, ", ".join(sorted(ranges)))
        if "coefficients" in ranges:
            ours = column_of(ranges["coefficients"], 4)
            results.check("lts.ods coefficients of stack loss equal ltsReg's (1e-9)",
                          all_close(ours, r["coefficients"]), "statgpu %r, R %r" % (ours, r["coefficients"]))
            # LINEST beside them: one INDEX(LINEST(...)) cell per coefficient, to the left.
            address = ranges["coefficients"].getRangeAddress()
            linest = [sheet.getCellByPosition(address.StartColumn - 1, address.StartRow + j) for j in range(4)]
            formulas_ok = all("LINEST(" in cell.getPropertyValue("FormulaLocal") for cell in linest)
            values = [cell.getValue() for cell in linest]
            results.check("lts.ods LINEST beside LTSFIT equals R's lm (1e-9)",
                          formulas_ok and all_close(values, reference["least_squares"]["coefficients"]),
                          "LINEST %r, R %r" % (values, reference["least_squares"]["coefficients"]))
        if "weights" in ranges:
            weights = column_of(ranges["weights"], 21)
            results.check("lts.ods weights equal ltsReg's lts.wt: days 1, 3, 4, 21 are outliers",
                          weights == r["weights"], repr(weights))
        if "residuals" in ranges:
            residuals = column_of(ranges["residuals"], 21)
            results.check("lts.ods residuals equal ltsReg's (1e-9 absolute)", residuals is not None and all(
                abs(a - b) <= RESIDUAL_TOLERANCE for a, b in zip(residuals, r["residuals"])), repr(residuals))
        if "summary" in ranges:
            summary = summary_of(ranges["summary"])
            results.check("lts.ods summary: h 13, objective and scales as ltsReg's, 4 outliers",
                          summary_matches(summary, {0: r["objective"][0], 1: 13, 2: r["scale"][0],
                                                    3: r["raw_scale"][0], 4: 4, 5: 0, 6: 0, 7: 21, 8: 0}),
                          repr(summary))
        if "weights" in ranges:
            address = ranges["weights"].getRangeAddress()
            data_rows = sheet.getCellRangeByPosition(0, address.StartRow, address.EndColumn + 1, address.EndRow)
            conditions = data_rows.getPropertyValue("ConditionalFormat")
            formulas = [conditions.getByIndex(i).getFormula1() for i in range(conditions.getCount())]
            results.check("lts.ods shades the outliers' rows by a condition on the weight",
                          any("=0" in formula.replace(" ", "") for formula in formulas), repr(formulas))
        charts = sheet.getCharts()
        series = 0
        if charts.getCount() == 1:
            chart = charts.getByIndex(0).getEmbeddedObject()
            series = len(chart.getFirstDiagram().getCoordinateSystems()[0].getChartTypes()[0].getDataSeries())
        results.check("lts.ods has a residual plot: kept days, outliers and the two cutoff lines", series == 4,
                      "%d charts, %d series" % (charts.getCount(), series))
    finally:
        document.close(True)


# ---- the workbook of cases --------------------------------------------------------------

STACK_X, STACK_Y = "$A$1:$C$21", "$D$1:$D$21"
MISSING_X, MISSING_Y = "$F$1:$H$21", "$I$1:$I$21"
PLANTED_X, PLANTED_Y = "$K$1:$K$20", "$L$1:$L$20"
EXACT_X, EXACT_Y = "$N$1:$N$20", "$O$1:$O$20"
PLANTED_OUTLIERS = (4, 9, 15, 18)   # 1-based rows


def planted_line():
    """y = 2 + x/2 with a little noise on 20 points, 4 of them moved far off."""
    points = []
    shifts = dict(zip(PLANTED_OUTLIERS, (15.0, -12.0, 20.0, 9.0)))
    for i in range(1, 21):
        y = 2 + 0.5 * i + 0.1 * ((i * 7) % 5 - 2) + shifts.get(i, 0.0)
        points.append((float(i), y))
    return points


def fill(sheet, stackloss):
    """A1:D21 stack loss (X, then Y); F1:I21 the same with G3 empty and I10
    text; K1:L20 the planted line; N1:O20 15 points on y = 1 + 2x and 5 off
    it; Q1:Q5, R1:T5 five rows for four coefficients; V1:W12 a constant
    predictor; Y1:Y3 text only; Z1:Z21 empty; AB1:AC3 with =1/0."""
    sheet.getCellRangeByName("A1:D21").setDataArray(tuple(stackloss))
    missing = [list(row) for row in stackloss]
    missing[2][1] = ""
    missing[9][3] = "n/a"
    sheet.getCellRangeByName("F1:I21").setDataArray(tuple(tuple(row) for row in missing))
    sheet.getCellRangeByName("K1:L20").setDataArray(tuple(planted_line()))
    exact = [(float(i), 1.0 + 2.0 * i) for i in range(15)] + [(float(i), 40.0 + 3.0 * i) for i in range(5)]
    sheet.getCellRangeByName("N1:O20").setDataArray(tuple(exact))
    sheet.getCellRangeByName("Q1:T5").setDataArray(tuple(tuple(row) for row in (
        (1.0, 2.0, 3.0, 1.0), (2.0, 3.0, 1.0, 4.0), (3.0, 1.0, 2.0, 2.0), (4.0, 5.0, 5.0, 3.0),
        (5.0, 4.0, 1.0, 5.0))))
    sheet.getCellRangeByName("V1:W12").setDataArray(tuple((float(i * i % 7), 7.0) for i in range(12)))
    sheet.getCellRangeByName("Y1:Y3").setDataArray((("a",), ("b",), ("c",)))
    sheet.getCellRangeByName("AB1:AC2").setDataArray(((1.0, 2.0), (3.0, 4.0)))
    sheet.getCellRangeByName("AB3").setFormula("=1/0")
    sheet.getCellRangeByName("AC3").setValue(5.0)
    return missing


STACK = "%s;%s" % (STACK_Y, STACK_X)
BAD_CASES = [
    ("Alpha = 0.4", "=LTSFIT(%s;0.4)" % STACK, ILLEGAL_ARGUMENT),
    ("Alpha = 1.01", "=LTSFIT(%s;1.01)" % STACK, ILLEGAL_ARGUMENT),
    ("Alpha given as text", "=LTSFIT(%s;\"half\")" % STACK, NO_VALUE),
    ("unknown Output word", "=LTSFIT(%s;;\"coef\")" % STACK, ILLEGAL_ARGUMENT),
    ("Output a number", "=LTSFIT(%s;;5)" % STACK, ILLEGAL_ARGUMENT),
    ("Output with an unknown criterion", "=LTSFIT(%s;;\"coefficients lqs\")" % STACK, ILLEGAL_ARGUMENT),
    ("Output the criterion alone", "=LTSFIT(%s;;\"lms\")" % STACK, ILLEGAL_ARGUMENT),
    ("Y of two columns", "=LTSFIT($C$1:$D$21;$A$1:$B$21)", ILLEGAL_ARGUMENT),
    ("X with fewer rows than Y", "=LTSFIT($D$1:$D$21;$A$1:$C$20)", ILLEGAL_ARGUMENT),
    ("too few rows: 5 for 4 coefficients", "=LTSFIT($Q$1:$Q$5;$R$1:$T$5)", ILLEGAL_ARGUMENT),
    ("Y empty", "=LTSFIT($Z$1:$Z$21;%s)" % STACK_X, ILLEGAL_ARGUMENT),
    ("Y text only", "=LTSFIT($Y$1:$Y$3;$A$1:$A$3)", ILLEGAL_ARGUMENT),
    ("a constant predictor beside the intercept", "=LTSFIT($V$1:$V$12;$W$1:$W$12)", ILLEGAL_ARGUMENT),
    ("Seed = -1", "=LTSFIT(%s;;;;-1)" % STACK, ILLEGAL_ARGUMENT),
    ("Intercept given as text", "=LTSFIT(%s;;;\"yes\")" % STACK, NO_VALUE),
    ("X left out: Calc's own Err:504", "=LTSFIT(%s)" % STACK_Y, ILLEGAL_PARAMETER),
    ("a range holding =1/0: Calc's own Err:504", "=LTSFIT($AC$1:$AC$3;$AB$1:$AB$3)", ILLEGAL_PARAMETER),
]


def check_cases(results, office, source_dir):
    reference = read_reference(source_dir)
    stackloss = read_stackloss(source_dir)
    document = office.new_spreadsheet()
    try:
        sheet = document.Sheets.getByIndex(0)
        fill(sheet, stackloss)
        column = 30  # AE onwards: one array per column block
        placed = {}

        def place(key, formula, rows, columns=1):
            nonlocal column
            cell_range = sheet.getCellRangeByPosition(column, 0, column + columns - 1, rows - 1)
            cell_range.setArrayFormula(formula)
            placed[key] = cell_range
            column += columns + 1

        missing = "%s;%s" % (MISSING_Y, MISSING_X)
        planted = "%s;%s" % (PLANTED_Y, PLANTED_X)
        place("default", "=LTSFIT(%s)" % STACK, 4)
        place("seeded", "=LTSFIT(%s;0.5;\"coefficients\";TRUE();7)" % STACK, 4)
        place("empty arguments", "=LTSFIT(%s;;;;)" % STACK, 4)
        place("upper case", "=LTSFIT(%s;;\" COEFFICIENTS \")" % STACK, 4)
        place("explicit lts", "=LTSFIT(%s;;\"coefficients lts\")" % STACK, 4)
        place("alpha75", "=LTSFIT(%s;0.75)" % STACK, 4)
        place("alpha75 summary", "=LTSFIT(%s;0.75;\"summary\")" % STACK, 9, 2)
        place("no intercept", "=LTSFIT(%s;;;FALSE())" % STACK, 3)
        place("intercept 0", "=LTSFIT(%s;;;0)" % STACK, 3)
        place("weights", "=LTSFIT(%s;;\"weights\")" % STACK, 21)
        place("residuals", "=LTSFIT(%s;;\"Residuals\")" % STACK, 21)
        place("summary", "=LTSFIT(%s;;\"summary\")" % STACK, 9, 2)
        place("subset", "=LTSFIT(%s;;\"subset\")" % STACK, 13)
        place("missing", "=LTSFIT(%s)" % missing, 4)
        place("missing weights", "=LTSFIT(%s;;\"weights\")" % missing, 21)
        place("missing residuals", "=LTSFIT(%s;;\"residuals\")" % missing, 21)
        place("missing summary", "=LTSFIT(%s;;\"summary\")" % missing, 9, 2)
        place("planted lms summary", "=LTSFIT(%s;;\"summary lms\")" % planted, 9, 2)
        place("planted lms weights", "=LTSFIT(%s;;\"Weights LMS\")" % planted, 20)
        place("planted weights", "=LTSFIT(%s;;\"weights\")" % planted, 20)
        place("exact summary", "=LTSFIT(%s;%s;;\"summary\")" % (EXACT_Y, EXACT_X), 9, 2)
        place("exact", "=LTSFIT(%s;%s)" % (EXACT_Y, EXACT_X), 2)
        place("single cell", "=LTSFIT(%s)" % STACK, 1)
        bad_column = column
        for row, (_, formula, _) in enumerate(BAD_CASES):
            sheet.getCellByPosition(bad_column, row).setFormula(formula)
        document.calculateAll()

        r = reference["default"]
        default = column_of(placed["default"], 4)
        subset = column_of(placed["subset"], 13)
        results.check("Output \"subset\": the 13 rows of the raw fit, ltsReg's best",
                      subset is not None and [int(v) for v in subset] == [int(v) for v in r["best"]],
                      "statgpu %r, R %r" % (subset, r["best"]))
        results.check("=LTSFIT(stack loss Y; X) equals ltsReg's coefficients (1e-9)",
                      all_close(default, r["coefficients"]), "statgpu %r, R %r" % (default, r["coefficients"]))
        seeded = column_of(placed["seeded"], 4)
        results.check("=LTSFIT(Y; X; 0.5; \"coefficients\"; TRUE(); 7): the same fit as ltsReg's",
                      all_close(seeded, r["coefficients"]), repr(seeded))
        for key, name in (("empty arguments", "=LTSFIT(Y; X;;;;) with empty arguments"),
                          ("upper case", "Output \" COEFFICIENTS \" (spaces, any case)"),
                          ("explicit lts", "Output \"coefficients lts\"")):
            results.check("%s equals =LTSFIT(Y; X) exactly" % name,
                          default is not None and column_of(placed[key], 4) == default, repr(column_of(placed[key], 4)))
        ours = column_of(placed["alpha75"], 4)
        results.check("Alpha 0.75 equals ltsReg(alpha = 0.75) (1e-9)", all_close(ours, reference["alpha75"]["coefficients"]),
                      "statgpu %r, R %r" % (ours, reference["alpha75"]["coefficients"]))
        summary = summary_of(placed["alpha75 summary"])
        results.check("Alpha 0.75: h = 17 and the scales of ltsReg",
                      summary_matches(summary, {1: 17, 2: reference["alpha75"]["scale"][0],
                                                3: reference["alpha75"]["raw_scale"][0],
                                                0: reference["alpha75"]["objective"][0]}), repr(summary))
        ours = column_of(placed["no intercept"], 3)
        results.check("Intercept FALSE(): three coefficients, ltsReg(intercept = FALSE)'s (1e-9)",
                      all_close(ours, reference["no_intercept"]["coefficients"]),
                      "statgpu %r, R %r" % (ours, reference["no_intercept"]["coefficients"]))
        results.check("Intercept 0 is FALSE", ours is not None and column_of(placed["intercept 0"], 3) == ours,
                      repr(column_of(placed["intercept 0"], 3)))
        weights = column_of(placed["weights"], 21)
        results.check("weights: ltsReg's lts.wt, a 0/1 per row", weights == r["weights"], repr(weights))
        residuals = column_of(placed["residuals"], 21)
        results.check("residuals: ltsReg's (1e-9 absolute)", residuals is not None and all(
            abs(a - b) <= RESIDUAL_TOLERANCE for a, b in zip(residuals, r["residuals"])), repr(residuals))
        summary = summary_of(placed["summary"])
        results.check("summary: its names; objective, h, scales as ltsReg's, 4 outliers, LTS, no exact fit, 21 rows",
                      summary_matches(summary, {0: r["objective"][0], 1: 13, 2: r["scale"][0], 3: r["raw_scale"][0],
                                                4: 4, 5: 0, 6: 0, 7: 21, 8: 0}), repr(summary))

        d = reference["rows_dropped"]
        ours = column_of(placed["missing"], 4)
        results.check("rows with an empty X cell or a text Y cell are left out: ltsReg without rows 3 and 10",
                      all_close(ours, d["coefficients"]), "statgpu %r, R %r" % (ours, d["coefficients"]))
        expected = [w for w in d["weights"]]
        expected.insert(2, "")
        expected.insert(9, "")
        weights = labels_of(placed["missing weights"], 21)
        results.check("weights with rows left out: rows 3 and 10 empty, the others ltsReg's", weights == expected,
                      repr(weights))
        residuals = labels_of(placed["missing residuals"], 21)
        kept = [value for index, value in enumerate(residuals) if index not in (2, 9)]
        results.check("residuals with rows left out: rows 3 and 10 empty, the others ltsReg's (1e-9)",
                      residuals[2] == "" and residuals[9] == "" and all(
                          isinstance(a, float) and abs(a - b) <= RESIDUAL_TOLERANCE for a, b in zip(kept, d["residuals"])),
                      repr(residuals))
        summary = summary_of(placed["missing summary"])
        results.check("summary with rows left out: 19 used, 2 left out, h 12",
                      summary_matches(summary, {1: 12, 7: 19, 8: 2}), repr(summary))

        points = planted_line()
        best = best_elemental_lms(points, 11)
        summary = summary_of(placed["planted lms summary"])
        results.check("Output \"summary lms\": least median of squares, objective no more than the best of all "
                      "190 elemental lines (%.6g)" % best,
                      summary_matches(summary, {1: 11, 5: 1, 6: 0, 7: 20}, lms=True)
                      and 0 < summary[0][1] <= best * (1 + 1e-9), repr(summary))
        expected = [0.0 if row in PLANTED_OUTLIERS else 1.0 for row in range(1, 21)]
        for key, name in (("planted lms weights", "Output \"Weights LMS\""), ("planted weights", "LTS weights")):
            weights = column_of(placed[key], 20)
            results.check("%s flag exactly the 4 planted outliers (as ltsReg's lts.wt)" % name, weights == expected,
                          repr(weights))

        summary = summary_of(placed["exact summary"])
        results.check("15 of 20 rows on a line: exact fit 1, scale 0, 5 outliers",
                      summary_matches(summary, {2: 0.0, 4: 5, 6: 1}), repr(summary))
        exact = column_of(placed["exact"], 2)
        results.check("exact fit: the line y = 1 + 2x (1e-12)", exact is not None and close(exact[0], 1.0, 1e-12)
                      and close(exact[1], 2.0, 1e-12), repr(exact))
        single = placed["single cell"].getCellByPosition(0, 0)
        results.check("in a single cell, LTSFIT shows the intercept",
                      not single.getError() and default is not None and single.getValue() == default[0],
                      single.getString())

        for row, (name, formula, expected_error) in enumerate(BAD_CASES):
            cell = sheet.getCellByPosition(bad_column, row)
            results.check("%s: %s is %s" % (name, formula.replace(STACK, "stack loss Y; X"),
                                            {502: "Err:502", 504: "Err:504", 519: "#VALUE!"}[expected_error]),
                          cell.getError() == expected_error, cell.getString())
    finally:
        document.close(True)


def check(results, office, source_dir):
    """Every LTSFIT check; results.check(name, ok, detail) records each."""
    check_sample(results, office, source_dir)
    check_cases(results, office, source_dir)
