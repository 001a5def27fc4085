#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The capture sweep's floors: how fast one thread, and N threads each
into its own file, write into the capture directory (a tmpfs: a copy into
the page cache), in large writes from one buffer, so that nothing but the
copy and the file system's own work is timed. One thread is the floor of
a capture into one file; N threads the floor of a capture with a file per
queue on N RX lcores, which the one-thread figure is not: N writers beat
it.

Usage: bench/tmpfs-probe.py DIR OUT_JSON [MIB [REPS [THREADS]]]

Writes MIB MiB (default 2048) REPS times (default 5) into DIR, for each
count in THREADS (comma-separated, default 1): that many threads, started
together, each writing MIB/N MiB into a new file of its own, removed after
each pass; the rate is all the bytes over the time until the last thread
is done. OUT_JSON: the directory, its file system, the bytes, and per
thread count the median, minimum and maximum bytes/s (one thread's also at
the top level). Exit 0, 1 when DIR cannot take the files, 2 on usage.
"""

import json
import os
import statistics
import subprocess
import sys
import threading
import time

CHUNK = 1 << 20


def fstype(d):
    try:
        return subprocess.run(["stat", "-f", "-c", "%T", d], stdout=subprocess.PIPE,
                              universal_newlines=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def write_file(path, mib, buf, start, errors):
    # os.write drops the GIL for the copy, so the threads copy in parallel.
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except OSError as e:
        errors.append(e)
        start.wait()
        return
    try:
        start.wait()
        for _ in range(mib):
            # A short write on tmpfs means it is full: an error, not a rate.
            if os.write(fd, buf) != len(buf):
                raise OSError("short write into %s: full?" % path)
    except OSError as e:
        errors.append(e)
    finally:
        os.close(fd)


def one_pass(d, n, mib, buf):
    paths = [os.path.join(d, "tmpfs-probe.%d.%d" % (os.getpid(), i)) for i in range(n)]
    start = threading.Barrier(n + 1)
    errors = []
    share = mib // n
    th = [threading.Thread(target=write_file, args=(p, share, buf, start, errors))
          for p in paths]
    try:
        for t in th:
            t.start()
        start.wait()
        t0 = time.perf_counter()
        for t in th:
            t.join()
        el = time.perf_counter() - t0
    finally:
        for p in paths:
            try:
                os.unlink(p)
            except FileNotFoundError:
                pass
    if errors:
        raise errors[0]
    return n * share * CHUNK / el


def main(argv):
    if len(argv) not in (3, 4, 5, 6):
        print(__doc__, file=sys.stderr)
        return 2
    d, out = argv[1], argv[2]
    try:
        mib = int(argv[3]) if len(argv) > 3 else 2048
        reps = int(argv[4]) if len(argv) > 4 else 5
        counts = sorted({int(x) for x in argv[5].split(",")}) if len(argv) > 5 else [1]
    except ValueError:
        mib = reps = 0
        counts = []
    if mib < 1 or reps < 1 or not counts or min(counts) < 1 or max(counts) > mib:
        print("tmpfs-probe: MIB and REPS are positive integers, THREADS a "
              "comma-separated list of counts from 1 to MIB", file=sys.stderr)
        return 2
    # Not zeros: a page of zeros could be shared by a file system.
    buf = bytes(range(256)) * (CHUNK // 256)
    per = {}
    try:
        for n in counts:
            rates = [one_pass(d, n, mib, buf) for _ in range(reps)]
            per[str(n)] = {"bytes": n * (mib // n) * CHUNK,
                           "write_Bps_median": statistics.median(rates),
                           "write_Bps_min": min(rates), "write_Bps_max": max(rates)}
    except OSError as e:
        print("tmpfs-probe: cannot write %d MiB into %s: %s" % (mib, d, e),
              file=sys.stderr)
        return 1
    r = {"bench": "tmpfs_probe", "dir": d, "fstype": fstype(d),
         "bytes": mib * CHUNK, "chunk": CHUNK, "reps": reps, "threads": per}
    if "1" in per:
        r.update({k: per["1"][k] for k in ("write_Bps_median", "write_Bps_min",
                                           "write_Bps_max")})
    with open(out, "w") as f:
        json.dump(r, f, indent=1)
        f.write("\n")
    for n in counts:
        print("tmpfs-probe: %s (%s): %d thread%s write%s %.2f GB/s (median of %d x %d MiB)" % (
            d, r["fstype"], n, "" if n == 1 else "s", "s" if n == 1 else "",
            per[str(n)]["write_Bps_median"] / 1e9, reps, mib))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
