"""calc_gmm.py: GMMFIT in a real LibreOffice, run by test_calc.py in its office
session.

The numbers of a Gaussian mixture are checked against scikit-learn by the
engine's reference test (reference_gmm_cpu); here Calc's side is checked, on
two workbooks.

The sample samples/gmm.ods (Old Faithful, k chosen by BIC among 1 to 6):
  - no error cell but the #N/A the charts leave out;
  - the selection: k 1 to 6, all full, BIC = -2 log-likelihood + parameters
    ln 272 (1e-12), one best at the lowest BIC: k = 2, whose log-likelihood
    is mclust's VVV optimum (tests/reference/gmm_mclust.csv; 1e-6 relative,
    as EM stops at scikit-learn's tolerance and adds reg_covar), and the
    chosen-k cell says 2;
  - the summary, weights, means, covariances and labels of that model, the
    rows beyond its k empty; every point of a component's ellipse at the
    squared Mahalanobis distance CHISQ.INV(0.95; 2) from its mean (1e-9),
    the ellipses beyond k #N/A;
  - a scatter chart of 6 component series and 6 ellipses, and BIC against k;
  - with the candidates changed to 3 to 8, the tables and ellipses follow
    the new choice (k = 3).

A workbook of its own: Old Faithful in A2:B273 with row 4 emptied and row 7
holding text, so 270 rows are fitted, and every Output in its shape:
  - the summary's 13 names and values: components 2, 270 rows used, 2 left out,
    BIC = -2 log-likelihood + parameters ln 270 and AIC = -2 log-likelihood +
    2 parameters (1e-12 relative), a finite log-likelihood;
  - weights summing to 1 (1e-12); full covariances as two symmetric 2 x 2
    blocks, diag as 2 x 2 variances, spherical as 2 variances, all positive;
  - labels, probabilities and density with a row per row of Data, the two
    left-out rows empty ("" as Calc's own idiom: COUNT over labels is 270),
    every probability row summing to 1 (1e-12), and SUM(density) equal to the
    summary's log-likelihood (1e-12 relative);
  - model choice: k as an inline array {1;2;3} with Covariance "ALL" gives
    12 candidates (k by k, full, tied, diag, spherical within each), BIC =
    -2 log-likelihood + parameters ln 270 on each (1e-12), exactly one marked
    best, at the lowest BIC; k as a range C1:C5 holding 1, 2, the text "3",
    an empty cell and 300 gives 4 candidates, the one of 300 unfitted (its
    numbers empty), and the summary over that range describes the chosen
    model (its k and BIC); k {1;2;3;4} over three distinct rows leaves k = 4
    out the same way;
  - Err:502 for k = 0, an unknown Covariance or Output, Restarts 0.5 (0 after rounding down), a k range
    of empty cells, k one empty cell (0, as Calc reads it).
"""

import csv
import math
import os

ROWS = 272
LEFT_OUT = (4, 7)  # sheet rows (1-based): row 4 empty, row 7 text
DATA = "$A$2:$B$%d" % (ROWS + 1)
SUMMARY_NAMES = [
    "log-likelihood", "BIC (lower is better; mclust's is its negative)", "AIC (lower is better)", "parameters",
    "components", "covariance type (0 full, 1 tied, 2 diag, 3 spherical): full", "iterations",
    "converged (1 yes, 0 no)", "restarts", "best restart", "covariances repaired", "observations used",
    "rows left out (missing values)",
]
ILLEGAL_ARGUMENT = 502
NOT_AVAILABLE = 32767    # #N/A


def close(a, b, tolerance=1e-12):
    return a == b or abs(a - b) <= tolerance * abs(b)


def fill(sheet, source_dir):
    with open(os.path.join(source_dir, "samples", "faithful.csv"), newline="") as source:
        rows = [tuple(float(v) for v in row) for row in list(csv.reader(source))[1:]]
    sheet.getCellRangeByName("A1").setString("eruptions")
    sheet.getCellRangeByName("B1").setString("waiting")
    sheet.getCellRangeByPosition(0, 1, 1, ROWS).setDataArray(tuple(rows))
    sheet.getCellRangeByName("A4").setString("")
    sheet.getCellRangeByName("B4").setString("")
    sheet.getCellRangeByName("A4").clearContents(1 | 4)  # values and strings: empty
    sheet.getCellRangeByName("B4").clearContents(1 | 4)
    sheet.getCellRangeByName("A7").setString("n/a")
    # Candidate counts for model choice: a number, a number, text, empty, too many.
    sheet.getCellRangeByName("C1").setValue(1)
    sheet.getCellRangeByName("C2").setValue(2)
    sheet.getCellRangeByName("C3").setString("3")
    sheet.getCellRangeByName("C5").setValue(300)


