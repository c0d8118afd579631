#!/usr/bin/env python3
"""Makes samples/order-statistics.ods: the statgpu order-statistics functions
next to Calc's own, on the ozone readings of R's airquality data set.

    /usr/bin/python3 samples/make_order_statistics.py [--oxt build/statgpu.oxt]
                                                      [--output samples/order-statistics.ods]
                                                      [--from-r]

The data, samples/airquality-ozone.csv, are New York's daily ozone readings
(ppb) from May to September 1973, 37 of the 153 days without a reading; the
workbook leaves those cells empty, and every function skips them as Calc's
MEDIAN does. The CSV was written by R (--from-r runs this again):

    Rscript -e 'write.csv(airquality[c("Month","Day","Ozone")],
                "samples/airquality-ozone.csv", row.names=FALSE, na="")'

A headless LibreOffice with statgpu.oxt installed (in a throwaway profile)
builds the workbook, so the formulas are compiled against the add-in and the
file stores them under the add-in's programmatic names (service and method,
upper-cased: ORG.STATGPU.STATGPU.GPUMEDIAN), which is how ODF names add-in
functions.
"""

import argparse
import csv
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "libreoffice"))
import lo_session  # noqa: E402

CSV_FILE = os.path.join(HERE, "airquality-ozone.csv")
R_EXPORT = ('write.csv(airquality[c("Month","Day","Ozone")], "%s", row.names=FALSE, na="")')

FIRST_DATA_ROW = 5  # spreadsheet row of the first reading (1-based)
BOLD = 150.0        # com.sun.star.awt.FontWeight.BOLD


def read_data():
    with open(CSV_FILE, newline="") as source:
        rows = list(csv.DictReader(source))
    return [(int(row["Month"]), int(row["Day"]), float(row["Ozone"]) if row["Ozone"] else None)
            for row in rows]


class SheetWriter:
    """Writes a sheet a row at a time; rows are 1-based as Calc shows them."""

    def __init__(self, sheet):
        self.sheet = sheet

    def cell(self, address):
        return self.sheet.getCellRangeByName(address)

    def text(self, address, text, bold=False):
        cell = self.cell(address)
        cell.setString(text)
        if bold:
            cell.setPropertyValue("CharWeight", BOLD)

    def value(self, address, number):
        self.cell(address).setValue(number)

    def formula(self, address, formula):
        self.cell(address).setFormula(formula)


