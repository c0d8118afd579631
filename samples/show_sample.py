#!/usr/bin/env python3
"""Shows a statgpu sample workbook: every GPU* function cell, its formula and
value, next to the Calc built-in beside it, recalculated by a headless
LibreOffice with statgpu.oxt installed.

    /usr/bin/python3 samples/show_sample.py [--oxt build/statgpu.oxt] [--profile DIR]
                                            [--open] [samples/order-statistics.ods]

--profile keeps the LibreOffice profile (with the extension) in DIR instead of
a throwaway one; --open then opens the workbook in LibreOffice Calc on the
display instead of printing it. Any Python may run this: it goes on under one
that has the uno module (Debian's python3-uno belongs to /usr/bin/python3).
"""

import argparse
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "libreoffice"))
import lo_session  # noqa: E402

GPU_FUNCTION = re.compile(r"\bGPU[A-Z]+\(")


def function_cells(sheet):
    """Rows (cell, statgpu formula, value, Calc's formula, value, same) for the
    GPU* cells that have a Calc built-in beside them, and (cell, formula, value)
    for the others (GPUINFO)."""
    compared, others = [], []
    for address, cell in lo_session.formula_cells(sheet):
        formula = cell.getPropertyValue("FormulaLocal")
        if not GPU_FUNCTION.search(formula):
            continue
        position = cell.getCellAddress()
        neighbour = sheet.getCellByPosition(position.Column + 1, position.Row)
        if neighbour.getFormula():
            same = lo_session.shown(cell) == lo_session.shown(neighbour)
            compared.append((address, formula, lo_session.shown(cell),
                             neighbour.getPropertyValue("FormulaLocal"), lo_session.shown(neighbour),
                             "yes" if same else "NO"))
        else:
            others.append((address, formula, lo_session.shown(cell)))
    return compared, others


def print_table(rows):
    header = ("cell", "statgpu formula", "value", "Calc built-in", "value", "same")
    widths = [max(len(row[i]) for row in rows + [header]) for i in range(len(header))]
    for row in [header, tuple("-" * width for width in widths)] + rows:
        print("  ".join(value.ljust(width) for value, width in zip(row, widths)).rstrip())


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("workbook", nargs="?", default=os.path.join(HERE, "order-statistics.ods"))
    parser.add_argument("--oxt", default=os.path.join(ROOT, "build", "statgpu.oxt"))
    parser.add_argument("--profile", help="keep the LibreOffice profile in this folder")
    parser.add_argument("--open", action="store_true",
                        help="open the workbook in LibreOffice Calc instead of printing it")
    args = parser.parse_args()
    lo_session.ensure_uno()
    if not os.path.exists(args.oxt):
        sys.exit("statgpu: %s not found; build it first (cmake --build build)" % args.oxt)
    if args.open and not args.profile:
        parser.error("--open needs --profile (the profile the extension is installed in)")

    with lo_session.Session(profile_dir=args.profile, timeout_s=600) as office:
        office.install_extension(args.oxt)
        if args.open:
            program_dir, profile_dir = office.program_dir, office.profile_dir
        else:
            document = office.load(args.workbook)
            try:
                document.calculateAll()
                sheets = document.Sheets
                for index in range(sheets.getCount()):
                    sheet = sheets.getByIndex(index)
                    compared, others = function_cells(sheet)
                    if not compared and not others:
                        continue
                    print("%s, sheet %s" % (os.path.basename(args.workbook), sheet.getName()))
                    if compared:
                        print_table(compared)
                    for address, formula, value in others:
                        print("%s  %s  %s" % (address, formula, value))
                    same = sum(1 for row in compared if row[5] == "yes")
                    print("%d of %d results equal to Calc's built-in\n" % (same, len(compared)))
            finally:
                document.close(True)

    if args.open:
        # The office on the display, in the profile that now holds the extension.
        import uno
        soffice = os.path.join(program_dir, "soffice")
        subprocess.run([soffice, "--norestore", "-env:UserInstallation=" + uno.systemPathToFileUrl(profile_dir),
                        os.path.abspath(args.workbook)], check=False)


if __name__ == "__main__":
    main()
