#!/usr/bin/env python3
"""Makes docs/screenshots/: the analysis menu, each analysis dialog's three
tabs and the report sheet each writes, as LibreOffice Calc shows them with
statgpu.oxt installed.

    /usr/bin/python3 docs/make_screenshots.py [--oxt build/statgpu.oxt]
                                              [--output docs/screenshots]
                                              [--display :N] [--only NAME ...]

NAME: menu, about, median, kmeans, gmm, lts, bestsubset, igmm (default: all).
Each analysis gives <analysis>-general.png, -options.png, -outputs.png (its
dialog's tabs) and -report.png; besides, menu.png and about.png.

The office runs on a display of its own: an Xvfb server started here at
1600x1000 (a window manager too, openbox, when one is installed, so that
windows have title bars), or the X display given by --display. The
extension is installed into a throwaway profile (tests/libreoffice/lo_session.py).
Each analysis gets a new spreadsheet holding a data set from samples/
(ozone by month for the order statistics, Old Faithful for k-means and the
Gaussian mixture, stackloss with the response first for LTS and best
subsets, make_igmm.py's simulated response times for the inverse Gaussian
mixture); its dialog is opened through the menu's own URL
(org.statgpu.dialog:<analysis>) with the data's first cell selected, each
tab is shown by clicking it, OK is clicked, and the report sheet is taken
with its first chart in view. Alt+D opens the Data menu, and the submenus
are opened through their accessible actions; where an entry of the path is
missing, the script says which and makes no menu.png.

Screens are read with xwd and written as PNG here (zlib; no imaging library
needed), cropped to the window. Needs Debian's xvfb, x11-apps (xwd),
x11-utils (xwininfo, xprop) and xdotool; openbox is optional.
"""

import argparse
import csv
import os
import shutil
import signal
import struct
import subprocess
import sys
import threading
import time
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "libreoffice"))
sys.path.insert(0, os.path.join(ROOT, "samples"))
import calc_dialogs  # noqa: E402  (the LibreOffice test's way to open and fill a dialog)
import lo_session  # noqa: E402

SCREEN = (1600, 1000)                  # the Xvfb screen; each spreadsheet's window fills it
MENU_PATH = ("Data", "Statistics", "GPU Statistics (statgpu)")
SETTLE_S = 1.0                         # for the office to paint after a change
RUN_TIMEOUT_S = 300                    # one analysis, from OK to its report


# ---- PNG from an X screen dump ---------------------------------------------------

class Image:
    """An RGB image: width, height and rows of bytes (3 per pixel)."""

    def __init__(self, width, height, rows):
        self.width, self.height, self.rows = width, height, rows

    def crop(self, left, top, width, height):
        left, top = max(0, left), max(0, top)
        width, height = min(width, self.width - left), min(height, self.height - top)
        return Image(width, height, [row[3 * left:3 * (left + width)] for row in self.rows[top:top + height]])

    def write_png(self, path):
        def chunk(kind, data):
            return (struct.pack(">I", len(data)) + kind + data
                    + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))
        # Filter "Up" (2) on every row: a screen's rows repeat a lot.
        raw, previous = bytearray(), bytes(3 * self.width)
        for row in self.rows:
            raw.append(2)
            raw += bytes((a - b) & 0xFF for a, b in zip(row, previous))
            previous = row
        with open(path, "wb") as png:
            png.write(b"\x89PNG\r\n\x1a\n")
            png.write(chunk(b"IHDR", struct.pack(">IIBBBBB", self.width, self.height, 8, 2, 0, 0, 0)))
            png.write(chunk(b"IDAT", zlib.compress(bytes(raw), 9)))
            png.write(chunk(b"IEND", b""))


