"""calc_dialogs.py: the LibreOffice checks of the analysis menu, run by
test_calc.py in its office session (statgpu.oxt installed).

  - the menu: the extension's Addons configuration merges a submenu "GPU
    Statistics (statgpu)" into Calc's Data > Statistics, for spreadsheets
    only, with an entry per analysis and About; every entry's URL is
    dispatched in a Calc window, and none in another kind of document where
    the office has one; the window's real menu bar, read through its
    accessibility tree, holds the submenu, and choosing each analysis's entry
    there opens its dialog;
  - each analysis (median and quantiles, k-means, Gaussian mixture, LTS,
    best subsets, inverse Gaussian mixture): its dialog opened from the
    menu's URL, filled through the UNO API (the controls are named by field),
    run by clicking OK (through the button's accessible action, as a click),
    and the report sheet read back: every table equals the cell function's
    array formula on the same data (written beside it here, in a sheet of
    its own; 1e-12 relative, the same engine run twice), the order
    statistics equal Calc's own COUNT, MIN, PERCENTILE.INC, MEDIAN and MAX,
    and the report has its chart with the series the method draws;
  - live formulas: the report's tables are the functions' array formulas;
  - results to a cell of the sheet, and to a new document;
  - invalid fields: the message names the field and nothing is written;
  - undo: one undo removes the whole report;
  - stop: a long run stopped by org.statgpu.dialog:stop (the dialog's Stop
    does the same) writes nothing;
  - the range picker hides the dialog while a range is picked and shows it
    again when the picking ends;
  - About: the version and the backend.
"""

import csv
import math
import os
import random
import time

PROTOCOL = "org.statgpu.dialog:"
ANALYSES = ["median", "kmeans", "gmm", "lts", "bestsubset", "igmm"]
RELATIVE_TOLERANCE = 1e-12
# The engine's tables of each method, in the order a report writes them.
TABLES = {
    "kmeans": ["centroids", "labels", "sizes", "summary"],
    "gmm": ["summary", "weights", "means", "covariances", "labels", "probabilities", "density", "selection"],
    "lts": ["coefficients", "weights", "residuals", "summary", "subset"],
    "bestsubset": ["subsets", "which", "coefficients", "summary"],
    "igmm": ["parameters", "summary", "labels"],
}
# The tables with a row per row of the data, which a report writes after the others.
PER_ROW = {"kmeans": {"labels"}, "gmm": {"labels", "probabilities", "density"}, "lts": {"weights", "residuals"},
           "bestsubset": set(), "igmm": {"labels"}}
SHEET_NAMES = {"median": "Order statistics", "kmeans": "K-means", "gmm": "Gaussian mixture",
               "lts": "Robust regression", "bestsubset": "Best subsets", "igmm": "Inverse Gaussian mixture"}


def url_of(text):
    from com.sun.star.util import URL
    url = URL()
    url.Complete = text
    return url


def dispatch(frame, command):
    """Dispatches the menu's URL in frame; returns (state, result): the dialog's control, or About's text."""
    import unohelper
    from com.sun.star.frame import XDispatchResultListener

    class Listener(unohelper.Base, XDispatchResultListener):
        def __init__(self):
            self.state, self.result = None, None

        def dispatchFinished(self, event):
            self.state, self.result = event.State, event.Result

        def disposing(self, source):
            pass

    url = url_of(PROTOCOL + command)
    handler = frame.queryDispatch(url, "", 0)
    if handler is None:
        return None, None
    listener = Listener()
    handler.dispatchWithNotification(url, (), listener)
    return listener.state, listener.result


def set_field(dialog, name, value):
    model = dialog.getControl(name).getModel()
    if hasattr(model, "StringItemList"):
        model.SelectedItems = (list(model.StringItemList).index(value),)
    elif name in ("labels", "charts", "intercept") or name.startswith("output_"):
        model.State = 1 if value else 0
    else:
        model.Text = value


def click(dialog, name):
    dialog.getControl(name).getPeer().getAccessibleContext().doAccessibleAction(0)


REPLACE_QUESTION = "Click OK again to replace it"


def run_dialog(frame, command, fields, timeout_s=120, replace=False, seen=None):
    """Opens command's dialog, fills fields, clicks OK and waits until the
    dialog closes (the report written) or shows a message; returns the
    message ('' when it closed). With replace, the question whether to
    replace data under a report to a cell is answered by OK again (the
    question is appended to seen, a list, where given)."""
    state, dialog = dispatch(frame, command)
    if dialog is None:
        return "no dialog (state %r)" % state
    for name, value in fields.items():
        set_field(dialog, name, value)
    click(dialog, "ok")
    end = time.time() + timeout_s
    while time.time() < end:
        time.sleep(0.1)
        message = dialog_message(dialog)
        if message is None:
            return ""
        if replace and message and REPLACE_QUESTION in message:
            replace = False
            if seen is not None:
                seen.append(message)
            click(dialog, "ok")
            continue
        if message and not message.startswith(("Running", "Writing")):
            click(dialog, "cancel")
            return message
    return "timed out"


def run_report(frame, sheets, command, fields):
    """Runs a dialog to its report on a new sheet: (the message line, the
    report sheet, or None where no one sheet was added)."""
    names = set(sheets.getElementNames())
    message = run_dialog(frame, command, fields)
    added = [name for name in sheets.getElementNames() if name not in names]
    return message, sheets.getByName(added[0]) if message == "" and len(added) == 1 else None


def dialog_message(dialog):
    """The dialog's message line, or None once the dialog has closed (which
    may happen between any two calls here: the run is on the office's main
    thread)."""
    try:
        if dialog.getPeer() is None:
            return None
        control = dialog.getControl("message")
        return None if control is None else control.getModel().Label
    except Exception:  # disposed meanwhile
        return None


def same(a, b):
    if isinstance(a, float) and isinstance(b, float):
        return a == b or abs(a - b) <= RELATIVE_TOLERANCE * max(abs(a), abs(b))
    return a == b


