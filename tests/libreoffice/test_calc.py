#!/usr/bin/env python3
"""The LibreOffice test: a real headless LibreOffice with statgpu.oxt installed
in a throwaway profile computes every GPU* function, and each result must equal
Calc's own built-in on the same cells, exactly (IEEE equality), errors included.

    test_calc.py --oxt build/statgpu.oxt --source-dir . [--timeout 600]

Two workbooks: the sample samples/order-statistics.ods, where each GPU* cell
has its built-in in the next column, and one built here with the awkward
cases: blanks, text, booleans and negative numbers mixed in, a single cell,
10^5 cells, arrays of p, and the bad inputs (an empty range, k = 0, k > n,
p = 2, a range of text only, a range holding an error cell). calc_range_rules.py
gives the order statistics their Data in every form a formula can (hidden and
filtered rows, another sheet, a whole column, inline arrays, expressions) and
changes cells of it afterwards, against the built-ins again. KMEANS has no
built-in to mirror: calc_kmeans.py checks it against R's kmeans, on the
sample samples/kmeans.ods and a workbook of its own cases; calc_lts.py checks
LTSFIT against R's robustbase::ltsReg, on samples/lts.ods and its own cases;
calc_gmm.py checks GMMFIT on samples/gmm.ods (k chosen by BIC, mclust's
optimum) and its own cases; calc_igmm.py IGMMFIT on samples/igmm.ods
(simulated subjects, a histogram with the fitted density) and its own cases;
calc_bestsubset.py BESTSUBSET against R's leaps::regsubsets and lm on
samples/bestsubset.ods (the Motor Trend cars, the validation error against
the size) and its own cases. calc_dialogs.py checks the analysis menu: every
entry dispatched, each dialog filled and run, its report sheet against the
cell functions (and Calc's built-ins for the order statistics), live
formulas, results to a cell or a new document, invalid fields, undo and stop.

Prints one line per check and a summary 'N passed, M failed'; exits 1 on a
failure. The office is ended at the end in every case, and after --timeout
seconds at the latest.
"""

import argparse
import os
import random
import re
import sys
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import calc_bestsubset  # noqa: E402
import calc_dialogs  # noqa: E402
import calc_edge_cases  # noqa: E402
import calc_gmm  # noqa: E402
import calc_gui  # noqa: E402
import calc_igmm  # noqa: E402
import calc_kmeans  # noqa: E402
import calc_locale  # noqa: E402
import calc_lts  # noqa: E402
import calc_range_rules  # noqa: E402
import lo_session  # noqa: E402

GPU_FUNCTION = re.compile(r"\bGPU([A-Z]+)\(")
BUILTIN_OF = {"MEDIAN": "MEDIAN", "SMALL": "SMALL", "LARGE": "LARGE", "QUANTILE": "PERCENTILE.INC"}

# Calc's error codes (formula/errorcodes.hxx) that these cases meet.
ILLEGAL_ARGUMENT = 502    # Err:502
ILLEGAL_PARAMETER = 504   # Err:504: what Calc gives an add-in range holding an error cell
NO_VALUE = 519            # #VALUE!


class Results:
    def __init__(self):
        self.passed = 0
        self.failed = 0
        self.skipped = 0

    def check(self, name, ok, detail=""):
        if ok:
            self.passed += 1
        else:
            self.failed += 1
        print("%s  %s%s" % ("ok  " if ok else "FAIL", name, ("  (%s)" % detail) if detail else ""))

    def skip(self, name, why):
        self.skipped += 1
        print("skip  %s  (%s)" % (name, why))

    def summary(self):
        return "%d passed, %d failed" % (self.passed, self.failed) + (
            ", %d skipped" % self.skipped if self.skipped else "")


def outcome(cell):
    """('error', code) or ('value', number) or ('text', string) of a formula cell."""
    error = cell.getError()
    if error:
        return ("error", error)
    value = lo_session.shown(cell)
    return ("value", cell.getValue()) if value == repr(cell.getValue()) else ("text", value)


def compare(results, name, gpu_cell, builtin_cell, expected_error=None):
    """A GPU* cell must give exactly what the built-in gives; where the input is
    bad, it must give statgpu's error (DESIGN's bad-input policy: Err:502 for no
    numbers and for k or p out of range) while the built-in gives an error too
    (Calc 7.4 shows #VALUE! for some of these)."""
    gpu, builtin = outcome(gpu_cell), outcome(builtin_cell)
    detail = "statgpu %s, Calc %s" % (lo_session.shown(gpu_cell), lo_session.shown(builtin_cell))
    if expected_error is None:
        ok = gpu == builtin
    else:
        ok = gpu == ("error", expected_error) and builtin[0] == "error"
    results.check(name, ok, detail)


