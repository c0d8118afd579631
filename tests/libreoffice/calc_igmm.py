"""calc_igmm.py: IGMMFIT in a real LibreOffice, run by test_calc.py in its
office session.

The engine's reference test (reference_igmm_cpu) checks the numbers against
R; here Calc's side is: three data sets in the columns of A1:C500, of
different lengths (A: the 500 values of tests/reference/igmm_data.csv's
"one"; B: its first 200, with a text cell and an empty cell among them; C: 40
values with a 0, so not fitted):
  - with k = 1 the parameters of A and B are each column's inverse Gaussian
    maximum likelihood estimate (mu the mean, lambda n / sum(1/x - 1/mean),
    1e-12), C's numbers empty ("");
  - the summary: values per column (500, 200, 40) and the statuses;
  - labels in the shape of Data: a 1 at every value of A and B, "" at the
    text, the empty cells, below each column's end and all of C, so COUNT
    over B's labels is 200;
  - Err:502 for k = 0, an unknown Output and Starts 0.
"""

import csv
import os

from calc_gmm import close, grid, outcome

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
        errors = ["=IGMMFIT(%s;0)" % DATA, "=IGMMFIT(%s;2;\"bogus\")" % DATA, "=IGMMFIT(%s;2;;0)" % DATA]
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
        bad = [outcome(sheet.getCellByPosition(23, r)) for r in range(len(errors))]
        results.check("IGMMFIT with k 0, Output \"bogus\", Starts 0: Err:502 each",
                      bad == [("error", ILLEGAL_ARGUMENT)] * len(errors), repr(bad))
    finally:
        document.close(True)
