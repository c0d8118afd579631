"""lo_session.py: one LibreOffice process, driven through UNO, with statgpu.oxt installed.

Used by the LibreOffice test (tests/libreoffice/test_calc.py) and by the sample
scripts (samples/make_order_statistics.py, samples/show_sample.py):

    import lo_session
    lo_session.ensure_uno()                       # re-runs the script under a Python with uno
    with lo_session.Session(timeout_s=600) as office:
        office.install_extension("build/statgpu.oxt")
        document = office.load("samples/order-statistics.ods")

The office runs headless in a profile of its own (a throwaway folder unless
one is given), so the user's own profile is never touched. The extension is
installed through the running office's ExtensionManager into that profile's
"user" repository, which also works as root (unopkg refuses root unless
--shared), and the office is then restarted so that Calc registers the add-in.
stop() (and leaving the with block, also on an exception or a time-out) ends
the office process and everything it started.
"""

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

EXTENSION_IDENTIFIER = "org.statgpu.extension"
# soffice.bin exits with this code when it wants to be started again (for
# instance on the first start in a new profile); the soffice launcher script
# would restart it, we start it ourselves.
RESTART_EXIT_CODE = 81


def _python_has_uno(python):
    try:
        return subprocess.run([python, "-c", "import uno"], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, timeout=60).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


def uno_python_candidates():
    """Pythons that may have the uno module: Debian's python3-uno belongs to the
    system's own /usr/bin/python3, whatever else comes first on the PATH; an
    office from libreoffice.org brings its own program/python."""
    seen = []
    for folder in os.environ.get("PATH", "").split(os.pathsep) + ["/usr/bin"]:
        candidate = os.path.join(folder, "python3")
        if os.access(candidate, os.X_OK) and os.path.realpath(candidate) not in seen:
            seen.append(os.path.realpath(candidate))
            yield candidate
    for office in ("/usr/lib/libreoffice", "/opt/libreoffice"):
        candidate = os.path.join(office, "program", "python")
        if os.access(candidate, os.X_OK):
            yield candidate


def ensure_uno(missing_exit_code=1):
    """Makes 'import uno' work: if this Python lacks it, runs the script again
    under one that has it. Where there is none, says so and exits with
    missing_exit_code (a test passes 77: skipped)."""
    try:
        import uno  # noqa: F401
        return
    except ImportError:
        pass
    if not os.environ.get("STATGPU_UNO_REEXEC"):
        for python in uno_python_candidates():
            if os.path.realpath(python) != os.path.realpath(sys.executable) and _python_has_uno(python):
                os.environ["STATGPU_UNO_REEXEC"] = "1"
                os.execv(python, [python] + sys.argv)
    print("SKIPPED: no Python with the uno module (Debian: apt-get install python3-uno)"
          if missing_exit_code == 77 else
          "statgpu: no Python with the uno module (Debian: apt-get install python3-uno)")
    sys.exit(missing_exit_code)


def find_program_dir(program_dir=None):
    """The office's program/ folder: given, from LIBREOFFICE_PROGRAM_DIR, beside
    the uno module (Debian links uno.py from there), or from soffice on the PATH."""
    candidates = [program_dir, os.environ.get("LIBREOFFICE_PROGRAM_DIR")]
    try:
        import uno
        candidates.append(os.path.dirname(os.path.realpath(uno.__file__)))
    except ImportError:
        pass
    soffice = shutil.which("soffice") or shutil.which("libreoffice")
    if soffice:
        candidates.append(os.path.dirname(os.path.realpath(soffice)))
    for candidate in candidates:
        if candidate and os.access(os.path.join(candidate, "soffice.bin"), os.X_OK):
            return candidate
    raise RuntimeError("LibreOffice not found (set LIBREOFFICE_PROGRAM_DIR to its program/ folder)")


def start_xvfb(width=1600, height=1000):
    """An Xvfb server on the first free display from :99: (the display's name,
    such as ":99", and the server's process, in a session of its own)."""
    for number in range(99, 140):
        if os.path.exists("/tmp/.X11-unix/X%d" % number) or os.path.exists("/tmp/.X%d-lock" % number):
            continue
        name = ":%d" % number
        server = subprocess.Popen(["Xvfb", name, "-screen", "0", "%dx%dx24" % (width, height), "-nolisten", "tcp"],
                                  stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                  start_new_session=True)
        for _ in range(100):
            if os.path.exists("/tmp/.X11-unix/X%d" % number):
                return name, server
            if server.poll() is not None:
                break
            time.sleep(0.1)
        server.kill()
        server.wait()
    raise RuntimeError("could not start Xvfb")


