#!/usr/bin/env python3
"""Makes samples/igmm.ods: IGMMFIT on the response times of six simulated
subjects, a column each: a mixture of a fast and a slow inverse Gaussian
per subject, its parameters and a summary per subject, and a histogram of
one subject (chosen in a cell) with the fitted mixture's density over it.

    /usr/bin/python3 samples/make_igmm.py [--oxt build/statgpu.oxt]
                                          [--output samples/igmm.ods]

The data are simulated here, the same numbers on every run: Python's
random.Random(SEED), normal deviates by Box and Muller, inverse Gaussian
deviates by the method of Michael, Schucany and Haas (1976), rounded to the
millisecond. The workbook holds them as values and says how they were made.

Every subject is a column of Data, and the columns differ in length (310
to 600 trials): IGMMFIT skips the empty cells below a shorter column. The
histogram's counts are COUNTIFS formulas over the chosen subject's column,
and the curve over them is the fitted mixture's density scaled to counts,
n x bin width x sum_j alpha_j f(x; mu_j, lambda_j), computed in the sheet
from the parameters table, so both follow when the subject, the bin width
or the data change.

The workbook is built by a headless LibreOffice with statgpu.oxt installed
in a throwaway profile (samples/sample_tools.py's make_sample), and its
chart by sample_tools' HistogramChart. The sheet "Inverse Gaussian mixture"
is the report the analysis menu's dialog writes for the same subjects and k
(sample_tools.add_dialog_report).
"""

import math
import random

from sample_tools import BOLD, HistogramChart, SheetWriter, add_dialog_report, column_letter, make_sample

SHEET_NAME = "Subjects"
SEED = 13                          # issue 13 asked for this sample
COMPONENTS = 2                     # IGMMFIT's k: a fast and a slow mode
# Each subject's trials and the mixture they are drawn from: the share of
# fast responses, then mu and lambda (seconds) of the fast and the slow mode.
SUBJECTS = (
    (420, 0.70, 0.42, 5.0, 1.20, 20.0),
    (560, 0.60, 0.48, 6.0, 1.40, 24.0),
    (310, 0.75, 0.38, 4.0, 1.05, 15.0),
    (600, 0.55, 0.52, 7.0, 1.55, 30.0),
    (480, 0.65, 0.45, 5.5, 1.30, 22.0),
    (350, 0.50, 0.40, 4.5, 1.25, 18.0),
)
FIRST_DATA_ROW = 5                 # spreadsheet row of the first trial (1-based)
BIN_COUNT = 60
BIN_WIDTH = 0.05                   # seconds; a cell of the sheet, which the reader may change
SHOWN_SUBJECT = 4                  # the histogram's subject when the workbook opens: two clear modes
COLUMN_COLOUR = 0x9DC3E6
COLUMN_BORDER = 0x2F5597
CURVE_COLOUR = 0xD62728
CURVE_WIDTH = 50                   # 1/100 mm
# Chart size and the sheet's row height, in 1/100 mm.
HISTOGRAM_CHART_SIZE = (24000, 13500)
ROW_HEIGHT = 452


def normal_deviate(generator):
    """A standard normal deviate by Box and Muller's transform."""
    u = generator.random()
    while u <= 0.0:
        u = generator.random()
    return math.sqrt(-2.0 * math.log(u)) * math.cos(2.0 * math.pi * generator.random())


def inverse_gaussian_deviate(generator, mu, shape):
    """An inverse Gaussian deviate of mean mu and shape lambda: Michael,
    Schucany and Haas (1976), the smaller root of the chi-square equation,
    kept with probability mu / (mu + x), else its reflection mu^2 / x."""
    y = normal_deviate(generator) ** 2
    x = mu + mu * mu * y / (2.0 * shape) - mu / (2.0 * shape) * math.sqrt(4.0 * mu * shape * y + mu * mu * y * y)
    return x if generator.random() <= mu / (mu + x) else mu * mu / x


def simulate():
    """The response times of every subject (seconds, to the millisecond),
    a list per subject, in the order they were drawn."""
    generator = random.Random(SEED)
    subjects = []
    for trials, fast_share, fast_mu, fast_shape, slow_mu, slow_shape in SUBJECTS:
        times = []
        for _ in range(trials):
            fast = generator.random() < fast_share
            time = inverse_gaussian_deviate(generator, fast_mu if fast else slow_mu,
                                            fast_shape if fast else slow_shape)
            times.append(round(time, 3))
        assert min(times) > 0.0, "a response time rounded to 0"
        subjects.append(times)
    return subjects