def read_xwd(data):
    """The image of an xwd dump of a 24- or 32-bit TrueColor screen."""
    header = struct.unpack(">25I", data[:100])
    header_bytes, width, height = header[0], header[4], header[5]
    byte_order, bits_per_pixel, bytes_per_line = header[7], header[11], header[12]
    masks, colour_count = header[14:17], header[19]
    if bits_per_pixel not in (24, 32) or masks != (0xFF0000, 0x00FF00, 0x0000FF):
        raise RuntimeError("xwd: %d bits per pixel with masks %s is not read here" % (bits_per_pixel, masks))
    pixels = data[header_bytes + 12 * colour_count:]
    step = bits_per_pixel // 8
    # LSBFirst (0): blue, green, red in the first three bytes; MSBFirst: the last three.
    red, green, blue = (2, 1, 0) if byte_order == 0 else (step - 3, step - 2, step - 1)
    rows = []
    for y in range(height):
        line = pixels[y * bytes_per_line:y * bytes_per_line + step * width]
        row = bytearray(3 * width)
        row[0::3], row[1::3], row[2::3] = line[red::step], line[green::step], line[blue::step]
        rows.append(bytes(row))
    return Image(width, height, rows)


# ---- the display -------------------------------------------------------------------

class Display:
    """An X display for the office: started here (Xvfb, a window manager when
    there is one) unless one is named; reads windows' places and the screen."""

    def __init__(self, name=None):
        self.processes = []
        self.name = name
        if name is None:
            self.name = self._start_xvfb()
            if shutil.which("openbox"):
                self.processes.append(self._spawn(["openbox"]))
                time.sleep(1.0)
        os.environ["DISPLAY"] = self.name

    def _spawn(self, arguments):
        return subprocess.Popen(arguments, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, start_new_session=True,
                                env=dict(os.environ, DISPLAY=self.name or ""))

    def _start_xvfb(self):
        self.name, server = lo_session.start_xvfb(*SCREEN)
        self.processes.append(server)
        return self.name

    def stop(self):
        for process in reversed(self.processes):
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
                process.wait()
        self.processes = []

    @staticmethod
    def grab():
        return read_xwd(subprocess.run(["xwd", "-root", "-silent"], check=True, stdout=subprocess.PIPE).stdout)

    @staticmethod
    def window_ids(title):
        """The ids of the visible windows whose title is title exactly."""
        pattern = "^%s$" % "".join("\\" + c if c in "\\^$.|?*+()[]{}" else c for c in title)
        found = subprocess.run(["xdotool", "search", "--onlyvisible", "--name", pattern],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True).stdout
        return [int(line) for line in found.split()]

    @staticmethod
    def client_box(window):
        """(left, top, width, height) on the screen of window's own area."""
        info = subprocess.run(["xwininfo", "-id", str(window)], check=True, stdout=subprocess.PIPE, text=True).stdout
        values = dict(line.strip().split(":", 1) for line in info.splitlines() if ":" in line)
        return tuple(int(values[key]) for key in ("Absolute upper-left X", "Absolute upper-left Y", "Width", "Height"))

    @staticmethod
    def frame_of(window):
        """(left, top, width, height) on the screen of window with its title bar
        and borders (the window manager's frame extents, none without one)."""
        left, top, width, height = Display.client_box(window)
        extents = subprocess.run(["xprop", "-id", str(window), "_NET_FRAME_EXTENTS"], stdout=subprocess.PIPE,
                                 stderr=subprocess.DEVNULL, text=True).stdout
        if "=" in extents:
            border_left, border_right, border_top, border_bottom = (int(v) for v in extents.split("=")[1].split(","))
            return (left - border_left, top - border_top, width + border_left + border_right,
                    height + border_top + border_bottom)
        return left, top, width, height

    @staticmethod
    def keys(*names, delay_s=0.4):
        for name in names:
            subprocess.run(["xdotool", "key", name], check=True)
            time.sleep(delay_s)


def wait_for(predicate, timeout_s, what):
    deadline = time.monotonic() + timeout_s
    while not predicate():
        if time.monotonic() > deadline:
            raise RuntimeError("timed out waiting for " + what)
        time.sleep(0.2)


# ---- the data and the analyses ---------------------------------------------------

def read_csv(name):
    """The header and the rows of samples/<name>; numbers as floats, NA as empty."""
    with open(os.path.join(ROOT, "samples", name), newline="") as handle:
        rows = list(csv.reader(handle))
    return rows[0], [[float(value) if value not in ("", "NA") else "" for value in row] for row in rows[1:]]


def faithful():
    return read_csv("faithful.csv")


