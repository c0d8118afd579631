#!/usr/bin/env python3
"""The order statistics in Calc, from cell to result, against Calc's own
built-ins on the same cells: a headless LibreOffice with statgpu.oxt
installed fills a column with random numbers, then times =MEDIAN(range) and
=GPUMEDIAN(range), and SMALL, LARGE and PERCENTILE.INC against GPUSMALL,
GPULARGE and GPUQUANTILE, over 10^5 and 10^6 cells and a whole column holding
10^5 numbers (formula set, value read back; median of the repeats, the
functions taking turns within each repeat).

GPUMEDIAN's time is split with the add-in's own trace (STATGPU_TRACE): the
add-in's conversion of the cells to numbers, the engine's computation, and
the rest, which is Calc building the range argument and calling the add-in.

With --alternatives, the oxt must be built with
bench/range_reading_experiment.patch applied: it adds a median function per
other way an add-in can read a range (XMEDIANDATA, XMEDIANQUERY, ...), and
each is timed on the same ranges and checked against MEDIAN's value
(bench/NOTES.md, "In Calc").

usage: /usr/bin/python3 bench/bench_calc.py --oxt build/statgpu.oxt [--repeats 5] [--alternatives]
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

LARGEST = 1000000
WHOLE_COLUMN_FILLED = 100000
SHEET_ROWS = 1048576
# (label, Data, cells in the range)
RANGES = [("10^5 cells", "A1:A100000", 100000), ("10^6 cells", "A1:A%d" % LARGEST, LARGEST),
          ("B:B, 10^5 numbers", "B:B", SHEET_ROWS)]
# (statgpu, built-in): the second argument where there is one.
ORDER_STATISTICS = [("GPUMEDIAN(%s)", "MEDIAN(%s)"), ("GPUSMALL(%s;1000)", "SMALL(%s;1000)"),
                    ("GPULARGE(%s;1000)", "LARGE(%s;1000)"), ("GPUQUANTILE(%s;0.9)", "PERCENTILE.INC(%s;0.9)")]
# The median functions of bench/range_reading_experiment.patch, and how each reads Data.
ALTERNATIVES = [
    ("XMEDIANDATA", "XCellRange argument, XCellRangeData::getDataArray"),
    ("XMEDIANQUERY",
     "XCellRange, queryContentCells(VALUE|DATETIME) + queryFormulaCells(VALUE), getDataArray per block"),
    ("XMEDIANQV", "XCellRange, the same blocks, XChartDataArray::getData per block"),
    ("XMEDIANCHART", "XCellRange, XChartDataArray::getData"),
    ("XMEDIANCHART2", "XCellRange + the document, chart2 data sequence getNumericalData (hidden cells included)"),
    ("XMEDIANDOUBLES", "sequence<sequence<double>> argument"),
]


def timed_formula(cell, formula):
    cell.setString("")
    started = time.perf_counter()
    cell.setFormula("=" + formula)
    value = cell.getValue()
    elapsed = time.perf_counter() - started
    return elapsed, (("error", cell.getError()) if cell.getError() else ("value", value))


def read_trace(path, expected_cells):
    with open(path) as handle:
        cells, convert_seconds, engine_seconds = handle.read().split("\n")[0].split()
    if int(cells) != expected_cells:
        raise RuntimeError("the trace saw %s cells, not %d" % (cells, expected_cells))
    return float(convert_seconds), float(engine_seconds)


def main():
    lo_session.ensure_uno()
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--oxt", required=True)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--alternatives", action="store_true",
                        help="also time the functions of bench/range_reading_experiment.patch")
    args = parser.parse_args()

    trace = tempfile.NamedTemporaryFile(prefix="statgpu-trace-", suffix=".txt", delete=False)
    trace.close()
    os.environ["STATGPU_TRACE"] = trace.name
    split, pairs, alternatives = [], [], []
    with lo_session.Session() as office:
        office.install_extension(os.path.abspath(args.oxt))
        document = office.new_spreadsheet()
        sheet = document.Sheets.getByIndex(0)
        rng = random.Random(11)
        column = tuple((rng.gauss(0.0, 1.0),) for _ in range(LARGEST))
        started = time.perf_counter()
        sheet.getCellRangeByName("A1:A%d" % LARGEST).setDataArray(column)
        sheet.getCellRangeByName("B1:B%d" % WHOLE_COLUMN_FILLED).setDataArray(column[:WHOLE_COLUMN_FILLED])
        print("filled %d cells in %.1f s" % (LARGEST + WHOLE_COLUMN_FILLED, time.perf_counter() - started))
        cell = sheet.getCellRangeByName("D1")
        info = sheet.getCellRangeByName("E1")
        info.setFormula("=GPUINFO()")
        for label, data, cells in RANGES:
            times = {formula: [] for pair in ORDER_STATISTICS for formula in pair}
            times.update({name: [] for name, _ in ALTERNATIVES if args.alternatives})
            convert, engine = [], []
            outcomes = {}
            for _ in range(args.repeats):
                for gpu, builtin in ORDER_STATISTICS:
                    elapsed, outcomes[builtin] = timed_formula(cell, builtin % data)
                    times[builtin].append(elapsed)
                    open(trace.name, "w").close()
                    elapsed, outcomes[gpu] = timed_formula(cell, gpu % data)
                    times[gpu].append(elapsed)
                    if outcomes[gpu] != outcomes[builtin]:
                        raise RuntimeError("%s gives %r, %s %r" % (gpu % data, outcomes[gpu], builtin % data,
                                                                   outcomes[builtin]))
                    if gpu.startswith("GPUMEDIAN"):
                        seconds = read_trace(trace.name, cells)
                        convert.append(seconds[0])
                        engine.append(seconds[1])
                for name, _ in ALTERNATIVES if args.alternatives else ():
                    elapsed, outcomes[name] = timed_formula(cell, "%s(%s)" % (name, data))
                    times[name].append(elapsed)
            median_ms = {key: 1e3 * statistics.median(values) for key, values in times.items()}
            split.append((label, median_ms["MEDIAN(%s)"], median_ms["GPUMEDIAN(%s)"],
                          1e3 * statistics.median(convert), 1e3 * statistics.median(engine)))
            pairs.append((label, [(median_ms[builtin], median_ms[gpu]) for gpu, builtin in ORDER_STATISTICS]))
            for name, how in ALTERNATIVES if args.alternatives else ():
                same = outcomes[name] == outcomes["MEDIAN(%s)"]
                alternatives.append((label, name, how, median_ms[name],
                                     "same as MEDIAN" if same else "differs: %r" % (outcomes[name],)))
        backend = info.getString()
        document.close(True)
    os.unlink(trace.name)

    print("\n## GPUMEDIAN in Calc, cell to result (ms, median of %d)" % args.repeats)
    print("| Data | MEDIAN | GPUMEDIAN | Calc marshalling | add-in conversion | engine |")
    print("|---|---|---|---|---|---|")
    for label, builtin, ours, convert, engine in split:
        print("| %s | %.1f | %.1f | %.1f | %.1f | %.2f |" % (label, builtin, ours, ours - convert - engine,
                                                          convert, engine))
    print("\n## The order statistics against their built-ins (ms: built-in / statgpu)")
    print("| Data | " + " | ".join(builtin.split("(")[0] + " / " + gpu.split("(")[0]
                                  for gpu, builtin in ORDER_STATISTICS) + " |")
    print("|---|" + "---|" * len(pairs[0][1]))
    for label, row in pairs:
        print("| %s | " % label + " | ".join("%.1f / %.1f" % pair for pair in row) + " |")
    if alternatives:
        print("\n## Other ways to read Data (bench/range_reading_experiment.patch; ms)")
        print("| Data | function | how it reads Data | ms | value |")
        print("|---|---|---|---|---|")
        for row in alternatives:
            print("| %s | %s | %s | %.1f | %s |" % row)
    print("backend: %s" % backend)
    return 0


if __name__ == "__main__":
    sys.exit(main())
