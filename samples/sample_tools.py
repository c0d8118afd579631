"""sample_tools.py: what the make_*.py scripts of samples/ share: the command
line (--oxt, --output, --from-r), re-exporting a data set from R, and the
headless LibreOffice session (statgpu.oxt installed in a throwaway profile)
that builds a workbook and stores it."""

import argparse
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "libreoffice"))
import lo_session  # noqa: E402

BOLD = 150.0  # com.sun.star.awt.FontWeight.BOLD


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
    document titled title), fill(office, document, sheet, data) builds. Then
    says how many rows of the data (what they are) the workbook holds."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--oxt", default=os.path.join(ROOT, "build", "statgpu.oxt"),
                        help="the built extension (default: build/statgpu.oxt)")
    parser.add_argument("--output", default=os.path.join(HERE, output_name))
    parser.add_argument("--from-r", action="store_true",
                        help="export the data from R's datasets package again first")
    args = parser.parse_args()
    lo_session.ensure_uno()

    if args.from_r:
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
            office.store(document, args.output)
        finally:
            document.close(True)
    print("wrote %s (%d %s)" % (os.path.relpath(args.output), len(data), what))


class XYChart:
    """A scatter chart on a sheet whose series are made through the chart2
    API, so that every series has its own x values."""

    def __init__(self, office, sheet, sheet_name, name, rectangle, address, title, x_title, y_title):
        """Adds chart name to sheet (named sheet_name) at rectangle over the
        cells of address, with its title, axis titles and a white wall."""
        self.office, self.sheet_name = office, sheet_name
        charts = sheet.getCharts()
        charts.addNewByName(name, rectangle, (address,), False, False)
        chart = charts.getByName(name).getEmbeddedObject()
        chart.setDiagram(chart.createInstance("com.sun.star.chart.XYDiagram"))
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

    def series(self, x_range, y_range, label_range):
        """A data series of the sheet's ranges, its name from label_range; the
        caller styles it."""
        item = self.manager.createInstanceWithContext("com.sun.star.chart2.DataSeries", self.office.context)
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
        from com.sun.star.chart2 import Symbol
        from com.sun.star.chart2.SymbolStyle import NONE as NO_SYMBOL
        from com.sun.star.drawing.LineStyle import SOLID
        item = self.series(x_range, y_range, label_range)
        item.LineStyle = SOLID
        item.LineWidth = width
        item.Color = colour
        marker = Symbol()
        marker.Style = NO_SYMBOL
        item.Symbol = marker
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
        chart_type = self.chart.getFirstDiagram().getCoordinateSystems()[0].getChartTypes()[0]
        chart_type.setDataSeries(tuple(all_series))
