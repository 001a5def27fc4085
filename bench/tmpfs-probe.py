#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The capture sweep's floor: how fast one thread writes into a file in
the capture directory (a tmpfs: a copy into the page cache), in large
writes from one buffer, so that nothing but the copy and the file
system's own work is timed.

Usage: bench/tmpfs-probe.py DIR OUT_JSON [MIB [REPS]]

Writes MIB MiB (default 2048) REPS times (default 5) into a new file in
DIR, removed after each pass, and OUT_JSON: the directory, its file
system, the bytes and the median, minimum and maximum bytes/s. Exit 0,
1 when DIR cannot take the file, 2 on usage.
"""

import json
import os
import statistics
import subprocess
import sys
import time

CHUNK = 1 << 20


def fstype(d):
    try:
        return subprocess.run(["stat", "-f", "-c", "%T", d], stdout=subprocess.PIPE,
                              universal_newlines=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def one_pass(path, mib, buf):
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        t0 = time.perf_counter()
        for _ in range(mib):
            # A short write on tmpfs means it is full: an error, not a rate.
            if os.write(fd, buf) != len(buf):
                raise OSError("short write into %s: full?" % path)
        return mib * CHUNK / (time.perf_counter() - t0)
    finally:
        os.close(fd)
        os.unlink(path)


def main(argv):
    if len(argv) not in (3, 4, 5):
        print(__doc__, file=sys.stderr)
        return 2
    d, out = argv[1], argv[2]
    try:
        mib = int(argv[3]) if len(argv) > 3 else 2048
        reps = int(argv[4]) if len(argv) > 4 else 5
    except ValueError:
        mib = reps = 0
    if mib < 1 or reps < 1:
        print("tmpfs-probe: MIB and REPS are positive integers", file=sys.stderr)
        return 2
    # Not zeros: a page of zeros could be shared by a file system.
    buf = bytes(range(256)) * (CHUNK // 256)
    path = os.path.join(d, "tmpfs-probe.%d" % os.getpid())
    try:
        rates = [one_pass(path, mib, buf) for _ in range(reps)]
    except OSError as e:
        print("tmpfs-probe: cannot write %d MiB into %s: %s" % (mib, d, e),
              file=sys.stderr)
        return 1
    r = {"bench": "tmpfs_probe", "dir": d, "fstype": fstype(d),
         "bytes": mib * CHUNK, "chunk": CHUNK, "reps": reps,
         "write_Bps_median": statistics.median(rates),
         "write_Bps_min": min(rates), "write_Bps_max": max(rates)}
    with open(out, "w") as f:
        json.dump(r, f, indent=1)
        f.write("\n")
    print("tmpfs-probe: %s (%s): one thread writes %.2f GB/s (median of %d x %d MiB)" % (
        d, r["fstype"], r["write_Bps_median"] / 1e9, reps, mib))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
