"""calc_igmm.py: IGMMFIT in a real LibreOffice, run by test_calc.py in its
office session.

The engine's reference test (reference_igmm_cpu) checks the numbers against
R; here Calc's side is checked, on two workbooks.

The sample samples/igmm.ods (six simulated subjects' response times, k = 2):
  - no error cell;
  - the data are the numbers samples/make_igmm.py's simulate() draws, a
    column per subject, each as long as its trials;
  - the parameters: a row per subject and component, the weights summing
    to 1 (1e-12), the summary's log-likelihood that of the parameters on the
    column's values (recomputed here, 1e-9 relative), the Mode column naming
    the smaller mu fast, and each subject's fast and slow mu within 10% and
    fast share within 0.1 of those it was drawn from;
  - the summary: the values of every column, converged, fitted;
  - the histogram of the subject chosen in its cell (4 as stored): each
    bin's count as counted here, the counts and the trials beyond the bins
    adding up to the subject's values, and each fitted count n x bin width x
    the mixture's density at the bin centre from that subject's parameters
    (1e-10 relative); with subject 1 and a bin width of 0.1 typed in, the
    same again;
  - one chart: the counts as columns and the fitted counts as a line, over
    those columns of the sheet.

A workbook of its own: three data sets in the columns of A1:C500, of
different lengths (A: the 500 values of tests/reference/igmm_data.csv's
"one"; B: its first 200, with a text cell and an empty cell among them; C: 40
values with a 0, so not fitted):
  - with k = 1 the parameters of A and B are each column's inverse Gaussian
    maximum likelihood estimate (mu the mean, lambda n / sum(1/x - 1/mean),
    1e-12), C's numbers empty ("");
  - the summary: values per column (500, 200, 40) and the statuses;
  - values times 1e-200 and 1e200: k = 1 gives the estimate in their units
    (1e-12); a column whose values lie 1e305 apart is not fitted, its status
    says why, and the other columns are fitted;
  - labels in the shape of Data: a 1 at every value of A and B, "" at the
    text, the empty cells, below each column's end and all of C, so COUNT
    over B's labels is 200;
  - Err:502 for k = 0, an unknown Output and Starts 0.5 (0 after rounding down).
"""

import csv
import math
import os
import sys

from calc_gmm import close, find_text, grid, outcome, values as range_values

ROWS = 500
DATA = "$A$1:$C$%d" % ROWS
ILLEGAL_ARGUMENT = 502


def values_of(source_dir):
    with open(os.path.join(source_dir, "tests", "reference", "igmm_data.csv"), newline="") as source:
        return [float(row["value"]) for row in csv.DictReader(source) if row["set"] == "one"]


def estimate(values):
    mean = sum(values) / len(values)
    return mean, len(values) / sum(1 / x - 1 / mean for x in values)


def check(results, office, source_dir):
    """Every IGMMFIT check; results.check(name, ok, detail) records each."""
    check_sample(results, office, source_dir)
    check_cases(results, office, source_dir)


