#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The files of a rotated capture against one capture of the same input.

Usage: check-rotate.py WHOLE.pcapng FILTER MAX_BYTES [--tail | --cycle N] FILE...

Each FILE must be a complete pcapng: a section header, the interface
blocks of WHOLE byte for byte (snaplen, if_filter FILTER on each, none
for an empty FILTER), packet
blocks only, and an interface statistics block at its end, at most
MAX_BYTES long (0: no limit). Their packet blocks, file after file, must
be WHOLE's byte for byte; with --tail (a ring kept the last files) the
end of WHOLE's. With --cycle N (a source that replays its input over and
over, WHOLE one pass of it), the files hold N packet blocks, and each
queue's (the blocks' epb_queue option), file after file, are WHOLE's of
that queue over and over, at least once round: none lost or repeated
where a file ends.
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


def epb_queue(b):
    """An enhanced packet block's epb_queue option (6), None without."""
    pos = 28 + (struct.unpack_from("<I", b, 20)[0] + 3) // 4 * 4
    while pos + 4 <= len(b) - 4:
        code, olen = struct.unpack_from("<HH", b, pos)
        if code == 0:
            break
        if code == 6 and olen == 4:
            return struct.unpack_from("<I", b, pos + 4)[0]
        pos += 4 + (olen + 3) // 4 * 4
    return None


def by_queue(epbs):
    out = {}
    for b in epbs:
        out.setdefault(epb_queue(b), []).append(b)
    return out


def check_cycle(want, got, count):
    if len(got) != count:
        sys.exit(f"FAIL: {len(got)} packet blocks in the files, "
                 f"{count} captured")
    w_q, g_q = by_queue(want), by_queue(got)
    if set(g_q) != set(w_q) or len(w_q) < 2:
        sys.exit(f"FAIL: queues {sorted(g_q, key=str)} in the files, "
                 f"{sorted(w_q, key=str)} in one pass; two or more wanted")
    for q, w in w_q.items():
        g = g_q[q]
        if len(g) < len(w):
            sys.exit(f"FAIL: queue {q}: {len(g)} packet blocks, "
                     f"not once round its {len(w)}")
        for k, b in enumerate(g):
            if b != w[k % len(w)]:
                sys.exit(f"FAIL: queue {q}: packet block {k} is not "
                         f"the pass's {k % len(w)}: lost or repeated")


def main():
    args = sys.argv[1:]
    whole, filt, limit = args[0], args[1].encode(), int(args[2])
    args = args[3:]
    tail = bool(args) and args[0] == "--tail"
    cycle = int(args[1]) if args and args[0] == "--cycle" else None
    files = args[2:] if cycle is not None else args[1:] if tail else args
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
    if cycle is not None:
        check_cycle(want, got, cycle)
        print(f"ok: {len(files)} files, {len(got)} packet blocks, each "
              "queue's its pass over and over, each file whole")
        return
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
