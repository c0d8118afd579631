#!/usr/bin/env python3
"""Makes samples/kmeans.ods: KMEANS on the eruptions of Old Faithful (R's
faithful data set): the centroids, the cluster sizes, a summary, a cluster
label per eruption and a scatter chart coloured by cluster.

    /usr/bin/python3 samples/make_kmeans.py [--oxt build/statgpu.oxt]
                                            [--output samples/kmeans.ods] [--from-r]

The data, samples/faithful.csv, are 272 eruptions of the Old Faithful geyser in
Yellowstone: the eruption time and the waiting time to the next eruption, both
in minutes. The CSV was written by R (--from-r runs this again):

    Rscript -e 'write.csv(faithful, "samples/faithful.csv", row.names=FALSE)'

A headless LibreOffice with statgpu.oxt installed (in a throwaway profile)
builds the workbook, so the formulas are compiled against the add-in and the
file stores them under the add-in's programmatic name
(ORG.STATGPU.STATGPU.KMEANS), which is how ODF names add-in functions.

The chart has one data series per cluster, the robust way to colour points
by group in a Calc chart: a helper column per cluster shows a row's waiting
time only when the row's label (from KMEANS) is that cluster, and #N/A
otherwise, which the chart leaves out.

The sheet "K-means" is the report the analysis menu's K-means dialog writes
for the same data and k (sample_tools.add_dialog_report).
"""

import csv
import os

from sample_tools import HERE, SheetWriter, XYChart, add_dialog_report, column_letter, make_sample

CSV_FILE = os.path.join(HERE, "faithful.csv")
R_EXPORT = 'write.csv(faithful, "%s", row.names=FALSE)'

SHEET_NAME = "Clusters"
CLUSTERS = 2
FIRST_DATA_ROW = 5  # spreadsheet row of the first eruption (1-based)
# A colour per cluster (then the centroids), as 0xRRGGBB.
SERIES_COLOURS = (0x1F77B4, 0xFF7F0E, 0x2CA02C, 0xD62728, 0x9467BD, 0x8C564B)
CENTROID_COLOUR = 0x000000
# Calc's standard chart symbols (chart2 Symbol.StandardSymbol).
DIAMOND_SYMBOL = 1
CROSS_SYMBOL = 10


def read_data():
    with open(CSV_FILE, newline="") as source:
        return [(float(row["eruptions"]), float(row["waiting"])) for row in csv.DictReader(source)]


class Layout:
    """Where the blocks go; the chart's data ranges are read from here."""

    def __init__(self, count):
        self.last_row = FIRST_DATA_ROW + count - 1
        self.data = "$A$%d:$B$%d" % (FIRST_DATA_ROW, self.last_row)
        self.helper_columns = [column_letter(3 + c) for c in range(CLUSTERS)]  # D, E, ...
        self.centroid_rows = None  # (first, last), set by build()
        self.centroid_title_row = None


