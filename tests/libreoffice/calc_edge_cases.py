"""calc_edge_cases.py: LibreOffice checks of what Calc's own functions do with
statgpu's results, run by test_calc.py in its office session.

Rows left out of a fit (a row with an empty or text cell) must be ignored by
COUNT, COUNTIF, SUM and AVERAGE over a per-row output, exactly as they ignore
Calc's own "" idiom: data A1:C12 with A3 empty, B6 the text "x" and row 11
empty; LTSFIT's weights and residuals and KMEANS' labels are entered beside
them, and the built-ins over those columns must count, sum and average the 9
fitted rows only. A void array element would count as 0 there (COUNTIF(;0)
would count the left-out rows as outliers, AVERAGE would divide by 12).

The arguments of the order statistics are read as the built-ins read them:
GPUMEDIAN takes several numbers, ranges and arrays as MEDIAN does, and
GPUQUANTILE's p given as text ("0.5", " .5", "50%", "TRUE") is the number it
shows, as PERCENTILE.INC converts it; text that shows no number is #VALUE! for
both. GPUSMALL's and GPULARGE's k may be a range or an array, as SMALL's and
LARGE's: an array formula gives the array, a normal one its first value. Each
case is compared with the built-in on the same arguments, exactly. What Calc
never hands an add-in is checked as Calc's own answer: a reference list
(A1:A5~B1:B2) is Err:504 before statgpu is called. A summary entered into one
column shows the values, not the names.

An optional argument given as an empty cell is the argument left out, in
every form Calc hands an empty cell over: a reference to it (the number 0),
a one-cell range of it (an empty text) and a cell whose formula gives "":
each such KMEANS, LTSFIT, GMMFIT, IGMMFIT and BESTSUBSET must give exactly
what the call without that argument gives. Intercept is the exception Calc
makes: an empty cell reaches the add-in as FALSE does, and is FALSE, as
LINEST reads an empty Const. GMMFIT's k has no default: an empty k is Err:502
however it is given. Seed is a whole number from 0 to 2^53 for every function
(up to there every whole number is a double): 2^53 is taken, 2^53 + 2, 1E16
and -1 are Err:502. An array expression given to a function (A1:B30*1) is
read as an array only in an array formula: in a normal one Calc hands the
add-in the expression's implicit intersection (no add-in parameter can be of
LINEST's class ForceArray), so it is checked as an array formula against the
plain range, and as a normal formula as the error Calc makes of it.

The per-row outputs of whole columns (KMEANS(A:B;2;"labels"), LTSFIT,
GMMFIT, IGMMFIT) end at the data's last row: the same rows as the call on the
data's rows, then #N/A in an array formula's larger range.

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
    check_left_out_rows(results, office)
    check_arguments(results, office)
    check_empty_optional_arguments(results, office)
    check_long_call_in_a_window(results, office)
    check_whole_columns(results, office)


def check_left_out_rows(results, office):
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


# ---- several arguments and text p ------------------------------------------------------

# (statgpu's formula, the built-in's): both must give the same number, or both an error.
ARGUMENT_CASES = [
    ("=GPUMEDIAN(A1:A5;B1:B2)", "=MEDIAN(A1:A5;B1:B2)"),
    ("=GPUMEDIAN(A1:A5;100)", "=MEDIAN(A1:A5;100)"),
    ("=GPUMEDIAN(A1:A5;B1:B2;C1:C2;3)", "=MEDIAN(A1:A5;B1:B2;C1:C2;3)"),
    ("=GPUMEDIAN(A1:A5;C1)", "=MEDIAN(A1:A5;C1)"),
    ("=GPUMEDIAN(A1:A5;D1:D1)", "=MEDIAN(A1:A5;D1:D1)"),
    ("=GPUMEDIAN(A1:A5;;100)", "=MEDIAN(A1:A5;;100)"),
    ("=GPUMEDIAN(A1:A5;B1:B2;;;C1:C2;;100)", "=MEDIAN(A1:A5;B1:B2;;;C1:C2;;100)"),
    # An empty last argument is no argument: Calc hands an add-in's argument of
    # type any left out and not given alike (MEDIAN(A1:A5;) counts a 0).
    ("=GPUMEDIAN(A1:A5;)", "=MEDIAN(A1:A5)"),
    ("=GPUMEDIAN(A1:A5;TRUE())", "=MEDIAN(A1:A5;TRUE())"),
    ("=GPUMEDIAN(A1:A5;{100;200})", "=MEDIAN(A1:A5;{100;200})"),
    ("=GPUMEDIAN(A1:A5;{\"100\";200})", "=MEDIAN(A1:A5;{\"100\";200})"),
    ("=GPUMEDIAN(C1:C2;D1:D2)", "=MEDIAN(C1:C2;D1:D2)"),
    ("=GPUQUANTILE(A1:A5;\"0.5\")", "=PERCENTILE.INC(A1:A5;\"0.5\")"),
    ("=GPUQUANTILE(A1:A5;\" .25 \")", "=PERCENTILE.INC(A1:A5;\" .25 \")"),
    ("=GPUQUANTILE(A1:A5;\"5E-1\")", "=PERCENTILE.INC(A1:A5;\"5E-1\")"),
    ("=GPUQUANTILE(A1:A5;\"75%\")", "=PERCENTILE.INC(A1:A5;\"75%\")"),
    ("=GPUQUANTILE(A1:A5;\"0,5\")", "=PERCENTILE.INC(A1:A5;\"0,5\")"),
    ("=GPUQUANTILE(A1:A5;\"\")", "=PERCENTILE.INC(A1:A5;\"\")"),
    ("=GPUQUANTILE(A1:A5;\"abc\")", "=PERCENTILE.INC(A1:A5;\"abc\")"),
    ("=GPUQUANTILE(A1:A5;C1)", "=PERCENTILE.INC(A1:A5;C1)"),
    ("=GPUQUANTILE(A1:A5;E1)", "=PERCENTILE.INC(A1:A5;E1)"),
    ("=GPUQUANTILE(A1:A5;D1)", "=PERCENTILE.INC(A1:A5;D1)"),
    ("=GPUQUANTILE(A1:A5;\"TRUE\")", "=PERCENTILE.INC(A1:A5;\"TRUE\")"),
    ("=GPUQUANTILE(A1:A5;\" false \")", "=PERCENTILE.INC(A1:A5;\" false \")"),
    # A range of k in a normal formula, in a row outside the range: SMALL and
    # LARGE give their array's first value, not an implicit intersection.
    ("=GPUSMALL(A1:A5;F1:F3)", "=SMALL(A1:A5;F1:F3)"),
    ("=GPULARGE(A1:A5;F2:F4)", "=LARGE(A1:A5;F2:F4)"),
]
# p (n - 1) just below or above a whole number (0.29 * 100 = 28.999999999999996,
# 0.57 * 100 = 56.99999999999999, 0.7 * 100 = 70.00000000000001): Calc rounds the
# position to 15 digits for its floor and takes x(i) itself where h - i <= 0;
# M1:M101 hold 1 ... 101.
ROUNDING_CASES = [("=GPUQUANTILE(M1:M101;%s)" % p, "=PERCENTILE.INC(M1:M101;%s)" % p)
                  for p in ("0.29", "0.57", "0.58", "0.7", "0.1", "1/3")]
# Text p in a range of p, as an array formula: E1 holds the text "0.25",
# E3 is empty (0 to PERCENTILE.INC: Calc hands an add-in an empty cell of a
# range as an empty text).
ARRAY_P = ("=GPUQUANTILE(A1:A5;E1:E3)", "=PERCENTILE.INC(A1:A5;E1:E3)")
# A range and an array of k, as array formulas over 3 rows: F1:F3 hold 2, 1, 4.
# GPUMEDIAN's further arguments in array formulas of one cell: a range as the
# third argument or later is read whole, not cell by cell (Calc iterates an
# add-in's arguments past its declared ones); and past the 30th argument.
ARRAY_MEDIAN = [("=GPUMEDIAN(A1:A5;100;B1:B2)", "=MEDIAN(A1:A5;100;B1:B2)"),
                ("=SUM(GPUMEDIAN(A1;5;B1:B2))", "=SUM(MEDIAN(A1;5;B1:B2))"),
                ("=GPUMEDIAN(%s)" % ";".join(["A1:A5"] * 29 + ["B1:B2", "F1:F5", "3"]),
                 "=MEDIAN(%s)" % ";".join(["A1:A5"] * 29 + ["B1:B2", "F1:F5", "3"]))]
ARRAY_K = [("=GPUSMALL(A1:A5;F1:F3)", "=SMALL(A1:A5;F1:F3)"),
           ("=GPULARGE(A1:A5;{1;3;5})", "=LARGE(A1:A5;{1;3;5})")]


def outcome(cell):
    return ("error", cell.getError()) if cell.getError() else ("value", cell.getValue())


def check_arguments(results, office):
    document = office.new_spreadsheet()
    try:
        sheet = document.Sheets.getByIndex(0)
        for row, value in enumerate([1, 2, 3, 4, 5]):
            sheet.getCellByPosition(0, row).setValue(value)
        for row, value in enumerate([10, 20]):
            sheet.getCellByPosition(1, row).setValue(value)
        sheet.getCellRangeByName("C1").setString("7")     # text that shows a number
        sheet.getCellRangeByName("C2").setString("abc")
        sheet.getCellRangeByName("E1").setString("0.25")
        sheet.getCellRangeByName("E2").setValue(0.5)
        for row, value in enumerate([2, 1, 4, 3, 6]):
            sheet.getCellByPosition(5, row).setValue(value)
        for row in range(101):
            sheet.getCellByPosition(12, row).setValue(row + 1)
        for row, (gpu, builtin) in enumerate(ARGUMENT_CASES + ROUNDING_CASES):
            sheet.getCellByPosition(6 if row < len(ARGUMENT_CASES) else 13, row).setFormula(gpu)
            sheet.getCellByPosition(7 if row < len(ARGUMENT_CASES) else 14, row).setFormula(builtin)
        list_row = len(ARGUMENT_CASES)
        sheet.getCellByPosition(6, list_row).setFormula("=GPUMEDIAN(A1:A5~B1:B2)")
        sheet.getCellByPosition(7, list_row).setFormula("=MEDIAN(A1:A5~B1:B2)")
        array_row = list_row + 2
        sheet.getCellRangeByPosition(6, array_row, 6, array_row + 2).setArrayFormula(ARRAY_P[0])
        sheet.getCellRangeByPosition(7, array_row, 7, array_row + 2).setArrayFormula(ARRAY_P[1])
        k_row = array_row + 4
        for index, (gpu, builtin) in enumerate(ARRAY_K):
            sheet.getCellRangeByPosition(6, k_row + 4 * index, 6, k_row + 4 * index + 2).setArrayFormula(gpu)
            sheet.getCellRangeByPosition(7, k_row + 4 * index, 7, k_row + 4 * index + 2).setArrayFormula(builtin)
        median_row = k_row + 4 * len(ARRAY_K)
        for index, (gpu, builtin) in enumerate(ARRAY_MEDIAN):
            sheet.getCellRangeByPosition(6, median_row + index, 6, median_row + index).setArrayFormula(gpu)
            sheet.getCellRangeByPosition(7, median_row + index, 7, median_row + index).setArrayFormula(builtin)
        summary_row = median_row + len(ARRAY_MEDIAN) + 1
        sheet.getCellRangeByPosition(6, summary_row, 6, summary_row + 8).setArrayFormula(
            '=KMEANS(A1:A5;2;"summary")')
        sheet.getCellRangeByPosition(7, summary_row, 8, summary_row + 8).setArrayFormula(
            '=KMEANS(A1:A5;2;"summary")')
        sheet.getCellRangeByPosition(10, 0, 10, 8).setArrayFormula('=LTSFIT(F1:F5;A1:A5;;"summary")')
        document.calculateAll()

        for row, (gpu, builtin) in enumerate(ARGUMENT_CASES):
            gpu_cell, builtin_cell = sheet.getCellByPosition(6, row), sheet.getCellByPosition(7, row)
            found, expected = outcome(gpu_cell), outcome(builtin_cell)
            same = found == expected if expected[0] == "value" else found[0] == "error"
            results.check("%s gives what %s gives (%s)" % (gpu, builtin, gpu_cell.getString()), same,
                          "statgpu %r, Calc %r" % (found, expected))
        for row, (gpu, builtin) in enumerate(ROUNDING_CASES, start=len(ARGUMENT_CASES)):
            found, expected = outcome(sheet.getCellByPosition(13, row)), outcome(sheet.getCellByPosition(14, row))
            results.check("%s gives what %s gives, bit for bit" % (gpu, builtin),
                          found == expected and found[0] == "value", "statgpu %r, Calc %r" % (found, expected))
        list_cell = sheet.getCellByPosition(6, list_row)
        results.check("a reference list =GPUMEDIAN(A1:A5~B1:B2) is Calc's own Err:504 (Calc hands no add-in "
                      "a reference list; MEDIAN(A1:A5;B1:B2) is the form to use)",
                      list_cell.getError() == 504, list_cell.getString())
        found = [outcome(sheet.getCellByPosition(6, array_row + r)) for r in range(3)]
        expected = [outcome(sheet.getCellByPosition(7, array_row + r)) for r in range(3)]
        results.check("array formula over text, number and empty p %s equals %s" % ARRAY_P,
                      found == expected and all(kind == "value" for kind, _ in found), "%r %r" % (found, expected))
        for index, (gpu, builtin) in enumerate(ARRAY_K):
            found = [outcome(sheet.getCellByPosition(6, k_row + 4 * index + r)) for r in range(3)]
            expected = [outcome(sheet.getCellByPosition(7, k_row + 4 * index + r)) for r in range(3)]
            results.check("array formula %s over 3 rows equals %s" % (gpu, builtin),
                          found == expected and all(kind == "value" for kind, _ in found),
                          "%r %r" % (found, expected))
        for index, (gpu, builtin) in enumerate(ARRAY_MEDIAN):
            found = outcome(sheet.getCellByPosition(6, median_row + index))
            expected = outcome(sheet.getCellByPosition(7, median_row + index))
            results.check("array formula {%s} equals {%s}" % (gpu[:60], builtin[:60]),
                          found == expected and found[0] == "value", "%r %r" % (found, expected))
        narrow = [outcome(sheet.getCellByPosition(6, summary_row + r)) for r in range(9)]
        wide = [outcome(sheet.getCellByPosition(7, summary_row + r)) for r in range(9)]
        names = [sheet.getCellByPosition(8, summary_row + r).getString() for r in range(9)]
        results.check("a KMEANS summary in one column shows the 9 values (the names come second)",
                      narrow == wide and all(kind == "value" for kind, _ in narrow)
                      and names[0].startswith("inertia"), "%r %r" % (narrow, names))
        lts_values = [outcome(sheet.getCellByPosition(10, r)) for r in range(9)]
        results.check("an LTSFIT summary in one column shows the 9 values",
                      all(kind == "value" for kind, _ in lts_values), repr(lts_values))
    finally:
        document.close(True)


# ---- optional arguments given as empty cells --------------------------------------------

# The functions with their required arguments, their optional arguments in
# order, and the shape of the default Output entered as an array formula.
# Data: A1:B30 two groups of rows, C1:C30 a response, F1:G30 positive data
# sets; I1 empty; J1 a formula giving ""; K1 the text "sizes".
OPTIONAL_CALLS = [
    ("KMEANS", "A1:B30;2", ["Output", "Restarts", "MaxIter", "Seed"], (2, 2)),
    ("LTSFIT", "C1:C30;A1:B30", ["Alpha", "Output", "Intercept", "Seed"], (3, 1)),
    ("GMMFIT", "A1:B30;2", ["Covariance", "Output", "Restarts", "MaxIter", "Seed"], (13, 1)),
    ("IGMMFIT", "F1:G30;1", ["Output", "Starts", "MaxIter", "Seed"], (2, 5)),
    ("BESTSUBSET", "C1:C30;A1:B30", ["MaxSize", "Output", "Intercept", "Validation", "Criterion", "NBest", "Seed"],
     (2, 12)),
]
EMPTY_FORMS = [("a reference to an empty cell", "I1"), ("a one-cell range of an empty cell", "I1:I1"),
               ("a cell whose formula gives \"\"", "J1")]
SEED_LIMITS = [("9007199254740992", None), ("9007199254740994", 502), ("1E16", 502), ("-1", 502)]


def empty_argument_data(sheet):
    import random
    generator = random.Random(5)
    rows = []
    for row in range(30):
        a = generator.gauss(0.0, 1.0) + (6.0 if row % 2 else 0.0)
        b = generator.gauss(0.0, 1.0)
        y = 1.0 + 2.0 * a - b + generator.gauss(0.0, 0.1) + (30.0 if row == 4 else 0.0)
        rows.append((a, b, y, "", "", generator.uniform(0.5, 3.0), generator.uniform(1.0, 4.0)))
    sheet.getCellRangeByName("A1:G30").setDataArray(tuple(rows))
    sheet.getCellRangeByName("D1:E30").clearContents(1023)
    sheet.getCellRangeByName("J1").setFormula('=""')
    sheet.getCellRangeByName("K1").setString("sizes")


def call_with(function, required, optional, position, given):
    """function's formula with the optional argument at position given (and
    the ones before it left out); position None: none given."""
    if position is None:
        return "=%s(%s)" % (function, required)
    return "=%s(%s%s%s)" % (function, required, ";" * (position + 1), given)


def check_empty_optional_arguments(results, office):
    document = office.new_spreadsheet()
    try:
        sheet = document.Sheets.getByIndex(0)
        empty_argument_data(sheet)
        placed = []   # (name, cells, expected cells or an error code)
        column = 14

        def enter(formula, shape):
            nonlocal column
            rows, columns = shape
            block = sheet.getCellRangeByPosition(column, 0, column + columns - 1, rows - 1)
            block.setArrayFormula(formula)
            column += columns
            return block

        def cells_of(block, shape):
            return [outcome(block.getCellByPosition(c, r)) for r in range(shape[0]) for c in range(shape[1])]

        for function, required, optional, shape in OPTIONAL_CALLS:
            omitted = enter(call_with(function, required, optional, None, ""), shape)
            for position, argument in enumerate(optional):
                if argument == "Intercept":
                    reference = enter(call_with(function, required, optional, position, "FALSE()"), shape)
                    wanted = "FALSE (as LINEST reads an empty Const)"
                else:
                    reference, wanted = omitted, "%s left out" % argument
                for form, given in EMPTY_FORMS:
                    formula = call_with(function, required, optional, position, given)
                    placed.append(("%s with %s as %s gives what %s gives" % (formula, argument, form, wanted),
                                   enter(formula, shape), reference, shape))
            for value, error in SEED_LIMITS:
                formula = call_with(function, required, optional, len(optional) - 1, value)
                placed.append(("%s: Seed %s is %s" % (formula, value, "taken" if error is None else "Err:502"),
                               enter(formula, shape), error, shape))
        # A one-cell range holding a word is that word.
        placed.append(('=KMEANS(A1:B30;2;K1:K1) with K1 "sizes" gives =KMEANS(A1:B30;2;"sizes")',
                       enter("=KMEANS(A1:B30;2;K1:K1)", (2, 1)), enter('=KMEANS(A1:B30;2;"sizes")', (2, 1)),
                       (2, 1)))
        # GMMFIT's k has no default: empty is Err:502 in every form.
        for form, given in EMPTY_FORMS:
            placed.append(("=GMMFIT(A1:B30;%s): k as %s is Err:502, as k = 0 is" % (given, form),
                           enter("=GMMFIT(A1:B30;%s)" % given, (13, 1)), 502, (13, 1)))
        # An array expression as an argument: an array formula reads it as
        # the range; a normal formula gets Calc's implicit intersection.
        expression = enter("=SUM(KMEANS(A1:B30*1;2))", (1, 1))
        plain = enter("=SUM(KMEANS(A1:B30;2))", (1, 1))
        placed.append(("{=SUM(KMEANS(A1:B30*1;2))} (an array formula) gives =SUM(KMEANS(A1:B30;2))",
                       expression, plain, (1, 1)))
        normal = sheet.getCellByPosition(column, 0)
        normal.setFormula("=SUM(LTSFIT(C1:C30;A1:B30*1))")
        linest = sheet.getCellByPosition(column + 1, 0)
        linest.setFormula("=SUM(LINEST(C1:C30;A1:B30*1))")
        document.calculateAll()

        for name, block, expected, shape in placed:
            found = cells_of(block, shape)
            if isinstance(expected, int):
                ok = all(cell == ("error", expected) for cell in found)
                detail = repr(found[:3])
            elif expected is None:
                ok = all(kind == "value" for kind, _ in found)
                detail = repr(found[:3])
            else:
                wanted = cells_of(expected, shape)
                # (a fit without an intercept has a coefficient fewer: #N/A past it in both)
                ok = found == wanted and found[0][0] == "value"
                detail = "%r against %r" % (found[:3], wanted[:3])
            results.check(name, ok, detail)
        results.check("=SUM(LTSFIT(C1:C30;A1:B30*1)) as a normal formula: Calc hands the add-in the implicit "
                      "intersection of A1:B30*1, #VALUE! here (LINEST's ForceArray parameters read the array; "
                      "an add-in's parameters cannot be ForceArray)",
                      outcome(normal) == ("error", 519) and outcome(linest)[0] == "value",
                      "%r, LINEST %r" % (outcome(normal), outcome(linest)))
    finally:
        document.close(True)


# ---- a long call in a window -------------------------------------------------------------

LONG_ROWS = 20000
LONG_FORMULA = '=KMEANS(A1:E%d;10;"summary";300;300;1)' % LONG_ROWS


def long_call_data():
    import random
    generator = random.Random(3)
    return tuple(tuple(generator.gauss(0.0, 1.0) + (row % 7) * 3.0 for _ in range(5)) for row in range(LONG_ROWS))


def long_call_summary(office, hidden):
    """The summary of a KMEANS that runs for about a second, and whether the
    office's current frame was the document's while it ran."""
    document = office.new_spreadsheet(hidden=hidden)
    try:
        sheet = document.Sheets.getByIndex(0)
        sheet.getCellRangeByPosition(0, 0, 4, LONG_ROWS - 1).setDataArray(long_call_data())
        frame = document.getCurrentController().getFrame()
        in_front = office.desktop.getCurrentFrame() == frame
        summary = sheet.getCellRangeByPosition(7, 0, 8, 8)
        summary.setArrayFormula(LONG_FORMULA)
        values = [outcome(summary.getCellByPosition(0, r)) for r in range(9)]
        return values, in_front
    finally:
        document.close(True)


def check_long_call_in_a_window(results, office):
    """A call longer than CallProgress::kShowAfter in a document with a
    window shows its progress in that window's status bar and lets the office
    handle input while it runs (addin/progress.hxx); the result must be the
    same bits as the same call in a hidden document, which has no status bar.
    (Escape itself cannot be pressed here: a headless office only takes keys
    posted by another thread, which waits for the call to end.)"""
    hidden, _ = long_call_summary(office, hidden=True)
    shown, in_front = long_call_summary(office, hidden=False)
    results.check("a long KMEANS (about a second) in a window, with its progress in the status bar, gives the "
                  "same summary as in a hidden document",
                  in_front and shown == hidden and all(kind == "value" for kind, _ in shown),
                  "window is current %r; %r against %r" % (in_front, shown, hidden))


# ---- per-row outputs of whole columns ------------------------------------------------------

WHOLE_ROWS = 15        # data in rows 1 to 15; row 11 empty, A3 empty
SHOWN_ROWS = 20        # the array formulas' ranges: 5 rows below the data
NOT_AVAILABLE = 32767  # #N/A, Calc's fill for an array smaller than its range
# (function over whole columns, the same over the data's rows, columns of the results)
WHOLE_COLUMN_CALLS = [
    ('=KMEANS(A:B;2;"labels")', '=KMEANS(A1:B15;2;"labels")'),
    ('=LTSFIT(C:C;A:B;0.5;"residuals")', '=LTSFIT(C1:C15;A1:B15;0.5;"residuals")'),
    ('=GMMFIT(A:B;2;"diag";"probabilities")', '=GMMFIT(A1:B15;2;"diag";"probabilities")'),
    ('=IGMMFIT(E:E;1;"labels")', '=IGMMFIT(E1:E15;1;"labels")'),
]


def check_whole_columns(results, office):
    """A per-row output of whole columns (KMEANS(A:B;...;"labels")) ends at
    the data's last row: its first 15 rows are those of the same call on
    A1:B15 (an empty text for the left-out rows 3 and 11), and an array
    formula over 20 rows shows #N/A below, as for any array smaller than its
    range. Before, the result had 1,048,576 rows, and Calc took about a minute
    to read a million empty texts."""
    document = office.new_spreadsheet()
    try:
        sheet = document.Sheets.getByIndex(0)
        for row in range(1, WHOLE_ROWS + 1):
            if row == 11:
                continue
            a, b, y = plane(row)
            if row != 3:
                sheet.getCellByPosition(0, row - 1).setValue(a)
            sheet.getCellByPosition(1, row - 1).setValue(b)
            sheet.getCellByPosition(2, row - 1).setValue(y)
            sheet.getCellByPosition(4, row - 1).setValue(1.0 + (row * 13) % 7 / 3.0)
        column = 7
        placed = []
        for whole, bounded in WHOLE_COLUMN_CALLS:
            width = 2 if "GMMFIT" in whole else 1
            sheet.getCellRangeByPosition(column, 0, column + width - 1, SHOWN_ROWS - 1).setArrayFormula(whole)
            sheet.getCellRangeByPosition(column + width, 0, column + 2 * width - 1,
                                         WHOLE_ROWS - 1).setArrayFormula(bounded)
            placed.append((whole, bounded, column, width))
            column += 2 * width + 1
        document.calculateAll()
        for whole, bounded, column, width in placed:
            def cells(first, rows):
                found = []
                for row in range(rows):
                    for c in range(first, first + width):
                        cell = sheet.getCellByPosition(c, row)
                        found.append(outcome(cell) if cell.getError() or cell.getString() != ""
                                     else ("empty text",))
                return found
            found, expected = cells(column, SHOWN_ROWS), cells(column + width, WHOLE_ROWS)
            data_rows = found[:WHOLE_ROWS * width]
            below = found[WHOLE_ROWS * width:]
            results.check("%s gives %s's rows, then #N/A below the data" % (whole, bounded),
                          data_rows == expected and any(kind == "value" for kind, *_ in data_rows)
                          and below == [("error", NOT_AVAILABLE)] * ((SHOWN_ROWS - WHOLE_ROWS) * width),
                          "%r against %r; below %r" % (data_rows, expected, below))
    finally:
        document.close(True)
