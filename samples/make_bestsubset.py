#!/usr/bin/env python3
"""Makes samples/bestsubset.ods: BESTSUBSET on the Motor Trend cars (R's
mtcars data set): the best subset of the ten predictors of fuel economy for
every size, the size chosen by the leave-one-out validation error, what the
other criteria choose, the chosen model's coefficients, a summary, and the
validation error against the size.

    /usr/bin/python3 samples/make_bestsubset.py [--oxt build/statgpu.oxt]
                                                [--output samples/bestsubset.ods] [--from-r]

The data, samples/mtcars.csv, are 32 cars road-tested by Motor Trend magazine
in 1973-74: miles per gallon (the response) and ten aspects of design and
performance. The CSV was written by R (--from-r runs this again):

    Rscript -e 'write.csv(data.frame(car=rownames(mtcars), mtcars),
                          "samples/mtcars.csv", row.names=FALSE)'

Every BESTSUBSET of the sheet takes Y and X with their heading row, whose
texts name the predictors (a row of names, not counted as a row left out).
The coefficients table (the term's name, coefficient, standard error, t
value) has room for every predictor and the intercept and is wrapped in
IF(# <= chosen size + 1; BESTSUBSET(...); ""), so that it follows the chosen
size when the data change. The chart's red point is a
helper column that shows the validation error of the chosen size alone and
#N/A elsewhere, which the chart leaves out.

The sheet "Best subsets" is the report the analysis menu's dialog writes
for the same Y and X, their names in row 4, and the defaults
(sample_tools.add_dialog_report).

A headless LibreOffice with statgpu.oxt installed (in a throwaway profile)
builds the workbook, as samples/make_kmeans.py does, with the helpers of
samples/sample_tools.py.
"""

import csv
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from sample_tools import SheetWriter, XYChart, add_dialog_report, column_letter, make_sample  # noqa: E402

CSV_FILE = os.path.join(HERE, "mtcars.csv")
R_EXPORT = 'write.csv(data.frame(car=rownames(mtcars), mtcars), "%s", row.names=FALSE)'

SHEET_NAME = "Subsets"
HEADING_ROW = 4                  # the row of the column names (1-based)
FIRST_DATA_ROW = 5               # spreadsheet row of the first car
RESPONSE = "mpg"
PREDICTORS = ("cyl", "disp", "hp", "drat", "wt", "qsec", "vs", "am", "gear", "carb")
MEANINGS = (
    ("mpg", "fuel economy: miles per US gallon (the response)"),
    ("cyl", "number of cylinders"),
    ("disp", "displacement (cubic inches)"),
    ("hp", "gross horsepower"),
    ("drat", "rear axle ratio"),
    ("wt", "weight (1000 lb)"),
    ("qsec", "quarter-mile time (seconds)"),
    ("vs", "engine: 0 V-shaped, 1 straight"),
    ("am", "transmission: 0 automatic, 1 manual"),
    ("gear", "number of forward gears"),
    ("carb", "number of carburettors"),
)
SUBSET_HEADINGS = ("Size", "Rank", "RSS", "R2", "Adjusted R2", "Cp", "BIC (leaps)", "BIC", "PRESS",
                   "Validation error", "Chosen", "Predictors")
COEFFICIENT_HEADINGS = ("Term", "Coefficient", "Standard error", "t value")
# (label, Criterion argument) of the criteria compared; the first is the default.
CRITERIA = (("Validation error (the default)", None), ("Mallows' Cp (lowest)", "cp"),
            ("BIC (lowest)", "bic"), ("Adjusted R2 (highest)", "adjr2"))
SUMMARY_ROWS = 14
ERROR_COLOUR = 0x404040
CHOSEN_COLOUR = 0xD62728
CIRCLE_SYMBOL = 8                # chart2 Symbol.StandardSymbol
POINT_SIZE_MM = 1.8
CHART_SIZE = (17000, 10000)      # 1/100 mm
ROW_HEIGHT = 452                 # the sheet's row height, 1/100 mm


def read_data():
    """Rows (car, mpg, cyl, ..., carb)."""
    with open(CSV_FILE, newline="") as source:
        return [(row["car"], float(row[RESPONSE])) + tuple(float(row[name]) for name in PREDICTORS)
                for row in csv.DictReader(source)]


class Layout:
    """Where the blocks go; the tests and the chart read their ranges from here."""

    def __init__(self, count):
        self.last_row = FIRST_DATA_ROW + count - 1
        last_predictor = column_letter(2 + len(PREDICTORS) - 1)
        self.y = "$B$%d:$B$%d" % (HEADING_ROW, self.last_row)
        self.x = "$C$%d:$%s$%d" % (HEADING_ROW, last_predictor, self.last_row)
        self.subsets = None          # (first, last) rows of the subsets table, columns N:Y
        self.chart_row = None        # the chart's top left corner, in column N
        self.summary_first = None    # the summary's first row (N value, O name)
        self.coefficients = None     # (first, last) rows of the coefficients table, columns O:R (term first)

    def call(self, *arguments):
        """BESTSUBSET(Y; X; ...) with the further arguments given (None: left empty)."""
        rest = ";".join("" if a is None else a for a in arguments)
        return "BESTSUBSET(%s;%s%s)" % (self.y, self.x, (";" + rest) if arguments else "")


