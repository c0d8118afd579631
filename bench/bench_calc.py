#!/usr/bin/env python3
"""GPUMEDIAN in Calc, from cell to result, against Calc's own MEDIAN on the
same cells: a headless LibreOffice with statgpu.oxt installed fills a column
with random numbers, then times =MEDIAN(range) and =GPUMEDIAN(range) over
10^5 and 10^6 cells (formula set, value read back; median of the repeats).

GPUMEDIAN's time is split with the add-in's own trace (STATGPU_TRACE): the
add-in's conversion of the cells to numbers, the engine's computation, and
the rest, which is Calc building the range argument and calling the add-in.

usage: /usr/bin/python3 bench/bench_calc.py --oxt build/statgpu.oxt [--repeats 5]
"""
import argparse
import os
import random
import statistics
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "libreoffice"))
import lo_session  # noqa: E402


def timed_formula(cell, formula):
    cell.setString("")
    started = time.perf_counter()
    cell.setFormula(formula)
    value = cell.getValue()
    elapsed = time.perf_counter() - started
    if cell.getError() != 0:
        raise RuntimeError("%s gave Err:%d" % (formula, cell.getError()))
    return elapsed, value


def main():
    lo_session.ensure_uno()
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--oxt", required=True)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--sizes", default="100000,1000000")
    args = parser.parse_args()
    sizes = [int(size) for size in args.sizes.split(",")]

    trace = tempfile.NamedTemporaryFile(prefix="statgpu-trace-", suffix=".txt", delete=False)
    trace.close()
    os.environ["STATGPU_TRACE"] = trace.name
    rows = []
    with lo_session.Session() as office:
        office.install_extension(os.path.abspath(args.oxt))
        document = office.new_spreadsheet()
        sheet = document.Sheets.getByIndex(0)
        rng = random.Random(11)
        largest = max(sizes)
        column = tuple((rng.gauss(0.0, 1.0),) for _ in range(largest))
        started = time.perf_counter()
        sheet.getCellRangeByName("A1:A%d" % largest).setDataArray(column)
        print("filled %d cells in %.1f s" % (largest, time.perf_counter() - started))
        cell = sheet.getCellRangeByName("C1")
        for count in sizes:
            builtin, ours, convert, engine = [], [], [], []
            for _ in range(args.repeats):
                elapsed, expected = timed_formula(cell, "=MEDIAN(A1:A%d)" % count)
                builtin.append(elapsed)
                open(trace.name, "w").close()
                elapsed, got = timed_formula(cell, "=GPUMEDIAN(A1:A%d)" % count)
                if got != expected:
                    raise RuntimeError("GPUMEDIAN %r differs from MEDIAN %r" % (got, expected))
                ours.append(elapsed)
                with open(trace.name) as handle:
                    lines = handle.read().split("\n")
                cells, convert_seconds, engine_seconds = lines[0].split()
                if int(cells) != count:
                    raise RuntimeError("the trace saw %s cells, not %d" % (cells, count))
                convert.append(float(convert_seconds))
                engine.append(float(engine_seconds))
            info = sheet.getCellRangeByName("D1")
            info.setFormula("=GPUINFO()")
            rows.append((count, statistics.median(builtin), statistics.median(ours), statistics.median(convert),
                         statistics.median(engine), info.getString()))
        document.close(True)
    os.unlink(trace.name)

    print("\n## GPUMEDIAN in Calc, cell to result (ms, median of %d)" % args.repeats)
    print("| cells | MEDIAN | GPUMEDIAN | Calc marshalling | add-in conversion | engine |")
    print("|---|---|---|---|---|---|")
    for count, builtin, ours, convert, engine, _ in rows:
        print("| %d | %.1f | %.1f | %.1f | %.1f | %.2f |" % (count, 1e3 * builtin, 1e3 * ours,
                                                          1e3 * (ours - convert - engine), 1e3 * convert, 1e3 * engine))
    print("backend: %s" % rows[-1][5])
    return 0


if __name__ == "__main__":
    sys.exit(main())
