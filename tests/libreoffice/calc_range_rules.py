"""calc_range_rules.py: the order statistics read their Data as Calc's MEDIAN,
SMALL, LARGE and PERCENTILE.INC read theirs, for every way a formula can give
it; run by test_calc.py in its office session.

Each Data below is given to the four statgpu functions and to the four
built-ins (k = 2, p = 0.3), and the results must be equal (IEEE equality), or
both an error:
- a range with numbers, empty cells, text, a formula's "" and "5", a number
  typed as text, booleans typed (TRUE) and computed (=TRUE(), =FALSE()):
  MEDIAN skips the empty cells and every text, and counts a boolean cell as
  the number it is (1 or 0);
- rows hidden by hand and rows hidden by a standard filter, and a hidden
  column: counted, as MEDIAN counts them (only SUBTOTAL and AGGREGATE skip
  them);
- a range on another sheet, a named range, a whole column (J:J);
- an inline array, booleans among several arguments, and expressions entered
  as array formulas (B1:B8*2, IF(B1:B8>2;B1:B8;""), a comparison's booleans);
- a range holding =1/0: an error for both (Calc answers an add-in's call
  with Err:504 itself; the built-ins pass the cell's own error on).
Then cells of the hidden rows, of the other sheet and of the whole column
are changed, and every formula must follow without a forced recalculation.

Two differences from the built-ins come from what Calc hands an add-in, and
are checked as what they are, so that a change in Calc shows here:
- one empty cell given alone (=GPUMEDIAN(K1)) reaches the add-in as the
  number 0, where MEDIAN has no number and errs (a range of one cell, K1:K1,
  stays empty: tested in calc_edge_cases.py);
- under Tools > Options > Calc > Calculate > "Precision as shown", MEDIAN
  rounds each number to its format first; an add-in receives the numbers
  as stored.
"""

DATA_SHEET, OTHER_SHEET, CHECK_SHEET = "Data", "Other", "Checks"

# (what the case shows, Data as the formula gives it, entered as an array formula)
DATA_CASES = [
    ("numbers, blanks, text, a formula's \"\" and \"5\", a number as text, booleans", "$Data.A1:A16", False),
    ("rows 3 and 4 hidden", "$Data.B1:B8", False),
    ("rows hidden by a standard filter", "$Data.E2:E7", False),
    ("a hidden column in a two-column range", "$Data.F1:G4", False),
    ("a range on another sheet", "$Other.A1:A6", False),
    ("a named range", "Sample", False),
    ("a whole column", "$Data.J:J", False),
    ("an inline array", "{5;1;4;2;8}", False),
    ("an expression (array formula)", "$Data.B1:B8*2", True),
    ("IF() giving \"\" for some cells (array formula)", "IF($Data.B1:B8>2;$Data.B1:B8;\"\")", True),
    ("a comparison's booleans (array formula)", "$Data.B1:B8>2", True),
]
# (what the case shows, GPUMEDIAN's arguments): MEDIAN's several arguments.
MEDIAN_ONLY_CASES = [
    ("booleans among several arguments", "TRUE();5;7"),
    ("a boolean cell among several arguments", "$Data.A13;5;7"),
]
ERROR_DATA = "$Data.H1:H3"
FUNCTIONS = [("GPUMEDIAN(%s)", "MEDIAN(%s)"), ("GPUSMALL(%s;2)", "SMALL(%s;2)"),
             ("GPULARGE(%s;2)", "LARGE(%s;2)"), ("GPUQUANTILE(%s;0.3)", "PERCENTILE.INC(%s;0.3)")]


def outcome(cell):
    return ("error", cell.getError()) if cell.getError() else ("value", cell.getValue())


