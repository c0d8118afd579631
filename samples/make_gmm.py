#!/usr/bin/env python3
"""Makes samples/gmm.ods: GMMFIT on the eruptions of Old Faithful (R's
faithful data set): Gaussian mixtures of 1 to 6 components compared by BIC,
the chosen mixture's summary, weights, means and covariances, a component per
eruption, a scatter chart coloured by component with each component's 95%
ellipse, and BIC against k.

    /usr/bin/python3 samples/make_gmm.py [--oxt build/statgpu.oxt]
                                         [--output samples/gmm.ods] [--from-r]

The data are samples/faithful.csv, the eruptions samples/make_kmeans.py
clusters (--from-r exports them from R again).

Every GMMFIT of the sheet takes the same candidate column (k = 1 to 6) as
its k: with a range of k, GMMFIT fits each candidate, Output "selection"
lists them all, and every other Output describes the candidate of lowest
BIC. The tables of the chosen mixture are therefore sized for the largest
candidate and wrapped in IF(component <= chosen k; GMMFIT(...); ""), so that
they follow the choice live, and so do the ellipses: their points are
formulas of the means and covariances, with #N/A waiting times for the
components the mixture does not have, which the chart leaves out.

The sheet "Gaussian mixture" is the report the analysis menu's dialog
writes for the same data, candidates and full covariances
(sample_tools.add_dialog_report).

A headless LibreOffice with statgpu.oxt installed (in a throwaway profile)
builds the workbook, as samples/make_kmeans.py does, with the helpers of
samples/sample_tools.py.
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import make_kmeans  # noqa: E402
from sample_tools import BOLD, SheetWriter, XYChart, add_dialog_report, column_letter, make_sample  # noqa: E402

SHEET_NAME = "Mixture"
CANDIDATES = tuple(range(1, 7))   # the k compared by BIC
COMPONENTS = max(CANDIDATES)      # the most components a chosen mixture can have
FIRST_DATA_ROW = 5                # spreadsheet row of the first eruption (1-based)
ELLIPSE_STEPS = 60                # segments of each ellipse's outline
COVERAGE = 0.95                   # the share of a component's mass inside its ellipse
SELECTION_HEADINGS = ("k", "Covariance", "Log-likelihood", "Parameters", "BIC", "AIC", "Iterations",
                      "Converged", "Best")
BIC_COLOUR = 0x404040
CHOSEN_COLOUR = 0xD62728
CIRCLE_SYMBOL = 8                 # chart2 Symbol.StandardSymbol
POINT_SIZE_MM = 1.8
# Chart sizes and the sheet's row height, in 1/100 mm.
SCATTER_CHART_SIZE = (24000, 14500)
BIC_CHART_SIZE = (16000, 10000)
ROW_HEIGHT = 452


class Layout:
    """Where the blocks go; formulas and charts read their ranges from here."""

    def __init__(self, count):
        self.last_row = FIRST_DATA_ROW + count - 1
        self.data = "$A$%d:$B$%d" % (FIRST_DATA_ROW, self.last_row)
        self.helper_columns = [column_letter(3 + j) for j in range(COMPONENTS)]  # D, E, ...
        self.candidates = None       # the k column, "$K$a:$K$b"
        self.selection_rows = None   # (first, last) of the selection table
        self.chosen_k = None         # the cell of the chosen k
        self.bic_chart_row = None    # where the charts' top left corners go, in column K
        self.scatter_chart_row = None
        self.ellipse_rows = None     # (first, last) of the ellipses' points
        self.ellipse_columns = []    # (eruption, waiting) column letters per component

    def gmmfit(self, output):
        return 'GMMFIT(%s;%s;"full";"%s")' % (self.data, self.candidates, output)

    def for_chosen(self, component_range, output):
        """The array formula of a table sized for COMPONENTS: GMMFIT's rows
        where component_range is within the chosen k, empty elsewhere."""
        return '=IF(%s<=%s;%s;"")' % (component_range, self.chosen_k, self.gmmfit(output))


def build(writer, data):
    layout = Layout(len(data))
    first, last = FIRST_DATA_ROW, layout.last_row

    writer.text("A1", "statgpu Gaussian mixtures: GMMFIT on the eruptions of Old Faithful, k chosen by BIC",
                bold=True)
    writer.text("A2", "Data: %d eruptions of the Old Faithful geyser (R datasets::faithful): how long each "
                      "eruption lasted and how long the wait was until the next, in minutes." % len(data))
    writer.text("A3", "GMMFIT(Data; k; Covariance; Output; Restarts; MaxIter; Seed) is an array formula: select "
                      "a range of the result's size, type the formula, press Ctrl+Shift+Enter.")
    for index, heading in enumerate(("Eruption (min)", "Waiting (min)", "Component")):
        writer.text("%s4" % column_letter(index), heading, bold=True)
    # The helper columns' headings name the chart's series: live counts, so
    # that a component the chosen mixture lacks says so in the legend.
    labels = "$C$%d:$C$%d" % (first, last)
    for j, column in enumerate(layout.helper_columns):
        writer.formula("%s4" % column, '="Component %d: "&COUNTIF(%s;%d)&" eruptions"' % (j + 1, labels, j + 1))
    writer.sheet.getCellRangeByName("A4:%s4" % layout.helper_columns[-1]).setPropertyValues(
        ("CharWeight", "IsTextWrapped"), (BOLD, True))
    writer.sheet.getCellRangeByName("A%d:B%d" % (first, last)).setDataArray(tuple(data))

    row = 5

    def block(title, *lines, chart_size=None):
        """A bold title and its lines of explanation in column K; with
        chart_size, the rows such a chart covers below them, and returns the
        first of those rows."""
        nonlocal row
        row = writer.block("K", row, title, lines)
        if chart_size is not None:
            top = row
            row += -(-chart_size[1] // ROW_HEIGHT) + 1
            return top
        return None

    def headings_at(column, texts):
        for offset, text in enumerate(texts):
            writer.text("%s%d" % (chr(ord(column) + offset), row), text, bold=True)

    shown = layout.data.replace("$", "")

    # ---- the candidates and their BIC: the title, two lines, the header row, then the candidates
    candidate_first = row + 4
    candidate_last = candidate_first + len(CANDIDATES) - 1
    layout.candidates = "$K$%d:$K$%d" % (candidate_first, candidate_last)
    candidates_shown = layout.candidates.replace("$", "")
    block("Choosing the number of components by BIC",
          "Column K lists the candidate numbers of components. =GMMFIT(%s; %s; \"full\"; \"selection\") "
          "fits a mixture with a full covariance" % (shown, candidates_shown),
          "matrix per component for each candidate, and returns a row per candidate: BIC = -2 log-likelihood "
          "+ parameters x ln(rows), lower is better (mclust's BIC is its negative).")
    row -= 1  # the header row right below the explanation
    writer.text("K%d" % row, "Candidate k", bold=True)
    headings_at("L", SELECTION_HEADINGS + ("BIC, chosen",))
    row += 1
    assert row == candidate_first
    for offset, k in enumerate(CANDIDATES):
        writer.value("K%d" % (row + offset), float(k))
    layout.selection_rows = (candidate_first, candidate_last)
    writer.array_formula("L%d:T%d" % layout.selection_rows, "=%s" % layout.gmmfit("selection"))
    for r in range(candidate_first, candidate_last + 1):
        writer.formula("U%d" % r, "=IF(T%d=1;P%d;NA())" % (r, r))
    row += len(CANDIDATES)
    writer.text("K%d" % row, "Chosen k (lowest BIC)", bold=True)
    writer.formula("L%d" % row, "=INDEX($L$%d:$L$%d;MATCH(1;$T$%d:$T$%d;0))"
                   % (candidate_first, candidate_last, candidate_first, candidate_last))
    layout.chosen_k = "$L$%d" % row
    row += 2

    layout.bic_chart_row = block(
        "BIC against k",
        "The BIC column of the table above; the red point is the chosen k (column U shows only its BIC).",
        chart_size=BIC_CHART_SIZE)

    # ---- the chosen mixture
    block("The chosen mixture",
          "=GMMFIT(%s; %s; \"full\"; \"summary\"): with a range of k, every Output other than \"selection\" "
          "describes the candidate" % (shown, candidates_shown),
          "of lowest BIC. A value and its name per row: log-likelihood, BIC, AIC, parameters, iterations, "
          "and how the fit went.")
    writer.array_formula("K%d:L%d" % (row, row + 12), "=%s" % layout.gmmfit("summary"))
    row += 14

    # The components' rows follow the title, two lines, a blank row and the header.
    components = "$K$%d:$K$%d" % (row + 5, row + 5 + COMPONENTS - 1)
    block("Weights and means",
          "Column L is =IF(%s <= %s; GMMFIT(%s; %s; \"full\"; \"weights\"); \"\"), M and N the same with "
          "\"means\": GMMFIT gives a row per component" % (components.replace("$", ""),
                                                           layout.chosen_k.replace("$", ""), shown, candidates_shown),
          "of the chosen mixture and the IF leaves the other rows empty, so the table has room for %d components "
          "and follows the choice when the data change." % COMPONENTS)
    headings_at("K", ("Component", "Weight", "Eruption (min)", "Waiting (min)"))
    row += 1
    assert components == "$K$%d:$K$%d" % (row, row + COMPONENTS - 1)
    for j in range(COMPONENTS):
        writer.value("K%d" % (row + j), float(j + 1))
    writer.array_formula("L%d:L%d" % (row, row + COMPONENTS - 1), layout.for_chosen(components, "weights"))
    writer.array_formula("M%d:N%d" % (row, row + COMPONENTS - 1), layout.for_chosen(components, "means"))
    mean_rows = row
    row += COMPONENTS + 1

    block("Covariance matrices",
          "GMMFIT(%s; %s; \"full\"; \"covariances\") in the same IF: a 2 x 2 block per component, in the order "
          "of the means," % (shown, candidates_shown),
          "the variances on the diagonal, the covariance of eruption and waiting off it.")
    headings_at("K", ("Component", "", "Eruption", "Waiting"))
    row += 1
    covariance_components = "$K$%d:$K$%d" % (row, row + 2 * COMPONENTS - 1)
    for j in range(COMPONENTS):
        for v, name in enumerate(("Eruption", "Waiting")):
            writer.value("K%d" % (row + 2 * j + v), float(j + 1))
            writer.text("L%d" % (row + 2 * j + v), name)
    writer.array_formula("M%d:N%d" % (row, row + 2 * COMPONENTS - 1),
                         layout.for_chosen(covariance_components, "covariances"))
    covariance_rows = row
    row += 2 * COMPONENTS + 1

    # ---- labels and the chart
    writer.array_formula("C%d:C%d" % (first, last), "=%s" % layout.gmmfit("labels"))
    for j, column in enumerate(layout.helper_columns):
        for r in range(first, last + 1):
            writer.formula("%s%d" % (column, r), "=IF($C%d=%d;$B%d;NA())" % (r, j + 1, r))
    block("Component of each eruption",
          "Column C is =GMMFIT(%s; %s; \"full\"; \"labels\"): the most probable component of each eruption "
          "under the chosen mixture." % (shown, candidates_shown),
          "Columns D to I show an eruption's waiting time only under its component, #N/A elsewhere, which the "
          "chart leaves out.")

    layout.scatter_chart_row = block(
        "Chart",
        "Waiting time against eruption time, a colour per component (the legend counts each one's eruptions), "
        "and each component's %d%% ellipse" % round(100 * COVERAGE),
        "drawn from the points below.", chart_size=SCATTER_CHART_SIZE)

    # ---- beyond full covariances
    block("Every covariance type",
          "=GMMFIT(%s; %s; \"all\"; \"selection\") compares, for each k, full covariances with tied (one "
          "matrix shared by the components)," % (shown, candidates_shown),
          "diag (each its own variances, no covariance) and spherical (each one variance): the models mclust "
          "calls VVV, EEE, VVI and VII.",
          "Its Best column marks the lowest BIC of all 24; the blocks above keep to full covariances, a matrix "
          "per component for its ellipse.")
    row -= 1  # the header row right below the explanation
    headings_at("L", SELECTION_HEADINGS)
    row += 1
    rows_all = len(CANDIDATES) * 4
    writer.array_formula("L%d:T%d" % (row, row + rows_all - 1),
                         '=GMMFIT(%s;%s;"all";"selection")' % (layout.data, layout.candidates))
    row += rows_all + 1

    # ---- the ellipses
    block("%d%% ellipses" % round(100 * COVERAGE),
          "Inside its ellipse lies %d%% of a component's probability: the points mean + r L (cos t, sin t), "
          "where L L' is the covariance" % round(100 * COVERAGE),
          "(its Cholesky factor: L11 = SQRT(a), L21 = b / L11, L22 = SQRT(c - L21^2)) and r = SQRT(CHISQ.INV(%g; "
          "2))." % COVERAGE,
          "A component beyond the chosen k gets #N/A for its waiting times, which the chart leaves out, and the "
          "shortest eruption for its eruption times:",
          "a series whose x are all #N/A would be drawn against 1, 2, 3, ... and stretch the axis.")
    writer.text("K%d" % row, "Radius r", bold=True)
    radius = "$L$%d" % row
    writer.formula("L%d" % row, "=SQRT(CHISQ.INV(%g;2))" % COVERAGE)
    row += 1
    headings_at("K", ("Component", "Centre eruption", "Centre waiting", "L11", "L21", "L22"))
    row += 1
    parameter_rows = row
    for j in range(COMPONENTS):
        r, mean, block_top = row + j, mean_rows + j, covariance_rows + 2 * j
        within = "$K$%d<=%s" % (r, layout.chosen_k)
        writer.value("K%d" % r, float(j + 1))
        writer.formula("L%d" % r, "=IF(%s;$M$%d;NA())" % (within, mean))
        writer.formula("M%d" % r, "=IF(%s;$N$%d;NA())" % (within, mean))
        writer.formula("N%d" % r, "=IF(%s;SQRT($M$%d);NA())" % (within, block_top))
        writer.formula("O%d" % r, "=IF(%s;$M$%d/N%d;NA())" % (within, block_top + 1, r))
        writer.formula("P%d" % r, "=IF(%s;SQRT($N$%d-O%d^2);NA())" % (within, block_top + 1, r))
    row += COMPONENTS + 1

    eruptions = "$A$%d:$A$%d" % (first, last)
    writer.text("K%d" % row, "Angle t", bold=True)
    for j in range(COMPONENTS):
        x_column, y_column = column_letter(11 + 2 * j), column_letter(12 + 2 * j)  # L, M, ...
        layout.ellipse_columns.append((x_column, y_column))
        writer.text("%s%d" % (x_column, row), "Ellipse %d eruption" % (j + 1), bold=True)
        writer.text("%s%d" % (y_column, row), "Ellipse %d waiting" % (j + 1), bold=True)
    row += 1
    layout.ellipse_rows = (row, row + ELLIPSE_STEPS)
    for step in range(ELLIPSE_STEPS + 1):
        r = row + step
        writer.formula("K%d" % r, "=2*PI()*%d/%d" % (step, ELLIPSE_STEPS))
        for j, (x_column, y_column) in enumerate(layout.ellipse_columns):
            p = parameter_rows + j
            writer.formula("%s%d" % (x_column, r), "=IF(ISNA($L$%d);MIN(%s);$L$%d+%s*$N$%d*COS($K%d))"
                           % (p, eruptions, p, radius, p, r))
            writer.formula("%s%d" % (y_column, r), "=$M$%d+%s*($O$%d*COS($K%d)+$P$%d*SIN($K%d))"
                           % (p, radius, p, r, p, r))

    columns = writer.sheet.getColumns()
    widths_mm = [26, 26, 22] + [24] * COMPONENTS + [4, 46] + [26] * 10
    for index, width_mm in enumerate(widths_mm):
        columns.getByIndex(index).setPropertyValue("Width", width_mm * 100)
    return layout


def add_charts(office, sheet, layout):
    """The scatter chart (a series per component, a line per ellipse) and BIC
    against k, through the chart2 API so that every series has its own x."""
    from com.sun.star.awt import Rectangle
    from com.sun.star.table import CellRangeAddress

    def rectangle(row, size):
        top = sheet.getCellRangeByName("K%d" % row).getPropertyValue("Position")
        return Rectangle(top.X, top.Y, *size)

    first, last = FIRST_DATA_ROW, layout.last_row
    chart = XYChart(office, sheet, SHEET_NAME, "MixtureComponents",
                    rectangle(layout.scatter_chart_row, SCATTER_CHART_SIZE),
                    CellRangeAddress(0, 0, first - 1, 1, last - 1),
                    "Old Faithful: a Gaussian mixture, k chosen by BIC", "Eruption (min)", "Waiting (min)")
    colours = make_kmeans.SERIES_COLOURS
    all_series = [chart.points("$A$%d:$A$%d" % (first, last), "$%s$%d:$%s$%d" % (column, first, column, last),
                               "$%s$4" % column, colours[j], make_kmeans.DIAMOND_SYMBOL, POINT_SIZE_MM)
                  for j, column in enumerate(layout.helper_columns)]
    e_first, e_last = layout.ellipse_rows
    for j, (x_column, y_column) in enumerate(layout.ellipse_columns):
        line = chart.line("$%s$%d:$%s$%d" % (x_column, e_first, x_column, e_last),
                          "$%s$%d:$%s$%d" % (y_column, e_first, y_column, e_last),
                          "$%s$%d" % (y_column, e_first - 1), colours[j])
        line.ShowLegendEntry = False
        all_series.append(line)
    chart.set_series(all_series)

    s_first, s_last = layout.selection_rows
    bic = XYChart(office, sheet, SHEET_NAME, "BicAgainstK", rectangle(layout.bic_chart_row, BIC_CHART_SIZE),
                  CellRangeAddress(0, 11, s_first - 1, 15, s_last - 1),
                  "BIC of a full-covariance mixture against k", "Components k", "BIC (lower is better)")
    k_values = "$L$%d:$L$%d" % (s_first, s_last)
    curve = bic.line(k_values, "$P$%d:$P$%d" % (s_first, s_last), "$P$%d" % (s_first - 1), BIC_COLOUR)
    bic.mark(curve, CIRCLE_SYMBOL, POINT_SIZE_MM * 1.5)
    chosen = bic.points(k_values, "$U$%d:$U$%d" % (s_first, s_last), "$U$%d" % (s_first - 1), CHOSEN_COLOUR,
                        CIRCLE_SYMBOL, POINT_SIZE_MM * 2.5)
    bic.set_series([curve, chosen])
    bic.chart.HasLegend = False


def fill(office, document, sheet, data):
    layout = build(SheetWriter(sheet), data)
    document.calculateAll()
    add_charts(office, sheet, layout)
    data_with_headings = "A%d:B%d" % (FIRST_DATA_ROW - 1, layout.last_row)
    add_dialog_report(office, document, sheet, "gmm", data_with_headings,
                      {"data": data_with_headings, "labels": True, "covariance": "full",
                       "k": "%d-%d" % (CANDIDATES[0], CANDIDATES[-1])}, "K4")


def main():
    make_sample(__doc__.splitlines()[0], "gmm.ods", make_kmeans.CSV_FILE, make_kmeans.R_EXPORT,
                make_kmeans.read_data, SHEET_NAME, "statgpu Gaussian mixtures", fill, "eruptions")


if __name__ == "__main__":
    main()