def _make_command_environment():
    """An XCommandEnvironment for the ExtensionManager that accepts the licence
    and confirms replacing an installed copy, as a user clicking OK would."""
    import uno
    import unohelper
    from com.sun.star.task import XInteractionHandler
    from com.sun.star.ucb import XCommandEnvironment, XProgressHandler

    approve = uno.getTypeByName("com.sun.star.task.XInteractionApprove")

    class Approver(unohelper.Base, XInteractionHandler):
        def handle(self, request):
            for continuation in request.getContinuations():
                if continuation.queryInterface(approve):
                    continuation.select()
                    return

    class Progress(unohelper.Base, XProgressHandler):
        def push(self, status):
            pass

        def update(self, status):
            pass

        def pop(self):
            pass

    class CommandEnvironment(unohelper.Base, XCommandEnvironment):
        def getInteractionHandler(self):
            return Approver()

        def getProgressHandler(self):
            return Progress()

    return CommandEnvironment()


class Session:
    """A LibreOffice in its own profile, reachable over a named pipe: headless
    unless headless=False, which shows its windows on the display (for
    screenshots: docs/make_screenshots.py)."""

    def __init__(self, program_dir=None, profile_dir=None, timeout_s=600, log=None, headless=True):
        self.program_dir = find_program_dir(program_dir)
        self._own_profile = profile_dir is None
        self.profile_dir = os.path.abspath(profile_dir or tempfile.mkdtemp(prefix="statgpu-lo-profile-"))
        self.pipe_name = "statgpu_%d_%d" % (os.getpid(), int(time.time() * 1000) % 1000000)
        self.timeout_s = timeout_s
        self.headless = headless
        self.log = log or (lambda message: None)
        self.process = None
        self.context = None
        self.desktop = None
        self.timed_out = False
        self._watchdog = None

    # ---- lifetime --------------------------------------------------------------

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc_info):
        self.stop()
        return False

    def _arguments(self):
        import uno
        return ([os.path.join(self.program_dir, "soffice.bin")]
                + (["--headless", "--invisible"] if self.headless else [])
                + ["--norestore", "--nologo", "--nodefault",
                   "--nolockcheck", "--accept=pipe,name=%s;urp;" % self.pipe_name,
                   "-env:UserInstallation=" + uno.systemPathToFileUrl(self.profile_dir)])

    def start(self):
        """Starts the office and connects to it; arms the time-out."""
        if self._watchdog is None and self.timeout_s:
            self._watchdog = threading.Timer(self.timeout_s, self._on_timeout)
            self._watchdog.daemon = True
            self._watchdog.start()
        self._launch_and_connect()

    def _launch_and_connect(self):
        import uno
        from com.sun.star.connection import NoConnectException
        local = uno.getComponentContext()
        resolver = local.ServiceManager.createInstanceWithContext(
            "com.sun.star.bridge.UnoUrlResolver", local)
        url = "uno:pipe,name=%s;urp;StarOffice.ComponentContext" % self.pipe_name
        deadline = time.monotonic() + 120
        self._spawn()
        while True:
            code = self.process.poll()
            if code == RESTART_EXIT_CODE:
                self.log("office asked to be restarted (new profile); starting it again")
                self._spawn()
            elif code is not None:
                raise RuntimeError("LibreOffice exited with status %d while starting" % code)
            try:
                self.context = resolver.resolve(url)
                break
            except NoConnectException:
                if time.monotonic() > deadline or self.timed_out:
                    raise RuntimeError("could not connect to LibreOffice within 120 s")
                time.sleep(0.25)
        self.desktop = self.context.ServiceManager.createInstanceWithContext(
            "com.sun.star.frame.Desktop", self.context)

    def _spawn(self):
        # A session of its own, so that stop() can end soffice.bin and anything
        # it started, and nothing else.
        # The system's folders first on its PATH: an embedded Python that
        # looks for its standard library by the python3 on the PATH would
        # otherwise take another Python's (pyenv's, a virtualenv's) and fail
        # to run the profile's Python macros.
        environment = dict(os.environ)
        environment["PATH"] = os.pathsep.join(["/usr/bin", "/bin", environment.get("PATH", "")])
        self.process = subprocess.Popen(self._arguments(), stdin=subprocess.DEVNULL,
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                        start_new_session=True, env=environment)

    def _shutdown_office(self, grace_s=30):
        if self.desktop is not None:
            try:
                self.desktop.terminate()
            except Exception:  # the bridge goes away while terminating: expected
                pass
        self.desktop = None
        self.context = None
        if self.process is None:
            return
        try:
            self.process.wait(timeout=grace_s)
        except subprocess.TimeoutExpired:
            pass
        self._kill()
        self.process = None

    def _kill(self):
        if self.process is not None and self.process.poll() is None:
            try:
                os.killpg(self.process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.process.wait()

    def _on_timeout(self):
        self.timed_out = True
        sys.stderr.write("statgpu: LibreOffice session timed out after %d s; ending it\n" % self.timeout_s)
        self._kill()

    def restart(self):
        """Ends the office and starts it again in the same profile."""
        self._shutdown_office()
        self._launch_and_connect()

    def stop(self):
        """Ends the office (politely, then by force) and removes a throwaway profile."""
        if self._watchdog is not None:
            self._watchdog.cancel()
            self._watchdog = None
        try:
            self._shutdown_office()
        finally:
            self._kill()
            if self._own_profile:
                shutil.rmtree(self.profile_dir, ignore_errors=True)

    # ---- the extension -----------------------------------------------------------

    def install_extension(self, oxt_path, restart=True):
        """Installs oxt_path into this profile (replacing an installed copy) and
        restarts the office so that Calc registers the add-in."""
        import uno
        manager = self.context.getValueByName("/singletons/com.sun.star.deployment.ExtensionManager")
        environment = _make_command_environment()
        for extension in manager.getDeployedExtensions("user", manager.createAbortChannel(), environment):
            identifier = extension.getIdentifier()
            if identifier.IsPresent and identifier.Value == EXTENSION_IDENTIFIER:
                manager.removeExtension(EXTENSION_IDENTIFIER, extension.getName(), "user",
                                        manager.createAbortChannel(), environment)
        url = uno.systemPathToFileUrl(os.path.abspath(oxt_path))
        package = manager.addExtension(url, (), "user", manager.createAbortChannel(), environment)
        if package is None:
            raise RuntimeError("LibreOffice did not install %s" % oxt_path)
        if restart:
            self.restart()
        return package

    # ---- documents -----------------------------------------------------------------

    @staticmethod
    def _properties(**values):
        from com.sun.star.beans import PropertyValue
        properties = []
        for name, value in values.items():
            item = PropertyValue()
            item.Name, item.Value = name, value
            properties.append(item)
        return tuple(properties)

    def load(self, path, hidden=True, editable=False):
        """Opens a document read-only: it is never stored back, no lock file is
        made, and one left behind by a killed office does not stop it.
        editable=True opens an untitled copy instead (as a template), which
        may be changed and is not stored back either."""
        import uno
        url = uno.systemPathToFileUrl(os.path.abspath(path))
        mode = {"AsTemplate": True} if editable else {"ReadOnly": True}
        document = self.desktop.loadComponentFromURL(url, "_blank", 0, self._properties(Hidden=hidden, **mode))
        if document is None:
            raise RuntimeError("LibreOffice could not open %s" % path)
        return document

    def new_spreadsheet(self, hidden=True):
        """A new spreadsheet; hidden=False gives it a window (a frame with a
        status bar), as a user's document has, even in a headless office."""
        return self.desktop.loadComponentFromURL("private:factory/scalc", "_blank", 0,
                                                 self._properties(Hidden=hidden))

    def store(self, document, path, filter_name="calc8"):
        """Stores document as path (ODF spreadsheet by default)."""
        import uno
        url = uno.systemPathToFileUrl(os.path.abspath(path))
        document.storeToURL(url, self._properties(FilterName=filter_name, Overwrite=True))


# ---- reading sheets ------------------------------------------------------------------

def formula_cells(sheet):
    """Every formula cell of sheet as (address, cell), row by row; address is
    what Calc shows (e.g. G7)."""
    from com.sun.star.sheet.CellFlags import FORMULA
    found = []
    ranges = sheet.queryContentCells(FORMULA)
    cells = ranges.getCells().createEnumeration()
    while cells.hasMoreElements():
        cell = cells.nextElement()
        position = cell.getCellAddress()
        found.append(((position.Row, position.Column), cell))
    found.sort(key=lambda item: item[0])
    return [(cell_name(row, column), cell) for (row, column), cell in found]



def array_formula_ranges(sheet, function, default_word, words):
    """{Output word: the array range} of the first array formula of sheet
    calling function (e.g. "KMEANS") for each Output word: one of words when
    the formula names it in quotes, default_word when it names none."""
    found = {}
    for _, cell in formula_cells(sheet):
        formula = cell.getPropertyValue("FormulaLocal")
        if function + "(" not in formula:
            continue
        word = default_word
        for candidate in words:
            if '"%s"' % candidate in formula:
                word = candidate
        if word in found:
            continue
        cursor = sheet.createCursorByRange(cell)
        cursor.collapseToCurrentArray()
        address = cursor.getRangeAddress()
        found[word] = sheet.getCellRangeByPosition(address.StartColumn, address.StartRow,
                                                   address.EndColumn, address.EndRow)
    return found

def cell_name(row, column):
    """A1-style name of a 0-based (row, column)."""
    letters = ""
    column += 1
    while column:
        column, remainder = divmod(column - 1, 26)
        letters = chr(ord("A") + remainder) + letters
    return "%s%d" % (letters, row + 1)


def shown(cell):
    """A formula cell's result for printing: Calc's error text (#VALUE!,
    Err:502, ...), the text of a text result, or the number in full precision."""
    if cell.getError():
        return cell.getString()
    from com.sun.star.sheet.FormulaResult import STRING
    if cell.getPropertyValue("FormulaResultType2") == STRING:
        return cell.getString()
    return repr(cell.getValue())