def build(writer, data):
    last_row = FIRST_DATA_ROW + len(data) - 1
    ozone = "$C$%d:$C$%d" % (FIRST_DATA_ROW, last_row)
    missing = sum(1 for _, _, value in data if value is None)

    writer.text("A1", "statgpu order statistics: GPU* functions next to Calc's own", bold=True)
    writer.text("A2", "Data: daily ozone (ppb) in New York, May to September 1973 "
                      "(R datasets::airquality); %d days without a reading are empty cells." % missing)
    for column, heading in zip("ABC", ("Month", "Day", "Ozone (ppb)")):
        writer.text("%s4" % column, heading, bold=True)
    rows = tuple((month, day, value if value is not None else "") for month, day, value in data)
    writer.sheet.getCellRangeByName("A%d:C%d" % (FIRST_DATA_ROW, last_row)).setDataArray(rows)
    for column, heading in zip("EFGH", ("Function", "k or p", "statgpu", "Calc built-in")):
        writer.text("%s4" % column, heading, bold=True)

    row = 5

    def block(title, explanation):
        nonlocal row
        writer.text("E%d" % row, title, bold=True)
        writer.text("E%d" % (row + 1), explanation)
        row += 2

    block("Median", "GPUMEDIAN returns exactly what MEDIAN returns; both skip the empty cells "
                    "of the days without a reading.")
    writer.text("E%d" % row, "GPUMEDIAN")
    writer.formula("G%d" % row, "=GPUMEDIAN(%s)" % ozone)
    writer.formula("H%d" % row, "=MEDIAN(%s)" % ozone)
    row += 2

    for name, builtin, explanation in (
            ("GPUSMALL", "SMALL", "GPUSMALL(Data; k) is the k-th smallest reading, as SMALL; "
                                  "k outside 1..count gives #VALUE!, as in Calc."),
            ("GPULARGE", "LARGE", "GPULARGE(Data; k) is the k-th largest reading, the (n-k+1)-th "
                                  "smallest, as LARGE.")):
        block("k-th %s" % ("smallest" if name == "GPUSMALL" else "largest"), explanation)
        for k in (1, 2, 5, 10):
            writer.text("E%d" % row, name)
            writer.value("F%d" % row, k)
            writer.formula("G%d" % row, "=%s(%s;F%d)" % (name, ozone, row))
            writer.formula("H%d" % row, "=%s(%s;F%d)" % (builtin, ozone, row))
            row += 1
        row += 1

    block("Quantiles", "GPUQUANTILE(Data; p) interpolates between order statistics exactly as "
                       "PERCENTILE.INC (R's quantile type 7).")
    for p in (0.25, 0.5, 0.75):
        writer.text("E%d" % row, "GPUQUANTILE")
        writer.value("F%d" % row, p)
        writer.formula("G%d" % row, "=GPUQUANTILE(%s;F%d)" % (ozone, row))
        writer.formula("H%d" % row, "=PERCENTILE.INC(%s;F%d)" % (ozone, row))
        row += 1
    row += 1

    block("Quantiles of a range of p", "Given a range of p, GPUQUANTILE returns an array of the same "
                                       "shape: enter it as an array formula (Ctrl+Shift+Enter).")
    first = row
    for tenth in range(11):
        writer.text("E%d" % row, "GPUQUANTILE")
        writer.value("F%d" % row, tenth / 10)
        row += 1
    p_range = "F%d:F%d" % (first, row - 1)
    writer.sheet.getCellRangeByName("G%d:G%d" % (first, row - 1)).setArrayFormula(
        "=GPUQUANTILE(%s;%s)" % (ozone, p_range))
    writer.sheet.getCellRangeByName("H%d:H%d" % (first, row - 1)).setArrayFormula(
        "=PERCENTILE.INC(%s;%s)" % (ozone, p_range))
    row += 1

    block("Backend", "GPUINFO() names what computes the GPU* functions: a CUDA GPU, or the CPU "
                     "threads and why CUDA is not used.")
    writer.text("E%d" % row, "GPUINFO")
    writer.formula("G%d" % row, "=GPUINFO()")

    columns = writer.sheet.getColumns()
    for index, width_mm in ((0, 16), (1, 12), (2, 24), (3, 6), (4, 34), (5, 16), (6, 28), (7, 28)):
        columns.getByIndex(index).setPropertyValue("Width", width_mm * 100)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--oxt", default=os.path.join(ROOT, "build", "statgpu.oxt"),
                        help="the built extension (default: build/statgpu.oxt)")
    parser.add_argument("--output", default=os.path.join(HERE, "order-statistics.ods"))
    parser.add_argument("--from-r", action="store_true",
                        help="export the data from R's datasets package again first")
    args = parser.parse_args()
    lo_session.ensure_uno()

    if args.from_r:
        subprocess.run(["Rscript", "-e", R_EXPORT % CSV_FILE], check=True)
    data = read_data()

    # Calc recalculates add-in cells whenever the workbook is opened. The results
    # stored in the file come from the CPU backend, whose GPUINFO text names no
    # folder of the machine that made the file.
    os.environ["STATGPU_BACKEND"] = "cpu"
    with lo_session.Session(timeout_s=600) as office:
        office.install_extension(args.oxt)
        document = office.new_spreadsheet()
        try:
            sheet = document.Sheets.getByIndex(0)
            sheet.setName("Order statistics")
            document.getDocumentProperties().Title = "statgpu order statistics"
            build(SheetWriter(sheet), data)
            document.calculateAll()
            office.store(document, args.output)
        finally:
            document.close(True)
    print("wrote %s (%d readings)" % (os.path.relpath(args.output), len(data)))


if __name__ == "__main__":
    main()