# ---- the sample workbook -----------------------------------------------------------

def check_sample(results, document):
    seen = set()
    for sheet_index in range(document.Sheets.getCount()):
        sheet = document.Sheets.getByIndex(sheet_index)
        for address, cell in lo_session.formula_cells(sheet):
            formula = cell.getPropertyValue("FormulaLocal")
            match = GPU_FUNCTION.search(formula)
            if not match:
                continue
            function = match.group(1)
            seen.add(function)
            name = "sample %s %s" % (address, formula)
            if function == "INFO":
                text = cell.getString()
                results.check(name, "CPU" in text or "CUDA" in text, text)
                continue
            position = cell.getCellAddress()
            neighbour = sheet.getCellByPosition(position.Column + 1, position.Row)
            builtin = neighbour.getPropertyValue("FormulaLocal")
            if BUILTIN_OF.get(function, "?") + "(" not in builtin:
                results.check(name, False, "the next cell holds %r, not %s" % (builtin, BUILTIN_OF.get(function)))
                continue
            compare(results, name, cell, neighbour)
    results.check("sample has GPUMEDIAN, GPUSMALL, GPULARGE, GPUQUANTILE and GPUINFO cells",
                  seen >= {"MEDIAN", "SMALL", "LARGE", "QUANTILE", "INFO"}, ", ".join(sorted(seen)))


# ---- the Function Wizard -------------------------------------------------------------

def check_function_wizard(results, office, source_dir):
    """Calc's function list (what the Function Wizard shows) has each function
    of the table with its category, description and arguments."""
    import uno
    sys.path.insert(0, os.path.join(source_dir, "addin"))
    import functions as table
    descriptions = office.context.ServiceManager.createInstanceWithContext(
        "com.sun.star.sheet.FunctionDescriptions", office.context)
    listed = {}
    for index in range(descriptions.getCount()):
        properties = {item.Name: item.Value for item in descriptions.getByIndex(index)}
        listed[properties["Name"]] = properties
    category = uno.getConstantByName("com.sun.star.sheet.FunctionCategory." + table.CATEGORY.upper())
    for function in table.FUNCTIONS:
        properties = listed.get(function.display, {})
        arguments = [(argument.Name, argument.Description) for argument in (properties.get("Arguments") or ())]
        expected = (category, function.description, [(a.display, a.description) for a in function.arguments])
        found = (properties.get("Category"), properties.get("Description"), arguments)
        results.check("Function Wizard lists %s as the table says" % function.display, found == expected,
                      "" if found == expected else "found %r" % (found,))
        # Calc makes an argument optional by its type ('any', or the last
        # 'sequence< any >' of further arguments); a range never is.
        optional = [bool(argument.IsOptional) for argument in (properties.get("Arguments") or ())]
        expected_optional = [a.type in ("any", "sequence< any >") for a in function.arguments]
        results.check("Function Wizard marks %s's optional arguments (%s) and no description says \"Optional\""
                      % (function.display, ", ".join(a.display for a, o in zip(function.arguments, expected_optional)
                                                     if o) or "none"),
                      optional == expected_optional
                      and not any(a.description.lower().startswith("optional") for a in function.arguments),
                      "IsOptional %r" % optional)
    quantile_p = [argument for argument in (listed.get("GPUQUANTILE", {}).get("Arguments") or ())
                  if argument.Name == "p"]
    results.check("GPUQUANTILE's p is not optional in the Function Wizard, as PERCENTILE.INC's is not",
                  len(quantile_p) == 1 and not quantile_p[0].IsOptional)


# ---- the workbook of awkward cases -----------------------------------------------------

LARGE_COUNT = 100000