def report_tables(sheet):
    """The report's tables: (title, header, rows) each, read as the report lays
    them out (a title, a header row, the rows, an empty row) from below the
    charts to "Chart data"."""
    used = sheet.createCursor()
    used.gotoEndOfUsedArea(False)
    last_row, last_column = used.getRangeAddress().EndRow, used.getRangeAddress().EndColumn
    cells = sheet.getCellRangeByPosition(0, 0, last_column, last_row).getDataArray()
    row = next(r for r, line in enumerate(cells) if line[0] == "Computed by") + 1
    while row < len(cells) and not any(value != "" for value in cells[row]):
        row += 1   # the rows the charts are drawn over
    tables = []
    while row < len(cells) and cells[row][0] not in ("", "Chart data"):
        title, header = cells[row][0], [h for h in cells[row + 1] if h != ""]
        body = []
        row += 2
        while row < len(cells) and any(value != "" for value in cells[row]):
            body.append(cells[row][:len(header)])
            row += 1
        tables.append((title, header, body))
        row += 1
    return tables


def expected_block(document, formula, rows, columns):
    """formula entered as an array formula over rows x columns of a scratch sheet, read back."""
    sheets = document.getSheets()
    if not sheets.hasByName("Expected"):
        sheets.insertNewByName("Expected", sheets.getCount())
    scratch = sheets.getByName("Expected")
    scratch.clearContents(1023)
    block = scratch.getCellRangeByPosition(0, 0, columns - 1, rows - 1)
    block.setArrayFormula(formula)
    document.calculateAll()
    return block.getDataArray()


def check_tables_equal(results, document, command, report, formulas):
    """Each report table against its cell function: formulas(name) is the formula with
    Output name; the tables come in TABLES' order, those of PER_ROW last."""
    tables = report_tables(report)
    names = ([name for name in TABLES[command] if name not in PER_ROW[command]]
             + [name for name in TABLES[command] if name in PER_ROW[command]])
    results.check("%s report: a table per Output (%d)" % (command, len(names)), len(tables) == len(names),
                  [t[0] for t in tables])
    labelled = {("kmeans", "centroids"): ["eruptions", "waiting"], ("gmm", "means"): ["eruptions", "waiting"]}
    if command == "igmm":
        sets = [line[1] for line in tables[0][2]] if tables else []
        results.check("igmm report: the data sets named by the labels", sets[:1] == ["rt1"] and "rt2" in sets, sets)
    for name, (title, header, body) in zip(names, tables):
        values = [line[1:] for line in body]
        if (command, name) in labelled:
            results.check("%s report: %s headed by the data's labels" % (command, name),
                          header[1:] == labelled[(command, name)], header)
        if (command, name) == ("lts", "coefficients"):
            terms = [line[0] for line in body]
            results.check("lts report: coefficients labelled by the predictors' names",
                          terms[1:] == ["Air.Flow", "Water.Temp", "Acid.Conc."], terms)
        if not values:
            results.check("%s report: table %s has rows" % (command, name), False)
            continue
        expected = expected_block(document, formulas(name), len(values), len(values[0]))
        mismatches = [(r, c, values[r][c], expected[r][c]) for r in range(len(values))
                      for c in range(len(values[0])) if not same(values[r][c], expected[r][c])]
        results.check("%s report: %s (%s, %dx%d) equals %s" % (command, name, title, len(values), len(values[0]),
                                                               formulas(name).split("(")[0][1:]),
                      not mismatches, mismatches[:3])
    document.getSheets().removeByName("Expected")


def chart_series(report):
    charts = report.getCharts()
    counts = []
    for name in charts.getElementNames():
        chart = charts.getByName(name).getEmbeddedObject()
        types = chart.getFirstDiagram().getCoordinateSystems()[0].getChartTypes()
        counts.append(sum(len(t.getDataSeries()) for t in types))
    return counts


def series_names(report):
    """The names of every series of the report's charts, as their label sequences hold them."""
    names = []
    charts = report.getCharts()
    for name in charts.getElementNames():
        chart = charts.getByName(name).getEmbeddedObject()
        for chart_type in chart.getFirstDiagram().getCoordinateSystems()[0].getChartTypes():
            for series in chart_type.getDataSeries():
                for sequence in series.getDataSequences():
                    label = sequence.getLabel()
                    if label is not None:
                        names.extend(str(value) for value in label.getData())
    return names


def read_csv(path):
    with open(path, newline="") as handle:
        rows = list(csv.reader(handle))
    return rows[0], [[float(value) for value in row] for row in rows[1:]]


def put(sheet, column, row, header, rows):
    data = (tuple(header),) + tuple(tuple(line) for line in rows)
    sheet.getCellRangeByPosition(column, row, column + len(header) - 1, row + len(rows)).setDataArray(data)


def reset_sheets(document, keep):
    sheets = document.getSheets()
    for name in sheets.getElementNames():
        if name != keep:
            sheets.removeByName(name)


def check(results, office, source_dir):
    document = office.desktop.loadComponentFromURL("private:factory/scalc", "_blank", 0, ())
    try:
        check_menu(results, office, document)
        check_analyses(results, office, document, source_dir)
        check_saved(results, office, document)
    finally:
        document.close(True)


def check_saved(results, office, document):
    """The reports saved as .ods and .xlsx and opened again: the sheets, their
    values and their charts come back."""
    import tempfile
    report = document.getSheets().getByName("K-means")
    expected = report.getCellRangeByPosition(0, 0, 2, 30).getDataArray()
    folder = tempfile.mkdtemp(prefix="statgpu-report-")
    for extension, filter_name in (("ods", "calc8"), ("xlsx", "Calc MS Excel 2007 XML")):
        path = os.path.join(folder, "reports." + extension)
        office.store(document, path, filter_name)
        again = office.load(path)
        try:
            sheets = again.getSheets()
            names = [name for name in SHEET_NAMES.values() if sheets.hasByName(name)]
            values = sheets.getByName("K-means").getCellRangeByPosition(0, 0, 2, 30).getDataArray()
            charts = sum(len(sheets.getByName(name).getCharts().getElementNames()) for name in names)
            results.check("saved as .%s and opened again: %d report sheets, the values, %d charts"
                          % (extension, len(names), charts),
                          len(names) == len(SHEET_NAMES) and charts >= len(SHEET_NAMES)
                          and all(same(a, b) for row_a, row_b in zip(values, expected) for a, b in zip(row_a, row_b)),
                          names)
        finally:
            again.close(True)


