#!/usr/bin/env python3
"""Shows statgpu sample workbooks: each one's statgpu formulas, their values
and what the workbook checks them against, recalculated by a headless
LibreOffice with statgpu.oxt installed.

    /usr/bin/python3 samples/show_sample.py [--oxt build/statgpu.oxt] [--profile DIR]
                                            [--open] [--all | WORKBOOK ...]

Without a workbook it shows samples/order-statistics.ods; --all shows every
sample (sample_tools.SAMPLES). A table per sheet has a row per statgpu
result or formula (an array formula once, its values as the sheet shows
them) and what the workbook checks it against:
  - a GPU* cell against Calc's own function in the column right of it
    (order-statistics.ods: MEDIAN beside GPUMEDIAN, ...): the same value,
    exactly;
  - a call of a method function (KMEANS, LTSFIT, GMMFIT, BESTSUBSET,
    IGMMFIT), alone, as IF's value when true with "" otherwise, or as
    INDEX's array at fixed positions, against the table of its Output in the workbook's report
    sheet, which the analysis dialog wrote for the same data and arguments
    (a title, `KMEANS Output "centroids"` beside it, a header row, then a
    row label and the values per row): every cell where the formula shows
    a number (to 1e-12 relative, 1e-6 where the office computes on a GPU:
    the reports were computed on the CPU) or a text, the same. One exception: the
    dialog names data sets by its first row (the report's labels) where
    the function, without them, numbers them (IGMMFIT's "data set"), so a
    whole number k agrees with the k-th name of the table's column. A call
    with other arguments than most of the workbook's calls of its function
    (those the report was made with), or with an Output the report has no
    table of, has no table to compare with; it must show no error.
Exits 1 if any result differs from its reference or is an error, or if the
method functions' formulas of a workbook compared no cell with its report.

--profile keeps the LibreOffice profile (with the extension) in DIR instead of
a throwaway one; --open then opens the workbooks in LibreOffice Calc on the
display instead of printing them. Any Python may run this: it goes on under
one that has the uno module (Debian's python3-uno belongs to /usr/bin/python3).
"""

import argparse
import collections
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "libreoffice"))
import lo_session  # noqa: E402
from sample_tools import SAMPLES, STATGPU_FUNCTION, statgpu_functions  # noqa: E402

sys.path.insert(0, os.path.join(ROOT, "addin"))
import functions as function_table  # noqa: E402

# The Calc function each GPU* function mirrors, found in the cell right of it.
MIRRORED_BUILTIN = {"GPUMEDIAN": "MEDIAN", "GPUSMALL": "SMALL", "GPULARGE": "LARGE",
                    "GPUQUANTILE": "PERCENTILE.INC"}
# The function that names the backend: printed under the table.
BACKEND_FUNCTION = "GPUINFO"
BESIDE_HEADER = ("cell", "statgpu formula", "value shown", "reference beside it", "value", "agree")
REPORT_HEADER = ("cell", "statgpu formula", "value shown", "reference", "cells compared", "agree")
ARRAY_VALUES_WIDTH = 60  # characters of an array's values in the table
FORMULA_WIDTH = 60       # characters of a formula in the table

# The method functions and the table each gives without an Output; where
# their Output argument is comes from the function table.
DEFAULT_TABLE = {"KMEANS": "centroids", "LTSFIT": "coefficients", "GMMFIT": "summary",
                 "BESTSUBSET": "subsets", "IGMMFIT": "parameters"}
OUTPUT_ARGUMENT = {function.display: [argument.name for argument in function.arguments].index("output")
                   for function in function_table.FUNCTIONS if function.display in DEFAULT_TABLE}
# A report table's title row has this beside its title (report.cxx's writeTable).
REPORT_TABLE = re.compile(r'([A-Z0-9]+) Output "([^"]+)"')
# A formula's number and the report's agree to this, relative: the report
# keeps 15 significant digits in the file. The samples' reports were computed
# on the CPU; where this office computes on a GPU, the backends agree within
# their tests' tolerances (1e-8 for the mixtures' parameters), so the check
# is to 1e-6 there (set by main from GPUINFO).
RELATIVE_TOLERANCE = 1e-12
GPU_RELATIVE_TOLERANCE = 1e-6

