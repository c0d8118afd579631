"""The analysis dialogs in an office with windows, on an Xvfb display of its
own: what a headless office cannot show, as there an analysis holds the
office's main thread to its end.

With windows, a running analysis lets the office handle events whenever its
progress moves, so another thread (a macro, another extension, this test)
can close the document or its window in the middle of the run. The document
had closed at once with the run still going on it; now the close stops the
run, is refused (CloseVetoException), and the document closes as soon as the
run has stopped, with nothing written. Checked for a close of the document
and of its window, each handing the closing over (close(True)). A cell's
long call (KMEANS) likewise refuses the close and stops (#VALUE!), and the
document closes when asked again (closed during Calc's recalculation, it had
crashed the office). The office answers afterwards.

Without Xvfb the checks are reported as skipped.
"""
import os
import random
import shutil
import threading
import time

import lo_session
from calc_dialogs import click, dialog_message, dispatch, set_field


def open_documents(office):
    found, components = [], office.desktop.getComponents().createEnumeration()
    while components.hasMoreElements():
        found.append(components.nextElement())
    return found


def close_during_run(results, office, what):
    document = office.new_spreadsheet(hidden=False)
    frame = document.getCurrentController().getFrame()
    sheet = document.getSheets().getByIndex(0)
    rng = random.Random(11)
    rows = 30000
    sheet.getCellRangeByPosition(0, 0, 3, rows - 1).setDataArray(
        tuple(tuple(rng.gauss(0.0, 1.0) for _ in range(4)) for _ in range(rows)))
    before = len(open_documents(office))
    _, dialog = dispatch(frame, "kmeans")
    # 300 restarts of k = 40: a minute or more of work.
    for name, value in {"data": "$Sheet1.$A$1:$D$%d" % rows, "labels": False, "k": "40",
                        "restarts": "300"}.items():
        set_field(dialog, name, value)
    click(dialog, "ok")
    time.sleep(2.0)
    running = dialog_message(dialog) or ""
    closing = document if what == "document" else frame
    answer = {}

    def close():
        started = time.time()
        try:
            closing.close(True)
            answer["closed"] = True
        except Exception as failure:  # the CloseVetoException expected
            answer["refused"] = type(failure).__name__ + ": " + getattr(failure, "Message", str(failure))
        answer["seconds"] = round(time.time() - started, 2)

    started = time.time()
    thread = threading.Thread(target=close)
    thread.start()
    thread.join(180)
    while len(open_documents(office)) >= before and time.time() - started < 30:
        time.sleep(0.1)
    closed_after = round(time.time() - started, 2)
    left = len(open_documents(office))
    try:
        shown = dialog_message(dialog)  # None once the dialog is gone
    except Exception as failure:
        shown = None if type(failure).__name__ == "DisposedException" else repr(failure)
    results.check("with windows, the %s closed while kmeans runs: the close refused at once, the run stopped "
                  "(its dialog gone), the document closed within 5 s" % what,
                  running.startswith("Running") and "CloseVetoException" in answer.get("refused", "")
                  and answer["seconds"] < 5.0 and left == before - 1 and closed_after < 5.0 and shown is None,
                  [running, answer, closed_after, left, before, shown])
    if left >= before:
        try:
            if dialog_message(dialog) is not None:
                click(dialog, "cancel")
            document.close(True)
        except Exception:
            pass


def close_during_cell(results, office):
    """A cell's KMEANS, its progress in the status bar: the document's close
    is refused and the call stopped (the document had closed under Calc's
    recalculation, and the office crashed); a second close closes it."""
    document = office.new_spreadsheet(hidden=False)
    sheet = document.getSheets().getByIndex(0)
    rng = random.Random(12)
    rows = 30000
    sheet.getCellRangeByPosition(0, 0, 3, rows - 1).setDataArray(
        tuple(tuple(rng.gauss(0.0, 1.0) for _ in range(4)) for _ in range(rows)))
    entered = {}

    def enter():
        started = time.time()
        try:
            sheet.getCellRangeByName("F1:G12").setArrayFormula('=KMEANS(A1:D%d;40;"summary";300)' % rows)
        except Exception as failure:
            entered["failed"] = repr(failure)[:200]
        entered["seconds"] = round(time.time() - started, 2)

    thread = threading.Thread(target=enter)
    thread.start()
    time.sleep(3.0)
    answer = {}
    started = time.time()
    try:
        document.close(True)
        answer["closed"] = True
    except Exception as failure:
        answer["refused"] = type(failure).__name__ + ": " + getattr(failure, "Message", str(failure))
    answer["seconds"] = round(time.time() - started, 2)
    thread.join(180)
    shown = sheet.getCellRangeByName("F1").getError() if "refused" in answer else None
    results.check("with windows, the document closed while a cell's KMEANS runs: the close refused at once, the "
                  "call stopped (#VALUE!) within 5 s",
                  "CloseVetoException" in answer.get("refused", "") and answer["seconds"] < 5.0
                  and "failed" not in entered and entered.get("seconds", 99) < 10.0 and shown == 519,
                  [answer, entered, shown])
    closed = False
    try:
        document.close(True)
        closed = True
    except Exception as failure:
        closed = repr(failure)[:200]
    results.check("with windows, after the stopped call the document closes", closed is True, closed)


def check(results, oxt, program_dir, timeout_s):
    names = ["with windows, the %s closed while kmeans runs" % what for what in ("document", "window")]
    names += ["with windows, the document closed while a cell's KMEANS runs", "after the stopped call the document "
              "closes", "with windows, the office answers after the closes"]
    if shutil.which("Xvfb") is None:
        for name in names:
            results.skip(name, "no Xvfb to show the office's windows")
        return
    display, server = lo_session.start_xvfb()
    kept = os.environ.get("DISPLAY")
    os.environ["DISPLAY"] = display
    try:
        with lo_session.Session(program_dir=program_dir, timeout_s=timeout_s, headless=False) as office:
            office.install_extension(oxt)
            for what in ("document", "window"):
                close_during_run(results, office, what)
            close_during_cell(results, office)
            answering = office.new_spreadsheet()
            results.check("with windows, the office answers after the closes", answering.getSheets().getCount() >= 1)
            answering.close(True)
    finally:
        if kept is None:
            os.environ.pop("DISPLAY", None)
        else:
            os.environ["DISPLAY"] = kept
        server.terminate()
        server.wait()