def check_menu(results, office, document):
    from com.sun.star.beans import PropertyValue
    provider = office.context.ServiceManager.createInstanceWithContext(
        "com.sun.star.configuration.ConfigurationProvider", office.context)
    node = PropertyValue()
    node.Name, node.Value = "nodepath", "/org.openoffice.Office.Addons/AddonUI/OfficeMenuBarMerging"
    merging = provider.createInstanceWithArguments("com.sun.star.configuration.ConfigurationAccess", (node,))
    ours = merging.getByName("org.statgpu.extension").getByName("S1")
    results.check("menu: merged after Data > Statistics > Fourier Analysis",
                  ours.MergePoint == ".uno:DataMenu\\.uno:StatisticsMenu\\.uno:FourierAnalysisDialog"
                  and ours.MergeCommand == "AddAfter", ours.MergePoint)
    results.check("menu: spreadsheets only", ours.MergeContext == "com.sun.star.sheet.SpreadsheetDocument")
    top = ours.getByName("MenuItems").getByName("M1")
    results.check("menu: submenu 'GPU Statistics (statgpu)'", top.Title == "GPU Statistics (statgpu)", top.Title)
    submenu = top.getByName("Submenu")
    urls = [submenu.getByName(name).URL for name in sorted(submenu.getElementNames())]
    urls = [url for url in urls if url != "private:separator"]
    wanted = [PROTOCOL + command for command in ANALYSES + ["about"]]
    results.check("menu: an entry per analysis and About, in order", urls == wanted, urls)
    frame = document.getCurrentController().getFrame()
    for url in wanted:
        results.check("menu: %s is dispatched in Calc" % url, frame.queryDispatch(url_of(url), "", 0) is not None)
    check_menu_bar(results, office, frame)
    # Another kind of document, where the office has one (a Calc-only
    # install has no Writer, Draw or Math).
    for factory in ("swriter", "sdraw", "smath"):
        try:
            other = office.desktop.loadComponentFromURL("private:factory/" + factory, "_blank", 0, ())
        except Exception:  # this office lacks that module
            continue
        try:
            other_frame = other.getCurrentController().getFrame()
            results.check("menu: no entry is dispatched in a %s document" % factory,
                          all(other_frame.queryDispatch(url_of(url), "", 0) is None for url in wanted))
        finally:
            other.close(True)
        break
    else:
        print("note  menu: no module other than Calc is installed; the Calc-only check is the "
              "merge context above")
    state, text = dispatch(frame, "about")
    results.check("About: the version and the backend", state == 1 and "statgpu 0." in text and "Backend: " in text,
                  (text or "")[:120])


MENU_TITLES = ["Median and quantiles", "K-means clustering", "Gaussian mixture", "Robust regression (LTS)",
               "Best subset regression", "Inverse Gaussian mixture"]


def accessible_child(context, name=None, role=None):
    for index in range(context.getAccessibleChildCount()):
        child = context.getAccessibleChild(index).getAccessibleContext()
        if (name is None or child.getAccessibleName() == name) and (role is None or child.getAccessibleRole() == role):
            return child
    return None


def check_menu_bar(results, office, frame):
    """The window's own menu bar, through its accessibility tree: Data >
    Statistics holds the submenu with the entries in order, and choosing an
    analysis's entry opens its dialog. (A menu's entries get their texts when
    it opens, so each menu is opened on the way, as a user does.)"""
    from com.sun.star.accessibility.AccessibleRole import MENU_BAR, PUSH_BUTTON
    menu = accessible_child(frame.getContainerWindow().getAccessibleContext(), role=MENU_BAR)
    for name in ("Data", "Statistics", "GPU Statistics (statgpu)"):
        menu = accessible_child(menu, name) if menu is not None else None
        if menu is not None:
            menu.doAccessibleAction(0)
            time.sleep(0.3)
    results.check("menu bar: Data > Statistics > GPU Statistics (statgpu)", menu is not None)
    if menu is None:
        return
    entries = [menu.getAccessibleChild(i).getAccessibleContext().getAccessibleName()
               for i in range(menu.getAccessibleChildCount())]
    wanted = [title + "..." for title in MENU_TITLES] + ["", "About statgpu / backend..."]
    results.check("menu bar: the entries in order, a separator before About", entries == wanted, entries)
    toolkit = office.context.ServiceManager.createInstanceWithContext("com.sun.star.awt.Toolkit", office.context)
    for title in MENU_TITLES:
        accessible_child(menu, title + "...").doAccessibleAction(0)
        dialog = None
        for _ in range(50):
            time.sleep(0.1)
            windows = [toolkit.getTopWindow(i).getAccessibleContext() for i in range(toolkit.getTopWindowCount())]
            dialog = next((w for w in windows if w.getAccessibleName() == title + " (statgpu)"), None)
            if dialog is not None:
                break
        results.check("menu bar: '%s...' opens its dialog" % title, dialog is not None)
        cancel = find_accessible(dialog, "Cancel", PUSH_BUTTON) if dialog is not None else None
        if cancel is not None:
            cancel.doAccessibleAction(0)


def find_accessible(context, name, role):
    for index in range(context.getAccessibleChildCount()):
        child = context.getAccessibleChild(index).getAccessibleContext()
        if child.getAccessibleName() == name and child.getAccessibleRole() == role:
            return child
        found = find_accessible(child, name, role)
        if found is not None:
            return found
    return None