def fill(document):
    import uno  # test_calc.py imports this module before it moves to a Python that has uno

    sheets = document.Sheets
    sheets.getByIndex(0).setName(DATA_SHEET)
    sheets.insertNewByName(OTHER_SHEET, 1)
    sheets.insertNewByName(CHECK_SHEET, 2)
    data, other = sheets.getByName(DATA_SHEET), sheets.getByName(OTHER_SHEET)

    mixed = [3, "", "text", -2.5, 7, "", -10, 0, 4.25]
    data.getCellRangeByName("A1:A9").setDataArray(tuple((v,) for v in mixed))
    data.getCellRangeByName("A10").setFormula("=\"\"")      # empty text: skipped
    data.getCellRangeByName("A11").setFormula("=\"5\"")     # text that shows a number: skipped
    data.getCellRangeByName("A12").setString("6")            # a number typed as text: skipped
    data.getCellRangeByName("A13").setFormula("=TRUE()")    # a boolean: the number 1
    data.getCellRangeByName("A14").setFormula("TRUE")       # typed: a boolean constant
    data.getCellRangeByName("A15").setFormula("=FALSE()")   # the number 0
    data.getCellRangeByName("A16").setFormula("=2+3")

    # Rows 3 and 4 hidden; their values move every statistic.
    data.getCellRangeByName("B1:B8").setDataArray(tuple((v,) for v in (1, 2, 100, 200, 300, 3, 4, 5)))
    rows = data.getRows()
    rows.getByIndex(2).IsVisible = False
    rows.getByIndex(3).IsVisible = False

    # A standard filter on D1:E7 keeps the "a" rows; the "b" rows (large
    # values) are hidden by the filter.
    table = (("key", "value"), ("a", 1), ("b", 50), ("a", 2), ("b", 60), ("a", 3), ("b", 70))
    filtered = data.getCellRangeByName("D1:E7")
    filtered.setDataArray(table)
    descriptor = filtered.createFilterDescriptor(True)
    field = uno.createUnoStruct("com.sun.star.sheet.TableFilterField")
    field.Field = 0
    field.IsNumeric = False
    field.StringValue = "a"
    field.Operator = uno.Enum("com.sun.star.sheet.FilterOperator", "EQUAL")
    descriptor.FilterFields = (field,)
    descriptor.ContainsHeader = True
    filtered.filter(descriptor)

    # F1:G4 with column G hidden.
    data.getCellRangeByName("F1:G4").setDataArray(((1, 90), (2, 80), (3, 70), (4, 60)))
    data.getColumns().getByIndex(6).IsVisible = False

    data.getCellRangeByName("H1:H2").setDataArray(((1,), (2,)))
    data.getCellRangeByName("H3").setFormula("=1/0")

    # Column J: numbers far apart with blanks and text between them.
    for row, value in ((0, 5), (3, 1), (4, "x"), (10, 4), (500, 2), (70000, 9)):
        cell = data.getCellByPosition(9, row)
        if isinstance(value, str):
            cell.setString(value)
        else:
            cell.setValue(value)

    other.getCellRangeByName("A1:A6").setDataArray(((1,), (9,), ("",), (4,), ("t",), (-3,)))

    origin = uno.createUnoStruct("com.sun.star.table.CellAddress")
    document.NamedRanges.addNewByName("Sample", "$%s.$B$1:$B$8" % DATA_SHEET, origin, 0)


def place(sheet, row, gpu, builtin, as_array):
    for column, formula in ((0, gpu), (1, builtin)):
        if as_array:
            sheet.getCellRangeByPosition(column, row, column, row).setArrayFormula("=" + formula)
        else:
            sheet.getCellByPosition(column, row).setFormula("=" + formula)