def fill(sheet, results):
    """Writes the data of the cases; returns nothing. Columns:
    A mixed: numbers, blanks, text, booleans, negatives, zeros;
    B a single number; C text only; D empty; E a range with =1/0;
    F 10^5 random numbers, every 1000th cell blank; H:L and H3:J4 ranges of p."""
    mixed = [3, "", "text", -2.5, 7, "", -10, 0, 4.25, "x", 0.001, 7, -0.0, "", 12]
    sheet.getCellRangeByName("A1:A%d" % len(mixed)).setDataArray(tuple((v,) for v in mixed))
    sheet.getCellRangeByName("A16").setFormula("=TRUE()")  # a boolean cell: the number 1 in Calc
    sheet.getCellRangeByName("A17").setFormula("=\"\"")    # a formula giving empty text: skipped
    sheet.getCellRangeByName("B1").setValue(42.5)
    sheet.getCellRangeByName("C1:C3").setDataArray((("a",), ("b",), ("c",)))
    sheet.getCellRangeByName("E1:E2").setDataArray(((1,), (2,)))
    sheet.getCellRangeByName("E3").setFormula("=1/0")
    generator = random.Random(20240501)
    large = tuple(("",) if i % 1000 == 999 else (generator.uniform(-1e6, 1e6),) for i in range(LARGE_COUNT))
    sheet.getCellRangeByName("F1:F%d" % LARGE_COUNT).setDataArray(large)
    sheet.getCellRangeByName("H1:L1").setDataArray(((0, 0.05, 0.5, 0.95, 1),))
    sheet.getCellRangeByName("H3:J4").setDataArray(((0.1, 0.2, 0.3), (0.7, 0.8, 0.9)))


# (name, statgpu formula, built-in formula, expected error or None). Rows go
# from 1 in columns N (statgpu) and O (built-in).
MIXED = "$A$1:$A$17"
LARGE = "$F$1:$F$%d" % LARGE_COUNT
CASES = [
    ("median with blanks, text, booleans, negatives", "=GPUMEDIAN(%s)" % MIXED, "=MEDIAN(%s)" % MIXED, None),
    ("smallest, k=1", "=GPUSMALL(%s;1)" % MIXED, "=SMALL(%s;1)" % MIXED, None),
    ("k-th smallest, k=4", "=GPUSMALL(%s;4)" % MIXED, "=SMALL(%s;4)" % MIXED, None),
    ("k-th smallest, k=n", "=GPUSMALL(%s;COUNT(%s))" % (MIXED, MIXED),
     "=SMALL(%s;COUNT(%s))" % (MIXED, MIXED), None),
    ("k-th smallest, k=2.9 rounds down", "=GPUSMALL(%s;2.9)" % MIXED, "=SMALL(%s;2.9)" % MIXED, None),
    ("largest, k=1", "=GPULARGE(%s;1)" % MIXED, "=LARGE(%s;1)" % MIXED, None),
    ("k-th largest with ties, k=2", "=GPULARGE(%s;2)" % MIXED, "=LARGE(%s;2)" % MIXED, None),
    ("k-th largest, k=n", "=GPULARGE(%s;COUNT(%s))" % (MIXED, MIXED),
     "=LARGE(%s;COUNT(%s))" % (MIXED, MIXED), None),
    ("quantile p=0.3", "=GPUQUANTILE(%s;0.3)" % MIXED, "=PERCENTILE.INC(%s;0.3)" % MIXED, None),
    ("quantile p=0", "=GPUQUANTILE(%s;0)" % MIXED, "=PERCENTILE.INC(%s;0)" % MIXED, None),
    ("quantile p=1", "=GPUQUANTILE(%s;1)" % MIXED, "=PERCENTILE.INC(%s;1)" % MIXED, None),
    ("quantile, p an empty cell (0)", "=GPUQUANTILE(%s;D1)" % MIXED, "=PERCENTILE.INC(%s;D1)" % MIXED, None),
    ("median of a single cell", "=GPUMEDIAN(B1)", "=MEDIAN(B1)", None),
    ("smallest of a single cell", "=GPUSMALL(B1;1)", "=SMALL(B1;1)", None),
    ("largest of a single cell", "=GPULARGE(B1;1)", "=LARGE(B1;1)", None),
    ("quantile of a single cell", "=GPUQUANTILE(B1;0.7)", "=PERCENTILE.INC(B1;0.7)", None),
    ("median of an inline array", "=GPUMEDIAN({5;1;4;2})", "=MEDIAN({5;1;4;2})", None),
    ("median of 10^5 cells", "=GPUMEDIAN(%s)" % LARGE, "=MEDIAN(%s)" % LARGE, None),
    ("k-th smallest of 10^5 cells", "=GPUSMALL(%s;12345)" % LARGE, "=SMALL(%s;12345)" % LARGE, None),
    ("k-th largest of 10^5 cells", "=GPULARGE(%s;777)" % LARGE, "=LARGE(%s;777)" % LARGE, None),
    ("quantile p=0.9 of 10^5 cells", "=GPUQUANTILE(%s;0.9)" % LARGE, "=PERCENTILE.INC(%s;0.9)" % LARGE, None),
    ("quantile p=0.123456789 of 10^5 cells", "=GPUQUANTILE(%s;0.123456789)" % LARGE,
     "=PERCENTILE.INC(%s;0.123456789)" % LARGE, None),
    # Bad input: statgpu's Err:502 (invalid argument) for no numbers and for k
    # or p out of range, where the built-in errs too (Calc 7.4: #VALUE! for no
    # numbers and for k outside 1..n, Err:502 for p outside [0,1]).
    ("empty range", "=GPUMEDIAN(D1:D5)", "=MEDIAN(D1:D5)", ILLEGAL_ARGUMENT),
    ("k=0", "=GPUSMALL(%s;0)" % MIXED, "=SMALL(%s;0)" % MIXED, ILLEGAL_ARGUMENT),
    ("k<0 for LARGE", "=GPULARGE(%s;-1)" % MIXED, "=LARGE(%s;-1)" % MIXED, ILLEGAL_ARGUMENT),
    ("k>n for SMALL", "=GPUSMALL(%s;100)" % MIXED, "=SMALL(%s;100)" % MIXED, ILLEGAL_ARGUMENT),
    ("k>n for LARGE", "=GPULARGE(%s;100)" % MIXED, "=LARGE(%s;100)" % MIXED, ILLEGAL_ARGUMENT),
    ("p=2", "=GPUQUANTILE(%s;2)" % MIXED, "=PERCENTILE.INC(%s;2)" % MIXED, ILLEGAL_ARGUMENT),
    ("p=-0.1", "=GPUQUANTILE(%s;-0.1)" % MIXED, "=PERCENTILE.INC(%s;-0.1)" % MIXED, ILLEGAL_ARGUMENT),
    ("p=2 on an empty range (p is checked first)", "=GPUQUANTILE(D1:D5;2)", "=PERCENTILE.INC(D1:D5;2)",
     ILLEGAL_ARGUMENT),
    ("p given as text", "=GPUQUANTILE(%s;\"half\")" % MIXED, "=PERCENTILE.INC(%s;\"half\")" % MIXED, NO_VALUE),
    ("median of text only", "=GPUMEDIAN(C1:C3)", "=MEDIAN(C1:C3)", ILLEGAL_ARGUMENT),
    ("k-th smallest of text only", "=GPUSMALL(C1:C3;1)", "=SMALL(C1:C3;1)", ILLEGAL_ARGUMENT),
    ("quantile of text only", "=GPUQUANTILE(C1:C3;0.5)", "=PERCENTILE.INC(C1:C3;0.5)", ILLEGAL_ARGUMENT),
]

