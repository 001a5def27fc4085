#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Compare exported flow records with the ones they must be.

flowcmp.py --want WANT.csv [--got GOT.csv] [--nfdump NFDUMP.csv]
           [--json SUMMARY.json] [--min idle=N,active=N,eof=N,exit=N]
           [--per-key | --per-key-bytes]

WANT and GOT are CSV lines as gpurx-flowref and gpurx-ipfix-read print
them (domain,proto,src,sport,dst,dport,vlan,packets,bytes,start_ms,end_ms,
tcp_flags,end_reason,ingress,icmp,src_mac,dst_mac,tos,ttl_min,ttl_max); NFDUMP is `nfdump -q -o csv` (nfdump 1.7:
ts,te,td,sa,da,sp,dp,pr,flg,fwd,stos,ipkt,ibyt,opkt,obyt,in,out,...,svln,
...; times in UTC seconds, run it with TZ=UTC) of what nfcapd collected;
ICMP records carry their type and code in icmp (type * 256 + code),
which nfdump shows as the destination port; nfdump has no TTL field
(1.7.1), so TTLs are compared only in GOT. SUMMARY is dpdk-gpu-rx's --json (its "flow_export" member). Records are
compared as multisets, every field; with --per-key only the number of
records, packets and bytes of each flow key (for runs whose record
boundaries may legitimately differ), with --per-key-bytes only the packets
and bytes (for runs that end records at other times). --min: the least records WANT must
have ended each way (so a generator that stops making them fails).
Exit 0 when all agree, 1 otherwise (the differences printed)."""

import argparse
import collections
import csv
import json
import sys
import time

REASONS = {1: "idle", 2: "active", 3: "eof", 4: "exit", 5: "pressure"}
# nfdump's protocol names for the protocols the tests' flows use.
PROTO_NAMES = {1: "ICMP", 6: "TCP", 17: "UDP", 58: "ICMP6", 132: "SCTP"}
FIELDS = ("domain", "proto", "src", "sport", "dst", "dport", "vlan",
          "packets", "bytes", "start_ms", "end_ms", "tcp_flags", "reason",
          "ingress", "icmp", "src_mac", "dst_mac", "tos", "ttl_min",
          "ttl_max")
TEXT = ("src", "dst", "src_mac", "dst_mac")


def read_records(path):
    out = []
    with open(path) as f:
        for n, row in enumerate(csv.reader(f), 1):
            if len(row) != len(FIELDS):
                sys.exit(f"{path}:{n}: {len(row)} fields, want {len(FIELDS)}")
            rec = dict(zip(FIELDS, row))
            for k in FIELDS:
                if k not in TEXT:
                    rec[k] = int(rec[k])
            out.append(rec)
    return out


def as_tuple(r):
    return tuple(r[k] for k in FIELDS)


def nfdump_flags(bits):
    return "".join(c if bits & (0x80 >> i) else "." for i, c in
                   enumerate("CEUAPRSF"))


def utc(ms):
    return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(ms // 1000))


def as_nfdump(r):
    """The columns of nfdump's csv a record must show."""
    if r["proto"] not in PROTO_NAMES:
        sys.exit(f"no nfdump name known for protocol {r['proto']}")
    dport = r["icmp"] if r["proto"] in (1, 58) else r["dport"]
    return (utc(r["start_ms"]), utc(r["end_ms"]),
            "%.3f" % ((r["end_ms"] - r["start_ms"]) / 1000.0),
            r["src"], r["dst"], str(r["sport"]), str(dport),
            PROTO_NAMES[r["proto"]], nfdump_flags(r["tcp_flags"]),
            str(r["packets"]), str(r["bytes"]), str(r["ingress"]),
            str(r["vlan"]), str(r["tos"]), r["src_mac"], r["dst_mac"])