def check_cases(results, office, source_dir):
    one = values_of(source_dir)
    column_b = one[:200]
    column_c = [1.0 + i for i in range(40)]
    column_c[9] = 0.0
    document = office.new_spreadsheet()
    try:
        sheet = document.Sheets.getByIndex(0)
        for row, value in enumerate(one):
            sheet.getCellByPosition(0, row).setValue(value)
        # B: 200 values, then a text cell and an empty one inside, pushed down.
        b_rows = []
        row = 0
        for index, value in enumerate(column_b):
            if index == 50:
                sheet.getCellByPosition(1, row).setString("n/a")
                row += 1
            if index == 120:
                row += 1  # an empty cell
            sheet.getCellByPosition(1, row).setValue(value)
            b_rows.append(row)
            row += 1
        for index, value in enumerate(column_c):
            sheet.getCellByPosition(2, index).setValue(value)

        def place(column, formula, rows, columns):
            sheet.getCellRangeByPosition(column, 0, column + columns - 1, rows - 1).setArrayFormula(formula)

        place(4, "=IGMMFIT(%s;1)" % DATA, 3, 5)
        place(10, "=IGMMFIT(%s;2;\"summary\";3;50;7)" % DATA, 3, 8)
        place(19, "=IGMMFIT(%s;1;\"labels\")" % DATA, ROWS, 3)
        # Far from ordinary size: B's values times 1e-200 in AA, 1e200 in AB,
        # and in AC values 1e300 apart (1e-150 and 1e150 alternating).
        for index, value in enumerate(column_b):
            sheet.getCellByPosition(26, index).setValue(value * 1e-200)
            sheet.getCellByPosition(27, index).setValue(value * 1e200)
        for index in range(40):
            sheet.getCellByPosition(28, index).setValue((1e-155 if index % 2 else 1e150) * (1 + index))
        place(30, "=IGMMFIT(AA1:AC200;1)", 3, 5)
        place(36, "=IGMMFIT(AA1:AC200;1;\"summary\")", 3, 8)
        errors = ["=IGMMFIT(%s;0)" % DATA, "=IGMMFIT(%s;2;\"bogus\")" % DATA, "=IGMMFIT(%s;2;;0.5)" % DATA]
        for index, formula in enumerate(errors):
            sheet.getCellByPosition(23, index).setFormula(formula)
        count_cell = sheet.getCellByPosition(24, 0)
        count_cell.setFormula("=COUNT(%s)" % sheet.getCellRangeByPosition(20, 0, 20, ROWS - 1).AbsoluteName)
        document.calculateAll()

        parameters = grid(sheet, 4, 0, 3, 5)
        ok = [row[0] for row in parameters] == [("value", 1.0), ("value", 2.0), ("value", 3.0)]
        for row, values in zip(parameters[:2], (one, column_b)):
            mean, shape = estimate(values)
            ok = ok and row[2] == ("value", 1.0) and close(row[3][1], mean) and close(row[4][1], shape)
        results.check("IGMMFIT k = 1: each column's maximum likelihood estimate (1e-12), C's numbers empty",
                      ok and all(cell[0] == "empty" for cell in parameters[2][2:]), repr(parameters))
        summary_values = [outcome(sheet.getCellByPosition(11, r)) for r in range(3)]
        statuses = [sheet.getCellByPosition(17, r).getString() for r in range(3)]
        results.check("IGMMFIT summary: 500, 200 and 40 values; fitted, fitted, a value is not positive",
                      summary_values == [("value", 500.0), ("value", 200.0), ("value", 40.0)]
                      and statuses == ["fitted", "fitted", "a value is not positive"],
                      "%r %r" % (summary_values, statuses))
        labels = grid(sheet, 19, 0, ROWS, 3)
        b_set = set(b_rows)
        results.check("IGMMFIT labels in Data's shape: 1 at every value, \"\" elsewhere; COUNT over B's is 200",
                      all(labels[r][0] == ("value", 1.0) for r in range(ROWS))
                      and all((labels[r][1] == ("value", 1.0)) == (r in b_set) for r in range(ROWS))
                      and all(labels[r][1][0] == "empty" for r in range(ROWS) if r not in b_set)
                      and all(labels[r][2][0] == "empty" for r in range(ROWS))
                      and outcome(count_cell) == ("value", 200.0), repr(labels[48:54]))
        far = grid(sheet, 30, 0, 3, 5)
        mean, shape = estimate(column_b)
        far_statuses = [sheet.getCellByPosition(43, r).getString() for r in range(3)]
        results.check("IGMMFIT k = 1 on values times 1e-200 and 1e200: the estimate in their units (1e-12); values "
                      "1e305 apart: not fitted, its status says why, the others fitted",
                      all(close(row[3][1], mean * factor) and close(row[4][1], shape * factor)
                          for row, factor in zip(far[:2], (1e-200, 1e200)))
                      and all(cell[0] == "empty" for cell in far[2][2:])
                      and far_statuses[:2] == ["fitted", "fitted"] and "too far from ordinary size" in far_statuses[2],
                      "%r %r" % (far, far_statuses))
        bad = [outcome(sheet.getCellByPosition(23, r)) for r in range(len(errors))]
        results.check("IGMMFIT with k 0, Output \"bogus\", Starts 0.5: Err:502 each",
                      bad == [("error", ILLEGAL_ARGUMENT)] * len(errors), repr(bad))
    finally:
        document.close(True)


# ---- the sample workbook --------------------------------------------------------------

SAMPLE_COMPONENTS = 2


def log_density(x, mu, shape):
    """The inverse Gaussian's log density, as the engine writes it."""
    return (0.5 * (math.log(shape) - math.log(2 * math.pi)) - 1.5 * math.log(x)
            - shape * (x - mu) ** 2 / (2 * mu * mu * x))