def outcome(cell):
    if cell.getError():
        return ("error", cell.getError())
    if cell.getType().value == "FORMULA" and cell.getString() == "" and not cell.getValue():
        return ("empty", None)
    return ("value", cell.getValue())


def grid(sheet, column, row, rows, columns):
    return [[outcome(sheet.getCellByPosition(column + c, row + r)) for c in range(columns)] for r in range(rows)]


def check(results, office, source_dir):
    """Every GMMFIT check; results.check(name, ok, detail) records each."""
    check_sample(results, office, source_dir)
    check_cases(results, office, source_dir)


def check_cases(results, office, source_dir):
    document = office.new_spreadsheet()
    try:
        sheet = document.Sheets.getByIndex(0)
        fill(sheet, source_dir)
        placed = {}
        column = 4

        def place(name, formula, rows, columns=1):
            nonlocal column
            cell_range = sheet.getCellRangeByPosition(column, 0, column + columns - 1, rows - 1)
            cell_range.setArrayFormula(formula)
            placed[name] = (column, rows, columns)
            column += columns + 1

        place("summary", "=GMMFIT(%s;2)" % DATA, 13, 2)
        place("weights", "=GMMFIT(%s;2;;\"weights\")" % DATA, 2)
        place("full", "=GMMFIT(%s;2;\"full\";\"covariances\")" % DATA, 4, 2)
        place("diag", "=GMMFIT(%s;2;\"Diag\";\"covariances\")" % DATA, 2, 2)
        place("spherical", "=GMMFIT(%s;2;\"spherical\";\"covariances\")" % DATA, 2)
        place("labels", "=GMMFIT(%s;2;;\"labels\")" % DATA, ROWS)
        place("probabilities", "=GMMFIT(%s;2;;\"probabilities\")" % DATA, ROWS, 2)
        place("density", "=GMMFIT(%s;2;;\"density\")" % DATA, ROWS)
        place("all", "=GMMFIT(%s;{1;2;3};\"ALL\";\"selection\")" % DATA, 12, 9)
        place("range", "=GMMFIT(%s;$C$1:$C$5;\"full\";\"selection\")" % DATA, 4, 9)
        place("chosen", "=GMMFIT(%s;$C$1:$C$5)" % DATA, 13, 2)
        # A k listed again is the same model, fitted once (a third row of #N/A).
        place("repeated", "=GMMFIT(%s;{2;3;2;3;2};\"full\";\"selection\")" % DATA, 3, 9)
        # Three distinct rows, each twice: k = 4 is left out of the choice.
        sheet.getCellRangeByName("A300:B305").setDataArray(((1, 1), (2, 2), (3, 3), (1, 1), (2, 2), (3, 3)))
        place("distinct", "=GMMFIT($A$300:$B$305;{1;2;3;4};\"spherical\";\"selection\")", 4, 10)
        # Data in other units (eruptions in 10^4 minutes, waiting in seconds),
        # rows 401 to 672, the same cells empty and text.
        units = (1e-4, 60.0)
        source_rows = sheet.getCellRangeByPosition(0, 1, 1, ROWS).getDataArray()
        sheet.getCellRangeByPosition(0, 400, 1, 399 + ROWS).setDataArray(tuple(
            tuple(value * factor if isinstance(value, float) else value for value, factor in zip(row, units))
            for row in source_rows))
        for r in range(ROWS):
            for v in range(2):
                if sheet.getCellByPosition(v, r + 1).getType().value == "EMPTY":
                    sheet.getCellByPosition(v, r + 400).clearContents(1 | 4)
        place("means", "=GMMFIT(%s;2;;\"means\")" % DATA, 2, 2)
        place("units means", "=GMMFIT($A$401:$B$%d;2;;\"means\")" % (400 + ROWS), 2, 2)
        place("units summary", "=GMMFIT($A$401:$B$%d;2)" % (400 + ROWS), 13, 2)
        errors = ["=GMMFIT(%s;0)" % DATA, "=GMMFIT(%s;2;\"bogus\")" % DATA,
                  "=GMMFIT(%s;2;;\"bogus\")" % DATA, "=GMMFIT(%s;2;;;0.5)" % DATA,
                  "=GMMFIT(%s;$D$1:$D$2;;\"selection\")" % DATA, "=GMMFIT(%s;$C$4;;\"selection\")" % DATA]
        error_column = column
        for row, formula in enumerate(errors):
            sheet.getCellByPosition(error_column, row).setFormula(formula)
        count_cell = sheet.getCellByPosition(error_column + 1, 0)
        labels_column = placed["labels"][0]
        count_cell.setFormula("=COUNT(%s)" % sheet.getCellRangeByPosition(labels_column, 0, labels_column,
                                                                             ROWS - 1).AbsoluteName)
        sum_cell = sheet.getCellByPosition(error_column + 1, 1)
        density_column = placed["density"][0]
        sum_cell.setFormula("=SUM(%s)" % sheet.getCellRangeByPosition(density_column, 0, density_column,
                                                                       ROWS - 1).AbsoluteName)
        document.calculateAll()

        column_of = {name: where[0] for name, where in placed.items()}
        summary = [(sheet.getCellByPosition(column_of["summary"] + 1, r).getString(),
                    outcome(sheet.getCellByPosition(column_of["summary"], r))) for r in range(13)]
        names_ok = [name for name, _ in summary] == SUMMARY_NAMES
        values = {name: value[1] for name, value in summary if value[0] == "value"}
        ll = values.get("log-likelihood", float("nan"))
        parameters = values.get("parameters", 0)
        results.check("GMMFIT summary: its 13 names and values, 2 components, 270 rows used, 2 left out",
                      names_ok and len(values) == 13 and values["components"] == 2
                      and values["observations used"] == 270 and values["rows left out (missing values)"] == 2
                      and math.isfinite(ll) and parameters == 11, repr(summary))
        results.check("GMMFIT summary: BIC and AIC from the log-likelihood and 11 parameters (1e-12)",
                      close(values.get(SUMMARY_NAMES[1], 0), -2 * ll + parameters * math.log(270))
                      and close(values.get(SUMMARY_NAMES[2], 0), -2 * ll + 2 * parameters), repr(values))

        weights = [cell[0] for cell in grid(sheet, column_of["weights"], 0, 2, 1)]
        results.check("GMMFIT weights: two, summing to 1 (1e-12)",
                      all(kind == "value" and value > 0 for kind, value in weights)
                      and abs(sum(value for _, value in weights) - 1) <= 1e-12, repr(weights))
        full = grid(sheet, column_of["full"], 0, 4, 2)
        symmetric = all(full[2 * j][1] == full[2 * j + 1][0] for j in range(2))
        positive = all(full[2 * j + v][v][0] == "value" and full[2 * j + v][v][1] > 0 for j in range(2) for v in range(2))
        results.check("GMMFIT full covariances: two symmetric 2 x 2 blocks, positive variances",
                      symmetric and positive, repr(full))
        diag = grid(sheet, column_of["diag"], 0, 2, 2)
        spherical = grid(sheet, column_of["spherical"], 0, 2, 1)
        results.check("GMMFIT Covariance \"Diag\" (any case) and \"spherical\": 2 x 2 and 2 positive variances",
                      all(kind == "value" and value > 0 for row in diag + spherical for kind, value in row),
                      "%r %r" % (diag, spherical))

        left_out = [row - 2 for row in LEFT_OUT]  # 0-based rows of Data
        labels = [row[0] for row in grid(sheet, column_of["labels"], 0, ROWS, 1)]
        probabilities = grid(sheet, column_of["probabilities"], 0, ROWS, 2)
        density = [row[0] for row in grid(sheet, column_of["density"], 0, ROWS, 1)]
        fitted = [r for r in range(ROWS) if r not in left_out]
        results.check("GMMFIT labels, probabilities and density: the left-out rows empty, the others numbers",
                      all(labels[r][0] == "empty" and density[r][0] == "empty"
                          and all(cell[0] == "empty" for cell in probabilities[r]) for r in left_out)
                      and all(labels[r][0] == "value" and labels[r][1] in (1.0, 2.0) and density[r][0] == "value"
                              for r in fitted),
                      "labels %r" % [labels[r] for r in left_out])
        results.check("GMMFIT probabilities: every fitted row sums to 1 (1e-12)",
                      all(abs(probabilities[r][0][1] + probabilities[r][1][1] - 1) <= 1e-12 for r in fitted))
        count = outcome(count_cell)
        total = outcome(sum_cell)
        results.check("=COUNT(labels) is 270 and =SUM(density) is the summary's log-likelihood (1e-12)",
                      count == ("value", 270.0) and total[0] == "value" and close(total[1], ll),
                      "%r %r %r" % (count, total, ll))
        selection = grid(sheet, column_of["all"], 0, 12, 9)
        types = [sheet.getCellByPosition(column_of["all"] + 1, r).getString() for r in range(12)]
        fitted_bics = [row[4][1] for row in selection]
        best = [r for r in range(12) if selection[r][8] == ("value", 1.0)]
        results.check("GMMFIT k {1;2;3}, Covariance \"ALL\": 12 candidates, k by k, the four types within each",
                      [row[0] for row in selection] == [("value", float(k)) for k in (1, 2, 3) for _ in range(4)]
                      and types == ["full", "tied", "diag", "spherical"] * 3, "%r %r" % (selection, types))
        results.check("GMMFIT selection: BIC = -2 log-likelihood + parameters ln 270 on each row (1e-12), one "
                      "best, at the lowest BIC",
                      all(close(row[4][1], -2 * row[2][1] + row[3][1] * math.log(270))
                          and close(row[5][1], -2 * row[2][1] + 2 * row[3][1]) for row in selection)
                      and len(best) == 1 and fitted_bics[best[0]] == min(fitted_bics), repr(selection))
        in_range = grid(sheet, column_of["range"], 0, 4, 9)
        results.check("GMMFIT k over C1:C5 (1, 2, \"3\", empty, 300): 4 candidates, 300 unfitted with empty "
                      "numbers",
                      [row[0] for row in in_range] == [("value", k) for k in (1.0, 2.0, 3.0, 300.0)]
                      and all(cell[0] == "empty" for cell in in_range[3][2:8])
                      and in_range[3][8] == ("value", 0.0)
                      and all(cell[0] == "value" for row in in_range[:3] for cell in row[2:8] if cell != row[1]),
                      repr(in_range))
        repeated = grid(sheet, column_of["repeated"], 0, 3, 9)
        results.check("GMMFIT k {2;3;2;3;2}: 2 candidates, k = 2 and 3 once each, numbers as over C1:C5's",
                      [row[0] for row in repeated] == [("value", 2.0), ("value", 3.0), ("error", 32767)]
                      and [row[:8] for row in repeated[:2]] == [row[:8] for row in in_range[1:3]],
                      repr(repeated))
        distinct = grid(sheet, column_of["distinct"], 0, 4, 10)
        results.check("GMMFIT k {1;2;3;4} over 3 distinct rows: k = 4 left out (its numbers empty); k = 2 and 3 "
                      "put a component on a repeated row (singular components > 0), so k = 1 is chosen",
                      [row[0] for row in distinct] == [("value", float(k)) for k in (1, 2, 3, 4)]
                      and all(cell[0] == "empty" for cell in distinct[3][2:8]) and distinct[3][8] == ("value", 0.0)
                      and distinct[3][9][0] == "empty"
                      and all(cell[0] == "value" for row in distinct[:3] for cell in row[2:8])
                      and distinct[0][9] == ("value", 0.0)
                      and all(row[9][0] == "value" and row[9][1] > 0 for row in distinct[1:3])
                      and [row[8] for row in distinct[:3]] == [("value", 1.0), ("value", 0.0), ("value", 0.0)],
                      repr(distinct))
        chosen_rows = [row for row in in_range if row[8] == ("value", 1.0)]
        chosen = {sheet.getCellByPosition(column_of["chosen"] + 1, r).getString():
                  outcome(sheet.getCellByPosition(column_of["chosen"], r)) for r in range(13)}
        results.check("GMMFIT summary over a k range: the chosen model's k and BIC",
                      len(chosen_rows) == 1 and chosen.get("components") == chosen_rows[0][0]
                      and chosen.get(SUMMARY_NAMES[1]) == chosen_rows[0][4], "%r %r" % (chosen, chosen_rows))

        means = grid(sheet, column_of["means"], 0, 2, 2)
        units_means = grid(sheet, column_of["units means"], 0, 2, 2)
        units_ll = outcome(sheet.getCellByPosition(column_of["units summary"], 0))
        shift = -270 * (math.log(units[0]) + math.log(units[1]))
        results.check("GMMFIT on the data in other units (eruptions x 1e-4, waiting x 60): the means times the "
                      "factors and the log-likelihood less 270 ln(1e-4 60) (1e-8): the regulariser follows the "
                      "units",
                      all(got[0] == "value" and mean[0] == "value" and close(got[1], mean[1] * units[v], 1e-8)
                          for got_row, mean_row in zip(units_means, means)
                          for v, (got, mean) in enumerate(zip(got_row, mean_row)))
                      and units_ll[0] == "value" and close(units_ll[1], ll + shift, 1e-8),
                      "%r %r %r %r" % (means, units_means, units_ll, ll + shift))

        bad = [outcome(sheet.getCellByPosition(error_column, row)) for row in range(len(errors))]
        results.check("GMMFIT with k 0, Covariance \"bogus\", Output \"bogus\", Restarts 0.5, a k range of "
                      "empty cells, k an empty cell: Err:502 each",
                      bad == [("error", ILLEGAL_ARGUMENT)] * len(errors), repr(bad))
    finally:
        document.close(True)