def analysis_data(sheet, source_dir):
    """The data sheet: faithful (A:B), stackloss with Y first (D:G) and a
    constant column beside it (H), two positive skewed columns (I:J), and two
    groups of numbers with a blank and a text cell (L:M)."""
    header, faithful = read_csv(os.path.join(source_dir, "samples", "faithful.csv"))
    put(sheet, 0, 0, header, faithful)
    header, stackloss = read_csv(os.path.join(source_dir, "samples", "stackloss.csv"))
    put(sheet, 3, 0, [header[3]] + header[:3], [[row[3]] + row[:3] for row in stackloss])
    put(sheet, 7, 0, ["constant"], [[1.0] for _ in stackloss])
    rng = random.Random(7)
    skewed = [[round(rng.lognormvariate(0.0, 0.5), 4), round(rng.lognormvariate(1.0, 0.3), 4)] for _ in range(60)]
    put(sheet, 8, 0, ["rt1", "rt2"], skewed)
    groups = [[round(rng.gauss(10.0, 3.0), 3), round(rng.gauss(0.0, 1.0), 3)] for _ in range(40)]
    put(sheet, 11, 0, ["left", "right"], groups)
    sheet.getCellByPosition(11, 5).setString("n/a")
    sheet.getCellByPosition(12, 9).setString("")
    return len(faithful), len(stackloss), len(skewed), len(groups)


def check_analyses(results, office, document, source_dir):
    sheets = document.getSheets()
    data = sheets.getByIndex(0)
    data.setName("Data")
    faithful_rows, stackloss_rows, skewed_rows, group_rows = analysis_data(data, source_dir)
    controller = document.getCurrentController()
    frame = controller.getFrame()
    faithful = "$Data.$A$2:$B$%d" % (faithful_rows + 1)
    stack_y = "$Data.$D$2:$D$%d" % (stackloss_rows + 1)
    stack_x = "$Data.$E$2:$G$%d" % (stackloss_rows + 1)
    skewed = "$Data.$I$2:$J$%d" % (skewed_rows + 1)
    formulas = {
        "kmeans": lambda t: '=KMEANS(%s;2;"%s";10;300;0)' % (faithful, t),
        "gmm": lambda t: '=GMMFIT(%s;{1;2;3};"full";"%s";1;100;0)' % (faithful, t),
        "lts": lambda t: '=LTSFIT(%s;%s;0.5;"%s";1;0)' % (stack_y, stack_x, t),
        # With labels, BESTSUBSET takes Y and X with their first row: the function
        # itself names the predictors from it.
        "bestsubset": lambda t: '=BESTSUBSET(%s;%s;3;"%s";1;"press";"validation";1;0)' % (
            stack_y.replace("$2:", "$1:"), stack_x.replace("$2:", "$1:"), t),
        # With labels, IGMMFIT takes Data with its first row of texts, which names the data sets.
        "igmm": lambda t: '=IGMMFIT(%s;2;"%s";10;100;0)' % (skewed.replace("$2:", "$1:"), t),
    }
    fields = {
        "median": {"data": "$Data.$L$1:$M$%d" % (group_rows + 1), "labels": True},
        "kmeans": {"data": "$Data.$A$1:$B$%d" % (faithful_rows + 1), "labels": True, "k": "2"},
        "gmm": {"data": "$Data.$A$1:$B$%d" % (faithful_rows + 1), "labels": True, "k": "1-3"},
        "lts": {"y": "$Data.$D$1:$D$%d" % (stackloss_rows + 1), "x": "$Data.$E$1:$G$%d" % (stackloss_rows + 1),
                "labels": True},
        "bestsubset": {"y": "$Data.$D$1:$D$%d" % (stackloss_rows + 1),
                       "x": "$Data.$E$1:$G$%d" % (stackloss_rows + 1), "labels": True},
        "igmm": {"data": "$Data.$I$1:$J$%d" % (skewed_rows + 1), "labels": True, "k": "2"},
    }
    # The series each method's first chart draws.
    series = {"median": 4, "kmeans": 3, "gmm": 2 + 1 + 2, "lts": 4, "bestsubset": 2, "igmm": 2}

    # The selection fills the dialog: Y and X from a selection of several columns.
    controller.select(data.getCellRangeByName("D1:G%d" % (stackloss_rows + 1)))
    _, dialog = dispatch(frame, "lts")
    y_text, x_text = dialog.getControl("y").getModel().Text, dialog.getControl("x").getModel().Text
    results.check("dialog: Y and X from the selection, labels found",
                  y_text.endswith("$D$1:$D$%d" % (stackloss_rows + 1)) and x_text.endswith("$E$1:$G$%d" % (stackloss_rows + 1))
                  and dialog.getControl("labels").getModel().State == 1, [y_text, x_text])
    # The range picker: the dialog hides while a range is picked.
    click(dialog, "pick_x")
    end = time.time() + 5.0
    while dialog.isVisible() and time.time() < end:
        time.sleep(0.05)
    hidden = not dialog.isVisible()
    controller.abortRangeSelection()
    end = time.time() + 5.0
    while not dialog.isVisible() and time.time() < end:
        time.sleep(0.05)
    results.check("dialog: the range picker hides the dialog and shows it again", hidden and dialog.isVisible())
    click(dialog, "cancel")
    # The click returns before Calc's main loop has closed the dialog: wait
    # for it (a check straight after the click failed on a slow machine).
    end = time.time() + 10.0
    while dialog.getPeer() is not None and time.time() < end:
        time.sleep(0.05)
    results.check("dialog: Cancel closes it", dialog.getPeer() is None)

    for command in ANALYSES:
        controller.setActiveSheet(data)
        before = sheets.getCount()
        message = run_dialog(frame, command, fields[command])
        name = SHEET_NAMES[command]
        results.check("%s: the dialog ran and wrote the sheet %r" % (command, name),
                      message == "" and sheets.hasByName(name) and sheets.getCount() == before + 1, message)
        if not sheets.hasByName(name):
            continue
        report = sheets.getByName(name)
        counts = chart_series(report)
        results.check("%s report: chart with %d series" % (command, series[command]),
                      counts and counts[0] == series[command], counts)
        if command == "median":
            check_order_statistics(results, document, report)
        else:
            check_tables_equal(results, document, command, report, formulas[command])

    check_variants(results, document, frame, fields, formulas)