def build(writer, data):
    layout = Layout(len(data))
    kmeans = "KMEANS(%s;%d" % (layout.data, CLUSTERS)

    writer.text("A1", "statgpu k-means: KMEANS on the eruptions of Old Faithful", bold=True)
    writer.text("A2", "Data: %d eruptions of the Old Faithful geyser (R datasets::faithful): how long each "
                      "eruption lasted and how long the wait was until the next, in minutes." % len(data))
    writer.text("A3", "KMEANS(Data; k; Output; Restarts; MaxIter; Seed) is an array formula: select a range "
                      "of the result's size, type the formula, press Ctrl+Shift+Enter.")
    headings = ["Eruption (min)", "Waiting (min)", "Cluster"] + \
               ["Waiting, cluster %d" % (c + 1) for c in range(CLUSTERS)]
    for index, heading in enumerate(headings):
        writer.text("%s4" % column_letter(index), heading, bold=True)
    writer.sheet.getCellRangeByName("A%d:B%d" % (FIRST_DATA_ROW, layout.last_row)).setDataArray(
        tuple((eruption, waiting) for eruption, waiting in data))
    writer.array_formula("C%d:C%d" % (FIRST_DATA_ROW, layout.last_row), '=%s;"labels")' % kmeans)
    for c, column in enumerate(layout.helper_columns):
        for row in range(FIRST_DATA_ROW, layout.last_row + 1):
            writer.formula("%s%d" % (column, row), "=IF($C%d=%d;$B%d;NA())" % (row, c + 1, row))

    row = 5

    def block(title, *lines):
        """A bold title and its lines of explanation; returns the title's row."""
        nonlocal row
        title_row = row
        row = writer.block("H", row, title, lines)
        return title_row

    shown = layout.data.replace("$", "")

    layout.centroid_title_row = block(
          "Centroids",
          "=KMEANS(%s; %d): the mean eruption and waiting time of each cluster, one row per cluster."
          % (shown, CLUSTERS),
          "Restarts (10), MaxIter (300) and Seed (0) are left out, so they take their defaults; "
          "another Seed draws other random starts.")
    writer.text("I%d" % row, "Eruption (min)", bold=True)
    writer.text("J%d" % row, "Waiting (min)", bold=True)
    row += 1
    for c in range(CLUSTERS):
        writer.text("H%d" % (row + c), "Cluster %d" % (c + 1))
    layout.centroid_rows = (row, row + CLUSTERS - 1)
    writer.array_formula("I%d:J%d" % layout.centroid_rows, "=%s)" % kmeans)
    row += CLUSTERS + 1

    block("Cluster sizes", '=KMEANS(%s; %d; "sizes"): how many eruptions fall in each cluster.' % (shown, CLUSTERS))
    for c in range(CLUSTERS):
        writer.text("H%d" % (row + c), "Cluster %d" % (c + 1))
    writer.array_formula("I%d:I%d" % (row, row + CLUSTERS - 1), '=%s;"sizes")' % kmeans)
    row += CLUSTERS + 1

    block("Summary", '=KMEANS(%s; %d; "summary"): the within-cluster sum of squares (the inertia that '
                     'k-means minimises),' % (shown, CLUSTERS),
          "the share of the variation the clusters explain, and how the runs went (a value and its name per row).")
    writer.array_formula("H%d:I%d" % (row, row + 8), '=%s;"summary")' % kmeans)
    row += 10

    block("Cluster of each eruption",
          'Column C is =KMEANS(%s; %d; "labels"): the cluster (1 to %d) of each eruption. A row with '
          'an empty or text cell' % (shown, CLUSTERS, CLUSTERS),
          "would be left out of the clustering and get an empty cell.")

    block("Chart",
          "Waiting time against eruption time, a colour per cluster, and the centroids. Column D shows a "
          "row's waiting time only",
          "when its cluster (column C) is 1, column E when it is 2; elsewhere #N/A, which the chart leaves "
          "out.")
    columns = writer.sheet.getColumns()
    for index, width_mm in ((0, 26), (1, 26), (2, 16), (3, 30), (4, 30), (5, 4), (6, 4), (7, 70), (8, 28),
                            (9, 28)):
        columns.getByIndex(index).setPropertyValue("Width", width_mm * 100)
    return layout, row


def add_chart(office, document, sheet, layout, top_row):
    """A scatter chart with a series per cluster (x: eruption, y: the cluster's
    helper column) and one for the centroids, through the chart2 API so that
    every series has its own x values."""
    from com.sun.star.awt import Rectangle
    from com.sun.star.table import CellRangeAddress

    top = sheet.getCellRangeByName("H%d" % top_row).getPropertyValue("Position")
    rectangle = Rectangle(top.X, top.Y, 24000, 14000)
    address = CellRangeAddress(0, 0, FIRST_DATA_ROW - 1, 1, layout.last_row - 1)
    chart = XYChart(office, sheet, SHEET_NAME, "EruptionClusters", rectangle, address,
                    "Old Faithful: %d k-means clusters" % CLUSTERS, "Eruption (min)", "Waiting (min)")

    first, last = FIRST_DATA_ROW, layout.last_row
    all_series = []
    for c, column in enumerate(layout.helper_columns):
        all_series.append(chart.points("$A$%d:$A$%d" % (first, last), "$%s$%d:$%s$%d" % (column, first, column, last),
                                       "$%s$4" % column, SERIES_COLOURS[c % len(SERIES_COLOURS)], DIAMOND_SYMBOL, 1.8))
    c_first, c_last = layout.centroid_rows
    all_series.append(chart.points("$I$%d:$I$%d" % (c_first, c_last), "$J$%d:$J$%d" % (c_first, c_last),
                                   "$H$%d" % layout.centroid_title_row, CENTROID_COLOUR, CROSS_SYMBOL, 4.5))
    chart.set_series(all_series)


def fill(office, document, sheet, data):
    layout, row = build(SheetWriter(sheet), data)
    document.calculateAll()
    add_chart(office, document, sheet, layout, row)
    data_with_headings = "A%d:B%d" % (FIRST_DATA_ROW - 1, layout.last_row)
    add_dialog_report(office, document, sheet, "kmeans", data_with_headings,
                      {"data": data_with_headings, "labels": True, "k": str(CLUSTERS)}, "H4")


def main():
    make_sample(__doc__.splitlines()[0], "kmeans.ods", CSV_FILE, R_EXPORT, read_data, SHEET_NAME,
                "statgpu k-means", fill, "eruptions")


if __name__ == "__main__":
    main()