ReportTable = collections.namedtuple("ReportTable", "title values")
# A call of a method function in a formula: function (KMEANS, ...), its
# arguments as written, and the row and column of the table (from 0) that
# the formula's first cell shows.
MethodCall = collections.namedtuple("MethodCall", "function arguments row column")
# How a formula's cells compare with its report table: how many were
# compared, how many of those by a name (named_number), how many disagree,
# and the first of those as a line.
Comparison = collections.namedtuple("Comparison", "compared by_name differing first")


class Check:
    """A row of the table: a statgpu result or formula, its reference when
    the workbook has one (compared: it was checked against it), and whether
    they agree ("yes", "NO"), or, without a reference, whether the result
    is an error ("ERROR", else ""). in_report: the reference is a table of
    the report sheet, cells: how many cells were compared with it, and
    mismatch: the first cell that disagrees and what each shows."""

    def __init__(self, address, formula, value, reference="", reference_value="", agree="", compared=False,
                 in_report=False, cells=0, mismatch=""):
        if len(formula) > FORMULA_WIDTH:
            formula = formula[:FORMULA_WIDTH - 3] + "..."
        self.row = (address, formula, value, reference, reference_value, agree)
        self.compared = compared
        self.in_report = in_report
        self.cells = cells
        self.mismatch = mismatch
        self.failed = agree in ("NO", "ERROR")


def reference_of(sheet, cell, function):
    """The cell right of cell when it calls the Calc function that function
    mirrors, else None."""
    builtin = MIRRORED_BUILTIN.get(function)
    if builtin is None:
        return None
    position = cell.getCellAddress()
    neighbour = sheet.getCellByPosition(position.Column + 1, position.Row)
    return neighbour if builtin + "(" in neighbour.getFormula() else None


def array_of(sheet, cell):
    """The range of the array formula cell belongs to, or None for a cell
    of its own (an array of one cell counts as one)."""
    cursor = sheet.createCursorByRange(cell)
    cursor.collapseToCurrentArray()
    address = cursor.getRangeAddress()
    if (address.StartColumn, address.StartRow) == (address.EndColumn, address.EndRow):
        return None
    return sheet.getCellRangeByPosition(address.StartColumn, address.StartRow, address.EndColumn, address.EndRow)


def array_values(cell_range):
    """'rows x columns: ' and the array's values as the sheet shows them, a
    row after another; empty rows at the end are counted, not shown."""
    address = cell_range.getRangeAddress()
    rows = address.EndRow - address.StartRow + 1
    columns = address.EndColumn - address.StartColumn + 1
    shown = [" ".join(cell_range.getCellByPosition(c, r).getString() for c in range(columns)).strip()
             for r in range(rows)]
    empty = 0
    while shown and not shown[-1]:
        shown.pop()
        empty += 1
    text = "%dx%d: %s" % (rows, columns, "; ".join(shown))
    if len(text) > ARRAY_VALUES_WIDTH:
        text = text[:ARRAY_VALUES_WIDTH - 3] + "..."
    return text + (" (%d rows empty)" % empty if empty else "")


def cells_of(cell_range):
    """The cells of cell_range, row by row, as (row, column, cell); row and
    column count from 0 at its top left corner."""
    address = cell_range.getRangeAddress()
    return [(r, c, cell_range.getCellByPosition(c, r))
            for r in range(address.EndRow - address.StartRow + 1)
            for c in range(address.EndColumn - address.StartColumn + 1)]


def has_error(cell_range):
    return any(cell.getError() for _, _, cell in cells_of(cell_range))


def range_name(cell_range):
    address = cell_range.getRangeAddress()
    first = lo_session.cell_name(address.StartRow, address.StartColumn)
    last = lo_session.cell_name(address.EndRow, address.EndColumn)
    return first if first == last else "%s:%s" % (first, last)


