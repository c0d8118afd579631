#!/usr/bin/env python3
"""Shows statgpu sample workbooks: each one's statgpu formulas, their values
and what the workbook checks them against, recalculated by a headless
LibreOffice with statgpu.oxt installed.

    /usr/bin/python3 samples/show_sample.py [--oxt build/statgpu.oxt] [--profile DIR]
                                            [--open] [--all | WORKBOOK ...]

Without a workbook it shows samples/order-statistics.ods; --all shows every
sample (sample_tools.SAMPLES). A table per sheet has a row per statgpu
result that has a reference beside it, and a row per statgpu formula
(an array formula once, its values as the sheet shows them) that has none.
The only references a sample holds are Calc's own functions in the column
right of a GPU* cell (order-statistics.ods: MEDIAN beside GPUMEDIAN, ...),
which must give the same value exactly; the other samples hold none, so
their reference column stays empty, and their formulas must give no error.
Exits 1 if any result differs from its reference or is an error.

--profile keeps the LibreOffice profile (with the extension) in DIR instead of
a throwaway one; --open then opens the workbooks in LibreOffice Calc on the
display instead of printing them. Any Python may run this: it goes on under
one that has the uno module (Debian's python3-uno belongs to /usr/bin/python3).
"""

import argparse
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "libreoffice"))
import lo_session  # noqa: E402
from sample_tools import SAMPLES, statgpu_functions  # noqa: E402

# The Calc function each GPU* function mirrors, found in the cell right of it.
MIRRORED_BUILTIN = {"GPUMEDIAN": "MEDIAN", "GPUSMALL": "SMALL", "GPULARGE": "LARGE",
                    "GPUQUANTILE": "PERCENTILE.INC"}
# The function that names the backend: printed under the table.
BACKEND_FUNCTION = "GPUINFO"
HEADER = ("cell", "statgpu formula", "value shown", "reference beside it", "value", "agree")
ARRAY_VALUES_WIDTH = 60  # characters of an array's values in the table


class Check:
    """A row of the table: a statgpu result or formula, its reference when
    the workbook has one, and whether they agree ("yes", "NO"), or, without
    a reference, whether the result is an error ("ERROR", else "")."""

    def __init__(self, address, formula, value, reference="", reference_value="", agree=""):
        self.row = (address, formula, value, reference, reference_value, agree)
        self.has_reference = bool(reference)
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


def has_error(cell_range):
    address = cell_range.getRangeAddress()
    return any(cell_range.getCellByPosition(c, r).getError()
               for r in range(address.EndRow - address.StartRow + 1)
               for c in range(address.EndColumn - address.StartColumn + 1))


def sheet_checks(sheet):
    """The rows of sheet's table, and (cell, formula, text) of its backend cells."""
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
                                lo_session.shown(reference), "yes" if same else "NO"))
            continue
        array = array_of(sheet, cell)
        if array is None:
            checks.append(Check(address, formula, lo_session.shown(cell), agree="ERROR" if cell.getError() else ""))
            continue
        address = array.getRangeAddress()
        name = "%s:%s" % (lo_session.cell_name(address.StartRow, address.StartColumn),
                          lo_session.cell_name(address.EndRow, address.EndColumn))
        if name in arrays_seen:
            continue
        arrays_seen.add(name)
        checks.append(Check(name, formula, array_values(array), agree="ERROR" if has_error(array) else ""))
    return checks, backends


def print_table(rows):
    widths = [max(len(row[i]) for row in rows + [HEADER]) for i in range(len(HEADER))]
    for row in [HEADER, tuple("-" * width for width in widths)] + rows:
        print("  ".join(value.ljust(width) for value, width in zip(row, widths)).rstrip())


def show_workbook(office, path):
    """Prints the tables of the workbook at path; returns how many of its
    checks failed (a workbook without a statgpu formula fails one)."""
    document = office.load(path)
    all_checks, found = [], False
    try:
        document.calculateAll()
        sheets = document.Sheets
        for index in range(sheets.getCount()):
            sheet = sheets.getByIndex(index)
            checks, backends = sheet_checks(sheet)
            if not checks and not backends:
                continue
            found = True
            print("%s, sheet %s" % (os.path.basename(path), sheet.getName()))
            if checks:
                print_table([check.row for check in checks])
            for address, formula, value in backends:
                print("%s  %s  %s" % (address, formula, value))
            compared = [check for check in checks if check.has_reference]
            if compared:
                same = sum(1 for check in compared if not check.failed)
                print("%d of %d results equal to Calc's built-in beside them" % (same, len(compared)))
            alone = [check for check in checks if not check.has_reference]
            if alone:
                errors = sum(1 for check in alone if check.failed)
                print("%d statgpu formulas without a reference beside them in the workbook, %s"
                      % (len(alone), "%d showing an error" % errors if errors else "none showing an error"))
            print()
            all_checks += checks
    finally:
        document.close(True)
    if not found:
        print("%s: no statgpu formula found\n" % os.path.basename(path))
        return 1
    return sum(1 for check in all_checks if check.failed)


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