def stackloss_response_first():
    """stackloss with the response (stack.loss) in the first column, as the
    dialog takes Y and X from a selection: the first column and the rest."""
    header, rows = read_csv("stackloss.csv")
    return [header[3]] + header[:3], [[row[3]] + row[:3] for row in rows]


def ozone_by_month():
    """New York's daily ozone, May to September 1973 (R's airquality): a
    column per month, a group each for the order statistics; the days
    without a reading stay empty, as the dialog skips them."""
    header, rows = read_csv("airquality-ozone.csv")
    months = ["May", "June", "July", "August", "September"]
    table = [[""] * len(months) for _ in range(31)]
    for month, day, ozone in rows:
        table[int(day) - 1][int(month) - 5] = ozone
    return months, table


def response_times():
    """Response times of three simulated subjects (positive, skewed, two
    modes each): samples/make_igmm.py's data, a column per subject."""
    from make_igmm import simulate
    subjects = simulate()[:3]
    length = max(len(times) for times in subjects)
    rows = [[times[i] if i < len(times) else "" for times in subjects] for i in range(length)]
    return ["subject %d" % (n + 1) for n in range(len(subjects))], rows


class Analysis:
    """An entry of the menu: the data its sheet gets and the fields set
    before OK (the rest keep the dialog's defaults and the selection's ranges)."""

    def __init__(self, command, title, data, fields=None):
        self.command, self.title, self.data, self.fields = command, title, data, fields or {}


ANALYSES = [
    Analysis("median", "Median and quantiles", ozone_by_month),
    Analysis("kmeans", "K-means clustering", faithful, {"k": "2"}),
    Analysis("gmm", "Gaussian mixture", faithful, {"k": "1-4"}),
    Analysis("lts", "Robust regression (LTS)", stackloss_response_first),
    Analysis("bestsubset", "Best subset regression", stackloss_response_first),
    Analysis("igmm", "Inverse Gaussian mixture", response_times, {"k": "2"}),
]


# ---- driving the office ----------------------------------------------------------

def open_dialog(frame, command):
    """Dispatches the menu's URL org.statgpu.dialog:<command> in frame; returns the dialog's control."""
    _, dialog = calc_dialogs.dispatch(frame, command)
    if dialog is None or isinstance(dialog, str):
        raise RuntimeError("org.statgpu.dialog:%s opened no dialog: %r" % (command, dialog))
    return dialog


def new_sheet_with(office, header, rows):
    """A spreadsheet window filling the screen, its first sheet "Data" holding
    header and rows from A1, the cell A1 selected (the dialog takes the data
    around it)."""
    document = office.new_spreadsheet(hidden=False)
    sheet = document.Sheets.getByIndex(0)
    sheet.setName("Data")
    width = len(header)
    sheet.getCellRangeByPosition(0, 0, width - 1, len(rows)).setDataArray(
        [tuple(header)] + [tuple(row) for row in rows])
    controller = document.getCurrentController()
    controller.select(sheet.getCellByPosition(0, 0))
    window = controller.getFrame().getContainerWindow()
    window.setPosSize(0, 0, SCREEN[0], SCREEN[1], 15)
    subprocess.run(["xdotool", "mousemove", str(SCREEN[0] - 5), str(SCREEN[1] - 5)], check=False)
    time.sleep(SETTLE_S)
    return document


def window_of(title, timeout_s=30):
    ids = []
    wait_for(lambda: ids.extend(Display.window_ids(title)) or ids, timeout_s, "the window " + title)
    return ids[-1]


def calc_window(frame):
    """The X window of a Calc frame, whose title is the frame's ("Untitled 1 -
    LibreOffice Calc") or the document's and then the office's name."""
    title = frame.Title
    return window_of(title if title.endswith(" - LibreOffice Calc") else title + " - LibreOffice Calc")