# ---- method functions and the report's tables ------------------------------------

def report_tables(document):
    """{(function, Output word): ReportTable} of every table of the
    document's report sheets: a title row (the title, and beside it
    `KMEANS Output "centroids"`), a header row, then the table's rows (a row
    label, then the values) up to the first row without a label. values
    holds the rows' values as far as the header goes: numbers as float,
    text as str, an empty cell as ""."""
    tables = {}
    sheets = document.Sheets
    for index in range(sheets.getCount()):
        sheet = sheets.getByIndex(index)
        cursor = sheet.createCursor()
        cursor.gotoEndOfUsedArea(False)
        end = cursor.getRangeAddress()
        if end.EndColumn < 1:
            continue
        cells = sheet.getCellRangeByPosition(0, 0, end.EndColumn, end.EndRow).getDataArray()
        for row, title_row in enumerate(cells[:-1]):
            match = REPORT_TABLE.fullmatch(title_row[1]) if isinstance(title_row[1], str) else None
            if match is None:
                continue
            header = cells[row + 1]
            width = max((c for c, value in enumerate(header) if value != ""), default=0)
            values = []
            for table_row in cells[row + 2:]:
                if table_row[0] == "":
                    break
                values.append(table_row[1:width + 1])
            tables.setdefault(match.groups(), ReportTable(title_row[0], values))
    return tables


def call_arguments(text, open_index):
    """The arguments (as written, stripped) of the call whose "(" is at
    text[open_index], and the index after its ")"; None if it never closes.
    Text in quotes, nested calls and inline arrays ({1;2}) are passed over."""
    arguments, depth, quoted, start = [], 0, False, open_index + 1
    for index in range(open_index, len(text)):
        char = text[index]
        if char == '"':
            quoted = not quoted  # a doubled quote inside a text toggles twice
        elif quoted:
            continue
        elif char in "({":
            depth += 1
        elif char in ")}":
            depth -= 1
            if depth == 0:
                arguments.append(text[start:index].strip())
                return arguments, index + 1
        elif char == ";" and depth == 1:
            arguments.append(text[start:index].strip())
            start = index + 1
    return None


def whole_call(text):
    """(name, arguments) when text is one function call and nothing else."""
    match = re.match(r"([A-Za-z][A-Za-z0-9._]*)\(", text)
    parsed = call_arguments(text, match.end() - 1) if match else None
    if parsed is None or parsed[1] != len(text):
        return None
    return match.group(1).upper(), parsed[0]


def method_call(formula):
    """The MethodCall of formula (as XCell.getFormula gives it) when it
    is a call of a method function, alone, as IF's value when true with ""
    otherwise (IF(rows <= k; call; "")), or as INDEX's array at fixed
    positions (INDEX(call; 2; 1)); None for any other formula."""
    text = formula.strip()
    if text.startswith("{") and text.endswith("}"):
        text = text[1:-1]  # an array formula
    call = whole_call(text.lstrip("="))
    row = column = 0
    if call is not None and call[0] == "IF" and len(call[1]) == 3 and call[1][2] == '""':
        call = whole_call(call[1][1])
    elif call is not None and call[0] == "INDEX" and len(call[1]) == 3:
        row_text, column_text = call[1][1:]
        if not (row_text.isdigit() and column_text.isdigit()):
            return None
        # 0 takes the whole row or column.
        row, column = max(int(row_text) - 1, 0), max(int(column_text) - 1, 0)
        call = whole_call(call[1][0])
    if call is None:
        return None
    match = STATGPU_FUNCTION.fullmatch(call[0] + "(")
    if match is None or match.group(1) not in DEFAULT_TABLE:
        return None
    return MethodCall(match.group(1), call[1], row, column)


