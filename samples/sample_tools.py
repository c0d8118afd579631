"""sample_tools.py: what the scripts of samples/ share: the list of sample
workbooks, how a formula names a statgpu function, and for the make_*.py
scripts the command line (--oxt, --output, --from-r), re-exporting a data set
from R, the headless LibreOffice session (statgpu.oxt installed in a
throwaway profile) that builds a workbook and stores it, and the report sheet
the analysis menu's dialog adds to it."""

import argparse
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "libreoffice"))
import lo_session  # noqa: E402

BOLD = 150.0  # com.sun.star.awt.FontWeight.BOLD

# The sample workbooks, in the order the start sheet (index.ods, made by
# make_index.py) lists them and show_sample.py --all checks them: the file
# beside this script and, in a line, what it shows.
SAMPLES = (
    ("order-statistics.ods", "Median, k-th smallest and largest, quantiles of ozone readings beside Calc's own"),
    ("kmeans.ods", "Old Faithful's eruptions in two k-means clusters, with a scatter chart"),
    ("lts.ods", "Robust regression of the stack loss data beside LINEST, its outliers flagged"),
    ("gmm.ods", "Gaussian mixtures of Old Faithful, k chosen by BIC, with 95% ellipses"),
    ("bestsubset.ods", "The best predictors of the Motor Trend cars' mpg for every subset size"),
    ("igmm.ods", "Inverse Gaussian mixtures of six subjects' response times, with a histogram"),
)

# How a formula read through the API (XCell.getFormula) names a statgpu
# function: the add-in's service name, upper-cased, before the function's.
STATGPU_FUNCTION = re.compile(r"\bORG\.STATGPU\.STATGPU\.([A-Z0-9]+)\(")


def statgpu_functions(formula):
    """The statgpu functions formula (as XCell.getFormula gives it) calls, in order."""
    return STATGPU_FUNCTION.findall(formula)


class SheetWriter:
    """Writes a sheet a cell at a time; rows are 1-based as Calc shows them."""

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

    def array_formula(self, range_name, formula):
        self.sheet.getCellRangeByName(range_name).setArrayFormula(formula)

    def block(self, column, row, title, lines):
        """A bold title in column at row and its lines of explanation below
        it; returns the row after them and a blank one."""
        self.text("%s%d" % (column, row), title, bold=True)
        for line in lines:
            row += 1
            self.text("%s%d" % (column, row), line)
        return row + 2


def column_letter(index):
    """A, B, ... of a 0-based column index (below 26)."""
    return chr(ord("A") + index)


def uno_size(millimetres):
    from com.sun.star.awt import Size
    hundredths = int(millimetres * 100)
    return Size(hundredths, hundredths)