def check(results, office, source_dir):
    del source_dir
    document = office.new_spreadsheet()
    try:
        fill(document)
        checks = document.Sheets.getByName(CHECK_SHEET)
        placed = []
        row = 0
        for name, data, as_array in DATA_CASES:
            for gpu, builtin in FUNCTIONS:
                place(checks, row, gpu % data, builtin % data, as_array)
                placed.append((name, gpu % data, builtin % data, row, False))
                row += 1
        for name, arguments in MEDIAN_ONLY_CASES:
            place(checks, row, "GPUMEDIAN(%s)" % arguments, "MEDIAN(%s)" % arguments, False)
            placed.append((name, "GPUMEDIAN(%s)" % arguments, "MEDIAN(%s)" % arguments, row, False))
            row += 1
        for gpu, builtin in FUNCTIONS:
            place(checks, row, gpu % ERROR_DATA, builtin % ERROR_DATA, False)
            placed.append(("a range holding =1/0", gpu % ERROR_DATA, builtin % ERROR_DATA, row, True))
            row += 1
        empty_row = row
        place(checks, empty_row, "GPUMEDIAN($Data.K1)", "MEDIAN($Data.K1)", False)
        shown_row = empty_row + 1
        place(checks, shown_row, "GPUMEDIAN($Data.L1:L3)", "MEDIAN($Data.L1:L3)", False)
        document.calculateAll()

        def compare_all(when):
            for name, gpu, builtin, case_row, error_expected in placed:
                found = outcome(checks.getCellByPosition(0, case_row))
                expected = outcome(checks.getCellByPosition(1, case_row))
                if error_expected:
                    ok = found[0] == "error" and expected[0] == "error"
                    claim = "is an error, as =%s is" % builtin
                else:
                    ok = found == expected and found[0] == "value"
                    claim = "gives what =%s gives" % builtin
                results.check("%s%s: =%s %s" % (name, when, gpu, claim), ok,
                              "statgpu %r, Calc %r" % (found, expected))

        compare_all("")

        # Changed cells: a hidden row, the other sheet, the whole column's far
        # end, the named range; autocalc alone must bring every formula along.
        data, other = document.Sheets.getByName(DATA_SHEET), document.Sheets.getByName(OTHER_SHEET)
        before = [outcome(checks.getCellByPosition(0, case_row)) for _, _, _, case_row, _ in placed]
        data.getCellRangeByName("B4").setValue(-500)
        data.getCellRangeByName("B7").setValue(250)
        other.getCellRangeByName("A2").setValue(-9)
        other.getCellRangeByName("A3").setValue(8)
        data.getCellByPosition(9, 900000).setValue(7)
        data.getCellByPosition(9, 0).setString("now text")
        after = [outcome(checks.getCellByPosition(0, case_row)) for _, _, _, case_row, _ in placed]
        changed = sum(1 for old, new in zip(before, after) if old != new)
        results.check("after cells of the ranges change, %d statgpu results changed without a recalculation "
                      "being asked for" % changed, changed >= 16, "")
        compare_all(", after a change")

        empty_gpu = outcome(checks.getCellByPosition(0, empty_row))
        empty_builtin = outcome(checks.getCellByPosition(1, empty_row))
        results.check("known difference: =GPUMEDIAN(K1) of one empty cell is 0 (Calc hands an add-in one empty "
                      "cell given alone as the number 0), where MEDIAN has no number",
                      empty_gpu == ("value", 0.0) and empty_builtin[0] == "error",
                      "statgpu %r, Calc %r" % (empty_gpu, empty_builtin))
        check_precision_as_shown(results, document, checks, shown_row)
    finally:
        document.close(True)


def check_precision_as_shown(results, document, checks, row):
    """Numbers shown with one decimal: MEDIAN under "Precision as shown"
    takes the rounded numbers, an add-in the stored ones."""
    import uno

    data = document.Sheets.getByName(DATA_SHEET)
    cells = data.getCellRangeByName("L1:L3")
    cells.setDataArray(((1.26,), (1.24,), (1.27,)))
    locale = uno.createUnoStruct("com.sun.star.lang.Locale")
    formats = document.NumberFormats
    key = formats.queryKey("0.0", locale, False)
    if key < 0:
        key = formats.addNew("0.0", locale)
    cells.NumberFormat = key
    document.calculateAll()
    exact = (outcome(checks.getCellByPosition(0, row)), outcome(checks.getCellByPosition(1, row)))
    document.setPropertyValue("CalcAsShown", True)
    cells.setDataArray(((1.26,), (1.24,), (1.27,)))  # entered again: Calc rounds when a value is read
    document.calculateAll()
    shown = (outcome(checks.getCellByPosition(0, row)), outcome(checks.getCellByPosition(1, row)))
    document.setPropertyValue("CalcAsShown", False)
    results.check("known difference: under \"Precision as shown\" MEDIAN(1.26; 1.24; 1.27 shown as 0.0) is 1.3, "
                  "GPUMEDIAN the stored 1.26; equal (1.26) without it",
                  exact == (("value", 1.26), ("value", 1.26)) and shown == (("value", 1.26), ("value", 1.3)),
                  "without %r, with %r" % (exact, shown))
