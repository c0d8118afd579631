#!/usr/bin/env python3
"""Makes samples/lts.ods: LTSFIT on Brownlee's stack loss data (R's stackloss
data set): least squares (Calc's LINEST) next to least trimmed squares, the
0/1 weight and the residual of every observation with the outliers
highlighted, a summary, and a residual plot.

    /usr/bin/python3 samples/make_lts.py [--oxt build/statgpu.oxt]
                                         [--output samples/lts.ods] [--from-r]

The data, samples/stackloss.csv, are 21 days of operation of a plant that
oxidises ammonia to nitric acid: the air flow, the cooling water's inlet
temperature, the acid concentration, and the stack loss (ammonia lost, the
response). The CSV was written by R (--from-r runs this again):

    Rscript -e 'write.csv(stackloss, "samples/stackloss.csv", row.names=FALSE)'

Least squares is pulled by observations 1, 3, 4 and 21; LTSFIT fits the
other days and flags those four (weight 0), as R's robustbase::ltsReg does.

A headless LibreOffice with statgpu.oxt installed (in a throwaway profile)
builds the workbook, as samples/make_kmeans.py does, with the helpers of
samples/sample_tools.py. The plot has one series for the observations the fit keeps and one
for the outliers: helper columns show a residual only where the weight says
so, and #N/A elsewhere, which the chart leaves out.

The sheet "Robust regression" is the report the analysis menu's LTS dialog
writes for the same Y, X and defaults (sample_tools.add_dialog_report).
"""

import csv
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import make_kmeans  # noqa: E402
from sample_tools import SheetWriter, XYChart, add_dialog_report, column_letter, make_sample  # noqa: E402

CSV_FILE = os.path.join(HERE, "stackloss.csv")
R_EXPORT = 'write.csv(stackloss, "%s", row.names=FALSE)'

SHEET_NAME = "Regression"
FIRST_DATA_ROW = 5          # spreadsheet row of the first observation (1-based)
PREDICTORS = ("Air flow", "Water temp.", "Acid conc.")
RESPONSE = "Stack loss"
OUTLIER_STYLE = "statgpu outlier"
OUTLIER_BACKGROUND = 0xFFC7CE   # light red
OUTLIER_TEXT = 0x9C0006         # dark red
KEPT_COLOUR = 0x1F77B4
OUTLIER_COLOUR = 0xD62728
BAND_COLOUR = 0x7F7F7F
# The cutoff on |residual / scale| beyond which LTSFIT gives weight 0:
# robustbase's qnorm(0.9875).
CUTOFF = "NORMSINV(0.9875)"


def read_data():
    with open(CSV_FILE, newline="") as source:
        return [(float(row["Air.Flow"]), float(row["Water.Temp"]), float(row["Acid.Conc."]),
                 float(row["stack.loss"])) for row in csv.DictReader(source)]


class Layout:
    """Where the blocks go; the chart's data ranges are read from here."""

    def __init__(self, count):
        first, last = FIRST_DATA_ROW, FIRST_DATA_ROW + count - 1
        self.first_row, self.last_row = first, last
        self.x = "$B$%d:$D$%d" % (first, last)
        self.y = "$E$%d:$E$%d" % (first, last)
        self.weights = "F%d:F%d" % (first, last)
        self.residuals = "G%d:G%d" % (first, last)
        self.scale_cell = None   # the summary's scale, set by build()
        self.band_rows = None    # (first, last) of the cutoff band's two points
        self.band_title_row = None