def check_order_statistics(results, document, report):
    tables = report_tables(report)
    title, header, body = tables[0]
    builtins = {"count": "COUNT(%s)", "minimum": "MIN(%s)", "median": "MEDIAN(%s)", "maximum": "MAX(%s)"}
    scratch_sheet = document.getSheets().getByName("Data")
    mismatches = []
    for line in body:
        statistic = line[0]
        for column, group in enumerate(header[1:]):
            reference = "$Data.$%s$2:$%s$41" % ("LM"[column], "LM"[column])
            if statistic.startswith("quantile "):
                formula = "=PERCENTILE.INC(%s;%s)" % (reference, statistic.split()[1])
            else:
                formula = "=" + builtins[statistic] % reference
            cell = scratch_sheet.getCellByPosition(20, 0)
            cell.setFormula(formula)
            document.calculateAll()
            if not same(line[1 + column], cell.getValue()):
                mismatches.append((statistic, group, line[1 + column], cell.getValue()))
    scratch_sheet.getCellByPosition(20, 0).setString("")
    results.check("median report: groups named by the labels", header[1:] == ["left", "right"], header)
    results.check("median report: %d statistics equal COUNT, MIN, PERCENTILE.INC, MEDIAN, MAX" % len(body),
                  len(body) == 9 and not mismatches, mismatches[:3])


