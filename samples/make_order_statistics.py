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

The sheet "Order statistics" after "Ozone" is the report the analysis menu's
"Median and quantiles" dialog writes for the same readings, at every p the
functions here take (sample_tools.add_dialog_report).
"""

import csv
import os

from sample_tools import HERE, SheetWriter, add_dialog_report, make_sample

CSV_FILE = os.path.join(HERE, "airquality-ozone.csv")
R_EXPORT = ('write.csv(airquality[c("Month","Day","Ozone")], "%s", row.names=FALSE, na="")')

FIRST_DATA_ROW = 5  # spreadsheet row of the first reading (1-based)
QUANTILES = (0.25, 0.5, 0.75)                      # a GPUQUANTILE each
QUANTILE_RANGE = tuple(tenth / 10 for tenth in range(11))  # one GPUQUANTILE of a range of p


def read_data():
    with open(CSV_FILE, newline="") as source:
        rows = list(csv.DictReader(source))
    return [(int(row["Month"]), int(row["Day"]), float(row["Ozone"]) if row["Ozone"] else None)
            for row in rows]


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
    for p in QUANTILES:
        writer.text("E%d" % row, "GPUQUANTILE")
        writer.value("F%d" % row, p)
        writer.formula("G%d" % row, "=GPUQUANTILE(%s;F%d)" % (ozone, row))
        writer.formula("H%d" % row, "=PERCENTILE.INC(%s;F%d)" % (ozone, row))
        row += 1
    row += 1

    block("Quantiles of a range of p", "Given a range of p, GPUQUANTILE returns an array of the same "
                                       "shape: enter it as an array formula (Ctrl+Shift+Enter).")
    first = row
    for p in QUANTILE_RANGE:
        writer.text("E%d" % row, "GPUQUANTILE")
        writer.value("F%d" % row, p)
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
    return last_row


def fill(office, document, sheet, data):
    last_row = build(SheetWriter(sheet), data)
    # The report's table: count, minimum (GPUSMALL k = 1), a quantile for
    # every p of the sheet, median and maximum (GPULARGE k = 1).
    ozone = "C%d:C%d" % (FIRST_DATA_ROW - 1, last_row)
    quantiles = "; ".join("%g" % p for p in sorted(set(QUANTILES + QUANTILE_RANGE)))
    add_dialog_report(office, document, sheet, "median", ozone,
                      {"data": ozone, "labels": True, "grouped": "columns", "quantiles": quantiles}, "A3")


def main():
    make_sample(__doc__.splitlines()[0], "order-statistics.ods", CSV_FILE, R_EXPORT, read_data,
                "Ozone", "statgpu order statistics", fill, "readings")


if __name__ == "__main__":
    main()
