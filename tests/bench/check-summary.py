#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Checks a summary.json of bench/run-all.sh against its schema.

Usage: check-summary.py SUMMARY_JSON [--out OUT_DIR]

Top level: run_id, date, revision (strings), gpu, driver (string or
null), figures (a non-empty list). A figure: figure (an id, unique), value
(a finite number), unit (a known one), baseline (null or {name, value},
value finite and not 0), ratio (null exactly where baseline is, else
value / baseline.value within 1e-9 relative), same_run (true), goal
(string or null), raw (a relative path inside OUT_DIR; with --out, a file
there), moved (where the bytes of a byte rate moved, a string; null for
any other unit), note (optional string). A figure of alternating A/B
repetitions, and its baseline, may add min, median, max (finite, min <=
median <= max, the value the median) and reps (an integer >= 3), all four
or none. Exit 0 when valid, 1 with a line per fault when not, 2 on usage or
an unreadable file.
"""

import json
import math
import os
import re
import sys

# bench/summary.py's units: packet rates, times, byte rates, records.
UNITS = ("Mpps", "us", "GB/s", "Gbit/s", "records/s")
BYTE_UNITS = ("GB/s", "Gbit/s")
FIGURE_KEYS = ("figure", "value", "unit", "baseline", "ratio", "same_run",
               "goal", "raw", "moved")
SPREAD_KEYS = ("min", "median", "max", "reps")
ID_RE = re.compile(r"^[A-Za-z0-9_+-]+(\.[A-Za-z0-9_+-]+)+$")


def finite(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool) and \
        math.isfinite(v)


def str_or_null(v):
    return v is None or isinstance(v, str)


def check_spread(o, where):
    """The faults of the optional repetition fields of figure or baseline o."""
    have = [k for k in SPREAD_KEYS if k in o]
    if not have:
        return []
    if len(have) != len(SPREAD_KEYS):
        return ["%s: %s without %s: min, median, max and reps go together" % (
            where, ", ".join(have),
            ", ".join(k for k in SPREAD_KEYS if k not in o))]
    n = o["reps"]
    if not isinstance(n, int) or isinstance(n, bool) or n < 3:
        return ["%s: reps %r is not an integer of at least 3" % (where, n)]
    if not all(finite(o[k]) for k in ("min", "median", "max")):
        return ["%s: min, median, max %r, %r, %r are not finite numbers" % (
            where, o["min"], o["median"], o["max"])]
    errs = []
    if not o["min"] <= o["median"] <= o["max"]:
        errs.append("%s: not min <= median <= max (%r, %r, %r)" % (
            where, o["min"], o["median"], o["max"]))
    if finite(o.get("value")) and \
            abs(o["value"] - o["median"]) > 1e-9 * max(abs(o["median"]), 1e-300):
        errs.append("%s: value %r is not the median %r of its repetitions" % (
            where, o["value"], o["median"]))
    return errs


def check_figure(f, i, out, seen):
    """The faults of figure number i, as strings."""
    where = "figures[%d]" % i
    if not isinstance(f, dict):
        return ["%s: not an object" % where]
    errs = ["%s: no key %s" % (where, k) for k in FIGURE_KEYS if k not in f]
    if errs:
        return errs
    fid = f["figure"]
    if not isinstance(fid, str) or not ID_RE.match(fid):
        errs.append("%s: figure id %r is not dotted words" % (where, fid))
    elif fid in seen:
        errs.append("%s: figure %s given twice" % (where, fid))
    else:
        seen.add(fid)
        where = fid
    if not finite(f["value"]):
        errs.append("%s: value %r is not a finite number" % (where, f["value"]))
    if f["unit"] not in UNITS:
        errs.append("%s: unit %r is none of %s" % (where, f["unit"], ", ".join(UNITS)))
    if f["same_run"] is not True:
        errs.append("%s: same_run is %r, not true: a ratio must come from "
                    "one run" % (where, f["same_run"]))
    b, r = f["baseline"], f["ratio"]
    if b is None:
        if r is not None:
            errs.append("%s: a ratio without a baseline" % where)
    elif not isinstance(b, dict) or not isinstance(b.get("name"), str) or \
            not b.get("name") or not finite(b.get("value")) or b["value"] == 0:
        errs.append("%s: baseline %r is not {name, value} with a non-zero "
                    "finite value" % (where, b))
    elif not finite(r):
        errs.append("%s: baseline without a numeric ratio" % where)
    elif finite(f["value"]):
        want = f["value"] / b["value"]
        if abs(r - want) > 1e-9 * max(abs(want), 1e-300):
            errs.append("%s: ratio %r is not value / baseline.value = %r" %
                        (where, r, want))
    errs += check_spread(f, where)
    if isinstance(b, dict):
        errs += check_spread(b, where + ": baseline")
    if not str_or_null(f["goal"]):
        errs.append("%s: goal %r is not a string or null" % (where, f["goal"]))
    raw = f["raw"]
    if not isinstance(raw, str) or not raw or os.path.isabs(raw) or \
            ".." in raw.split("/") or "\\" in raw:
        errs.append("%s: raw %r is not a path relative to the run's "
                    "directory" % (where, raw))
    elif out is not None and not os.path.isfile(os.path.join(out, raw)):
        errs.append("%s: raw file %s is not in %s" % (where, raw, out))
    m = f["moved"]
    if f["unit"] in BYTE_UNITS:
        if not isinstance(m, str) or not m.strip():
            errs.append("%s: a byte rate must say where the bytes moved" % where)
    elif m is not None:
        errs.append("%s: moved %r on a %s figure (bytes only)" % (where, m, f["unit"]))
    if "note" in f and not isinstance(f["note"], str):
        errs.append("%s: note %r is not a string" % (where, f["note"]))
    return errs


def check(s, out=None):
    """Every fault of summary s, as strings; none when it is valid."""
    if not isinstance(s, dict):
        return ["the summary is not an object"]
    errs = []
    for k in ("run_id", "date", "revision"):
        if not isinstance(s.get(k), str) or not s.get(k):
            errs.append("%s: %r is not a non-empty string" % (k, s.get(k)))
    for k in ("gpu", "driver"):
        if k not in s or not str_or_null(s[k]):
            errs.append("%s: missing, or not a string or null" % k)
    figs = s.get("figures")
    if not isinstance(figs, list) or not figs:
        return errs + ["figures: not a non-empty list"]
    seen = set()
    for i, f in enumerate(figs):
        errs += check_figure(f, i, out, seen)
    return errs


def main(argv):
    if len(argv) not in (2, 4) or (len(argv) == 4 and argv[2] != "--out"):
        print(__doc__, file=sys.stderr)
        return 2
    try:
        with open(argv[1]) as f:
            s = json.load(f)
    except (OSError, ValueError) as e:
        print("check-summary: cannot read %s: %s" % (argv[1], e), file=sys.stderr)
        return 2
    errs = check(s, argv[3] if len(argv) == 4 else None)
    for e in errs:
        print("check-summary: %s: %s" % (argv[1], e), file=sys.stderr)
    if errs:
        return 1
    print("check-summary: %s: %d figures, run %s: valid" % (
        argv[1], len(s["figures"]), s["run_id"]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