def check_variants(results, document, frame, fields, formulas):
    sheets = document.getSheets()
    controller = document.getCurrentController()
    data = sheets.getByName("Data")

    # Live formulas: the tables are KMEANS's array formulas.
    controller.setActiveSheet(data)
    live = dict(fields["kmeans"], write="Live formulas (array formulas)")
    message = run_dialog(frame, "kmeans", live)
    report = sheets.getByName("K-means 2") if sheets.hasByName("K-means 2") else None
    formula = ""
    if report is not None:
        titles = report.getCellRangeByPosition(0, 0, 0, 40).getDataArray()
        row = next((r for r, line in enumerate(titles) if line[0] == "Cluster centroids"), 0)
        formula = report.getCellByPosition(1, row + 2).getArrayFormula()
    results.check("live formulas: a second report 'K-means 2' holds KMEANS array formulas",
                  message == "" and "KMEANS(" in formula.upper() and "CENTROIDS" in formula.upper(), [message, formula])
    if report is not None:
        check_tables_equal(results, document, "kmeans", report, formulas["kmeans"])

    # Undo removes the whole report in one step.
    controller.setActiveSheet(data)
    count = sheets.getCount()
    message = run_dialog(frame, "gmm", fields["gmm"])
    undo = document.getUndoManager()
    title = undo.getCurrentUndoActionTitle()
    undo.undo()
    results.check("undo: one undo ('%s') removes the whole report" % title,
                  message == "" and sheets.getCount() == count and not sheets.hasByName("Gaussian mixture 2"))

    # Results to a cell of this sheet, beside a filled column (Calc 7.4's
    # queryContentCells answers the empty block with that column's cells:
    # no question is asked over empty cells).
    controller.setActiveSheet(data)
    beside = data.getCellRangeByName("O1:O200")
    beside.setDataArray(tuple((float(r),) for r in range(200)))
    message = run_dialog(frame, "lts", dict(fields["lts"], target="A cell of this sheet", target_cell="$Data.$P$1"))
    results.check("results to a cell: the report starts at P1 of the data sheet, its chart there",
                  message == "" and data.getCellRangeByName("P1").getString() == "Robust regression (LTS)"
                  and len(data.getCharts().getElementNames()) == 1 and sheets.getCount() == count,
                  [message, data.getCellRangeByName("P1").getString()])
    document.getUndoManager().undo()
    results.check("results to a cell: one undo removes the report's cells and chart, the data stay",
                  data.getCellRangeByName("P1").getString() == "" and not data.getCharts().getElementNames()
                  and data.getCellRangeByName("A1").getString() == "eruptions")
    beside.clearContents(1023)

    # Results to a cell over data: asked in the message line first, with
    # nothing written; OK again replaces it (without running again), and one
    # undo restores the data.
    kept = data.getCellRangeByName("Q5")
    kept.setString("keep me")
    message = run_dialog(frame, "lts", dict(fields["lts"], target="A cell of this sheet", target_cell="$Data.$P$1"))
    results.check("results to a cell over data: the dialog asks first, naming the block, nothing written",
                  REPLACE_QUESTION in message and "P1:U" in message and kept.getString() == "keep me"
                  and data.getCellRangeByName("P1").getString() == "" and not data.getCharts().getElementNames(),
                  message)
    seen = []
    started = time.time()
    message = run_dialog(frame, "lts", dict(fields["lts"], target="A cell of this sheet", target_cell="$Data.$P$1"),
                         replace=True, seen=seen)
    results.check("results to a cell over data: OK again writes the report over it",
                  message == "" and len(seen) == 1 and data.getCellRangeByName("P1").getString()
                  == "Robust regression (LTS)" and kept.getString() != "keep me",
                  [message, seen, kept.getString(), round(time.time() - started, 1)])
    document.getUndoManager().undo()
    results.check("results to a cell over data: one undo restores the data",
                  kept.getString() == "keep me" and data.getCellRangeByName("P1").getString() == ""
                  and not data.getCharts().getElementNames(), kept.getString())
    kept.setString("")
    # A note alone in the block is asked about too.
    from com.sun.star.table import CellAddress
    notes = data.getAnnotations()
    notes.insertNew(CellAddress(data.getRangeAddress().Sheet, 17, 7), "a note")  # R8
    message = run_dialog(frame, "lts", dict(fields["lts"], target="A cell of this sheet", target_cell="$Data.$P$1"))
    results.check("results to a cell over a note: asked first, nothing written",
                  REPLACE_QUESTION in message and data.getCellRangeByName("P1").getString() == "", message)
    notes.removeByIndex(notes.getCount() - 1)

    # Results to a new document.
    components = office_documents(document)
    message = run_dialog(frame, "kmeans", dict(fields["kmeans"], target="A new document"))
    new = [c for c in office_documents(document) if c not in components]
    ok = message == "" and len(new) == 1 and new[0].getSheets().hasByName("K-means")
    results.check("results to a new document: a new spreadsheet with the sheet 'K-means'", ok, message)
    for component in new:
        component.close(True)

    # Invalid fields: the message names the field, nothing is written.
    controller.setActiveSheet(data)
    cases = [("kmeans", dict(fields["kmeans"], k="0"), "Number of clusters (k)"),
             ("kmeans", dict(fields["kmeans"], data="nonsense"), "Data"),
             ("lts", dict(fields["lts"], y="$Data.$D$1:$E$22"), "Y (response)"),
             ("gmm", dict(fields["gmm"], k="two"), "Components (k)"),
             ("median", dict(fields["median"], quantiles="0.5; 2"), "Quantiles (p)"),
             ("kmeans", dict(fields["kmeans"], k="500"), "KMEANS failed"),
             # A thousands separator or hexadecimal is refused, not misread
             # (Restarts "1,000" had run once, k "0x3" as 3).
             ("kmeans", dict(fields["kmeans"], restarts="1,000"), "Restarts"),
             # A decimal field given "1.000": a thousand to a German reader,
             # one to an English one (it had been taken as 1); refused,
             # naming both readings.
             ("lts", dict(fields["lts"], alpha="1.000"), 'Alpha (share explained): "1.000" is 1 to some readers '
              'and 1000 to others'),
             ("median", dict(fields["median"], quantiles="0.5; 1,000"), "Quantiles (p)"),
             ("kmeans", dict(fields["kmeans"], k="0x3"), "Number of clusters (k)"),
             # Live formulas cannot read this document from a new one.
             ("kmeans", dict(fields["kmeans"], target="A new document", write="Live formulas (array formulas)"),
              "Results written as"),
             # A report at a cell inside the data, or one that would run over
             # it, would overwrite the data.
             ("kmeans", dict(fields["kmeans"], target="A cell of this sheet", target_cell="$Data.$B$10"),
              "Results to cell"),
             ("lts", dict(fields["lts"], target="A cell of this sheet", target_cell="$Data.$C$1"), "Results to cell"),
             # No numbers at all: said, as the methods' dialogs say it.
             ("median", dict(fields["median"], data="$Data.$X$1:$Y$10"), "Data"),
             ("igmm", dict(fields["igmm"], data="$Data.$X$1:$Y$10"), "Data"),
             # Y among the predictors: refused before the run (it had written a report).
             ("lts", dict(fields["lts"], x=fields["lts"]["y"].replace(":$D$", ":$G$")), "X (predictors)"),
             # A holdout that leaves no row held out, or none to fit on, of the
             # 21 complete rows: refused before the run, as the engine would
             # refuse it after, whatever the data (both had been taken by the
             # dialog).
             ("bestsubset", dict(fields["bestsubset"], validation="holdout", holdout="0.01"),
              "Share held out (holdout)"),
             ("bestsubset", dict(fields["bestsubset"], validation="holdout", holdout="0.99"),
              "Share held out (holdout)"),
             ("bestsubset", dict(fields["bestsubset"], validation="kfold", folds="30"), "Folds (k-fold)"),
             # More components than GMMFIT fits, or more models than the
             # dialog compares: said as that (it had been the general
             # "enter a number of components").
             ("gmm", dict(fields["gmm"], k="1-1000"), "Components (k): a mixture has at most 512 components"),
             ("gmm", dict(fields["gmm"], k="2; 600"), "Components (k): a mixture has at most 512 components"),
             ("gmm", dict(fields["gmm"], k="1-300"), "Components (k): at most 200 numbers of components")]
    for command, values, named in cases:
        count = sheets.getCount()
        message = run_dialog(frame, command, values)
        results.check("invalid: %s names %r and writes nothing" % (command, named),
                      message.startswith(named) and sheets.getCount() == count, message)

    # A holdout of 16 of the 21 rows keeps 5, as many as X's four columns
    # and the intercept, but one column is constant: the engine drops it, its
    # full model has 4 coefficients and it runs (the dialog had refused it,
    # counting every column). Held out 17, 4 rows are too few: the run says so.
    count = sheets.getCount()
    with_constant = dict(fields["bestsubset"], x=fields["bestsubset"]["x"].replace("$G$", "$H$"),
                         validation="holdout", holdout="0.762")
    message = run_dialog(frame, "bestsubset", with_constant)
    results.check("bestsubset holdout keeping 5 rows for X's 4 columns, one constant, and the intercept: a report",
                  message == "" and sheets.getCount() == count + 1, message)
    message = run_dialog(frame, "bestsubset", dict(with_constant, holdout="0.8"))
    results.check("bestsubset holdout keeping 4 rows for 4 coefficients: the run refuses it, with the counts",
                  "4 rows without the held-out rows for a full model of 4 coefficients" in message
                  and sheets.getCount() == count + 1, message)

    # With labels, a blank among X's labels: neither label row is a row of
    # names, so neither goes to BESTSUBSET (Y's alone had, and the run had
    # refused "X does not have as many rows as Y").
    label = data.getCellByPosition(5, 0)
    saved_label = label.getString()
    label.setString("")
    message = run_dialog(frame, "bestsubset", fields["bestsubset"])
    label.setString(saved_label)
    results.check("bestsubset with a blank among X's labels: a report",
                  message == "" and sheets.getCount() == count + 2, message)
    # Y and X given by the names of named ranges, as a formula or the Name
    # Box takes them (they had been "not a cell range").
    from com.sun.star.table import CellAddress
    named = document.NamedRanges
    named.addNewByName("loss", fields["lts"]["y"], CellAddress(0, 0, 0), 0)
    named.addNewByName("inputs", fields["lts"]["x"], CellAddress(0, 0, 0), 0)
    message = run_dialog(frame, "lts", dict(fields["lts"], y="loss", x="inputs"))
    results.check("LTS with Y and X given as named ranges: a report",
                  message == "" and sheets.getCount() == count + 3, message)
    named.removeByName("loss")
    named.removeByName("inputs")
    # A reference with spaces around its colon, as a formula takes it (it
    # had been "not a cell range").
    spaced = fields["kmeans"]["data"].replace(":", " : ")
    message, report = run_report(frame, sheets, "kmeans", dict(fields["kmeans"], data=" %s " % spaced))
    shown = [row[1] for row in report.getCellRangeByPosition(0, 0, 1, 20).getDataArray() if row[0] == "Data"] \
        if report is not None else []
    results.check("kmeans with Data %r: a report, its Data %s" % (spaced, fields["kmeans"]["data"]),
                  message == "" and shown[:1] and shown[0].startswith(fields["kmeans"]["data"] + " "),
                  [message, shown])
    # A quantile below the doubles' normal range is a probability (1e-320
    # had been "not a probability from 0 to 1"): the report's row for it.
    message, report = run_report(frame, sheets, "median", dict(fields["median"], quantiles="1e-320; 0.5"))
    tables = report_tables(report) if report is not None else []
    firsts = [row[0] for row in tables[0][2]] if tables else []
    results.check("median with quantiles 1e-320; 0.5: a report with a row for each quantile",
                  message == "" and firsts[2:4] == ["quantile 1e-320", "quantile 0.5"], [message, firsts])
    # A k listed twice is the same model, fitted once (it had been fitted
    # and listed as often as given).
    message, report = run_report(frame, sheets, "gmm", dict(fields["gmm"], k="2; 3; 2"))
    compared = [[row[header.index("k")] for row in body]
                for title, header, body in (report_tables(report) if report is not None else [])
                if title == "Model selection by BIC" and "k" in header]
    results.check("gmm with k 2; 3; 2: the model selection lists k = 2 and 3 once each",
                  compared == [[2.0, 3.0]], [message, compared])
    # 130 predictors with MaxSize left empty: refused for the predictors,
    # not for a MaxSize nobody gave.
    sheets.insertNewByName("Wide", sheets.getCount())
    wide = sheets.getByName("Wide")
    rng = random.Random(11)
    wide.getCellRangeByPosition(0, 0, 130, 139).setDataArray(
        tuple(tuple(rng.random() for _ in range(131)) for _ in range(140)))
    message = run_dialog(frame, "bestsubset", {"y": "$Wide.$A$1:$A$140", "x": "$Wide.$B$1:$EA$140",
                                               "labels": False})
    results.check("bestsubset with 130 predictors and no MaxSize: refused for the predictors (at most 128)",
                  "128" in message and "MaxSize" not in message, message)
    sheets.removeByName("Wide")

    # A report to a cell refused after the run leaves no Redo that would
    # write it (Redo had added a sheet holding the whole report).
    undo = document.getUndoManager()
    message = run_dialog(frame, "kmeans", dict(fields["kmeans"], target="A cell of this sheet",
                                               target_cell="$Data.$A$1048570"))
    results.check("a report past the sheet's end: refused, and no Redo writes it",
                  message.startswith("Results to cell") and "past the sheet's end" in message
                  and not undo.isRedoPossible(), [message, undo.isRedoPossible()])
    # Over part of an array formula Calc refuses the copy in silence (the
    # dialog had closed as if the report were written, with its chart over
    # empty cells); a merged block across the report's edge would hide part of
    # it. Both are said, nothing written.
    array = data.getCellRangeByName("Q300:R301")
    array.setArrayFormula("=A2:B3")
    charts = len(data.getCharts().getElementNames())
    message = run_dialog(frame, "kmeans", dict(fields["kmeans"], target="A cell of this sheet",
                                               target_cell="$Data.$R$280"), replace=True)
    results.check("a report over part of an array formula: refused, nothing written, no Redo",
                  message.startswith("Results to cell") and "array formula" in message
                  and data.getCellRangeByName("R280").getString() == ""
                  and len(data.getCharts().getElementNames()) == charts and not undo.isRedoPossible()
                  and data.getCellRangeByName("R300").getValue() == data.getCellRangeByName("B2").getValue(),
                  message)
    array.clearContents(1023)
    merged = data.getCellRangeByName("X290:AA291")
    merged.merge(True)
    message = run_dialog(frame, "lts", dict(fields["lts"], target="A cell of this sheet",
                                            target_cell="$Data.$Z$280"))
    results.check("a report whose block a merged range crosses: refused, nothing written",
                  message.startswith("Results to cell") and "merged" in message
                  and data.getCellRangeByName("Z280").getString() == "" and merged.getIsMerged(), message)
    merged.merge(False)

    # Whole columns: read to the last row the columns themselves use (the
    # per-row tables had made the report fail at the sheet's million rows,
    # and then run to the last row of anything on the sheet: a note far
    # below had given 4,969 empty rows).
    faithful_rows = int(fields["kmeans"]["data"].rsplit("$", 1)[1]) - 1
    far = data.getCellRangeByName("Z5000")
    far.setString("a note far below")
    count = sheets.getCount()
    message, report = run_report(frame, sheets, "kmeans", dict(fields["kmeans"], data="$Data.$A:$B"))
    longest = max((len(body) for _, _, body in report_tables(report)), default=0) if report is not None else 0
    whole_ok = message == "" and sheets.getCount() == count + 1 and longest == faithful_rows
    results.check("kmeans on whole columns $Data.$A:$B: a report, its per-row tables the %d rows of the data "
                  "(not to a note in Z5000)" % faithful_rows, whole_ok, [message, longest])
    far.setString("")
    # A range drawn cell by cell is read as drawn: the empty column N beside
    # the two groups L:M is a third group (only whole columns are cut).
    message, report = run_report(frame, sheets, "median", dict(fields["median"], data="$Data.$L$1:$N$41"))
    tables = report_tables(report) if report is not None else []
    header = tables[0][1] if tables else []
    results.check("median on L1:N41 with N empty: three groups, the third named Column N", header[1:] == [
        "left", "right", "Column N"], [message, header])
    if report is not None:
        shown = group_without_numbers(report, "Column N")
        results.check("median report: the group without numbers has count 0 and empty cells below it (no #N/A)",
                      shown[:1] == [("value", 0.0)] and len(shown) == 9 and all(c == ("text", "") for c in shown[1:]),
                      shown)

    # A label of 20,000 characters: whole in the tables, cut to 40 and an
    # ellipsis in the chart (which held the office for about 45 s laying
    # it out), on a character's boundary.
    long_label = "\u00e9" * 20000
    label_cell = data.getCellRangeByName("L1")
    kept_label = label_cell.getString()
    label_cell.setString(long_label)
    message, report = run_report(frame, sheets, "median", fields["median"])
    tables = report_tables(report) if report is not None else []
    header = tables[0][1] if tables else []
    series = series_names(report) if report is not None else []
    results.check("median with a 20,000-character label: the table's header holds it whole",
                  header[1:2] == [long_label], [message, [len(h) for h in header]])
    results.check("median with a 20,000-character label: the chart's series named by it cut to 40 characters and an ellipsis",
                  long_label[:40] + "\u2026" in series and not any(len(name) > 60 for name in series),
                  [len(name) for name in series])
    label_cell.setString(kept_label)

    # Stop: a long run stopped from outside writes nothing.
    check_stop(results, document, frame)
    check_writing_cannot_be_stopped(results, document, frame)


