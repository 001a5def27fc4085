#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The files of a rotated capture against one capture of the same input.

Usage: check-rotate.py WHOLE.pcapng FILTER MAX_BYTES [--tail] FILE...

Each FILE must be a complete pcapng: a section header, the interface
blocks of WHOLE byte for byte (snaplen, if_filter FILTER on each, none
for an empty FILTER), packet
blocks only, and an interface statistics block at its end, at most
MAX_BYTES long (0: no limit). Their packet blocks, file after file, must
be WHOLE's byte for byte; with --tail (a ring kept the last files) the
end of WHOLE's.
"""
import struct
import sys


def blocks(path):
    with open(path, "rb") as f:
        data = f.read()
    pos, out = 0, []
    while pos < len(data):
        if len(data) - pos < 12:
            sys.exit(f"FAIL: {path}: {len(data) - pos} bytes after the last block")
        btype, blen = struct.unpack_from("<II", data, pos)
        end = struct.unpack_from("<I", data, pos + blen - 4)[0] if blen >= 12 else 0
        if blen < 12 or pos + blen > len(data) or end != blen:
            sys.exit(f"FAIL: {path}: bad block at {pos}")
        out.append((btype, data[pos:pos + blen]))
        pos += blen
    return out, len(data)


def if_filter(idb):
    pos = 16
    while pos + 4 <= len(idb) - 4:
        code, olen = struct.unpack_from("<HH", idb, pos)
        if code == 0:
            break
        if code == 11:
            return idb[pos + 4:pos + 4 + olen]
        pos += 4 + (olen + 3) // 4 * 4
    return None


def main():
    args = sys.argv[1:]
    whole, filt, limit = args[0], args[1].encode(), int(args[2])
    args = args[3:]
    tail = bool(args) and args[0] == "--tail"
    files = args[1:] if tail else args
    wb, _ = blocks(whole)
    idbs = [b for t, b in wb if t == 1]
    want = [b for t, b in wb if t == 6]
    got = []
    if not files:
        sys.exit("FAIL: no rotated file")
    for path in files:
        fb, size = blocks(path)
        types = [t for t, _ in fb]
        if limit and size > limit:
            sys.exit(f"FAIL: {path}: {size} bytes, over {limit}")
        if types[0] != 0x0a0d0d0a or types[-1] != 5:
            sys.exit(f"FAIL: {path}: blocks {types[0]:#x} ... {types[-1]}, "
                     "not a section header ... a statistics block")
        mine = [b for t, b in fb if t == 1]
        if mine != idbs:
            sys.exit(f"FAIL: {path}: interface blocks differ from {whole}'s")
        for idb in mine:
            if if_filter(idb) != (b"\0" + filt if filt else None):
                sys.exit(f"FAIL: {path}: if_filter {if_filter(idb)!r}")
        if set(types) - {0x0a0d0d0a, 1, 6, 5}:
            sys.exit(f"FAIL: {path}: blocks of types {sorted(set(types))}")
        got += [b for t, b in fb if t == 6]
    if tail:
        ok = 0 < len(got) < len(want) and want[-len(got):] == got
    else:
        ok = got == want
    if not ok:
        sys.exit(f"FAIL: {len(got)} packet blocks in {len(files)} files, "
                 f"{len(want)} in {whole}, not {'its last' if tail else 'the same'}")
    print(f"ok: {len(files)} files, {len(got)} packet blocks"
          f"{' (the last of ' + str(len(want)) + ')' if tail else ''}, "
          f"each file whole, if_filter '{filt.decode()}'")


main()