# ---- the sample workbook --------------------------------------------------------------

SAMPLE_ROWS = 272
ROOM = 6                                    # components the sample's tables have room for
ELLIPSE_DISTANCE = -2 * math.log(1 - 0.95)  # CHISQ.INV(0.95; 2): chi-square with 2 degrees is exponential


def mclust_log_likelihood(source_dir, model, k):
    with open(os.path.join(source_dir, "tests", "reference", "gmm_mclust.csv"), newline="") as source:
        for row in csv.DictReader(source):
            if row["data"] == "faithful" and row["model"] == model and int(row["G"]) == k:
                return float(row["loglik"])
    raise LookupError("no mclust optimum for faithful %s, G=%d" % (model, k))


def find_text(sheet, text):
    """The (column, row) of the cell of sheet holding exactly text."""
    search = sheet.createSearchDescriptor()
    search.SearchString = text
    search.SearchWords = True  # the whole cell
    found = sheet.findFirst(search)
    if found is None:
        raise LookupError("no cell holds %r" % text)
    address = found.getCellAddress()
    return address.Column, address.Row


def values(cell_range):
    address = cell_range.getRangeAddress()
    rows, columns = address.EndRow - address.StartRow + 1, address.EndColumn - address.StartColumn + 1
    return [[outcome(cell_range.getCellByPosition(c, r)) for c in range(columns)] for r in range(rows)]