def group_without_numbers(report, group):
    """The order statistics report's column of group: ('value', x), ('text', s) or ('error', code) per statistic."""
    used = report.createCursor()
    used.gotoEndOfUsedArea(False)
    end = used.getRangeAddress()
    cells = report.getCellRangeByPosition(0, 0, end.EndColumn, end.EndRow).getDataArray()
    first = next((r for r, line in enumerate(cells) if line[0] == "count"), None)
    if first is None or group not in cells[first - 1]:
        return []
    column = list(cells[first - 1]).index(group)
    shown = []
    for row in range(first, len(cells)):
        if cells[row][0] == "":
            break
        cell = report.getCellByPosition(column, row)
        if cell.getError():
            shown.append(("error", cell.getError()))
        elif cell.getType().value == "VALUE":
            shown.append(("value", cell.getValue()))
        else:
            shown.append(("text", cell.getString()))
    return shown


def office_documents(document):
    desktop = document.getCurrentController().getFrame().getCreator()
    components = []
    enumeration = desktop.getComponents().createEnumeration()
    while enumeration.hasMoreElements():
        components.append(enumeration.nextElement())
    return components


def check_stop(results, document, frame):
    sheets = document.getSheets()
    if not sheets.hasByName("Big"):
        sheets.insertNewByName("Big", sheets.getCount())
    big = sheets.getByName("Big")
    rng = random.Random(11)
    rows = 30000
    big.getCellRangeByPosition(0, 0, 3, rows - 1).setDataArray(
        tuple(tuple(rng.gauss(0.0, 1.0) for _ in range(4)) for _ in range(rows)))
    document.getCurrentController().setActiveSheet(big)
    count = sheets.getCount()
    state, dialog = dispatch(frame, "kmeans")
    for name, value in {"data": "$Big.$A$1:$D$%d" % rows, "labels": False, "k": "40", "restarts": "1000"}.items():
        set_field(dialog, name, value)
    stop_url = url_of(PROTOCOL + "stop")
    stopper = frame.queryDispatch(stop_url, "", 0)   # asked for before the run holds the office
    click(dialog, "ok")
    time.sleep(1.5)
    started = time.time()
    stopper.dispatch(stop_url, ())
    message = ""
    while time.time() - started < 120:
        time.sleep(0.1)
        shown = dialog_message(dialog)
        if shown is None:
            break
        message = shown
        if message.startswith(("Stopped", "KMEANS failed")):
            break
    results.check("stop: the run stops within 2 s and writes nothing",
                  message.startswith("Stopped") and sheets.getCount() == count and time.time() - started < 2.0,
                  "%s after %.2f s" % (message, time.time() - started))
    if dialog_message(dialog) is not None:
        click(dialog, "cancel")
    sheets.removeByName("Big")


