#!/usr/bin/env python3
"""Tests of the statgpu command-line tool: results on CSV and raw binary input
against Python's exact sorting, and a clear message with a non-zero exit status
for every bad file or argument (never a crash).

usage: test_cli.py PATH-TO-statgpu
"""
import math
import os
import random
import struct
import subprocess
import sys
import tempfile

TOOL = sys.argv[1]
passed = failed = 0


def run(*args, stdin=None):
    done = subprocess.run([TOOL, *args], capture_output=True, text=True, input=stdin, timeout=120)
    return done.returncode, done.stdout, done.stderr


def check(name, condition, detail=""):
    global passed, failed
    if condition:
        passed += 1
    else:
        failed += 1
        print(f"FAIL {name}: {detail}")


def percentile_inc(sorted_values, p):
    """PERCENTILE.INC for p whose position is not within rounding of an integer."""
    n = len(sorted_values)
    if n == 1:
        return sorted_values[0]
    h = p * (n - 1)
    i = math.floor(h)
    f = h - i
    if f == 0:
        return sorted_values[i]
    return sorted_values[i] + f * (sorted_values[i + 1] - sorted_values[i])


def median(sorted_values):
    n = len(sorted_values)
    if n % 2:
        return sorted_values[n // 2]
    return (sorted_values[n // 2] + sorted_values[n // 2 - 1]) / 2


def same(text, value):
    try:
        return float(text) == value
    except ValueError:
        return False


def main():
    rng = random.Random(7)
    with tempfile.TemporaryDirectory() as folder:
        def write(name, text):
            path = os.path.join(folder, name)
            with open(path, "w") as handle:
                handle.write(text)
            return path

        # A CSV with a header, blanks, NA, quotes, a second column.
        values = [rng.gauss(10, 3) for _ in range(2001)]
        lines = ["id;\"height\""]
        for index, value in enumerate(values):
            lines.append(f"{index};{value!r}")
        lines.insert(5, "x;")
        lines.insert(9, "y;NA")
        path = write("heights.csv", "\n".join(lines) + "\n")
        ordered = sorted(values)

        code, out, err = run("median", path, "--column", "height")
        check("median by column name", code == 0 and same(out, median(ordered)), out + err)
        check("skipped fields are reported", "skipped 2" in err, err)
        code, out, _ = run("median", path, "--column", "2", "--delimiter", ";")
        check("median by column number", code == 0 and same(out, median(ordered)), out)
        for k in (1, 2, 1000, 2001):
            code, out, _ = run("small", path, "--column", "2", "-k", str(k))
            check(f"small k={k}", code == 0 and same(out, ordered[k - 1]), out)
            code, out, _ = run("large", path, "--column", "2", "-k", str(k))
            check(f"large k={k}", code == 0 and same(out, ordered[-k]), out)
        probabilities = [0.0, 0.013, 0.25, 0.5, 0.8125, 1.0]
        code, out, _ = run("quantile", path, "--column", "2", "-p", ",".join(map(str, probabilities)))
        rows = out.split("\n")
        check("quantile rows", code == 0 and len(rows) == 7, out)
        for row, p in zip(rows, probabilities):
            fields = row.split("\t")
            check(f"quantile p={p}", len(fields) == 2 and same(fields[1], percentile_inc(ordered, p)), row)

        # Standard input, no header, comma separated.
        code, out, _ = run("median", "-", stdin="5\n1\n4\n2\n3\n")
        check("stdin median", code == 0 and same(out, 3.0), out)

        # Raw binary doubles and floats, including -0.0, infinities and huge values.
        raw = [rng.uniform(-1, 1) for _ in range(100000)] + [-0.0, 0.0, math.inf, -math.inf, 1e300, -1.7e308]
        rng.shuffle(raw)
        f64 = os.path.join(folder, "data.f64")
        with open(f64, "wb") as handle:
            handle.write(struct.pack(f"<{len(raw)}d", *raw))
        ordered_raw = sorted(raw)
        code, out, _ = run("median", f64, "--format", "f64", "--backend", "cpu")
        check("binary f64 median", code == 0 and same(out, median(ordered_raw)), out)
        code, out, _ = run("small", f64, "--format", "f64", "-k", "1")
        check("binary f64 minimum is -inf", code == 0 and out.strip() == "-inf", out)
        f32_values = [struct.unpack("<f", struct.pack("<f", v))[0] for v in raw[:50001] if abs(v) < 1e38 or math.isinf(v)]
        f32 = os.path.join(folder, "data.f32")
        with open(f32, "wb") as handle:
            handle.write(struct.pack(f"<{len(f32_values)}f", *f32_values))
        code, out, _ = run("median", f32, "--format", "f32")
        check("binary f32 median", code == 0 and same(out, median(sorted(f32_values))), out)
        code, out, _ = run("median", f64, "--format", "f64", "--threads", "1")
        check("one thread agrees", code == 0 and same(out, median(ordered_raw)), out)

        # Bad input: a message and exit status 2 (usage) or 1 (computation), never a crash.
        empty = write("empty.csv", "")
        header_only = write("header.csv", "value\n")
        text = write("text.csv", "value\n1\nabc\n")
        nan = os.path.join(folder, "nan.f64")
        with open(nan, "wb") as handle:
            handle.write(struct.pack("<3d", 1.0, math.nan, 2.0))
        odd = write("odd.f64", "12345")
        cases = [
            (("median", empty), 1, "no observations"),
            (("median", header_only), 1, "no observations"),
            (("median", text), 2, "not a number"),
            (("median", nan, "--format", "f64"), 1, "NaN"),
            (("median", odd, "--format", "f64"), 2, "whole number"),
            (("median", os.path.join(folder, "missing.csv")), 2, "cannot open"),
            (("small", path, "--column", "2", "-k", "0"), 2, "-k"),
            (("small", path, "--column", "2", "-k", "9999"), 1, "outside"),
            (("large", path, "--column", "2", "-k", "abc"), 2, "-k"),
            (("quantile", path, "--column", "2", "-p", "2"), 1, "outside [0, 1]"),
            (("quantile", path, "--column", "2", "-p", "x"), 2, "-p"),
            (("quantile", path, "--column", "2"), 2, "-p"),
            (("median", path, "--column", "nosuch"), 2, "no column"),
            (("median", path, "--backend", "gpu"), 2, "--backend"),
            (("median", path, "--format", "xml"), 2, "--format"),
            (("median",), 2, "no input file"),
            (("frobnicate",), 2, "unknown command"),
            (("median", path, "--bogus", "1"), 2, "unknown option"),
            (("median", path, "--threads"), 2, "needs a value"),
        ]
        for args, expected_code, expected_text in cases:
            code, out, err = run(*args)
            check(f"bad input {args[1:] or args}", code == expected_code and expected_text in err,
                  f"exit {code}, stderr {err!r}")

        code, out, _ = run("info")
        check("info names a backend", code == 0 and "backend: " in out, out)
        code, out, _ = run("--help")
        check("help", code == 0 and "usage: statgpu" in out, out)

    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