def build(writer, data):
    layout = Layout(len(data))
    first, last = FIRST_DATA_ROW, layout.last_row
    shown_y, shown_x = layout.y.replace("$", ""), layout.x.replace("$", "")

    writer.text("A1", "statgpu best subset regression: BESTSUBSET on the Motor Trend cars", bold=True)
    writer.text("A2", "Data: %d cars of the 1973-74 Motor Trend road tests (R datasets::mtcars): fuel economy "
                      "(mpg) and ten aspects of design and performance; the columns are explained below the "
                      "data." % len(data))
    writer.text("A3", "BESTSUBSET(Y; X; MaxSize; Output; Intercept; Validation; Criterion; NBest; Seed) is an array "
                      "formula: select a range of the result's size, type the formula, press Ctrl+Shift+Enter.")
    for index, heading in enumerate(("Car", RESPONSE) + PREDICTORS):
        writer.text("%s%d" % (column_letter(index), HEADING_ROW), heading, bold=True)
    writer.sheet.getCellRangeByName("A%d:%s%d" % (first, column_letter(len(PREDICTORS) + 1), last)).setDataArray(
        tuple(data))

    row = last + 2
    row = writer.block("A", row, "The columns", ["%s: %s" % item for item in MEANINGS])

    row = 5

    def block(title, *lines, chart_size=None):
        """A bold title and its lines of explanation in column N; with
        chart_size, the rows such a chart covers below them, and returns the
        first of those rows."""
        nonlocal row
        row = writer.block("N", row, title, lines)
        if chart_size is not None:
            top = row
            row += -(-chart_size[1] // ROW_HEIGHT) + 1
            return top
        return None

    def headings_at(column, texts, right=()):
        """Bold headings from column on in the current row; those whose
        offsets are in right stand right-aligned, over numbers."""
        from com.sun.star.table.CellHoriJustify import RIGHT
        for offset, text in enumerate(texts):
            address = "%s%d" % (column_letter(ord(column) - ord("A") + offset), row)
            writer.text(address, text, bold=True)
            if offset in right:
                writer.cell(address).setPropertyValue("HoriJustify", RIGHT)

    # ---- the subsets table
    block("The best subset of every size",
          "=BESTSUBSET(%s; %s) searches all 1023 subsets of the ten predictors (exactly, as R's "
          "leaps::regsubsets) and lists the best of each size:" % (shown_y, shown_x),
          "the one of the smallest residual sum of squares (RSS), with R2, adjusted R2, Mallows' Cp, BIC, PRESS "
          "and the validation error. Row %d names the predictors." % HEADING_ROW,
          "The validation error is PRESS / n: the mean squared error of predicting each car from a fit to the "
          "other 31. Its lowest size is chosen (Chosen = 1).")
    row -= 1  # the header row right below the explanation
    headings_at("N", SUBSET_HEADINGS + ("Error, chosen",), right=set(range(11)) | {12})
    row += 1
    sizes = len(PREDICTORS)
    layout.subsets = (row, row + sizes - 1)
    s_first, s_last = layout.subsets
    writer.array_formula("N%d:Y%d" % layout.subsets, "=%s" % layout.call())
    for r in range(s_first, s_last + 1):
        writer.formula("Z%d" % r, "=IF(X%d=1;W%d;NA())" % (r, r))
    row += sizes + 1

    layout.chart_row = block(
        "Validation error against size",
        "Column W of the table above: too few predictors miss the signal, too many fit noise. The red point "
        "is the chosen size (column Z shows only its error).",
        chart_size=CHART_SIZE)

    # ---- the criteria compared
    block("What the other criteria choose",
          "=BESTSUBSET(%s; %s; ; \"summary\"; ; ; \"cp\") and so on: the first value of the summary is the size "
          "its Criterion chooses." % (shown_y, shown_x),
          "Here Cp and BIC choose fewer predictors than leave-one-out validation, adjusted R2 more: each weighs "
          "fit against size in its own way.")
    row -= 1
    headings_at("N", ("Criterion", "", "", "Chosen size", "Predictors"), right={3})
    row += 1
    predictors = "$Y$%d:$Y$%d" % layout.subsets
    size_column = "$N$%d:$N$%d" % layout.subsets
    for label, criterion in CRITERIA:
        writer.text("N%d" % row, label)
        arguments = (None, '"summary"') + ((None, None, '"%s"' % criterion) if criterion else ())
        writer.array_formula("Q%d" % row, "=INDEX(%s;1;1)" % layout.call(*arguments))
        writer.formula("R%d" % row, "=INDEX(%s;MATCH(Q%d;%s;0))" % (predictors, row, size_column))
        row += 1
    row += 1

    # ---- the summary, then the chosen model's coefficients
    block("Summary",
          "=BESTSUBSET(%s; %s; ; \"summary\"): the chosen size, how it was chosen, the chosen, full and null "
          "models' RSS, Cp's variance, and the rows." % (shown_y, shown_x),
          "Row %d, the names, is not data and not counted among the rows left out; a row with a text or empty "
          "cell in Y or X would be." % HEADING_ROW)
    layout.summary_first = row
    writer.array_formula("N%d:O%d" % (row, row + SUMMARY_ROWS - 1), "=%s" % layout.call(None, '"summary"'))
    chosen = "$N$%d" % row
    row += SUMMARY_ROWS + 1

    terms = sizes + 1
    block("The chosen model",
          "=BESTSUBSET(%s; %s; ; \"coefficients\") in columns O to R: the least squares fit of mpg on the chosen "
          "predictors, a row per term, the intercept first:" % (shown_y, shown_x),
          "the term's name, coefficient, standard error and t value. It has as many rows as the chosen size and "
          "the intercept: the table has room for all %d, and" % terms,
          "IF(# <= %s + 1; ...; \"\") leaves the rest empty." % chosen.replace("$", ""))
    row -= 1  # the header row right below the explanation
    headings_at("N", ("#",) + COEFFICIENT_HEADINGS, right={0, 2, 3, 4})
    row += 1
    layout.coefficients = (row, row + terms - 1)
    numbers = "$N$%d:$N$%d" % layout.coefficients
    for j in range(terms):
        writer.value("N%d" % (row + j), float(j + 1))
    writer.array_formula("O%d:R%d" % layout.coefficients,
                         '=IF(%s<=%s+1;%s;"")' % (numbers, chosen, layout.call(None, '"coefficients"')))
    row += terms + 1

    columns = writer.sheet.getColumns()
    widths_mm = [40, 14] + [14] * len(PREDICTORS) + [4, 22, 18, 22, 26, 22, 22, 22, 22, 22, 28, 16, 80, 26]
    for index, width_mm in enumerate(widths_mm):
        columns.getByIndex(index).setPropertyValue("Width", width_mm * 100)
    return layout


def set_number_formats(document, sheet, layout):
    """The subsets table and the coefficients read as tables: a few decimals."""
    from com.sun.star.lang import Locale
    formats = document.getNumberFormats()

    def key(code):
        found = formats.queryKey(code, Locale(), False)
        return found if found != -1 else formats.addNew(code, Locale())

    s_first, s_last = layout.subsets
    for columns, code in (("P%d:P%d", "0.00"), ("Q%d:R%d", "0.0000"), ("S%d:V%d", "0.00"), ("W%d:W%d", "0.000"),
                          ("Z%d:Z%d", "0.000")):
        sheet.getCellRangeByName(columns % (s_first, s_last)).setPropertyValue("NumberFormat", key(code))
    sheet.getCellRangeByName("P%d:R%d" % layout.coefficients).setPropertyValue("NumberFormat", key("0.0000"))


def add_chart(office, sheet, layout):
    """The validation error against the size, the chosen size in red."""
    from com.sun.star.awt import Rectangle
    from com.sun.star.table import CellRangeAddress

    top = sheet.getCellRangeByName("N%d" % layout.chart_row).getPropertyValue("Position")
    s_first, s_last = layout.subsets
    chart = XYChart(office, sheet, SHEET_NAME, "ValidationErrorAgainstSize",
                    Rectangle(top.X, top.Y, *CHART_SIZE), CellRangeAddress(0, 13, s_first - 1, 22, s_last - 1),
                    "Leave-one-out validation error of the best subset of each size", "Predictors (size)",
                    "Validation error (PRESS / n, mpg squared)")
    sizes = "$N$%d:$N$%d" % (s_first, s_last)
    curve = chart.line(sizes, "$W$%d:$W$%d" % (s_first, s_last), "$W$%d" % (s_first - 1), ERROR_COLOUR)
    chart.mark(curve, CIRCLE_SYMBOL, POINT_SIZE_MM * 1.5)
    chosen = chart.points(sizes, "$Z$%d:$Z$%d" % (s_first, s_last), "$Z$%d" % (s_first - 1), CHOSEN_COLOUR,
                          CIRCLE_SYMBOL, POINT_SIZE_MM * 2.5)
    chart.set_series([curve, chosen])
    chart.chart.HasLegend = False


def fill(office, document, sheet, data):
    layout = build(SheetWriter(sheet), data)
    set_number_formats(document, sheet, layout)
    document.calculateAll()
    add_chart(office, sheet, layout)
    y, x = layout.y.replace("$", ""), layout.x.replace("$", "")
    y_and_x = "%s:%s" % (y.split(":")[0], x.split(":")[1])  # the dialog splits it into Y and X
    add_dialog_report(office, document, sheet, "bestsubset", y_and_x,
                      {"y": y, "x": x, "labels": True, "criterion": "validation", "validation": "press"}, "N4")


def main():
    make_sample(__doc__.splitlines()[0], "bestsubset.ods", CSV_FILE, R_EXPORT, read_data, SHEET_NAME,
                "statgpu best subset regression", fill, "cars")


if __name__ == "__main__":
    main()