# Array formulas: (name, statgpu, built-in, shape of the p range as (rows, columns)).
ARRAY_CASES = [
    ("quantiles of a row of p", "=GPUQUANTILE(%s;H1:L1)" % LARGE, "=PERCENTILE.INC(%s;H1:L1)" % LARGE, (1, 5)),
    ("quantiles of a 2x3 block of p", "=GPUQUANTILE(%s;H3:J4)" % MIXED, "=PERCENTILE.INC(%s;H3:J4)" % MIXED,
     (2, 3)),
    ("quantiles of an inline array of p", "=GPUQUANTILE(%s;{0.25;0.5;0.75})" % MIXED,
     "=PERCENTILE.INC(%s;{0.25;0.5;0.75})" % MIXED, (1, 3)),
]


def check_cases(results, office):
    document = office.new_spreadsheet()
    try:
        sheet = document.Sheets.getByIndex(0)
        fill(sheet, results)
        for row, (_, gpu, builtin, _) in enumerate(CASES):
            sheet.getCellByPosition(13, row).setFormula(gpu)
            sheet.getCellByPosition(14, row).setFormula(builtin)
        error_row = len(CASES)
        sheet.getCellByPosition(13, error_row).setFormula("=GPUMEDIAN(E1:E3)")
        sheet.getCellByPosition(14, error_row).setFormula("=MEDIAN(E1:E3)")
        omitted_row = error_row + 1
        sheet.getCellByPosition(13, omitted_row).setFormula("=GPUQUANTILE(%s)" % MIXED)
        info_row = omitted_row + 1
        sheet.getCellByPosition(13, info_row).setFormula("=GPUINFO()")
        array_row = info_row + 2
        placed = []
        for name, gpu, builtin, (rows, columns) in ARRAY_CASES:
            gpu_range = sheet.getCellRangeByPosition(13, array_row, 13 + columns - 1, array_row + rows - 1)
            builtin_range = sheet.getCellRangeByPosition(13, array_row + rows, 13 + columns - 1,
                                                         array_row + 2 * rows - 1)
            gpu_range.setArrayFormula(gpu)
            builtin_range.setArrayFormula(builtin)
            placed.append((name, gpu_range, builtin_range, rows, columns))
            array_row += 2 * rows + 1

        started = time.monotonic()
        document.calculateAll()
        print("recalculated the case workbook in %.2f s" % (time.monotonic() - started))

        for row, (name, gpu, builtin, expected_error) in enumerate(CASES):
            compare(results, "%s: %s" % (name, gpu.replace(LARGE, "F1:F%d" % LARGE_COUNT)),
                    sheet.getCellByPosition(13, row), sheet.getCellByPosition(14, row), expected_error)

        # A range holding an error cell: Calc does not call an add-in with it and
        # answers Err:504 itself; its own MEDIAN passes the cell's error on.
        gpu_cell, builtin_cell = sheet.getCellByPosition(13, error_row), sheet.getCellByPosition(14, error_row)
        results.check("range holding =1/0: =GPUMEDIAN(E1:E3) is Calc's Err:504, MEDIAN gives an error too",
                      gpu_cell.getError() == ILLEGAL_PARAMETER and builtin_cell.getError() != 0,
                      "statgpu %s, Calc %s" % (lo_session.shown(gpu_cell), lo_session.shown(builtin_cell)))

        # p is a required argument: Calc itself refuses the call without it
        # (Err:504 for an add-in, where PERCENTILE.INC shows Err:511).
        omitted = sheet.getCellByPosition(13, omitted_row)
        results.check("p left out: =GPUQUANTILE(%s) is Calc's error for a missing argument (Err:504)" % MIXED,
                      omitted.getError() == ILLEGAL_PARAMETER, lo_session.shown(omitted))

        info = sheet.getCellByPosition(13, info_row).getString()
        results.check("GPUINFO() names the backend", info.startswith("CPU") or info.startswith("CUDA"), info)

        for name, gpu_range, builtin_range, rows, columns in placed:
            all_equal = True
            shown = []
            for r in range(rows):
                for c in range(columns):
                    gpu_cell, builtin_cell = gpu_range.getCellByPosition(c, r), builtin_range.getCellByPosition(c, r)
                    all_equal = all_equal and outcome(gpu_cell) == outcome(builtin_cell) \
                        and outcome(gpu_cell)[0] == "value"
                    shown.append("%s=%s" % (lo_session.shown(gpu_cell), lo_session.shown(builtin_cell)))
            results.check("%s (%dx%d array)" % (name, rows, columns), all_equal, " ".join(shown))
    finally:
        document.close(True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--oxt", required=True, help="the built statgpu.oxt")
    parser.add_argument("--source-dir", required=True, help="the source tree (for samples/)")
    parser.add_argument("--program-dir", help="LibreOffice's program/ folder (found when omitted)")
    parser.add_argument("--timeout", type=float, default=600, help="seconds before the office is ended")
    args = parser.parse_args()
    lo_session.ensure_uno(missing_exit_code=1)

    results = Results()
    sample = os.path.join(args.source_dir, "samples", "order-statistics.ods")
    try:
        with lo_session.Session(program_dir=args.program_dir, timeout_s=args.timeout) as office:
            office.install_extension(args.oxt)
            results.check("statgpu.oxt installed and the office restarted", True)
            check_function_wizard(results, office, args.source_dir)
            document = office.load(sample)
            try:
                document.calculateAll()
                check_sample(results, document)
            finally:
                document.close(True)
            check_cases(results, office)
            calc_range_rules.check(results, office, args.source_dir)
            calc_kmeans.check(results, office, args.source_dir)
            calc_lts.check(results, office, args.source_dir)
            calc_edge_cases.check(results, office, args.source_dir)
            calc_gmm.check(results, office, args.source_dir)
            calc_igmm.check(results, office, args.source_dir)
            calc_bestsubset.check(results, office, args.source_dir)
            calc_dialogs.check(results, office, args.source_dir)
            calc_locale.check(results, office, args.source_dir)  # last: it restarts the office in de-DE
    except Exception:  # an office that died or timed out: a failure, then the summary
        traceback.print_exc()
        results.check("the LibreOffice session ran to the end", False)
    try:
        calc_gui.check(results, args.oxt, args.program_dir, args.timeout)  # an office with windows of its own
    except Exception:
        traceback.print_exc()
        results.check("the LibreOffice session with windows ran to the end", False)
    print(results.summary())
    return 1 if results.failed else 0


if __name__ == "__main__":
    sys.exit(main())
