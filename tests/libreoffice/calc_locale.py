"""calc_locale.py: statgpu under a German locale (decimal comma), run last by
test_calc.py in its office session, which it restarts with the profile's
locale setting (Tools > Options > Language Settings > Languages > Locale
setting) set to de-DE.

Text where a number is needed is read with the locale's decimal separator, as
Calc reads it: GPUQUANTILE's p "0,25" equals PERCENTILE.INC's, "0.25" is an
error for both, and LTSFIT's Alpha "0,75" is Alpha 0.75. A text with '.',
which a German reader takes as a thousands separator, is refused rather than
read as the decimal point: MaxIter "1.000" had been read as 1, a silent
misreading (Calc reads a thousand). A report's numbers show the locale's
decimal comma (3,520000, where 3.520000 reads as three and a half million).

An office on a desktop runs in the desktop's C locale (its VCL plugins call
setlocale), so under a German one the C library reads and writes "0,5":
the dialogs then read their fields, write a report's formulas and draw its
charts with that locale's numbers unless they convert without it. The
headless office of the tests keeps the C locale, so the check sets a locale
of decimal commas in the office's process itself (a Python macro in the
profile calling setlocale, as the desktop's plugin does at start) and runs
the dialogs there.
"""

import os
import shutil
import subprocess
import tempfile

import calc_dialogs

ERRORS = {502: "Err:502", 504: "Err:504", 519: "#VALUE!"}


def set_locale(office, tag):
    from com.sun.star.beans import PropertyValue
    provider = office.context.ServiceManager.createInstanceWithContext(
        "com.sun.star.configuration.ConfigurationProvider", office.context)
    node = PropertyValue()
    node.Name, node.Value = "nodepath", "/org.openoffice.Setup/L10N"
    access = provider.createInstanceWithArguments("com.sun.star.configuration.ConfigurationUpdateAccess", (node,))
    access.setPropertyValue("ooSetupSystemLocale", tag)
    access.commitChanges()


def shown(cell):
    return ERRORS.get(cell.getError(), "error %d" % cell.getError()) if cell.getError() else cell.getValue()