def inverse_gaussian_formula(x, alpha, mu, shape):
    """alpha f(x; mu, lambda) as a formula of the cells named by the
    arguments: f(x) = sqrt(lambda / (2 pi x^3)) exp(-lambda (x - mu)^2 / (2 mu^2 x))."""
    return ("{a}*SQRT({l}/(2*PI()*{x}^3))*EXP(-{l}*({x}-{m})^2/(2*{m}^2*{x}))"
            .format(a=alpha, m=mu, l=shape, x=x))


def allow_subjects(cell, count):
    """Lets cell take only a whole number from 1 to count, with a message
    saying so, where another would make every formula of the histogram an
    error."""
    from com.sun.star.sheet.ConditionOperator import BETWEEN
    from com.sun.star.sheet.ValidationType import WHOLE
    validation = cell.getPropertyValue("Validation")
    validation.Type = WHOLE
    validation.setOperator(BETWEEN)
    validation.setFormula1("1")
    validation.setFormula2(str(count))
    validation.ShowErrorMessage = True
    validation.ErrorMessage = "A subject from 1 to %d" % count
    cell.setPropertyValue("Validation", validation)


class Layout:
    """Where the blocks go; formulas and the chart read their ranges from here."""

    def __init__(self, subjects):
        self.last_row = FIRST_DATA_ROW + max(len(times) for times in subjects) - 1
        self.last_column = column_letter(len(subjects) - 1)
        self.data = "$A$%d:$%s$%d" % (FIRST_DATA_ROW, self.last_column, self.last_row)
        self.parameters = None       # the parameters table, "$H$a:$L$b"
        self.chart_row = None        # the histogram chart's top left corner, in column H
        self.bins = None             # (first, last) rows of the bins table


