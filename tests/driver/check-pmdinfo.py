#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The plugins' dpdk-pmdinfo.py descriptions, read as that tool reads
them: a "PMD_INFO_STRING= {json}" string in the shared object.

Usage: check-pmdinfo.py PLUGIN.so NAME DEVARGS_SOURCE [PCI_VENDOR]

Checks that exactly one description is there, that it is JSON naming
NAME, that its params name every devarg key the driver's parser defines
in DEVARGS_SOURCE (each #define of a quoted key), and no other, and,
with PCI_VENDOR, that its pci_ids bind that vendor (else none).
"""

import json
import re
import sys

MARK = b"PMD_INFO_STRING= "


def main():
    so, name, src = sys.argv[1:4]
    vendor = int(sys.argv[4], 0) if len(sys.argv) > 4 else None
    data = open(so, "rb").read()
    infos = []
    at = data.find(MARK)
    while at >= 0:
        end = data.index(b"\0", at)
        infos.append(data[at + len(MARK):end].decode())
        at = data.find(MARK, end)
    errs = []
    if len(infos) != 1:
        errs.append("%d PMD_INFO_STRING descriptions, want 1" % len(infos))
    info = {}
    try:
        info = json.loads(infos[0]) if infos else {}
    except ValueError as e:
        errs.append("not JSON (%s): %s" % (e, infos[0]))
    if info.get("name") != name:
        errs.append("name %r, want %r" % (info.get("name"), name))
    keys = set(re.findall(r'#define\s+\w+\s+"(\w+)"', open(src).read()))
    said = set(re.findall(r"(\w+)=", info.get("params", "")))
    if not keys:
        errs.append("no devarg keys found in %s" % src)
    if keys - said:
        errs.append("params lack %s" % sorted(keys - said))
    if said - keys:
        errs.append("params name keys the parser lacks: %s" % sorted(said - keys))
    ids = info.get("pci_ids")
    if not isinstance(ids, list) or any(
            not isinstance(r, list) or len(r) != 4 for r in ids):
        errs.append("pci_ids %r is not a list of 4-number rows" % (ids,))
    elif vendor is None and ids:
        errs.append("a virtual device with PCI IDs %r" % ids)
    elif vendor is not None and (not ids or any(r[0] != vendor for r in ids)):
        errs.append("pci_ids %r do not bind vendor 0x%04x" % (ids, vendor))
    for e in errs:
        print("FAIL: %s: %s" % (so, e))
    if not errs:
        print("ok: %s: %s, params %s, pci_ids %s" % (
            so, name, sorted(said), info.get("pci_ids")))
    return 1 if errs else 0


if __name__ == "__main__":
    sys.exit(main())