def mixture_log_likelihood(values, components):
    total = 0.0
    for x in values:
        terms = [math.log(alpha) + log_density(x, mu, shape) for alpha, mu, shape in components]
        top = max(terms)
        total += top + math.log(sum(math.exp(t - top) for t in terms))
    return total


def mixture_density(x, components):
    return sum(alpha * math.sqrt(shape / (2 * math.pi * x ** 3)) * math.exp(-shape * (x - mu) ** 2 / (2 * mu * mu * x))
               for alpha, mu, shape in components)


def sample_generator(source_dir):
    """samples/make_igmm.py, which draws the sample's data."""
    samples = os.path.join(source_dir, "samples")
    if samples not in sys.path:
        sys.path.insert(0, samples)
    import make_igmm
    return make_igmm


def check_histogram(results, sheet, subjects, components, name):
    """The histogram block against the subject and bin width typed in its
    cells: counts, the trials beyond the bins and the fitted counts."""
    column, row = find_text(sheet, "Subject shown")
    subject = int(sheet.getCellByPosition(column + 1, row).getValue())
    width = sheet.getCellByPosition(column + 1, row + 1).getValue()
    trials = outcome(sheet.getCellByPosition(column + 1, row + 2))
    beyond = outcome(sheet.getCellByPosition(column + 1, row + 3))
    times = subjects[subject - 1]
    column, row = find_text(sheet, "From (s)")
    bin_count = 0
    while sheet.getCellByPosition(column, row + 1 + bin_count).getType().value == "FORMULA":
        bin_count += 1
    bins = grid(sheet, column, row + 1, bin_count, 5)
    counted, fitted_ok = [], True
    for lower, upper, centre, count, fitted in bins:
        counted.append(float(sum(1 for x in times if lower[1] <= x < upper[1])))
        expected = len(times) * width * mixture_density(centre[1], components[subject - 1])
        fitted_ok = fitted_ok and fitted[0] == "value" and close(fitted[1], expected, 1e-10)
    counts = [line[3] for line in bins]
    label = sheet.getCellByPosition(column + 3, row).getString()
    results.check("%s: subject %d's histogram, %d bins of %g s: each count as counted here, the counts and the "
                  "trials beyond the bins adding up to its %d values" % (name, subject, len(bins), width, len(times)),
                  len(bins) > 10 and counts == [("value", c) for c in counted] and trials == ("value", len(times))
                  and beyond[0] == "value" and sum(counted) + beyond[1] == len(times)
                  and bins[0][0] == ("value", 0.0) and close(bins[-1][1][1], len(bins) * width)
                  and label.startswith("Subject %d, %d trials" % (subject, len(times))),
                  "%r %r %r %r" % (trials, beyond, label, list(zip(counts, counted))[:12]))
    results.check("%s: each fitted count is n x bin width x subject %d's mixture density at the bin centre "
                  "(1e-10)" % (name, subject), fitted_ok, repr(bins[:4]))


