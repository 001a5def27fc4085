#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The table of two builds run side by side (bench/ab-capacity.sh,
bench/ab-tx-rate.sh, bench/ab-flow-table.sh, bench/ab-tx-build.sh,
bench/ab-handoff.sh): per point, every run's figure of build A and of
build B in run order (Mpps, or us for txbuild and handoff), min / median
/ max of each, and the medians' B/A.

Usage: ab-table.py OUT REPS BUILD_A BUILD_B KIND
  KIND capacity: OUT/<rep>-<a|b>/capacity.md (pipeline-capacity.sh rows)
  KIND txrate:   OUT/<rep>-<a|b>/txrate.txt (gen-tx-rate.sh lines)
  KIND flowtable: OUT/<rep>-<a|b>/flow-export.md (flow-export.sh's
                 table rows)
  KIND txbuild:  OUT/<rep>-<a|b>/txbuild.txt (tx-build-latency.sh lines:
                 the median posted -> DONE seen, us)
  KIND handoff:  OUT/<rep>-<a|b>/handoff.txt (handoff-latency.sh lines:
                 the median handoff, us)
Exit 1 when no run of either build gave a point.
"""
import re
import statistics
import sys

HEADS = {
    "capacity": ["mode", "packet bytes", "RX lcores"],
    "txrate": ["memory", "build", "port", "frees", "size", "queues"],
    "flowtable": ["workload", "export"],
    "txbuild": ["memory", "frame sizes"],
    "handoff": ["packets in", "packet bytes", "burst"],
}
UNITS = {"txbuild": "us", "handoff": "us"}
# Decimals: latencies of a few us move by tenths.
DIGITS = {"txbuild": 2, "handoff": 2}


def md_cells(text):
    """The cells of each row of text's first markdown table (the later
    ones, a capacity.md's ratios for one, are other figures)."""
    in_table = False
    for line in text.splitlines():
        if not line.lstrip().startswith("|"):
            if in_table:
                return
            continue
        in_table = True
        yield [x.strip() for x in line.strip().strip("|").split("|")]


def capacity_points(text):
    for c in md_cells(text):
        if len(c) < 4:
            continue
        try:
            yield (c[0], c[1], c[2]), float(c[3])
        except ValueError:
            continue        # the header, its rule, a failed run's row


def flowtable_points(text):
    for c in md_cells(text):
        if len(c) < 3 or not c[0].startswith("table,"):
            continue
        try:
            yield (c[0], c[1]), float(c[2])
        except ValueError:
            continue        # a failed run's row


def txrate_points(text):
    for line in text.splitlines():
        f = dict(re.findall(r"(\w+)=(\S+)", line))
        if "mpps" not in f:
            continue        # a failed point's line
        yield ((f["mem"], f["build"], f["port"], f["free"], f["size"],
                f["queues"]), float(f["mpps"]))


def txbuild_points(text):
    for line in text.splitlines():
        f = dict(re.findall(r"(\w+)=(\S+)", line))
        if "total_us" not in f:
            continue        # a failed case's line
        yield (f["mem"], f["sizes"]), float(f["total_us"])


def handoff_points(text):
    for line in text.splitlines():
        f = dict(re.findall(r"(\w+)=(\S+)", line))
        if not line.startswith("handoff pkt=") or "median" not in f:
            continue        # a failed run's line
        # bench-handoff names the memory only when it is not host.
        yield ((f.get("mem", "host"), f["pkt"], f["burst"]),
               float(f["median"].removesuffix("us")))


def mmm(v, d):
    return (f"{min(v):.{d}f} / {statistics.median(v):.{d}f} / "
            f"{max(v):.{d}f}" if v else "n/a")


def main():
    if len(sys.argv) != 6 or sys.argv[5] not in HEADS:
        print(__doc__, file=sys.stderr)
        return 2
    out, reps, build_a, build_b, kind = sys.argv[1:]
    source, parse = {"capacity": ("capacity.md", capacity_points),
                     "txrate": ("txrate.txt", txrate_points),
                     "flowtable": ("flow-export.md", flowtable_points),
                     "txbuild": ("txbuild.txt", txbuild_points),
                     "handoff": ("handoff.txt", handoff_points)}[kind]
    runs = {}
    for r in range(1, int(reps) + 1):
        for side in "ab":
            try:
                text = open(f"{out}/{r}-{side}/{source}").read()
            except OSError:
                continue
            for key, mpps in parse(text):
                runs.setdefault(key, {"a": [], "b": []})[side].append(mpps)
    if not runs:
        print("no run of either build gave a result", file=sys.stderr)
        return 1
    unit = UNITS.get(kind, "Mpps")
    d = DIGITS.get(kind, 1)
    heads = HEADS[kind] + [f"A runs ({unit})", f"B runs ({unit})",
                           "A min / median / max", "B min / median / max",
                           "B/A (medians)"]
    print(f"A = {build_a}, B = {build_b}, {reps} run(s) each, alternating\n")
    print("| " + " | ".join(heads) + " |")
    print("|" + " --- |" * len(heads))
    for key, v in runs.items():
        a, b = v["a"], v["b"]
        ratio = (f"{statistics.median(b) / statistics.median(a):.2f}"
                 if a and b and statistics.median(a) > 0 else "n/a")
        cells = list(key) + [" / ".join(f"{x:.{d}f}" for x in a),
                             " / ".join(f"{x:.{d}f}" for x in b),
                             mmm(a, d), mmm(b, d), ratio]
        print("| " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