def check(results, office, source_dir):
    set_locale(office, "de-DE")
    office.restart()
    document = office.desktop.loadComponentFromURL("private:factory/scalc", "_blank", 0, ())
    try:
        sheet = document.getSheets().getByIndex(0)
        sheet.setName("Data")
        probe = sheet.getCellRangeByName("Z1")
        probe.setValue(1.5)
        results.check("locale: a number shows a decimal comma under de-DE", probe.getString() == "1,5",
                      probe.getString())
        values = [3.25, 1.5, 8.0, 4.75, 2.0, 6.5, 9.25, 5.0, 7.125, 10.0]
        for r, value in enumerate(values):
            sheet.getCellByPosition(14, r).setValue(value)       # O1:O10
        rows = 40
        for r in range(rows):                                     # Y in A, X in B:C
            x1, x2 = (r * 37 % 11) / 3.0, (r * 53 % 17) / 5.0
            sheet.getCellByPosition(1, r).setValue(x1)
            sheet.getCellByPosition(2, r).setValue(x2)
            sheet.getCellByPosition(0, r).setValue(1.0 + 2.0 * x1 - x2 + (50.0 if r % 9 == 0 else 0.01 * (r % 5)))
        formulas = {
            "E1": '=GPUQUANTILE(O1:O10;"0,25")', "F1": '=PERCENTILE.INC(O1:O10;"0,25")',
            "E2": '=GPUQUANTILE(O1:O10;"0.25")', "F2": '=PERCENTILE.INC(O1:O10;"0.25")',
            "E3": '=GPUQUANTILE(O1:O10;"1.000")',
            "E4": '=INDEX(LTSFIT(A1:A40;B1:C40;"0,75");2;1)', "F4": '=INDEX(LTSFIT(A1:A40;B1:C40;0.75);2;1)',
            "E5": '=INDEX(KMEANS(B1:C40;2;"summary";1;"1.000";0);4;1)',
            "E6": '=GPUQUANTILE(O1:O10;"wahr")', "F6": '=PERCENTILE.INC(O1:O10;"wahr")',
            "E7": '=GPUQUANTILE(O1:O10;"FALSCH")', "F7": '=PERCENTILE.INC(O1:O10;"FALSCH")',
        }
        for address, formula in formulas.items():
            sheet.getCellRangeByName(address).setFormula(formula)
        document.calculateAll()
        cell = lambda address: shown(sheet.getCellRangeByName(address))
        results.check('locale: GPUQUANTILE(;"0,25") is PERCENTILE.INC(;"0,25")',
                      isinstance(cell("E1"), float) and cell("E1") == cell("F1"), [cell("E1"), cell("F1")])
        results.check('locale: p "0.25" an error, as PERCENTILE.INC\'s', isinstance(cell("E2"), str)
                      and isinstance(cell("F2"), str), [cell("E2"), cell("F2")])
        results.check('locale: p "1.000" refused (#VALUE!), not read as 1', cell("E3") == "#VALUE!", cell("E3"))
        results.check('locale: LTSFIT Alpha "0,75" is Alpha 0.75', isinstance(cell("E4"), float)
                      and cell("E4") == cell("F4"), [cell("E4"), cell("F4")])
        results.check('locale: KMEANS MaxIter "1.000" refused (#VALUE!), not one iteration', cell("E5") == "#VALUE!",
                      cell("E5"))
        results.check('locale: p "wahr" and "FALSCH" are 1 and 0, as PERCENTILE.INC reads them in German',
                      [cell("E6"), cell("E7")] == [cell("F6"), cell("F7")] == [10.0, 1.5],
                      [cell("E6"), cell("F6"), cell("E7"), cell("F7")])

        # A report's numbers with the decimal comma.
        frame = document.getCurrentController().getFrame()
        sheet.getCellByPosition(11, 0).setString("value")
        for r, value in enumerate(values):
            sheet.getCellByPosition(11, 1 + r).setValue(value)  # L1:L11
        names = set(document.getSheets().getElementNames())
        message = calc_dialogs.run_dialog(frame, "median", {"data": "$Data.$L$1:$L$11", "labels": True})
        added = [name for name in document.getSheets().getElementNames() if name not in names]
        fractions = []
        if message == "" and len(added) == 1:
            report = document.getSheets().getByName(added[0])
            used = report.createCursor()
            used.gotoEndOfUsedArea(False)
            end = used.getRangeAddress()
            for r in range(end.EndRow + 1):
                for c in range(1, end.EndColumn + 1):
                    number = report.getCellByPosition(c, r)
                    if number.getType().value == "VALUE" and number.getValue() != int(number.getValue()):
                        fractions.append(number.getString())
        results.check("locale: the median report's fractional numbers show a decimal comma",
                      message == "" and fractions and all("," in text and "." not in text for text in fractions),
                      [message, fractions[:6]])
        check_process_locale(results, office, document, sheet, frame)
    finally:
        document.close(True)
        set_locale(office, "")


MACRO = """import locale, os


def set_numeric(path, name):
    if path:
        os.environ["LOCPATH"] = path
    return locale.setlocale(locale.LC_NUMERIC, name)
"""


