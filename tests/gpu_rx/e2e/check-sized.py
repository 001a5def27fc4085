#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""gpurx-e2e-genpcap --size: every frame exactly that long, valid IPv4 TCP
or UDP (correct header checksum), and sizes it cannot build refused.

Usage: check-sized.py GENPCAP WORKDIR
"""
import os
import struct
import subprocess
import sys


def frames(path):
    with open(path, "rb") as f:
        data = f.read()
    magic = struct.unpack("<I", data[:4])[0]
    assert magic in (0xA1B2C3D4, 0xA1B23C4D), "not a little-endian pcap"
    off = 24
    while off < len(data):
        _, _, caplen, wirelen = struct.unpack("<IIII", data[off:off + 16])
        yield data[off + 16:off + 16 + caplen], caplen, wirelen
        off += 16 + caplen


def ip_checksum_ok(hdr):
    s = sum(struct.unpack("!10H", hdr))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return s == 0xFFFF


def main():
    gen, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    for size in (64, 512, 1500, 9000):
        path = os.path.join(work, "sized-%d.pcap" % size)
        subprocess.run([gen, "--size", str(size), path, "3", "500"], check=True)
        n = 0
        protos = set()
        for frame, caplen, wirelen in frames(path):
            n += 1
            assert caplen == wirelen == size == len(frame), (size, caplen, wirelen)
            assert frame[12:14] == b"\x08\x00", "not IPv4"
            assert ip_checksum_ok(frame[14:34]), "bad IPv4 header checksum"
            assert struct.unpack("!H", frame[16:18])[0] == size - 14, "IP length"
            protos.add(frame[23])
        assert n == 500, "%d frames of %d, not 500" % (n, size)
        assert protos == {6, 17}, "TCP and UDP both: %s" % protos
    for bad in ("63", "9001", "x"):
        r = subprocess.run([gen, "--size", bad, os.path.join(work, "bad.pcap"), "3", "5"],
                           capture_output=True, text=True)
        assert r.returncode == 2 and "--size" in r.stderr, (bad, r.returncode, r.stderr)
    print("PASS genpcap --size: 64/512/1500/9000-byte frames, bad sizes refused")


main()