def make_sample(description, output_name, csv_file, r_export, read_data, sheet_name, title, fill, what):
    """Parses the command line (description heads --help), exports csv_file
    from R again with r_export (an R expression taking the path) when asked,
    reads the data with read_data(), and stores a new workbook at --output
    (default samples/output_name) whose first sheet, named sheet_name (the
    document titled title), fill(office, document, sheet, data) builds; the
    workbook is recalculated before it is stored. Then
    says how many rows of the data (what they are) the workbook holds. Data
    made by the script itself have no CSV file: csv_file and r_export None,
    and no --from-r. Returns the workbook's path."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--oxt", default=os.path.join(ROOT, "build", "statgpu.oxt"),
                        help="the built extension (default: build/statgpu.oxt)")
    parser.add_argument("--output", default=os.path.join(HERE, output_name))
    if r_export is not None:
        parser.add_argument("--from-r", action="store_true",
                            help="export the data from R's datasets package again first")
    args = parser.parse_args()
    lo_session.ensure_uno()

    if r_export is not None and args.from_r:
        subprocess.run(["Rscript", "-e", r_export % csv_file], check=True)
    data = read_data()

    # Calc recalculates add-in cells whenever the workbook is opened. The values
    # stored in the file come from the CPU backend, whose GPUINFO text names no
    # folder of the machine that made the file.
    os.environ["STATGPU_BACKEND"] = "cpu"
    with lo_session.Session(timeout_s=600) as office:
        office.install_extension(args.oxt)
        document = office.new_spreadsheet()
        try:
            sheet = document.Sheets.getByIndex(0)
            sheet.setName(sheet_name)
            document.getDocumentProperties().Title = title
            fill(office, document, sheet, data)
            document.calculateAll()
            office.store(document, args.output)
        finally:
            document.close(True)
    print("wrote %s (%d %s)" % (os.path.relpath(args.output), len(data), what))
    return args.output


# The analysis menu that add_dialog_report drives, as a user finds it.
MENU_PATH = "Data > Statistics > GPU Statistics (statgpu)"
DIALOG_TIMEOUT_S = 300  # from OK to the report written: each sample takes seconds


def add_dialog_report(office, document, sheet, command, selection, fields, note_cell):
    """Adds a report sheet as a user of the analysis menu makes it: selects
    selection (a range of sheet, which the dialog's ranges start from), opens
    the dialog of org.statgpu.dialog:command, sets fields ({control: value}:
    a str is an edit field's text or the item shown in a list box, a bool a
    check box) and asks for every table as values, with charts, on a new
    sheet; then presses OK. A line at note_cell of sheet names the report's
    sheet and the menu entry that made it, and sheet is shown again. Returns
    the report sheet's name; raises with the dialog's message if it stays
    open."""
    import uno
    import unohelper
    from com.sun.star.frame import XDispatchResultListener
    from com.sun.star.frame.DispatchResultState import SUCCESS
    from com.sun.star.util import URL

    class Result(unohelper.Base, XDispatchResultListener):
        event = None

        def dispatchFinished(self, event):
            self.event = event

        def disposing(self, source):
            pass

    document.calculateAll()
    controller = document.getCurrentController()
    controller.setActiveSheet(sheet)
    controller.select(sheet.getCellRangeByName(selection))
    sheets_before = set(document.Sheets.getElementNames())

    url = URL()
    url.Complete = "org.statgpu.dialog:" + command
    dispatcher = controller.getFrame().queryDispatch(url, "", 0)
    if dispatcher is None:
        raise RuntimeError("no dispatch for %s: is statgpu.oxt installed?" % url.Complete)
    result = Result()
    dispatcher.dispatchWithNotification(url, (), result)
    if result.event is None or result.event.State != SUCCESS:
        raise RuntimeError("%s did not open its dialog: %s"
                           % (url.Complete, result.event.Result if result.event else "no answer"))
    dialog = result.event.Result
    entry = dialog.getModel().Title.replace(" (statgpu)", "")
    chosen = dict(fields, charts=True, target="A new sheet", write="Values")
    for name, value in chosen.items():
        model = dialog.getControl(name).getModel()
        if isinstance(value, bool):
            model.State = 1 if value else 0
        elif model.getPropertySetInfo().hasPropertyByName("StringItemList"):
            uno.invoke(model, "setPropertyValue",
                       ("SelectedItems", uno.Any("[]short", (model.StringItemList.index(value),))))
        else:
            model.Text = value

    # The run is posted to the office's main thread; the dialog closes when
    # the report is written. When it is not, OK is enabled again and the
    # message line says why.
    ok = dialog.getControl("ok")
    ok.getPeer().getAccessibleContext().doAccessibleAction(0)
    deadline = time.monotonic() + DIALOG_TIMEOUT_S
    while dialog.getPeer() is not None:
        state = open_dialog_state(dialog, ok)
        if state is not None:
            message, enabled = state
            if (message and enabled) or time.monotonic() > deadline:
                raise RuntimeError("%s: the dialog wrote no report: %s" % (entry, message or "no answer"))
        time.sleep(0.1)
    added = set(document.Sheets.getElementNames()) - sheets_before
    if len(added) != 1:
        raise RuntimeError("%s: expected one report sheet, found %s" % (entry, sorted(added) or "none"))
    report = added.pop()

    note = sheet.getCellRangeByName(note_cell)
    note.setString('The sheet "%s" was made by %s > %s, from these data with the parameters of the '
                   "formulas here, its results written as values." % (report, MENU_PATH, entry))
    note.setPropertyValue("CharPosture", uno.Enum("com.sun.star.awt.FontSlant", "ITALIC"))
    controller.setActiveSheet(sheet)
    controller.select(sheet.getCellRangeByName("A1"))
    return report


def open_dialog_state(dialog, ok):
    """(its message, whether ok is enabled) of a dialog still open, or None
    once it is closing: it may close between any two calls, and its
    controls' models are then gone."""
    message = dialog.getControl("message")
    models = (message.getModel() if message is not None else None, ok.getModel())
    if None in models:
        return None
    return models[0].Label, models[1].Enabled


class Chart:
    """A chart on a sheet whose series are made through the chart2 API from
    ranges of the sheet; XYChart and HistogramChart say how they are drawn."""

    def __init__(self, office, sheet, sheet_name, name, rectangle, address, diagram, title, x_title, y_title):
        """Adds chart name to sheet (named sheet_name) at rectangle over the
        cells of address, as diagram (a com.sun.star.chart diagram service),
        with its title, axis titles and a white wall."""
        self.office, self.sheet_name = office, sheet_name
        charts = sheet.getCharts()
        charts.addNewByName(name, rectangle, (address,), False, False)
        chart = charts.getByName(name).getEmbeddedObject()
        chart.setDiagram(chart.createInstance(diagram))
        chart.HasMainTitle = True
        chart.getTitle().String = title
        chart.HasLegend = True
        diagram = chart.getDiagram()
        diagram.HasXAxisTitle = True
        diagram.getXAxisTitle().String = x_title
        diagram.HasYAxisTitle = True
        diagram.getYAxisTitle().String = y_title
        diagram.getWall().FillColor = 0xFFFFFF
        self.chart = chart
        self.provider = chart.getDataProvider()
        self.manager = office.context.ServiceManager

    def sequence(self, range_name, role):
        data = self.provider.createDataSequenceByRangeRepresentation("$%s.%s" % (self.sheet_name, range_name))
        data.Role = role
        return data

    def labelled(self, values, label=None):
        item = self.manager.createInstanceWithContext("com.sun.star.chart2.data.LabeledDataSequence",
                                                      self.office.context)
        item.setValues(values)
        if label is not None:
            item.setLabel(label)
        return item

    def coordinate_system(self):
        return self.chart.getFirstDiagram().getCoordinateSystems()[0]

    def new(self, service):
        return self.manager.createInstanceWithContext(service, self.office.context)


class XYChart(Chart):
    """A scatter chart: every series has its own x values."""

    def __init__(self, office, sheet, sheet_name, name, rectangle, address, title, x_title, y_title):
        super().__init__(office, sheet, sheet_name, name, rectangle, address, "com.sun.star.chart.XYDiagram",
                         title, x_title, y_title)

    def series(self, x_range, y_range, label_range):
        """A data series of the sheet's ranges, its name from label_range; the
        caller styles it."""
        item = self.new("com.sun.star.chart2.DataSeries")
        item.setData((self.labelled(self.sequence(x_range, "values-x")),
                      self.labelled(self.sequence(y_range, "values-y"), self.sequence(label_range, "label"))))
        return item

    def points(self, x_range, y_range, label_range, colour, symbol, size_mm):
        """A series drawn as markers only: symbol (chart2 Symbol.StandardSymbol)
        of size_mm, in colour (0xRRGGBB)."""
        from com.sun.star.drawing.LineStyle import NONE
        item = self.series(x_range, y_range, label_range)
        item.LineStyle = NONE
        item.Color = colour
        self.mark(item, symbol, size_mm)
        return item

    def line(self, x_range, y_range, label_range, colour, width=35):
        """A series drawn as a line (width in 1/100 mm) without markers."""
        from com.sun.star.drawing.LineStyle import SOLID
        item = self.series(x_range, y_range, label_range)
        item.LineStyle = SOLID
        item.LineWidth = width
        item.Color = colour
        item.Symbol = no_symbol()
        return item

    @staticmethod
    def mark(item, symbol, size_mm):
        """Draws a marker at each point of the series item, in its colour."""
        from com.sun.star.chart2 import Symbol
        from com.sun.star.chart2.SymbolStyle import STANDARD
        marker = Symbol()
        marker.Style = STANDARD
        marker.StandardSymbol = symbol
        marker.Size = uno_size(size_mm)
        marker.FillColor = item.Color
        marker.BorderColor = item.Color
        item.Symbol = marker

    def set_series(self, all_series):
        self.coordinate_system().getChartTypes()[0].setDataSeries(tuple(all_series))


def no_symbol():
    from com.sun.star.chart2 import Symbol
    from com.sun.star.chart2.SymbolStyle import NONE
    marker = Symbol()
    marker.Style = NONE
    return marker


class HistogramChart(Chart):
    """Counts per bin as touching columns over a category axis (the bins),
    and curves over the same bins drawn as lines on top of them: a column
    chart type and a line chart type in one coordinate system, as Calc's own
    "column and line" charts are."""

    def __init__(self, office, sheet, sheet_name, name, rectangle, address, categories_range, title, x_title,
                 y_title):
        """As Chart's, with the bins' names (the axis labels) from categories_range."""
        super().__init__(office, sheet, sheet_name, name, rectangle, address, "com.sun.star.chart.BarDiagram",
                         title, x_title, y_title)
        axis = self.coordinate_system().getAxisByDimension(0, 0)
        scale = axis.getScaleData()
        scale.Categories = self.labelled(self.sequence(categories_range, "categories"))
        axis.setScaleData(scale)

    def series(self, values_range, label_range, colour):
        item = self.new("com.sun.star.chart2.DataSeries")
        item.setData((self.labelled(self.sequence(values_range, "values-y"), self.sequence(label_range, "label")),))
        item.Color = colour
        return item

    def set_columns(self, values_range, label_range, colour, border_colour):
        """The counts: one series of columns without gaps between them."""
        import uno
        columns = self.series(values_range, label_range, colour)
        columns.BorderColor = border_colour
        chart_type = self.coordinate_system().getChartTypes()[0]
        chart_type.setDataSeries((columns,))
        # The property is spelt so (chart2's ColumnChartType); a sequence
        # of long needs its UNO type spelt out.
        uno.invoke(chart_type, "setPropertyValue", ("GapwidthSequence", uno.Any("[]long", (0,))))
        return columns

    def set_curves(self, curves):
        """curves: (values_range, label_range, colour, width in 1/100 mm)
        each, straight lines between the bins' values. (Not splines: an
        ODF chart keeps one interpolation for its whole plot area, which
        Calc 7.4 gives back to the columns, not the lines, when it opens the
        file.)"""
        from com.sun.star.drawing.LineStyle import SOLID
        chart_type = self.new("com.sun.star.chart2.LineChartType")
        self.coordinate_system().addChartType(chart_type)
        all_series = []
        for values_range, label_range, colour, width in curves:
            item = self.series(values_range, label_range, colour)
            item.LineStyle = SOLID
            item.LineWidth = width
            item.Symbol = no_symbol()
            all_series.append(item)
        chart_type.setDataSeries(tuple(all_series))
        return all_series