def comma_locale(folder):
    """A de_DE.UTF-8 locale compiled into folder (the C library's own tool,
    from the locales package's sources); its name, or None where it cannot
    be made."""
    if shutil.which("localedef") is None:
        return None
    done = subprocess.run(["localedef", "-i", "de_DE", "-f", "UTF-8", os.path.join(folder, "de_DE.UTF-8")],
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    # localedef exits 1 on warnings while writing the locale.
    return "de_DE.UTF-8" if os.path.isdir(os.path.join(folder, "de_DE.UTF-8")) else None


def office_numeric_locale(office, document, path, name):
    """Sets the office process's LC_NUMERIC (the C library's); returns what
    setlocale answered, or the error."""
    scripts = os.path.join(office.profile_dir, "user", "Scripts", "python")
    os.makedirs(scripts, exist_ok=True)
    with open(os.path.join(scripts, "statgpu_locale.py"), "w") as handle:
        handle.write(MACRO)
    try:
        script = document.getScriptProvider().getScript(
            "vnd.sun.star.script:statgpu_locale.py$set_numeric?language=Python&location=user")
        return script.invoke((path, name), (), ())[0]
    except Exception as error:
        return "%s: %s" % (type(error).__name__, error)


def report_rows(report):
    used = report.createCursor()
    used.gotoEndOfUsedArea(False)
    end = used.getRangeAddress()
    return report.getCellRangeByPosition(0, 0, min(end.EndColumn, 12), end.EndRow).getDataArray()


def check_process_locale(results, office, document, sheet, frame):
    folder = tempfile.mkdtemp(prefix="statgpu-locale-")
    try:
        name = comma_locale(folder)
        results.check("locale: a locale of decimal commas compiled (localedef, package locales)", name is not None)
        if name is None:
            return
        answer = office_numeric_locale(office, document, folder, name)
        results.check("locale: the office process's LC_NUMERIC set to %s" % name, answer == name, answer)
        if answer != name:
            return
        try:
            # The median dialog with its default quantiles and live formulas.
            names = set(document.getSheets().getElementNames())
            message = calc_dialogs.run_dialog(frame, "median", {"data": "$Data.$L$1:$L$11", "labels": True,
                                                                "write": "Live formulas (array formulas)"})
            added = [n for n in document.getSheets().getElementNames() if n not in names]
            results.check("locale (C library's German): the median dialog runs on its defaults",
                          message == "" and len(added) == 1, message)
            if message == "" and len(added) == 1:
                rows = report_rows(document.getSheets().getByName(added[0]))
                settings = [line[1] for line in rows if line[0] == "Quantiles (p)"]
                results.check("locale: the report's settings show the quantiles with decimal commas",
                              settings == ["0,05; 0,25; 0,5; 0,75; 0,95"], settings)
                labels = [line[0] for line in rows if str(line[0]).startswith("quantile ")]
                results.check("locale: the quantiles' rows labelled with decimal commas",
                              labels == ["quantile 0,05", "quantile 0,25", "quantile 0,5", "quantile 0,75",
                                         "quantile 0,95"], labels)
                probe = sheet.getCellRangeByName("Z2")
                expected = []
                for p in (0.05, 0.25, 0.5, 0.75, 0.95):
                    probe.setFormula("=PERCENTILE.INC(L2:L11;%r)" % p)
                    expected.append(probe.getValue())
                probe.setString("")
                values = [line[1] for line in rows if str(line[0]).startswith("quantile ")]
                results.check("locale: the report's live quantile formulas give PERCENTILE.INC's values",
                              values == expected, [values, expected])
            # The LTS dialog on its default Alpha (0,5 shown), a value report.
            names = set(document.getSheets().getElementNames())
            message = calc_dialogs.run_dialog(frame, "lts", {"y": "$Data.$A$1:$A$40", "x": "$Data.$B$1:$C$40"})
            added = [n for n in document.getSheets().getElementNames() if n not in names]
            results.check("locale (C library's German): the LTS dialog runs on its default Alpha",
                          message == "" and len(added) == 1, message)
            if message == "" and len(added) == 1:
                rows = report_rows(document.getSheets().getByName(added[0]))
                alpha = [line[1] for line in rows if str(line[0]).startswith("Alpha")]
                results.check("locale: the LTS report's Alpha setting 0,5", alpha == ["0,5"], alpha)
        finally:
            office_numeric_locale(office, document, "", "C")
    finally:
        shutil.rmtree(folder, ignore_errors=True)