def output_word(call):
    """The table call asks for: its Output in quotes, the function's default
    table when it has none; None when Output is not a text in quotes."""
    index = OUTPUT_ARGUMENT[call.function]
    given = call.arguments[index] if index < len(call.arguments) else ""
    if not given:
        return DEFAULT_TABLE[call.function]
    if not re.fullmatch(r'"[^"]*"', given):
        return None
    return given[1:-1].strip().lower() or DEFAULT_TABLE[call.function]


def other_arguments(call):
    """call's arguments but its Output, without empty ones at the end."""
    arguments = list(call.arguments)
    index = OUTPUT_ARGUMENT[call.function]
    if index < len(arguments):
        arguments[index] = ""
    while arguments and not arguments[-1]:
        arguments.pop()
    return tuple(arguments)


def report_arguments(calls):
    """{function: its arguments but Output} that most of calls (the
    workbook's) share: the report was made for the same data and
    parameters as the workbook's formulas, so these are the report's."""
    counts = collections.Counter((call.function, other_arguments(call)) for call in calls)
    chosen = {}
    for (function, arguments), _ in counts.most_common():
        chosen.setdefault(function, arguments)
    return chosen


def differing_arguments(call, reported):
    """'Criterion ("cp")': the arguments of call that differ from reported
    (the report's, as other_arguments gives them), by their names in the
    Function Wizard, each with its value in call."""
    mine, report = other_arguments(call), reported
    size = max(len(mine), len(report))
    mine, report = mine + ("",) * (size - len(mine)), report + ("",) * (size - len(report))
    function = next(function for function in function_table.FUNCTIONS if function.display == call.function)
    return ", ".join("%s (%s)" % (function.arguments[index].display, mine[index] or "left out")
                     for index in range(size) if mine[index] != report[index])


def office_backend(office):
    """GPUINFO's text in this office: where its statgpu computes."""
    from com.sun.star.beans import PropertyValue
    hidden = PropertyValue()
    hidden.Name, hidden.Value = "Hidden", True
    document = office.desktop.loadComponentFromURL("private:factory/scalc", "_blank", 0, (hidden,))
    try:
        cell = document.getSheets().getByIndex(0).getCellByPosition(0, 0)
        cell.setFormula("=GPUINFO()")
        document.calculateAll()
        return cell.getString()
    finally:
        document.close(True)


def numbers_agree(a, b):
    return abs(a - b) <= RELATIVE_TOLERANCE * max(abs(a), abs(b))


def column_names(values, column):
    """The distinct texts of a table's column, in order: a data set's names."""
    names = []
    for row in values:
        if column < len(row) and isinstance(row[column], str) and row[column] and row[column] not in names:
            names.append(row[column])
    return names


def named_number(number, expected, values, column):
    """Whether a formula's whole number names the text expected: the
    number-th name of the report's column. The dialog names the data sets
    by its first row (IGMMFIT's "data set" column), where the function,
    given no such row, numbers them."""
    names = column_names(values, column)
    return number == int(number) and 1 <= number <= len(names) and names[int(number) - 1] == expected


def compare_with_table(cell_range, call, table):
    """The Comparison of cell_range, where call's formula shows its table,
    with the report's table: each cell that shows a number or a text and
    lies within the table."""
    from com.sun.star.sheet.FormulaResult import STRING
    compared = by_name = differing = 0
    first = ""
    address = cell_range.getRangeAddress()
    for r, c, cell in cells_of(cell_range):
        row, column = r + call.row, c + call.column
        if cell.getError() or not cell.getString() or row >= len(table.values) \
                or column >= len(table.values[row]):
            continue
        expected = table.values[row][column]
        if cell.getPropertyValue("FormulaResultType2") == STRING:
            shown = cell.getString()
            agree = shown == expected
        elif isinstance(expected, str) and expected:
            shown = cell.getValue()
            agree = named_number(shown, expected, table.values, column)
            by_name += 1 if agree else 0
        else:
            shown = cell.getValue()
            agree = expected != "" and numbers_agree(shown, expected)
        compared += 1
        if not agree:
            differing += 1
            if not first:
                first = "%s shows %r, the report's table %r (its row %d, column %d)" % (
                    lo_session.cell_name(address.StartRow + r, address.StartColumn + c), shown, expected,
                    row + 1, column + 1)
    return Comparison(compared, by_name, differing, first)