def build(writer, data):
    layout = Layout(len(data))
    lts = "LTSFIT(%s;%s" % (layout.y, layout.x)
    first, last = layout.first_row, layout.last_row

    writer.text("A1", "statgpu robust regression: LTSFIT on the stack loss data", bold=True)
    writer.text("A2", "Data: %d days of a plant oxidising ammonia to nitric acid (R datasets::stackloss): "
                      "the stack loss (ammonia lost) against air flow, water temperature and acid "
                      "concentration." % len(data))
    writer.text("A3", "LTSFIT(Y; X; Alpha; Output; Intercept; Seed) is an array formula: select a range of the "
                      "result's size, type the formula, press Ctrl+Shift+Enter.")
    headings = ["Day"] + list(PREDICTORS) + [RESPONSE, "LTS weight", "LTS residual", "Residual, kept",
                                             "Residual, outlier"]
    for index, heading in enumerate(headings):
        writer.text("%s4" % column_letter(index), heading, bold=True)
    writer.sheet.getCellRangeByName("A%d:E%d" % (first, last)).setDataArray(
        tuple((float(day + 1),) + row for day, row in enumerate(data)))
    writer.array_formula(layout.weights, '=%s;;"weights")' % lts)
    writer.array_formula(layout.residuals, '=%s;;"residuals")' % lts)
    for row in range(first, last + 1):
        writer.formula("H%d" % row, "=IF($F%d=1;$G%d;NA())" % (row, row))
        writer.formula("I%d" % row, "=IF($F%d=0;$G%d;NA())" % (row, row))

    row = FIRST_DATA_ROW
    shown_y, shown_x = layout.y.replace("$", ""), layout.x.replace("$", "")

    def block(title, *lines):
        """A bold title and its lines of explanation; returns the title's row."""
        nonlocal row
        title_row = row
        row = writer.block("K", row, title, lines)
        return title_row

    block("Coefficients: least squares against least trimmed squares",
          "LINEST(%s; %s) fits every day, outliers included; =LTSFIT(%s; %s) fits the half of the days that "
          "agree best," % (shown_y, shown_x, shown_y, shown_x),
          "then refits on every day it does not flag. LINEST lists its coefficients last predictor first; "
          "INDEX puts them in LTSFIT's order.")
    writer.text("L%d" % row, "LINEST", bold=True)
    writer.text("M%d" % row, "LTSFIT", bold=True)
    row += 1
    terms = ["Intercept"] + list(PREDICTORS)
    linest = "LINEST(%s;%s;1;0)" % (layout.y, layout.x)
    for j, term in enumerate(terms):
        writer.text("K%d" % (row + j), term)
        writer.formula("L%d" % (row + j), "=INDEX(%s;1;%d)" % (linest, len(terms) - j))
    writer.array_formula("M%d:M%d" % (row, row + len(terms) - 1), "=%s)" % lts)
    row += len(terms) + 1

    block("Summary", '=LTSFIT(%s; %s; ; "summary"): the LTS objective, h (the days the raw fit explains), '
                     'the scale of the residuals,' % (shown_y, shown_x),
          "the outliers, and whether the fit is by least median of squares or exact.")
    writer.array_formula("K%d:L%d" % (row, row + 8), '=%s;;"summary")' % lts)
    layout.scale_cell = "$K$%d" % (row + 2)  # the value column of the summary's scale row
    row += 10

    block("Weights and residuals",
          'Column F is =LTSFIT(%s; %s; ; "weights"): 1 for a day the fit keeps, 0 for an outlier (its row is '
          'shaded red).' % (shown_y, shown_x),
          'Column G is =LTSFIT(%s; %s; ; "residuals"): stack loss minus the fit. A day with an empty or text '
          'cell would be' % (shown_y, shown_x),
          "left out of the fit, with an empty weight and residual.")

    layout.band_title_row = block(
        "Cutoff",
        "A day is an outlier when its residual lies beyond NORMSINV(0.9875) = 2.24 times the scale. The plot "
        "draws the two lines.")
    writer.text("K%d" % row, "Day", bold=True)
    writer.text("L%d" % row, "Upper cutoff", bold=True)
    writer.text("M%d" % row, "Lower cutoff", bold=True)
    row += 1
    layout.band_rows = (row, row + 1)
    for offset, day in enumerate((1, len(data))):
        writer.value("K%d" % (row + offset), float(day))
        writer.formula("L%d" % (row + offset), "=%s*%s" % (CUTOFF, layout.scale_cell))
        writer.formula("M%d" % (row + offset), "=-%s*%s" % (CUTOFF, layout.scale_cell))
    row += 3

    block("Residual plot",
          "The LTS residual of each day: blue the days the fit keeps (column H), red the outliers (column I); "
          "elsewhere #N/A,",
          "which the chart leaves out. The grey lines are the cutoff.")
    columns = writer.sheet.getColumns()
    for index, width_mm in ((0, 12), (1, 20), (2, 22), (3, 22), (4, 20), (5, 22), (6, 24), (7, 26), (8, 28),
                            (9, 4), (10, 62), (11, 26), (12, 26)):
        columns.getByIndex(index).setPropertyValue("Width", width_mm * 100)
    return layout, row