def click_control(window, dialog, name):
    """A mouse click in the middle of the dialog's control name, as a user's;
    then the pointer goes out of the way."""
    left, top, _, _ = Display.client_box(window)
    box = dialog.getControl(name).getPosSize()
    subprocess.run(["xdotool", "mousemove", str(left + box.X + box.Width // 2), str(top + box.Y + box.Height // 2),
                    "click", "1"], check=True)
    time.sleep(0.2)
    subprocess.run(["xdotool", "mousemove", str(SCREEN[0] - 5), str(SCREEN[1] - 5)], check=True)
    time.sleep(SETTLE_S)


def shot_window(window, path):
    left, top, width, height = Display.frame_of(window)
    Display.grab().crop(left, top, width, height).write_png(path)
    print("wrote %s (%dx%d)" % (os.path.relpath(path, ROOT), width, height))


def chart_in_view(document, report):
    """Zooms the report's view out (100% down to 50%) until its first chart
    is wholly in the window."""
    draw_page = report.getDrawPage()
    charts = [draw_page.getByIndex(i) for i in range(draw_page.getCount())
              if draw_page.getByIndex(i).getShapeType() == "com.sun.star.drawing.OLE2Shape"]
    if not charts:
        return False
    position, size = charts[0].getPosition(), charts[0].getSize()
    right, bottom = position.X + size.Width, position.Y + size.Height
    controller = document.getCurrentController()
    for zoom in range(100, 45, -5):
        controller.ZoomValue = zoom
        time.sleep(0.3)
        visible = controller.getVisibleRange()
        last = report.getCellByPosition(visible.EndColumn, visible.EndRow).Position
        if right <= last.X and bottom <= last.Y:
            return True
    return False


def run_analysis(office, analysis, output):
    """The three tabs of analysis's dialog and its report sheet, as PNGs in output."""
    header, rows = analysis.data()
    document = new_sheet_with(office, header, rows)
    try:
        frame = document.getCurrentController().getFrame()
        dialog = open_dialog(frame, analysis.command)
        for name, value in analysis.fields.items():
            calc_dialogs.set_field(dialog, name, value)
        window = window_of(analysis.title + " (statgpu)")
        time.sleep(SETTLE_S)
        for page, tab in enumerate(("general", "options", "outputs"), start=1):
            click_control(window, dialog, "page%d" % page)
            shot_window(window, os.path.join(output, "%s-%s.png" % (analysis.command, tab)))
        click_control(window, dialog, "page1")
        dialog.getControl("ok").getPeer().getAccessibleContext().doAccessibleAction(0)
        deadline = time.monotonic() + RUN_TIMEOUT_S
        while dialog.getPeer() is not None:
            message = dialog.getControl("message").getModel().Label
            if time.monotonic() > deadline or (message and not message.startswith(("Running", "Writing"))):
                raise RuntimeError("%s: the dialog did not write its report: %s" % (analysis.command, message))
            time.sleep(0.2)
        time.sleep(SETTLE_S)
        controller = document.getCurrentController()
        report = controller.getActiveSheet()
        if not chart_in_view(document, report):
            print("note  %s: the report's chart is not wholly in view" % analysis.command)
        time.sleep(SETTLE_S)
        shot_window(calc_window(frame), os.path.join(output, "%s-report.png" % analysis.command))
    finally:
        document.close(True)


def accessible_children(accessible):
    context = accessible.getAccessibleContext()
    return [context.getAccessibleChild(i) for i in range(context.getAccessibleChildCount())]


def accessible_named(accessible, name, depth=4):
    """The first accessible below accessible (breadth first, depth levels) named name."""
    level = [accessible]
    for _ in range(depth):
        below = []
        for item in level:
            for child in accessible_children(item):
                if child.getAccessibleContext().getAccessibleName() == name:
                    return child
                below.append(child)
        level = below
    return None


def bounds(accessibles):
    """(left, top, right, bottom) on the screen around accessibles."""
    boxes = []
    for item in accessibles:
        context = item.getAccessibleContext()
        point, size = context.getLocationOnScreen(), context.getSize()
        boxes.append((point.X, point.Y, point.X + size.Width, point.Y + size.Height))
    return (min(b[0] for b in boxes), min(b[1] for b in boxes), max(b[2] for b in boxes), max(b[3] for b in boxes))


def menu_screenshot(office, output):
    """Data > Statistics > GPU Statistics (statgpu), opened by keys and the
    menus' accessible actions; returns False (and writes nothing) when an
    entry of the path is missing."""
    header, rows = faithful()
    document = new_sheet_with(office, header, rows)
    try:
        frame = document.getCurrentController().getFrame()
        window = calc_window(frame)
        subprocess.run(["xdotool", "windowactivate", "--sync", str(window)], check=False)
        time.sleep(0.5)
        Display.keys("alt+d")
        opened = [accessible_named(frame.getContainerWindow(), MENU_PATH[0])]
        for name in MENU_PATH[1:]:
            entries = accessible_children(opened[-1])
            item = next((entry for entry in entries if entry.getAccessibleContext().getAccessibleName() == name), None)
            if item is None:
                print("MISSING  the menu %s has no entry %r (it has: %s)"
                      % (" > ".join(MENU_PATH[:len(opened)]), name,
                         ", ".join(entry.getAccessibleContext().getAccessibleName() for entry in entries)))
                Display.keys("Escape", "Escape", "Escape")
                return False
            opened[-1].getAccessibleContext().selectAccessibleChild(entries.index(item))
            item.getAccessibleContext().doAccessibleAction(0)
            time.sleep(SETTLE_S)
            opened.append(item)
        # The last submenu's first entry, highlighted as when a user arrives there.
        opened[-1].getAccessibleContext().selectAccessibleChild(0)
        time.sleep(SETTLE_S)
        _, _, right, bottom = bounds([entry for menu in opened for entry in accessible_children(menu)])
        margin = 12
        Display.grab().crop(0, 0, right + margin, bottom + margin).write_png(os.path.join(output, "menu.png"))
        print("wrote %s" % os.path.relpath(os.path.join(output, "menu.png"), ROOT))
        Display.keys("Escape", "Escape", "Escape", "Escape")
        return True
    finally:
        document.close(True)


def about_screenshot(office, output):
    """About statgpu / backend: a message box; OK by the Return key."""
    header, rows = faithful()
    document = new_sheet_with(office, header, rows)
    try:
        frame = document.getCurrentController().getFrame()
        url = calc_dialogs.url_of(calc_dialogs.PROTOCOL + "about")
        handler = frame.queryDispatch(url, "", 0)
        # The call returns when the box is closed: it waits in a thread of its own.
        waiting = threading.Thread(target=handler.dispatch, args=(url, ()), daemon=True)
        waiting.start()
        window = window_of("About statgpu")
        time.sleep(SETTLE_S)
        shot_window(window, os.path.join(output, "about.png"))
        subprocess.run(["xdotool", "windowactivate", "--sync", str(window)], check=False)
        Display.keys("Return")
        waiting.join(30)
    finally:
        document.close(True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--oxt", default=os.path.join(ROOT, "build", "statgpu.oxt"))
    parser.add_argument("--output", default=os.path.join(HERE, "screenshots"))
    parser.add_argument("--display", help="an X display to use instead of starting Xvfb (e.g. :0)")
    parser.add_argument("--only", nargs="+", metavar="NAME",
                        choices=[analysis.command for analysis in ANALYSES] + ["menu", "about"],
                        help="only these (default: the menu, About and every analysis)")
    args = parser.parse_args()
    lo_session.ensure_uno()
    if not os.path.exists(args.oxt):
        sys.exit("statgpu: %s not found; build it first (cmake --build build)" % args.oxt)
    missing = [tool for tool in ("xwd", "xwininfo", "xprop", "xdotool") + (() if args.display else ("Xvfb",))
               if shutil.which(tool) is None]
    if missing:
        sys.exit("statgpu: %s missing (Debian: apt-get install xvfb x11-apps x11-utils xdotool)" % ", ".join(missing))
    os.makedirs(args.output, exist_ok=True)
    wanted = args.only or ["menu", "about"] + [analysis.command for analysis in ANALYSES]

    # A time-out's SIGTERM ends the office and the display too.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    display = Display(args.display)
    failed = []
    try:
        with lo_session.Session(timeout_s=1800, headless=False) as office:
            office.install_extension(args.oxt)
            if "menu" in wanted and not menu_screenshot(office, args.output):
                failed.append("menu")
            if "about" in wanted:
                about_screenshot(office, args.output)
            for analysis in ANALYSES:
                if analysis.command in wanted:
                    try:
                        run_analysis(office, analysis, args.output)
                    except RuntimeError as error:
                        print("FAILED  %s" % error)
                        failed.append(analysis.command)
    finally:
        display.stop()
    if failed:
        print("not made: " + ", ".join(failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