def report_check(name, formula, value, block, call, tables, arguments):
    """The Check of a method function's formula over block (its cells)."""
    error = "ERROR" if has_error(block) else ""
    word = output_word(call)
    if other_arguments(call) != arguments[call.function]:
        return Check(name, formula, value, "no table in the report: other %s" % differing_arguments(
            call, arguments[call.function]), agree=error)
    table = tables.get((call.function, word))
    if table is None:
        return Check(name, formula, value, "no table in the report", agree=error)
    reference = 'report table "%s" (%s)' % (table.title, word)
    if (call.row, call.column) != (0, 0):
        reference += ", from row %d column %d" % (call.row + 1, call.column + 1)
    result = compare_with_table(block, call, table)
    cells = "%d cell%s" % (result.compared, "" if result.compared == 1 else "s")
    if result.by_name:
        cells += " (%d by name)" % result.by_name
    mismatch = ("%s: %d of %d cells disagree; %s" % (name, result.differing, result.compared, result.first)
                if result.differing else "")
    agree = error or ("NO" if result.differing else "yes" if result.compared else "")
    return Check(name, formula, value, reference, cells, agree, compared=True, in_report=True,
                 cells=result.compared, mismatch=mismatch)


def sheet_checks(sheet, tables, arguments):
    """The rows of sheet's table, and (cell, formula, text) of its backend
    cells; tables: the report's (report_tables), arguments: the report's
    arguments of each method function (report_arguments)."""
    checks, backends, arrays_seen = [], [], set()
    for address, cell in lo_session.formula_cells(sheet):
        functions = statgpu_functions(cell.getFormula())
        if not functions:
            continue
        formula = cell.getPropertyValue("FormulaLocal")
        if functions[0] == BACKEND_FUNCTION:
            backends.append((address, formula, lo_session.shown(cell)))
            continue
        reference = reference_of(sheet, cell, functions[0])
        if reference is not None:
            same = lo_session.shown(cell) == lo_session.shown(reference)
            checks.append(Check(address, formula, lo_session.shown(cell), reference.getPropertyValue("FormulaLocal"),
                                lo_session.shown(reference), "yes" if same else "NO", compared=True))
            continue
        array = array_of(sheet, cell)
        block = array if array is not None else sheet.getCellRangeByName(address)
        name = range_name(block)
        if name in arrays_seen:
            continue
        arrays_seen.add(name)
        value = array_values(array) if array is not None else lo_session.shown(cell)
        call = method_call(cell.getFormula())
        if call is not None:
            checks.append(report_check(name, formula, value, block, call, tables, arguments))
        else:
            checks.append(Check(name, formula, value, agree="ERROR" if has_error(block) else ""))
    return checks, backends


def print_table(checks):
    beside = any(check.compared and not check.in_report for check in checks)
    header = BESIDE_HEADER if beside else REPORT_HEADER
    rows = [check.row for check in checks]
    widths = [max(len(row[i]) for row in rows + [header]) for i in range(len(header))]
    for row in [header, tuple("-" * width for width in widths)] + rows:
        print("  ".join(value.ljust(width) for value, width in zip(row, widths)).rstrip())


def workbook_calls(document):
    """The method function call of each of the document's formulas that is
    one (an array formula's cells count once)."""
    formulas = set()
    sheets = document.Sheets
    for index in range(sheets.getCount()):
        formulas.update(cell.getFormula() for _, cell in lo_session.formula_cells(sheets.getByIndex(index)))
    return [call for call in map(method_call, sorted(formulas)) if call is not None]


