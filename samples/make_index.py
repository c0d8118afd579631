#!/usr/bin/env python3
"""Makes samples/index.ods: the start sheet of the samples, a row per sample
workbook with a link to it, what it shows and the statgpu functions it
uses, and GPUINFO() saying which backend computes them.

    /usr/bin/python3 samples/make_index.py [--oxt build/statgpu.oxt]
                                           [--output samples/index.ods]

The workbooks are sample_tools.SAMPLES; the functions each uses are read
from its formulas, so the list cannot drift from the workbook. A link is a
URL field in the cell (Ctrl+click opens the workbook in a new window). It
is given as the sample's absolute URL, and the office stores it relative to
the file ("../kmeans.ods" beside it: ODF counts from inside the package),
so the start sheet works from a clone anywhere; the script checks that the
stored links are relative. Loading resolves them against the document's
own folder.

A headless LibreOffice with statgpu.oxt installed (in a throwaway profile)
builds the workbook, as samples/make_kmeans.py does, with the helpers of
samples/sample_tools.py.
"""

import os
import re
import zipfile

from sample_tools import HERE, MENU_PATH, SAMPLES, SheetWriter, lo_session, make_sample, statgpu_functions

SHEET_NAME = "Samples"
HEADING_ROW = 3
TITLE_HEIGHT = 14.0  # points


def read_data():
    return list(SAMPLES)


def functions_used(office, path):
    """The statgpu functions the workbook at path calls, in the order its
    cells first call them."""
    document = office.load(path)
    try:
        found = []
        for index in range(document.Sheets.getCount()):
            for _, cell in lo_session.formula_cells(document.Sheets.getByIndex(index)):
                for name in statgpu_functions(cell.getFormula()):
                    if name not in found:
                        found.append(name)
        return found
    finally:
        document.close(True)


def add_link(document, cell, url, text):
    """A URL field showing text in cell, opening url in a new window."""
    field = document.createInstance("com.sun.star.text.TextField.URL")
    field.URL = url
    field.Representation = text
    field.TargetFrame = "_blank"
    cell.insertTextContent(cell.createTextCursor(), field, False)


def build(office, document, writer, samples):
    import uno
    for column, heading in zip("ABC", ("Workbook", "What it shows", "Functions")):
        writer.text("%s%d" % (column, HEADING_ROW), heading, bold=True)
    row = HEADING_ROW + 1
    for name, what in samples:
        path = os.path.join(HERE, name)
        add_link(document, writer.cell("A%d" % row), uno.systemPathToFileUrl(path), name)
        writer.text("B%d" % row, what)
        writer.text("C%d" % row, ", ".join(functions_used(office, path)))
        row += 1
    # Fitted to the table alone: the title and the lines below it may run
    # on into the next columns.
    columns = writer.sheet.getColumns()
    for index in range(3):
        columns.getByIndex(index).setPropertyValue("OptimalWidth", True)

    writer.text("A1", "statgpu samples", bold=True)
    writer.cell("A1").setPropertyValue("CharHeight", TITLE_HEIGHT)
    row += 1
    writer.text("A%d" % row, "Backend", bold=True)
    writer.formula("B%d" % row, "=GPUINFO()")
    writer.text("A%d" % (row + 2), "Ctrl+click a workbook's name to open it. Calc recalculates its statgpu cells "
                                   "when it opens; scripts/run.sh without a display prints each workbook's "
                                   "results and what they are checked against.")
    writer.text("A%d" % (row + 3), "Each workbook also holds a report sheet that %s made from the same data and "
                                   "parameters, its results written as values." % MENU_PATH)


def check_relative_links(path, count):
    """Fails unless the workbook at path stores count links, all relative:
    an absolute one would name a folder of the machine that made it."""
    with zipfile.ZipFile(path) as package:
        content = package.read("content.xml").decode("utf-8")
    links = re.findall(r'<text:a [^>]*xlink:href="([^"]*)"', content)
    if len(links) != count or any(re.match(r"[a-z]+:|/", link) for link in links):
        raise SystemExit("statgpu: %s stores the links %r, not %d relative ones" % (path, links, count))


def fill(office, document, sheet, samples):
    build(office, document, SheetWriter(sheet), samples)


def main():
    path = make_sample(__doc__.splitlines()[0], "index.ods", None, None, read_data, SHEET_NAME,
                       "statgpu samples", fill, "sample workbooks")
    check_relative_links(path, len(SAMPLES))


if __name__ == "__main__":
    main()