def check_sample(results, office, source_dir):
    import lo_session
    generator = sample_generator(source_dir)
    document = office.load(os.path.join(source_dir, "samples", "igmm.ods"), editable=True)
    try:
        document.calculateAll()
        sheet = document.Sheets.getByIndex(0)
        ranges = lo_session.array_formula_ranges(sheet, "IGMMFIT", "parameters", ("summary",))
        results.check("igmm.ods has IGMMFIT parameters and summary", set(ranges) == {"parameters", "summary"},
                      ", ".join(sorted(ranges)))
        if set(ranges) != {"parameters", "summary"}:
            return
        errors = [(address, cell.getString()) for address, cell in lo_session.formula_cells(sheet)
                  if cell.getError()]
        results.check("igmm.ods: no error cell", not errors, repr(errors[:8]))

        drawn = generator.simulate()
        longest = max(len(times) for times in drawn)
        cells = sheet.getCellRangeByPosition(0, generator.FIRST_DATA_ROW - 1, len(drawn) - 1,
                                             generator.FIRST_DATA_ROW + longest - 1).getDataArray()
        subjects = [[line[s] for line in cells if line[s] != ""] for s in range(len(drawn))]
        lengths_ok = all(all(line[s] == "" for line in cells[len(drawn[s]):]) for s in range(len(drawn)))
        results.check("igmm.ods: %d subjects' columns (%s values), the numbers make_igmm.py draws"
                      % (len(drawn), ", ".join(str(len(times)) for times in drawn)),
                      subjects == drawn and lengths_ok and not any(cells[longest][:len(drawn)]),
                      "%r" % [(len(a), len(b)) for a, b in zip(subjects, drawn)])

        k = SAMPLE_COMPONENTS
        parameters = range_values(ranges["parameters"])
        summary = range_values(ranges["summary"])
        statuses = [ranges["summary"].getCellByPosition(7, r).getString() for r in range(len(summary))]
        results.check("igmm.ods summary: a row per subject, its values, converged, fitted",
                      [row[:2] for row in summary] == [[("value", float(s + 1)), ("value", float(len(times)))]
                                                      for s, times in enumerate(drawn)]
                      and all(row[4] == ("value", 1.0) for row in summary) and statuses == ["fitted"] * len(drawn),
                      "%r %r" % (summary, statuses))
        shape_ok = [row[:2] for row in parameters] == [[("value", float(s + 1)), ("value", float(j + 1))]
                                                       for s in range(len(drawn)) for j in range(k)]
        components = [[tuple(cell[1] for cell in parameters[s * k + j][2:5]) for j in range(k)]
                      for s in range(len(drawn))] if shape_ok else []
        likelihoods = [mixture_log_likelihood(times, mixture) for times, mixture in zip(subjects, components)]
        results.check("igmm.ods parameters: a row per subject and component, weights summing to 1 (1e-12), the "
                      "summary's log-likelihood that of the parameters (1e-9)",
                      shape_ok and all(cell[0] == "value" and cell[1] > 0 for row in parameters for cell in row[2:5])
                      and all(abs(sum(alpha for alpha, _, _ in mixture) - 1) <= 1e-12 for mixture in components)
                      and all(close(row[2][1], likelihood, 1e-9) for row, likelihood in zip(summary, likelihoods)),
                      "%r %r" % (parameters, likelihoods))

        parameters_range = ranges["parameters"].getRangeAddress()
        modes = [sheet.getCellByPosition(parameters_range.EndColumn + 1, parameters_range.StartRow + r).getString()
                 for r in range(len(parameters))]
        recovered = True
        for s, mixture in enumerate(components):
            fast, slow = sorted(range(k), key=lambda j: mixture[j][1])
            recovered = recovered and modes[s * k + fast] == "fast" and modes[s * k + slow] == "slow"
            trials, share, fast_mu, _, slow_mu, _ = generator.SUBJECTS[s]
            recovered = (recovered and abs(mixture[fast][0] - share) <= 0.1
                         and abs(mixture[fast][1] - fast_mu) <= 0.1 * fast_mu
                         and abs(mixture[slow][1] - slow_mu) <= 0.1 * slow_mu)
        results.check("igmm.ods: the Mode column names the smaller mu fast; every subject's fast and slow mu "
                      "within 10%, its fast share within 0.1, of those it was drawn from",
                      shape_ok and recovered, "%r %r" % (modes, components))
        if not shape_ok:
            return

        check_histogram(results, sheet, subjects, components, "igmm.ods")
        column, row = find_text(sheet, "Subject shown")
        sheet.getCellByPosition(column + 1, row).setValue(1)
        sheet.getCellByPosition(column + 1, row + 1).setValue(0.1)
        document.calculateAll()
        check_histogram(results, sheet, subjects, components, "igmm.ods, subject 1 and bins of 0.1 s typed in")

        # The chart's series: the count column (fourth of the bins table) and the fitted one beside it.
        column, row = find_text(sheet, "From (s)")
        first_counts, first_fitted = (".$%s$%d:" % (lo_session.cell_name(0, column + offset)[:-1], row + 2)
                                      for offset in (3, 4))
        charts = sheet.getCharts()
        found = {}
        for name in charts.getElementNames():
            chart = charts.getByName(name).getEmbeddedObject()
            for chart_type in chart.getFirstDiagram().getCoordinateSystems()[0].getChartTypes():
                found[chart_type.getChartType().rsplit(".", 1)[-1]] = [
                    item.getDataSequences()[0].getValues().getSourceRangeRepresentation()
                    for item in chart_type.getDataSeries()]
        results.check("igmm.ods has one chart: the counts as columns, the fitted counts as a line over them",
                      len(charts.getElementNames()) == 1 and sorted(found) == ["ColumnChartType", "LineChartType"]
                      and len(found["ColumnChartType"]) == 1 and len(found["LineChartType"]) == 1
                      and first_counts in found["ColumnChartType"][0] and first_fitted in found["LineChartType"][0],
                      "%r %s %s" % (found, first_counts, first_fitted))
    finally:
        document.close(True)