def show_workbook(office, path):
    """Prints the tables of the workbook at path; returns how many of its
    checks failed (a workbook without a statgpu formula fails one, and so
    does one whose method functions' formulas compared no cell with its
    report)."""
    document = office.load(path)
    all_checks, found = [], False
    try:
        document.calculateAll()
        tables = report_tables(document)
        calls = workbook_calls(document)
        arguments = report_arguments(calls)
        sheets = document.Sheets
        for index in range(sheets.getCount()):
            sheet = sheets.getByIndex(index)
            checks, backends = sheet_checks(sheet, tables, arguments)
            if not checks and not backends:
                continue
            found = True
            print("%s, sheet %s" % (os.path.basename(path), sheet.getName()))
            if checks:
                print_table(checks)
            for check in checks:
                if check.mismatch:
                    print(check.mismatch)
            for address, formula, value in backends:
                print("%s  %s  %s" % (address, formula, value))
            beside = [check for check in checks if check.compared and not check.in_report]
            if beside:
                same = sum(1 for check in beside if not check.failed)
                print("%d of %d results equal to Calc's built-in beside them" % (same, len(beside)))
            in_report = [check for check in checks if check.in_report]
            if in_report:
                same = sum(1 for check in in_report if not check.failed)
                cells = sum(check.cells for check in in_report)
                print("%d of %d statgpu formulas agree with their table in the report sheet (%d cells compared)"
                      % (same, len(in_report), cells))
            alone = [check for check in checks if not check.compared]
            if alone:
                errors = sum(1 for check in alone if check.failed)
                print("%d statgpu formulas without a reference in the workbook, %s"
                      % (len(alone), "%d showing an error" % errors if errors else "none showing an error"))
            print()
            all_checks += checks
    finally:
        document.close(True)
    if not found:
        print("%s: no statgpu formula found\n" % os.path.basename(path))
        return 1
    failed = sum(1 for check in all_checks if check.failed)
    if calls and not any(check.cells for check in all_checks):
        print("%s: no formula of a method function compared a cell with the report\n" % os.path.basename(path))
        failed += 1
    return failed


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("workbooks", nargs="*", metavar="WORKBOOK",
                        help="default: samples/order-statistics.ods")
    parser.add_argument("--all", action="store_true", help="every sample workbook")
    parser.add_argument("--oxt", default=os.path.join(ROOT, "build", "statgpu.oxt"))
    parser.add_argument("--profile", help="keep the LibreOffice profile in this folder")
    parser.add_argument("--open", action="store_true",
                        help="open the workbooks in LibreOffice Calc instead of printing them")
    args = parser.parse_args()
    if args.all and args.workbooks:
        parser.error("--all or workbooks, not both")
    if args.all:
        workbooks = [os.path.join(HERE, name) for name, _ in SAMPLES]
    else:
        workbooks = args.workbooks or [os.path.join(HERE, "order-statistics.ods")]
    lo_session.ensure_uno()
    if not os.path.exists(args.oxt):
        sys.exit("statgpu: %s not found; build it first (cmake --build build)" % args.oxt)
    if args.open and not args.profile:
        parser.error("--open needs --profile (the profile the extension is installed in)")

    failed = 0
    with lo_session.Session(profile_dir=args.profile, timeout_s=600) as office:
        office.install_extension(args.oxt)
        if args.open:
            program_dir, profile_dir = office.program_dir, office.profile_dir
        else:
            global RELATIVE_TOLERANCE
            backend = office_backend(office)
            if not backend.startswith("CPU"):
                RELATIVE_TOLERANCE = GPU_RELATIVE_TOLERANCE
            print("backend: %s; method results compared with the reports to %g relative\n"
                  % (backend, RELATIVE_TOLERANCE))
            for path in workbooks:
                failed += show_workbook(office, path)

    if args.open:
        # The office on the display, in the profile that now holds the extension.
        import uno
        soffice = os.path.join(program_dir, "soffice")
        subprocess.run([soffice, "--norestore", "-env:UserInstallation=" + uno.systemPathToFileUrl(profile_dir)]
                       + [os.path.abspath(path) for path in workbooks], check=False)
        return 0
    print("%d workbook%s: %s" % (len(workbooks), "s" if len(workbooks) > 1 else "",
                                 "%d checks failed" % failed if failed else "every check agrees"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