def highlight_outliers(document, sheet, layout):
    """Shades the rows whose LTS weight is 0, by conditional formatting."""
    from com.sun.star.beans import PropertyValue
    from com.sun.star.sheet.ConditionOperator import FORMULA

    styles = document.getStyleFamilies().getByName("CellStyles")
    if not styles.hasByName(OUTLIER_STYLE):
        style = document.createInstance("com.sun.star.style.CellStyle")
        styles.insertByName(OUTLIER_STYLE, style)
        style.setPropertyValue("CellBackColor", OUTLIER_BACKGROUND)
        style.setPropertyValue("CharColor", OUTLIER_TEXT)

    def value(name, content):
        item = PropertyValue()
        item.Name, item.Value = name, content
        return item

    cells = sheet.getCellRangeByName("A%d:G%d" % (layout.first_row, layout.last_row))
    conditions = cells.getPropertyValue("ConditionalFormat")
    conditions.addNew((value("Operator", FORMULA),
                       value("Formula1", "AND(ISNUMBER($F%d);$F%d=0)" % (layout.first_row, layout.first_row)),
                       value("SourcePosition", cells.getCellByPosition(0, 0).getCellAddress()),
                       value("StyleName", OUTLIER_STYLE)))
    cells.setPropertyValue("ConditionalFormat", conditions)


def add_chart(office, sheet, layout, top_row):
    """A scatter chart of the residuals against the day: a series for the days
    the fit keeps, one for the outliers, and the two cutoff lines."""
    from com.sun.star.awt import Rectangle
    from com.sun.star.table import CellRangeAddress

    top = sheet.getCellRangeByName("K%d" % top_row).getPropertyValue("Position")
    rectangle = Rectangle(top.X, top.Y, 22000, 12000)
    address = CellRangeAddress(0, 0, layout.first_row - 1, 0, layout.last_row - 1)
    chart = XYChart(office, sheet, SHEET_NAME, "ResidualPlot", rectangle, address, "Stack loss: LTS residuals",
                    "Day", "Residual (stack loss)")

    first, last = layout.first_row, layout.last_row
    days = "$A$%d:$A$%d" % (first, last)
    band_first, band_last = layout.band_rows
    band_days = "$K$%d:$K$%d" % (band_first, band_last)
    all_series = [
        chart.points(days, "$H$%d:$H$%d" % (first, last), "$H$4", KEPT_COLOUR, make_kmeans.DIAMOND_SYMBOL, 2.2),
        chart.points(days, "$I$%d:$I$%d" % (first, last), "$I$4", OUTLIER_COLOUR, make_kmeans.DIAMOND_SYMBOL, 2.2),
        chart.line(band_days, "$L$%d:$L$%d" % (band_first, band_last), "$L$%d" % (band_first - 1), BAND_COLOUR),
        chart.line(band_days, "$M$%d:$M$%d" % (band_first, band_last), "$M$%d" % (band_first - 1), BAND_COLOUR),
    ]
    chart.set_series(all_series)


def fill(office, document, sheet, data):
    layout, row = build(SheetWriter(sheet), data)
    highlight_outliers(document, sheet, layout)
    document.calculateAll()
    add_chart(office, sheet, layout, row)
    # Y right of X: the dialog would take the first column as Y, so both are given.
    headings = FIRST_DATA_ROW - 1
    add_dialog_report(office, document, sheet, "lts", "B%d:E%d" % (headings, layout.last_row),
                      {"y": "E%d:E%d" % (headings, layout.last_row), "x": "B%d:D%d" % (headings, layout.last_row),
                       "labels": True, "alpha": "0.5", "intercept": True}, "K4")


def main():
    make_sample(__doc__.splitlines()[0], "lts.ods", CSV_FILE, R_EXPORT, read_data, SHEET_NAME,
                "statgpu robust regression", fill, "days")


if __name__ == "__main__":
    main()
