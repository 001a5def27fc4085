#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""dpdk-gpu-tx's per-stream counters against what was sent.

Usage: check-per-stream.py TX_JSON [PCAP]

Streams take turns by weight, in the order they were added: packet n
belongs to the stream owning position n % (sum of weights). The JSON's
per-stream packets must be that count over packets 0 .. packets-1, and
sum to the totals. With PCAP (one queue: the file holds the packets in
order), each stream's bytes must be its frames' lengths in the file.
"""
import json
import struct
import sys


def pcap_lengths(path):
    with open(path, "rb") as f:
        hdr = f.read(24)
        if len(hdr) < 24:
            raise SystemExit("FAIL: %s: no pcap header" % path)
        magic = struct.unpack("<I", hdr[:4])[0]
        if magic not in (0xa1b2c3d4, 0xa1b23c4d):
            raise SystemExit("FAIL: %s: not a little-endian pcap" % path)
        lens = []
        while True:
            rec = f.read(16)
            if len(rec) < 16:
                return lens
            _, _, incl, orig = struct.unpack("<IIII", rec)
            f.seek(incl, 1)
            lens.append(orig)


def main():
    d = json.load(open(sys.argv[1]))
    per = d["per_stream"]
    n = d["packets"]
    if len(per) != d["streams"]:
        raise SystemExit("FAIL: %d per-stream entries for %d streams" %
                         (len(per), d["streams"]))
    rnd = sum(s["weight"] for s in per)
    owner = []
    for i, s in enumerate(per):
        owner += [i] * s["weight"]
    want = [0] * len(per)
    full, rest = divmod(n, rnd)
    for i, s in enumerate(per):
        want[i] = full * s["weight"]
    for pos in range(rest):
        want[owner[pos]] += 1
    got = [s["packets"] for s in per]
    if got != want:
        raise SystemExit("FAIL: packets by stream %s, want %s" % (got, want))
    if sum(s["bytes"] for s in per) != d["bytes"]:
        raise SystemExit("FAIL: stream bytes sum to %d, total %d" %
                         (sum(s["bytes"] for s in per), d["bytes"]))
    if len(sys.argv) > 2:
        lens = pcap_lengths(sys.argv[2])
        if len(lens) != n:
            raise SystemExit("FAIL: %d frames in the file, %d sent" %
                             (len(lens), n))
        by = [0] * len(per)
        for k, ln in enumerate(lens):
            by[owner[k % rnd]] += ln
        gotb = [s["bytes"] for s in per]
        if gotb != by:
            raise SystemExit("FAIL: bytes by stream %s, the file's %s" %
                             (gotb, by))
    print("per-stream counters as sent: packets %s" % got)


main()