def build(writer, subjects):
    layout = Layout(subjects)
    first = FIRST_DATA_ROW
    count = len(subjects)
    shown = layout.data.replace("$", "")

    writer.text("A1", "statgpu inverse Gaussian mixtures: IGMMFIT on the response times of %d simulated subjects"
                % count, bold=True)
    writer.text("A2", "Data: simulated response times in seconds, a column per subject (%d to %d trials: the "
                      "columns differ in length), each a mixture of a fast and a slow inverse Gaussian mode. "
                      "samples/make_igmm.py drew them with Python's random.Random(%d): normal deviates by Box "
                      "and Muller, inverse Gaussian ones by Michael, Schucany and Haas (1976), rounded to the "
                      "millisecond. The table right of them gives each subject's mixture."
                % (min(map(len, subjects)), max(map(len, subjects)), SEED))
    writer.text("A3", "IGMMFIT(Data; k; Output; Starts; MaxIter; Seed) is an array formula: select a range of the "
                      "result's size, type the formula, press Ctrl+Shift+Enter.")
    for index, times in enumerate(subjects):
        column = column_letter(index)
        writer.text("%s4" % column, "Subject %d" % (index + 1), bold=True)
        writer.sheet.getCellRangeByName("%s%d:%s%d" % (column, first, column, first + len(times) - 1)) \
            .setDataArray(tuple((t,) for t in times))

    row = 5

    def block(title, *lines):
        """A bold title and its lines of explanation in column H."""
        nonlocal row
        row = writer.block("H", row, title, lines)

    def headings_at(column, texts):
        for offset, text in enumerate(texts):
            writer.text("%s%d" % (chr(ord(column) + offset), row), text, bold=True)

    # ---- how the data were made
    block("How the response times were drawn",
          "Each trial is fast with the subject's fast share, else slow, and its time an inverse Gaussian deviate "
          "of that mode's mean mu and shape lambda (seconds):",
          "f(x) = SQRT(lambda / (2 pi x^3)) EXP(-lambda (x - mu)^2 / (2 mu^2 x)), of variance mu^3 / lambda.")
    row -= 1  # the header row right below the explanation
    headings_at("H", ("Subject", "Trials", "Fast share", "Fast mu", "Fast lambda", "Slow mu", "Slow lambda"))
    row += 1
    for index, parameters in enumerate(SUBJECTS):
        writer.value("H%d" % row, float(index + 1))
        for offset, number in enumerate(parameters):
            writer.value("%s%d" % (chr(ord("I") + offset), row), float(number))
        row += 1
    row += 1

    # ---- the fit
    rows = count * COMPONENTS
    parameter_first = row + 5  # the title, two lines, a blank row and the header
    parameter_last = parameter_first + rows - 1
    layout.parameters = "$H$%d:$L$%d" % (parameter_first, parameter_last)
    block("The fitted mixtures",
          "=IGMMFIT(%s; %d) fits a mixture of %d inverse Gaussians to every column, each from 10 random starts "
          "(the best kept): a row per subject and component." % (shown, COMPONENTS, COMPONENTS),
          "The components come in the order EM ended in; column M names the mode (the smaller mu is the fast "
          "one), N is the mode's standard deviation SQRT(mu^3 / lambda).")
    headings_at("H", ("Subject", "Component", "alpha", "mu (s)", "lambda (s)", "Mode", "SD (s)"))
    row += 1
    assert row == parameter_first
    writer.array_formula("H%d:L%d" % (parameter_first, parameter_last), "=IGMMFIT(%s;%d)" % (layout.data, COMPONENTS))
    subject_column = "$H$%d:$H$%d" % (parameter_first, parameter_last)
    mu_column = "$K$%d:$K$%d" % (parameter_first, parameter_last)
    for r in range(parameter_first, parameter_last + 1):
        writer.formula("M%d" % r, '=IF(K%d=MINIFS(%s;%s;H%d);"fast";"slow")' % (r, mu_column, subject_column, r))
        writer.formula("N%d" % r, "=SQRT(K%d^3/L%d)" % (r, r))
    row += rows + 1

    block("Summary per subject",
          "=IGMMFIT(%s; %d; \"summary\"): the values fitted (the column's numbers), the log-likelihood, the EM "
          "iterations of the best start," % (shown, COMPONENTS),
          "whether it converged (1), which start was best, components re-seeded after collapsing, and the status.")
    headings_at("H", ("Subject", "Values", "Log-likelihood", "Iterations", "Converged", "Best start",
                      "Re-seeded", "Status"))
    row += 1
    writer.array_formula("H%d:O%d" % (row, row + count - 1), '=IGMMFIT(%s;%d;"summary")' % (layout.data, COMPONENTS))
    row += count + 1

    # ---- the histogram of one subject
    block("One subject's histogram and the fitted density",
          "Type a subject (1 to %d) in I%d; the bin width (seconds) in I%d may be changed too. The counts are "
          "COUNTIFS over the subject's column," % (count, row + 4, row + 5),
          "the curve is the fitted mixture scaled to counts: n x bin width x sum of alpha_j f(bin centre; mu_j, "
          "lambda_j), from the parameters table above.")
    row -= 1
    subject_cell, width_cell = "$I$%d" % (row + 1), "$I$%d" % (row + 2)
    times = "INDEX(%s;0;%s)" % (layout.data, subject_cell)   # the chosen subject's column
    writer.text("H%d" % (row + 1), "Subject shown", bold=True)
    writer.value(subject_cell, float(SHOWN_SUBJECT))
    allow_subjects(writer.cell(subject_cell), count)
    writer.text("H%d" % (row + 2), "Bin width (s)", bold=True)
    writer.value(width_cell, BIN_WIDTH)
    writer.text("H%d" % (row + 3), "Trials n", bold=True)
    trials_cell = "$I$%d" % (row + 3)
    writer.formula(trials_cell, "=COUNT(%s)" % times)
    writer.text("H%d" % (row + 4), "Beyond the bins", bold=True)
    writer.formula("I%d" % (row + 4), '=COUNTIF(%s;">="&%d*%s)' % (times, BIN_COUNT, width_cell))
    writer.formula("J%d" % (row + 4), '="trials of "&%d*%s&" s or more, not in the histogram"'
                   % (BIN_COUNT, width_cell))
    # The chosen subject's parameters: its rows of the parameters table.
    for offset, heading in enumerate(("Component", "alpha", "mu (s)", "lambda (s)")):
        writer.text("%s%d" % (chr(ord("K") + offset), row + 1), heading, bold=True)
    component_cells = []
    for j in range(COMPONENTS):
        r = row + 2 + j
        writer.value("K%d" % r, float(j + 1))
        cells = []
        for offset in range(3):
            column = chr(ord("L") + offset)
            writer.formula("%s%d" % (column, r), "=INDEX(%s;(%s-1)*%d+$K%d;%d)"
                           % (layout.parameters, subject_cell, COMPONENTS, r, 3 + offset))
            cells.append("$%s$%d" % (column, r))
        component_cells.append(cells)
    row += max(4, COMPONENTS + 1) + 2

    layout.chart_row = row
    row += -(-HISTOGRAM_CHART_SIZE[1] // ROW_HEIGHT) + 1

    headings_at("H", ("From (s)", "To (s)", "Bin centre (s)"))
    # The count column's heading names the chart's columns: live, so that
    # the legend says which subject is shown.
    writer.formula("K%d" % row, '="Subject "&%s&", "&%s&" trials: count"' % (subject_cell, trials_cell))
    writer.text("L%d" % row, "Fitted mixture: n x bin width x density")
    writer.sheet.getCellRangeByName("K%d:L%d" % (row, row)).setPropertyValues(
        ("CharWeight", "IsTextWrapped"), (BOLD, True))
    row += 1
    layout.bins = (row, row + BIN_COUNT - 1)
    for b in range(BIN_COUNT):
        r = row + b
        # Rounded, so that an edge is the decimal it shows (0.3, not 3 x 0.1).
        writer.formula("H%d" % r, "=ROUND(%d*%s;10)" % (b, width_cell))
        writer.formula("I%d" % r, "=ROUND(%d*%s;10)" % (b + 1, width_cell))
        writer.formula("J%d" % r, "=(H%d+I%d)/2" % (r, r))
        writer.formula("K%d" % r, '=COUNTIFS(%s;">="&H%d;%s;"<"&I%d)' % (times, r, times, r))
        density = "+".join(inverse_gaussian_formula("$J%d" % r, *cells) for cells in component_cells)
        writer.formula("L%d" % r, "=%s*%s*(%s)" % (trials_cell, width_cell, density))

    columns = writer.sheet.getColumns()
    widths_mm = [20] * count + [4, 26, 24, 24, 24, 24, 24, 24, 24]
    for index, width_mm in enumerate(widths_mm):
        columns.getByIndex(index).setPropertyValue("Width", width_mm * 100)
    return layout


def add_chart(office, sheet, layout):
    """The chosen subject's counts as columns, the fitted counts as a curve
    over them."""
    from com.sun.star.awt import Rectangle
    from com.sun.star.chart.ChartLegendPosition import BOTTOM
    from com.sun.star.table import CellRangeAddress

    top = sheet.getCellRangeByName("H%d" % layout.chart_row).getPropertyValue("Position")
    first, last = layout.bins
    chart = HistogramChart(office, sheet, SHEET_NAME, "SubjectHistogram",
                           Rectangle(top.X, top.Y, *HISTOGRAM_CHART_SIZE),
                           CellRangeAddress(0, 9, first - 2, 11, last - 1), "$J$%d:$J$%d" % (first, last),
                           "Response times of one subject and the fitted inverse Gaussian mixture",
                           "Response time (s), bin centre", "Trials")
    chart.set_columns("$K$%d:$K$%d" % (first, last), "$K$%d" % (first - 1), COLUMN_COLOUR, COLUMN_BORDER)
    chart.set_curves([("$L$%d:$L$%d" % (first, last), "$L$%d" % (first - 1), CURVE_COLOUR, CURVE_WIDTH)])
    chart.chart.getLegend().Alignment = BOTTOM


def set_number_formats(document, sheet, layout):
    """Bin edges to the hundredth, centres to the thousandth, fitted counts to
    the tenth: the bins table reads as a table."""
    from com.sun.star.lang import Locale
    formats = document.getNumberFormats()

    def key(code):
        found = formats.queryKey(code, Locale(), False)
        return found if found != -1 else formats.addNew(code, Locale())

    first, last = layout.bins
    for columns, code in (("H%d:I%d", "0.00"), ("J%d:J%d", "0.000"), ("L%d:L%d", "0.0")):
        sheet.getCellRangeByName(columns % (first, last)).setPropertyValue("NumberFormat", key(code))


def fill(office, document, sheet, subjects):
    layout = build(SheetWriter(sheet), subjects)
    set_number_formats(document, sheet, layout)
    add_chart(office, sheet, layout)
    data_with_headings = "A%d:%s%d" % (FIRST_DATA_ROW - 1, layout.last_column, layout.last_row)
    add_dialog_report(office, document, sheet, "igmm", data_with_headings,
                      {"data": data_with_headings, "labels": True, "k": str(COMPONENTS)}, "H4")


def main():
    make_sample(__doc__.splitlines()[0], "igmm.ods", None, None, simulate, SHEET_NAME,
                "statgpu inverse Gaussian mixtures", fill, "subjects")


if __name__ == "__main__":
    main()