def check_sample_model(results, sheet, ranges, candidates, name):
    """The selection over candidates and the chosen model's tables and
    ellipses agree; returns the chosen k and its selection row."""
    selection = values(ranges["selection"])
    types = [ranges["selection"].getCellByPosition(1, r).getString() for r in range(len(selection))]
    best = [row for row in selection if row[8] == ("value", 1.0)]
    bics = [row[4][1] for row in selection if row[4][0] == "value"]
    results.check("%s: a selection row per candidate %r, full, BIC = -2 log-likelihood + parameters ln %d "
                  "(1e-12), one best at the lowest BIC" % (name, candidates, SAMPLE_ROWS),
                  [row[0] for row in selection] == [("value", float(k)) for k in candidates]
                  and types == ["full"] * len(candidates) and len(bics) == len(candidates)
                  and all(close(row[4][1], -2 * row[2][1] + row[3][1] * math.log(SAMPLE_ROWS)) for row in selection)
                  and len(best) == 1 and best[0][4][1] == min(bics), repr(selection))
    if len(best) != 1:
        return None, None
    k = int(best[0][0][1])
    column, row = find_text(sheet, "Chosen k (lowest BIC)")
    summary_range = ranges["summary"]
    summary = {summary_range.getCellByPosition(1, r).getString(): outcome(summary_range.getCellByPosition(0, r))
               for r in range(13)}
    results.check("%s: the chosen-k cell and the summary describe k = %d (its BIC, 272 rows)" % (name, k),
                  outcome(sheet.getCellByPosition(column + 1, row)) == ("value", float(k))
                  and summary.get("components") == ("value", float(k)) and summary.get(SUMMARY_NAMES[1]) == best[0][4]
                  and summary.get("observations used") == ("value", float(SAMPLE_ROWS)), repr(summary))

    weights = [row[0] for row in values(ranges["weights"])]
    means = values(ranges["means"])
    covariances = values(ranges["covariances"])
    blocks = [[[covariances[2 * j + a][b][1] for b in range(2)] for a in range(2)] for j in range(k)]
    results.check("%s: %d weights summing to 1, means, symmetric covariance blocks; the rest of the %d rows empty"
                  % (name, k, ROOM),
                  all(cell[0] == "value" for cell in weights[:k])
                  and abs(sum(w[1] for w in weights[:k]) - 1) <= 1e-12
                  and all(cell[0] == "value" for row in means[:k] + covariances[:2 * k] for cell in row)
                  and all(block[0][1] == block[1][0] and block[0][0] > 0 and block[1][1] > 0 for block in blocks)
                  and all(cell[0] == "empty" for row in [[w] for w in weights[k:]] + means[k:] + covariances[2 * k:]
                          for cell in row), "weights %r" % weights)
    labels = [row[0] for row in values(ranges["labels"])]
    results.check("%s: a label from 1 to %d per eruption" % (name, k),
                  len(labels) == SAMPLE_ROWS and all(kind == "value" and 1 <= label <= k for kind, label in labels))

    # The ellipses: a column pair per component right of "Angle t", a point per row.
    column, row = find_text(sheet, "Angle t")
    on_ellipse, beyond_k_empty, points = True, True, 0
    for j in range(ROOM):
        x = [outcome(sheet.getCellByPosition(column + 1 + 2 * j, row + 1 + i)) for i in range(61)]
        y = [outcome(sheet.getCellByPosition(column + 2 + 2 * j, row + 1 + i)) for i in range(61)]
        if j >= k:
            beyond_k_empty = beyond_k_empty and all(cell == ("error", NOT_AVAILABLE) for cell in y)
            continue
        (a, b), (_, c) = blocks[j]
        determinant = a * c - b * b
        for (_, px), (_, py) in zip(x, y):
            dx, dy = px - means[j][0][1], py - means[j][1][1]
            distance = (c * dx * dx - 2 * b * dx * dy + a * dy * dy) / determinant
            on_ellipse = on_ellipse and abs(distance - ELLIPSE_DISTANCE) <= 1e-9 * ELLIPSE_DISTANCE
            points += 1
    results.check("%s: the %d ellipses' %d points at the squared Mahalanobis distance CHISQ.INV(0.95; 2) (1e-9), "
                  "the other ellipses #N/A" % (name, k, points), on_ellipse and beyond_k_empty and points == 61 * k)
    return k, best[0]