def check_writing_cannot_be_stopped(results, document, frame):
    """While the report is written (per-row tables of 100,000 rows take a
    while), Stop is greyed out and the message says this last step cannot be
    stopped; the stop command sent then leaves the whole report written
    (it had shown an enabled Stop that did nothing)."""
    sheets = document.getSheets()
    sheets.insertNewByName("Long", sheets.getCount())
    long_sheet = sheets.getByName("Long")
    rng = random.Random(12)
    rows = 100000
    data = []
    for _ in range(rows):
        a, b = rng.gauss(0.0, 1.0), rng.gauss(0.0, 1.0)
        data.append((1.0 + a - 2.0 * b + rng.gauss(0.0, 0.5), a, b))
    long_sheet.getCellRangeByPosition(0, 0, 2, rows - 1).setDataArray(tuple(data))
    document.getCurrentController().setActiveSheet(long_sheet)
    names = set(sheets.getElementNames())
    state, dialog = dispatch(frame, "lts")
    for name, value in {"y": "$Long.$A$1:$A$%d" % rows, "x": "$Long.$B$1:$C$%d" % rows, "labels": False}.items():
        set_field(dialog, name, value)
    stop_url = url_of(PROTOCOL + "stop")
    stopper = frame.queryDispatch(stop_url, "", 0)
    click(dialog, "ok")
    seen = None   # (message, Stop enabled) while the report was written
    end = time.time() + 300
    while time.time() < end:
        message = dialog_message(dialog)
        if message is None:
            break
        if message.startswith("Writing"):
            try:
                seen = (message, dialog.getControl("cancel").getModel().Enabled)
            except Exception:  # closed meanwhile
                break
            stopper.dispatch(stop_url, ())
            break
        if message and not message.startswith("Running"):
            break
        time.sleep(0.02)
    while dialog_message(dialog) is not None and time.time() < end:
        time.sleep(0.1)
    added = [name for name in sheets.getElementNames() if name not in names]
    tables = report_tables(sheets.getByName(added[0])) if len(added) == 1 else []
    results.check("while the report is written Stop is greyed out and the message says it cannot be stopped; "
                  "a stop then leaves the whole report (5 tables)",
                  seen is not None and seen[1] is False and "cannot be stopped" in seen[0] and len(tables) == 5,
                  [seen, added, [t[0] for t in tables]])
    for name in added + ["Long"]:
        sheets.removeByName(name)
