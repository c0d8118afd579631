"""calc_edge_cases.py: LibreOffice checks of what Calc's own functions do with
statgpu's results, run by test_calc.py in its office session.

Rows left out of a fit (a row with an empty or text cell) must be ignored by
COUNT, COUNTIF, SUM and AVERAGE over a per-row output, exactly as they ignore
Calc's own "" idiom: data A1:C12 with A3 empty, B6 the text "x" and row 11
empty; LTSFIT's weights and residuals and KMEANS' labels are entered beside
them, and the built-ins over those columns must count, sum and average the 9
fitted rows only. A void array element would count as 0 there (COUNTIF(;0)
would count the left-out rows as outliers, AVERAGE would divide by 12).

Tolerance: AVERAGE of the residuals against their mean computed here from the
cells' values, within 1e-12 relative (the same 9 doubles summed in another
order); counts and sums of 0/1 weights and labels exactly.
"""

# The rows that are left out (1-based): A3 empty, B6 text, row 11 empty.
LEFT_OUT_ROWS = (3, 6, 11)
ROWS = 12
# Two rows far off the plane y = 2 + 3 a - b: LTS must flag them.
PLANTED_OUTLIERS = (2, 8)


def plane(row):
    a = float(row)
    b = float((row * 7) % 5)
    noise = ((row * 37) % 11 - 5) * 0.01
    y = 2.0 + 3.0 * a - b + noise + (50.0 if row in PLANTED_OUTLIERS else 0.0)
    return a, b, y


def fill(sheet):
    for row in range(1, ROWS + 1):
        if row == 11:
            continue  # the whole row empty
        a, b, y = plane(row)
        if row != 3:
            sheet.getCellByPosition(0, row - 1).setValue(a)
        if row == 6:
            sheet.getCellByPosition(1, row - 1).setString("x")
        else:
            sheet.getCellByPosition(1, row - 1).setValue(b)
        sheet.getCellByPosition(2, row - 1).setValue(y)


def column(sheet, column_index):
    """The cells of one result column: a number, '' for an empty text, or ('error', code)."""
    cells = []
    for row in range(ROWS):
        cell = sheet.getCellByPosition(column_index, row)
        if cell.getError():
            cells.append(("error", cell.getError()))
        elif cell.getType().value == "FORMULA" and cell.getString() == "":
            cells.append("")
        else:
            cells.append(cell.getValue())
    return cells


def check(results, office, source_dir):
    del source_dir
    document = office.new_spreadsheet()
    try:
        sheet = document.Sheets.getByIndex(0)
        fill(sheet)
        sheet.getCellRangeByName("F1:F12").setArrayFormula('=LTSFIT(C1:C12;A1:B12;0.5;"weights")')
        sheet.getCellRangeByName("G1:G12").setArrayFormula('=KMEANS(A1:C12;2;"labels")')
        sheet.getCellRangeByName("H1:H12").setArrayFormula('=LTSFIT(C1:C12;A1:B12;0.5;"residuals")')
        formulas = {
            "J1": "=COUNTIF(F1:F12;0)", "J2": "=COUNT(G1:G12)", "J3": "=AVERAGE(H1:H12)",
            "J4": "=SUM(F1:F12)", "J5": "=COUNT(F1:F12)", "J6": "=COUNT(H1:H12)",
            "J7": "=ISNUMBER(F3)", "J8": "=COUNTIF(G1:G12;\">0\")", "J9": "=SUM(G1:G12)",
        }
        for address, formula in formulas.items():
            sheet.getCellRangeByName(address).setFormula(formula)
        document.calculateAll()

        weights, labels, residuals = column(sheet, 5), column(sheet, 6), column(sheet, 7)
        left_out = [row - 1 for row in LEFT_OUT_ROWS]
        fitted = [row for row in range(ROWS) if row not in left_out]
        results.check("left-out rows 3, 6 and 11 are empty in LTSFIT's weights and residuals and KMEANS' labels",
                      all(column_cells[row] == "" for column_cells in (weights, labels, residuals) for row in left_out),
                      "weights %r labels %r" % (weights, labels))
        numbers_ok = all(isinstance(column_cells[row], float) for column_cells in (weights, labels, residuals)
                         for row in fitted)
        results.check("the 9 fitted rows hold numbers in every per-row output", numbers_ok,
                      "residuals %r" % residuals)
        if not numbers_ok:
            return
        outliers = [row for row in fitted if weights[row] == 0.0]
        results.check("LTSFIT flags the two planted outliers (rows 2 and 8) among the fitted rows",
                      [row + 1 for row in outliers] == list(PLANTED_OUTLIERS), repr(weights))

        def value(address):
            cell = sheet.getCellRangeByName(address)
            return ("error", cell.getError()) if cell.getError() else cell.getValue()

        results.check("=COUNTIF(weights;0) counts the outliers only (%d), not the left-out rows" % len(outliers),
                      value("J1") == len(outliers), repr(value("J1")))
        results.check("=COUNT(KMEANS labels) is 9, the rows labelled", value("J2") == 9, repr(value("J2")))
        mean = sum(residuals[row] for row in fitted) / len(fitted)
        average = value("J3")
        results.check("=AVERAGE(residuals) divides by the 9 fitted rows (1e-12)",
                      isinstance(average, float) and abs(average - mean) <= 1e-12 * max(abs(mean), 1e-300),
                      "AVERAGE %r, mean of 9 %r" % (average, mean))
        results.check("=SUM(weights) is the %d rows of weight 1" % (len(fitted) - len(outliers)),
                      value("J4") == len(fitted) - len(outliers), repr(value("J4")))
        results.check("=COUNT(weights) and =COUNT(residuals) are 9", value("J5") == 9 and value("J6") == 9,
                      "%r %r" % (value("J5"), value("J6")))
        results.check("=ISNUMBER() of a left-out weight is FALSE", value("J7") == 0.0, repr(value("J7")))
        results.check("=COUNTIF(labels;\">0\") is 9 and =SUM(labels) the sum of the 9 labels",
                      value("J8") == 9 and value("J9") == sum(labels[row] for row in fitted),
                      "%r %r" % (value("J8"), value("J9")))
    finally:
        document.close(True)