def check_sample(results, office, source_dir):
    import lo_session
    document = office.load(os.path.join(source_dir, "samples", "gmm.ods"), editable=True)
    try:
        document.calculateAll()
        sheet = document.Sheets.getByIndex(0)
        words = ("selection", "weights", "means", "covariances", "labels")
        ranges = lo_session.array_formula_ranges(sheet, "GMMFIT", "summary", words)
        results.check("gmm.ods has GMMFIT selection, summary, weights, means, covariances and labels",
                      set(ranges) == set(words) | {"summary"}, ", ".join(sorted(ranges)))
        if set(ranges) != set(words) | {"summary"}:
            return
        errors = [(address, cell.getString()) for address, cell in lo_session.formula_cells(sheet)
                  if cell.getError() not in (0, NOT_AVAILABLE)]
        results.check("gmm.ods: no error cell but #N/A", not errors, repr(errors[:8]))

        k, best = check_sample_model(results, sheet, ranges, list(range(1, 7)), "gmm.ods")
        mclust = mclust_log_likelihood(source_dir, "VVV", 2)
        results.check("gmm.ods chooses k = 2 for Old Faithful, at mclust's VVV optimum (log-likelihood 1e-6)",
                      k == 2 and close(best[2][1], mclust, 1e-6), "k %r, %r; mclust %r" % (k, best, mclust))

        charts = sheet.getCharts()
        series = {}
        for name in charts.getElementNames():
            chart = charts.getByName(name).getEmbeddedObject()
            series[name] = len(chart.getFirstDiagram().getCoordinateSystems()[0].getChartTypes()[0].getDataSeries())
        results.check("gmm.ods has a scatter chart of 6 components and 6 ellipses, and BIC against k",
                      series == {"MixtureComponents": 12, "BicAgainstK": 2}, repr(series))

        # The tables and the ellipses follow the choice: other candidates.
        selection = ranges["selection"].getRangeAddress()
        first = selection.StartRow
        sheet.getCellRangeByPosition(selection.StartColumn - 1, first, selection.StartColumn - 1,
                                     selection.EndRow).setDataArray(tuple((float(k),) for k in range(3, 9)))
        document.calculateAll()
        k, _ = check_sample_model(results, sheet, ranges, list(range(3, 9)), "gmm.ods, candidates 3 to 8")
        results.check("gmm.ods, candidates 3 to 8: k = 3 chosen", k == 3, repr(k))
    finally:
        document.close(True)