def read_nfdump(path):
    out = []
    with open(path) as f:
        for n, row in enumerate(csv.reader(f), 1):
            if not row or not row[0][:1].isdigit():
                continue            # a summary line
            if len(row) < 30:
                sys.exit(f"{path}:{n}: {len(row)} columns, not nfdump 1.7 csv")
            # ts,te,td,sa,da,sp,dp,pr,flg,fwd,stos(10),ipkt(11),ibyt(12),
            # ...,in(15),...,svln(25),dvln,ismc(27),odmc,idmc(29): IPFIX's
            # sourceMacAddress and destinationMacAddress are nfdump's "in"
            # MACs
            out.append((row[0], row[1], row[2].strip(), row[3], row[4],
                        row[5], row[6], row[7], row[8], row[11], row[12],
                        row[15], row[25], row[10], row[27], row[29]))
    return out


def diff(name, want, got, show=10):
    """Multiset difference, said; True when equal."""
    w, g = collections.Counter(want), collections.Counter(got)
    missing, extra = w - g, g - w
    if not missing and not extra:
        print(f"PASS: {name}: {len(got)} records, every one as expected")
        return True
    print(f"FAIL: {name}: {len(got)} records, want {len(want)}; "
          f"{sum(missing.values())} missing, {sum(extra.values())} unexpected")
    for what, c in (("missing", missing), ("unexpected", extra)):
        for rec in list(c.elements())[:show]:
            print(f"  {what}: {rec}")
    return False


def per_key(recs, count=True):
    out = collections.defaultdict(lambda: [0, 0, 0])
    for r in recs:
        k = (r["proto"], r["src"], r["sport"], r["dst"], r["dport"], r["vlan"])
        out[k][0] += 1 if count else 0
        out[k][1] += r["packets"]
        out[k][2] += r["bytes"]
    return [(k, tuple(v)) for k, v in out.items()]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--want", required=True)
    ap.add_argument("--got")
    ap.add_argument("--nfdump")
    ap.add_argument("--json")
    ap.add_argument("--min", default="")
    ap.add_argument("--per-key", action="store_true")
    ap.add_argument("--per-key-bytes", action="store_true")
    a = ap.parse_args()
    want = read_records(a.want)
    ok = True
    by_reason = collections.Counter(REASONS.get(r["reason"], "?") for r in want)
    for item in filter(None, a.min.split(",")):
        k, v = item.split("=")
        if by_reason[k] < int(v):
            print(f"FAIL: the reference ended {by_reason[k]} records by {k}, "
                  f"want at least {v}: the input lacks them")
            ok = False
    if a.got:
        got = read_records(a.got)
        if a.per_key:
            ok &= diff("records per flow key (count, packets, bytes)",
                       per_key(want), per_key(got))
        elif a.per_key_bytes:
            ok &= diff("packets and bytes per flow key",
                       per_key(want, False), per_key(got, False))
        else:
            ok &= diff("IPFIX read back by libfixbuf",
                       [as_tuple(r) for r in want], [as_tuple(r) for r in got])
    if a.nfdump:
        ok &= diff("nfdump -o csv", [as_nfdump(r) for r in want],
                   read_nfdump(a.nfdump))
    if a.json:
        with open(a.json) as f:
            fx = json.load(f).get("flow_export")
        if fx is None:
            print(f"FAIL: {a.json} has no flow_export")
            return 1
        mine = {"records": len(want),
                "packets": sum(r["packets"] for r in want),
                "bytes": sum(r["bytes"] for r in want)}
        for k, v in mine.items():
            if fx[k] != v:
                print(f"FAIL: the app counted {fx[k]} {k} exported, want {v}")
                ok = False
        if not a.per_key and not a.per_key_bytes:
            for num, k in REASONS.items():
                if fx["ended"][k] != by_reason[k]:
                    print(f"FAIL: the app ended {fx['ended'][k]} records by "
                          f"{k}, want {by_reason[k]}")
                    ok = False
        for s in fx["to"]:
            if s["lost_records"] != 0:
                print(f"FAIL: {s['lost_records']} records lost to {s['sink']}")
                ok = False
        if ok:
            print(f"PASS: the app's own count: {fx['records']} records, "
                  f"{fx['packets']} packets, {fx['bytes']} bytes "
                  f"({', '.join(f'{k} {v}' for k, v in fx['ended'].items())})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
