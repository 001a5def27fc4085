#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""OUT_DIR/summary.json: every figure of one bench/run-all.sh run beside
the floor it is judged against, both from that run.

Usage: bench/summary.py OUT_DIR

Reads the raw files bench/run-all.sh leaves in OUT_DIR (its JSON files;
the logs only of bench-gpudma, which writes no JSON) and writes one object
per figure: figure (a stable id), value, unit, baseline ({name, value} or
null), ratio (value / baseline value, or null), same_run (always true: a
floor this run did not measure is null, never a number of another run),
goal (the issue's goal text, or null), raw (the OUT_DIR-relative file it
came from) and moved (for byte rates, where the bytes really moved; null
for packet rates and times). bench/plot.py calls it for report.md's
header and its table of floors, so that both name the same run.
"""

import hashlib
import json
import math
import os
import re
import statistics
import sys

# The units a figure may have; tests/bench/check-summary.py holds the
# same list.
UNITS = ("Mpps", "us", "GB/s", "Gbit/s", "records/s")

CAP_DIR = "capacity-burst128"
CAPT_DIR = "capture"
FLOW_DIR = "flow-export"
NOT_A_CEILING = "baseline is not a ceiling"


def load_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as e:
        print("summary.py: cannot read %s: %s" % (path, e), file=sys.stderr)
        return None


def number(v):
    """v where it is a finite number, else None (a JSON null, NaN)."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    return v if math.isfinite(v) else None


def run_info(out):
    """run_id, date, gpu, driver and revision of the run in OUT_DIR.

    run-all.sh writes OUT_DIR/run_id and the same id into machine.json;
    a run of an older run-all.sh has neither, and gets the id its fields
    give (date, revision, host), the same for every reader."""
    m = load_json(os.path.join(out, "machine.json")) or {}
    smi = [f.strip() for f in str(m.get("gpu", "")).split(",")]
    gpu = m.get("gpu_name") or (smi[0] if smi and smi[0] else None)
    driver = m.get("driver") or (smi[1] if len(smi) > 1 and smi[1] else None)
    revision = m.get("revision") or m.get("git")
    date = m.get("date")
    run_id = None
    try:
        with open(os.path.join(out, "run_id")) as f:
            run_id = f.read().strip() or None
    except OSError:
        pass
    run_id = run_id or m.get("run_id") or make_run_id(date, revision, m.get("host"))
    return {"run_id": run_id, "date": date, "gpu": gpu, "driver": driver,
            "revision": revision}


def make_run_id(date, revision, host):
    """date-revision-host: the host as a short hash, no machine name in
    files that are published."""
    stamp = re.sub(r"[^0-9TZ]", "", str(date or "unknown"))
    h = hashlib.sha256(str(host or "").encode()).hexdigest()[:6]
    return "%s-%s-%s" % (stamp or "unknown", revision or "unknown", h)


class Figures:
    """The figures of one run, added in the report's order."""

    def __init__(self):
        self.list = []
        self.ids = set()

    def add(self, figure, value, unit, raw, baseline=None, goal=None,
            moved=None, note=None):
        """baseline: (name, value) measured in this run, or None."""
        value = number(value)
        if value is None or figure in self.ids:
            return None
        assert unit in UNITS, unit
        base = None
        r = None
        # A floor of zero (nothing measured) is no floor.
        if baseline is not None and number(baseline[1]):
            base = {"name": baseline[0], "value": baseline[1]}
            r = value / baseline[1]
        if r is not None and note is None and baseline_is_ceiling(unit) \
                and r > 1.0:
            note = NOT_A_CEILING
        f = {"figure": figure, "value": value, "unit": unit,
             "baseline": base, "ratio": r, "same_run": True, "goal": goal,
             "raw": raw, "moved": moved}
        if note:
            f["note"] = note
        self.ids.add(figure)
        self.list.append(f)
        return f


def baseline_is_ceiling(unit):
    """A rate's floor is the rate of less work (a bare loop, one writer,
    memory reads alone): a ratio above 1 says it was not the ceiling it
    would be taken for. A time's ratio above 1 is the usual case."""
    return unit != "us"


# --- bench-handoff ----------------------------------------------------------

def lat_us(e, key="median_ns"):
    v = number((e or {}).get("latency", {}).get(key))
    return None if v is None else v / 1e3


def handoff(fig, out, name, tag):
    h = load_json(os.path.join(out, name + ".json"))
    if not h:
        return
    raw = name + ".json"
    res = h.get("results", [])
    single = {r.get("kind"): r for r in res if "burst" not in r}
    # The comm list's flag floor is the ping-pong in the memory its status
    # is in (bench_handoff.c). With packets in host memory the handoffs
    # are taken against that floor plus one dependent host load
    # (floor_host_load), where the run measured it: a handoff pays one
    # PCIe round trip more to read its packets.
    st = str(h.get("config", {}).get("status_memory", ""))
    fk = "floor_gpu" if st.startswith("gpu") and "floor_gpu" in single \
        else "floor_host"
    pk = "floor_host_load" if "floor_host_load" in single else fk
    floor = single.get(pk)
    what = "the floor + one dependent host load" if pk != fk \
        else "the flag floor"
    for kind in ("floor_host", "floor_gpu", "floor_host_load",
                 "launch_empty", "wmb"):
        for q in ("median", "p99") if kind in single else ():
            fig.add("handoff.%s.%s.%s.us" % (tag, kind, q),
                    lat_us(single[kind], q + "_ns"), "us", raw)
    for r in res:
        if "burst" not in r or r.get("kind") not in ("handoff", "launch"):
            continue
        base = "handoff.%s.%sB.burst%d" % (tag, r.get("pkt_size"), r["burst"])
        if r["kind"] == "launch":
            fig.add(base + ".launch.median.us", lat_us(r), "us", raw)
            continue
        is32 = r.get("pkt_size") == "64" and r["burst"] == 32
        # Issue 34 states its goals against the flag floor.
        if pk != fk:
            goals = (("median", "median ≤ 1.8× the flag floor (issue 34); "
                      "this ratio is to %s" % what), ("p99", None))
        else:
            goals = (("median", "median ≤ 1.35× %s (issue 34)" % what),
                     ("p99", "p99 ≤ 1.5× %s's p99 (issue 34)" % what))
        for q, goal in goals:
            key = q + "_ns"
            fig.add("%s.%s.us" % (base, q), lat_us(r, key), "us", raw,
                    baseline=("handoff.%s.%s.%s.us" % (tag, pk, q),
                              lat_us(floor, key)) if floor else None,
                    goal=goal if is32 else None)


# --- bench-driver, bench-reg-cache, bench-bpf-cpu ----------------------------

def driver(fig, out):
    d = load_json(os.path.join(out, "driver.json"))
    if not d:
        return
    ops = {(r.get("op"), r.get("variant")): r for r in d.get("ops", [])}
    for op in ("mem_alloc", "mem_free", "mem_register", "mem_unregister"):
        rte, raw_op = ops.get((op, "rte")), ops.get((op, "raw"))
        if rte is None:
            continue
        fig.add("driver.%s.rte.median.us" % op, lat_us(rte), "us",
                "driver.json",
                baseline=("driver.%s.raw.median.us" % op, lat_us(raw_op))
                if raw_op else None,
                goal="≤ +10 % over the raw CUDA calls (issue 3)")
    # rte_gpu_wmb() flushes GPUDirect writes where the GPU needs it; a CPU
    # store fence is another operation, so no floor of it is taken.
    if ("wmb", "rte") in ops:
        fig.add("driver.wmb.rte.median.us", lat_us(ops[("wmb", "rte")]),
                "us", "driver.json")


def reg_cache(fig, out):
    r = load_json(os.path.join(out, "reg_cache.json"))
    if not r:
        return
    by = {(c.get("variant"), c.get("size")): c for c in r.get("cycles", [])}
    for (variant, size), c in sorted(by.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        if variant != "cached":
            continue
        u = by.get(("uncached", size))
        reg = number(c.get("register", {}).get("median_ns"))
        ureg = number((u or {}).get("register", {}).get("median_ns"))
        fig.add("reg_cache.%dKiB.cached.register.median.us" % (size >> 10),
                None if reg is None else reg / 1e3, "us", "reg_cache.json",
                baseline=("reg_cache.%dKiB.uncached.register.median.us" % (size >> 10),
                          None if ureg is None else ureg / 1e3),
                goal="a cached re-registration ≥ 100× cheaper than an "
                     "uncached one (ratio ≤ 0.01, issue 16)")


def bpf_cpu(fig, out):
    b = load_json(os.path.join(out, "bpf_cpu.json"))
    if not b:
        return
    for r in b.get("results", []):
        for eng, v in sorted(r.get("pps", {}).items()):
            med = number(v.get("median"))
            fig.add("bpf_cpu.%s.%s.mpps" % (r.get("filter"), eng),
                    None if med is None else med / 1e6, "Mpps", "bpf_cpu.json")


# --- bench-kernel-rate ----------------------------------------------------

def kernel_rate(fig, out):
    k = load_json(os.path.join(out, "kernel_rate.json"))
    if not k:
        return
    for r in k.get("results", []):
        if r.get("mem") not in ("gpu", "host"):
            continue
        base = "kernel_rate.%s.%s.%sflows.%s" % (r["mem"], r.get("pkts"),
                                                r.get("flows"), r.get("filter"))
        # floor_gather_pps since the floor was named one; gather_pps before.
        g = number((r.get("floor_gather_pps") or r.get("gather_pps") or {})
                   .get("median"))
        g = None if g is None else g / 1e6
        fig.add(base + ".gather_floor.mpps", g, "Mpps", "kernel_rate.json")
        rate = number(r.get("rate_pps", {}).get("median"))
        goal = None
        if r["mem"] == "gpu" and r.get("pkts") == "64B":
            goal = "≥ 1.2 Gpps from GPU memory, 64-byte frames (issue 4)"
        fig.add(base + ".mpps", None if rate is None else rate / 1e6, "Mpps",
                "kernel_rate.json",
                baseline=(base + ".gather_floor.mpps", g), goal=goal)


# --- bench-gpugen --------------------------------------------------------

GEN_MOVED = {"gpu": "built in GPU memory, not sent",
             "host": "built in host-mapped memory across PCIe, not sent",
             "host-all": "built in host-mapped memory across PCIe (stream "
                         "table in host memory too), not sent"}

GEN_LCORES = "GPU build (no mbufs) over one TX lcore's unbuilt hand-out " \
             "rate: how many TX lcores' worth of frames the build makes; " \
             "the build and the lcore do different work, so neither is the " \
             "other's ceiling"


def gpugen(fig, out):
    name = "gpugen.json"
    g = load_json(os.path.join(out, name))
    if not g:
        name = "gpugen_cpu.json"
        g = load_json(os.path.join(out, name))
    if not g:
        return
    # The unbuilt-frame ceiling: frames handed out without a build on the
    # lcore of the CPU build, in the same invocation (results {"mem":
    # "unbuilt", "size", "case", "pps"}). A run of a bench-gpugen without
    # it leaves the build rates without a floor (never gen-tx-rate.sh's of
    # another run).
    ceil = {}
    for r in g.get("results", []):
        if r.get("mem") == "unbuilt":
            ceil[(r.get("size"), r.get("case"))] = number(r.get("pps"))

    def mpps(v):
        v = number(v)
        return None if v is None else v / 1e6

    def ceiling(r):
        c = ceil.get((r.get("size"), r.get("case")))
        return ("gpugen.unbuilt.%sB.%s.mpps" % (r.get("size"), r.get("case")),
                c / 1e6) if c else None

    for r in g.get("results", []):
        mem = r.get("mem")
        base = "gpugen.%s.%sB.%s" % (mem, r.get("size"), r.get("case"))
        if mem == "unbuilt":
            fig.add(base + ".mpps", mpps(r.get("pps")), "Mpps", name)
            continue
        # The CPU build on that lcore: its own row without a GPU, else
        # carried by every GPU row (the first one adds it).
        fig.add("gpugen.cpu.%sB.%s.mpps" % (r.get("size"), r.get("case")),
                mpps(r.get("cpu_pps")), "Mpps", name, baseline=ceiling(r))
        if mem not in GEN_MOVED:
            continue
        # The GPU builds into a ring, no lcore in its way: against the
        # lcore's ceiling the ratio says how many TX lcores' worth of
        # frames it builds, not that the ceiling was beaten.
        fig.add(base + ".mpps", mpps(r.get("gpu_pps")), "Mpps", name,
                baseline=ceiling(r),
                goal="≥ 1 Gpps GPU build rate, 64-byte frames (issue 13)"
                if mem == "gpu" and r.get("size") == 64 else None,
                note=GEN_LCORES if ceiling(r) else None)
        fig.add(base + ".gbps", r.get("gpu_gbps"), "Gbit/s", name,
                moved=GEN_MOVED[mem])


# --- the generator end to end (bench/gen-tx-rate.sh) -----------------------

GEN_TX_DIR = "gen-tx-rate"
TXRATE_RE = re.compile(r"^txrate mem=(\S+) build=(\S+) port=(\S+) free=(\S+) "
                       r"size=(\S+) queues=(\d+) mpps=([\d.]+)")


def gen_tx(fig, out):
    """Each build's transmit rate against frames handed out unbuilt on
    the same port, frees, size and queues of this run: the TX lcores'
    ceiling. Packet rates only: net_null and net_gpudma's TX keep no
    frame bytes."""
    try:
        with open(os.path.join(out, GEN_TX_DIR, "txrate.txt")) as f:
            lines = f.read().splitlines()
    except OSError:
        return
    # A point's rounds (BENCH_TXR_REPS): their median, and the build's
    # ratio is of the medians.
    rounds = {}
    for line in lines:
        m = TXRATE_RE.match(line)
        if m:
            rounds.setdefault(m.groups()[:6], []).append(float(m.group(7)))
    pts = [k + (statistics.median(v),) for k, v in rounds.items()]
    unbuilt = {(port, free, size, q): mpps
               for mem, b, port, free, size, q, mpps in pts if b == "none"}
    for mem, b, port, free, size, q, mpps in pts:
        key = (port, free, size, q)
        raw = "%s/txrate-%s-%s-%s-%s-%s-q%s.json" % (GEN_TX_DIR, mem, b, port,
                                                    free, size, q)
        name = "gen_tx.%s.%s.%s.%s.%s.q%s.mpps" % (
            "unbuilt" if b == "none" else mem, b, port, free,
            size + ("B" if size.isdigit() else ""), q)
        base = None
        if b != "none" and key in unbuilt:
            base = ("gen_tx.unbuilt.none.%s.%s.%s.q%s.mpps" % (
                port, free, size + ("B" if size.isdigit() else ""), q),
                unbuilt[key])
        f = fig.add(name, float(mpps), "Mpps", raw, baseline=base,
                    goal="≥ 0.9 of the unbuilt ceiling on 2 queues, ≥ 0.8 "
                    "on 4, GPU memory, 64 B (issue 35)"
                    if mem == "gpu" and size == "64" and q in ("2", "4")
                    else None)
        wait = tx_waits(load_json(os.path.join(out, raw)))
        n = len(rounds[(mem, b, port, free, size, q)])
        if n > 1:
            wait = "; ".join(x for x in ("median of %d rounds, alternated "
                                         "with the other modes" % n, wait)
                             if x)
        if f is not None and wait:
            f["note"] = "; ".join(x for x in (f.get("note"), wait) if x)


TXBUILD_DIR = "tx-build"


def tx_build(fig, out):
    """The generator's build latency, posted -> DONE seen, against the
    flag floor the same dpdk-gpu-tx run measured (tx-build-latency.sh);
    the parts of the total in the note."""
    try:
        with open(os.path.join(out, TXBUILD_DIR, "txbuild.txt")) as f:
            lines = f.read().splitlines()
    except OSError:
        return
    for line in lines:
        v = dict(re.findall(r"(\w+)=(\S+)", line))
        if not line.startswith("txbuild ") or "total_us" not in v:
            continue        # a failed case's line
        case = "%s.%sB" % (v["mem"], v["sizes"].replace("+", "_"))
        parts = ", ".join("%s %s us" % (k[:-3], v[k]) for k in
                          ("post_us", "handoff_us", "load_us", "build_us",
                           "publish_us") if k in v)
        fig.add("gen_tx.build_latency.%s.us" % case, float(v["total_us"]),
                "us",
                "%s/%s-%s.json" % (TXBUILD_DIR, v["mem"],
                                   v["sizes"].replace("+", "_")),
                baseline=("gen_tx.build_latency.%s.flag_floor.us" % case,
                          float(v.get("floor_us", "nan"))),
                goal="≤ 3× the flag floor, 32 × 100 B in GPU memory "
                "(issue 35)" if case == "gpu.100B" else None,
                note="medians of the parts: " + parts)


def tx_waits(j):
    """What bounded a GPU build's TX lcores, from dpdk-gpu-tx's JSON:
    their time on full rings and on an empty pool, and the bursts in
    flight at a post (none without a GPU build)."""
    if not isinstance(j, dict) or "inflight_mean" not in j:
        return None
    w = j.get("lcore_wait") or {}
    return ("lcores waited %.0f %% of their time for the GPU, %.0f %% for "
            "mbufs; %.1f of %s bursts in flight at a post" % (
                100 * float(w.get("gpu_share", 0)),
                100 * float(w.get("mbuf_share", 0)),
                float(j["inflight_mean"]), j.get("ring_items", "?")))


# --- bench-gpudma (no JSON: its log's total lines) --------------------------

GPUDMA_RE = re.compile(r"^gpudma (gpu|host)\s+(\d+) B total:\s+([\d.]+) Mpps\s+([\d.]+) GB/s")
H2D_RE = re.compile(r"^cuMemcpyHtoD, pinned, \d+ MiB: ([\d.]+) GB/s")


def gpudma(fig, out):
    logs = sorted((f for f in os.listdir(out)
                   if re.fullmatch(r"gpudma_q\d+\.log", f)),
                  key=lambda f: int(f[len("gpudma_q"):-4]))
    for f in logs:
        q = int(f[len("gpudma_q"):-4])
        h2d, scatter, rows = None, False, []
        try:
            with open(os.path.join(out, f)) as fh:
                for line in fh:
                    if "scatter=1" in line:
                        scatter = True
                    m = H2D_RE.match(line)
                    if m:
                        h2d = float(m.group(1))
                    m = GPUDMA_RE.match(line)
                    if m:
                        rows.append(m.groups())
        except OSError:
            continue
        for mem, size, mp, gb in rows:
            base = "gpudma.q%d.%s.%sB" % (q, mem, size)
            fig.add(base + ".mpps", float(mp), "Mpps", f)
            if mem == "gpu":
                moved = "into GPU memory by net_gpudma's %s" % (
                    "scatter kernel" if scatter else "copy engine")
            else:
                moved = "into host memory by net_gpudma"
            fig.add(base + ".gbytes", float(gb), "GB/s", f,
                    baseline=("gpudma.q%d.cuMemcpyHtoD_pinned.gbytes" % q, h2d)
                    if mem == "gpu" and h2d else None, moved=moved)
        if h2d:
            fig.add("gpudma.q%d.cuMemcpyHtoD_pinned.gbytes" % q, h2d, "GB/s",
                    f, moved="host to GPU memory by the copy engine")


# --- pipeline capacity (bench/pipeline-capacity.sh) --------------------------

CAP_SOURCES = ("source", "gpu-source")


def cap_source_of(mode):
    """The bare RX-and-free loop of a pipeline mode's own port and memory
    (bench/plot.py's capacity table uses the same); gpu-split has none:
    its port puts each frame's first 128 bytes in host memory."""
    if mode in CAP_SOURCES or mode == "gpu-split":
        return None
    return "gpu-source" if mode == "gpu" else "source"


def capacity_moved(mode, size):
    """Where a capacity run's packet bytes really moved, or None where no
    byte did: net_null (fixed sizes, host memory) writes none, and the
    pipeline reads only what it inspects."""
    if mode == "gpu-split":
        if size != "mix" and int(size) <= 128:
            return "headers only: whole frames into host memory by " \
                   "net_gpudma, none into GPU memory"
        return "first 128 B of each frame into host memory, the rest " \
               "into GPU memory by net_gpudma's scatter kernel"
    if mode.startswith("gpu"):
        return "into GPU memory by net_gpudma's scatter kernel"
    moved = []
    if size == "mix":
        moved.append("net_pcap's copy")
    if mode == "staged":
        moved.append("DMA to the GPU")
    return " + ".join(moved) or None


def sweep(out, sub, pattern):
    """{name's groups: (JSON, elapsed_s, file name)} of the dpdk-gpu-rx
    summaries in OUT_DIR/sub whose names match pattern, leaving out runs
    with no time and those their script marked failed."""
    d = os.path.join(out, sub)
    runs = {}
    for f in os.listdir(d) if os.path.isdir(d) else ():
        m = re.fullmatch(pattern, f)
        if not m or os.path.exists(os.path.join(d, f[:-5] + ".failed")):
            continue
        j = load_json(os.path.join(d, f))
        el = number((j or {}).get("elapsed_s"))
        # The third group is the RX lcore count in every sweep's names.
        if el:
            runs[tuple(int(g) if g.isdigit() and i == 2 else g
                       for i, g in enumerate(m.groups()))] = (j, el, f)
    return runs


def capacity(fig, out):
    runs = sweep(out, CAP_DIR, r"cap-(.+)-(mix|\d+)-(\d+)\.json")

    def mpps(k):
        j, el, _ = runs[k]
        return j.get("rx_packets", 0) / el / 1e6

    order = sorted(runs, key=lambda k: (k[0] not in CAP_SOURCES, k[0],
                                        k[1] != "mix", int(k[1]) if k[1] != "mix" else 0,
                                        k[2]))
    for k in order:
        mode, size, lc = k
        j, el, f = runs[k]
        raw = "%s/%s" % (CAP_DIR, f)
        label = "%s.%s" % (mode, size if size == "mix" else size + "B")
        src = cap_source_of(mode)
        sk = (src, size, lc)
        goal = None
        if mode == "host-mapped" and size == "64" and lc <= 4:
            goal = "148.8 Mpps at 64 B with ≤ 4 RX lcores, host-mapped (issue 2)"
        elif mode == "host-mapped" and size == "1500" and lc == 1:
            goal = "8.2 Mpps at 1500 B on one RX lcore, host-mapped (issue 2)"
        fig.add("capacity.%s.%dlcore.mpps" % (label, lc), mpps(k), "Mpps", raw,
                baseline=("capacity.%s.%s.%dlcore.mpps" % (
                    src, size if size == "mix" else size + "B", lc), mpps(sk))
                if sk in runs else None, goal=goal)
        moved = capacity_moved(mode, size)
        if moved:
            fig.add("capacity.%s.%dlcore.gbps" % (label, lc),
                    j.get("rx_bytes", 0) * 8 / el / 1e9, "Gbit/s", raw,
                    moved=moved)


# --- repetitions of A/B runs (bench-lib.sh's bench_keep_median) -----------

def rep_files(d, name):
    """[(JSON, path relative to d)] of the repetitions of the run NAME in
    sweep directory d, reps/NAME.r1.json on; [] for a run made once (the
    plain NAME.json, a copy of the median repetition, is then the run)."""
    reps = []
    while True:
        rel = "reps/%s.r%d.json" % (name, len(reps) + 1)
        if not os.path.isfile(os.path.join(d, rel)):
            return reps
        reps.append((load_json(os.path.join(d, rel)), rel))


def spread(values):
    """{min, median, max, reps} of a figure's repetitions; None for fewer
    than three, which say too little of the spread to report one."""
    v = sorted(x for x in (number(y) for y in values) if x is not None)
    if len(v) < 3:
        return None
    return {"min": v[0], "median": statistics.median(v), "max": v[-1],
            "reps": len(v)}


def rep_value(sp, one):
    """A figure's value: the median of its repetitions, or its one run."""
    return sp["median"] if sp else one


def with_spread(f, sp, base_sp=None):
    """The repetitions' spread on figure f (and on its baseline)."""
    if f is None:
        return None
    if sp:
        f.update(sp)
    if base_sp and f["baseline"] is not None:
        f["baseline"].update(base_sp)
    return f


# --- capture (bench/capture-throughput.sh) ------------------------------

def capture(fig, out):
    d = os.path.join(out, CAPT_DIR)
    pts = sweep(out, CAPT_DIR, r"capt-(.+)-([^-]+)-(\d+)-([a-z]+)\.json")

    def mpps(j, key="rx_packets"):
        el = number((j or {}).get("elapsed_s"))
        return (j.get(key, 0) / el / 1e6) if el else None

    def file_gbytes(j, rel):
        # The capture file's size, written by the script beside the JSON.
        el = number((j or {}).get("elapsed_s"))
        fl = load_json(os.path.join(d, rel[:-5] + ".file"))
        fb = number((fl or {}).get("file_bytes"))
        return fb / el / 1e9 if fb is not None and el else None

    # The runs alternate, off beside each capture: value and floor are
    # the medians of their repetitions.
    def mpps_of(f, j, key="rx_packets"):
        sp = spread(mpps(rj, key) for rj, _ in rep_files(d, f[:-5]))
        return rep_value(sp, mpps(j, key)), sp
    # run-all.sh's floors of the sweep: one thread writing into the same
    # directory, the floor of one file; N threads each into its own file,
    # that of a file per queue on N lcores (one thread is beaten there).
    probe = load_json(os.path.join(out, "tmpfs_probe.json"))
    floor = number((probe or {}).get("write_Bps_median"))
    floor = None if floor is None else floor / 1e9
    where = ((probe or {}).get("fstype"), (probe or {}).get("dir"))
    fig.add("capture.write_probe.gbytes", floor, "GB/s", "tmpfs_probe.json",
            moved="written by one thread into a file on %s (%s)" % where)
    nfloor = {}
    for n, p in sorted(((probe or {}).get("threads") or {}).items()):
        v = number((p or {}).get("write_Bps_median"))
        if n == "1" or v is None or not n.isdigit():
            continue
        nfloor[int(n)] = ("capture.write_probe.%sthreads.gbytes" % n, v / 1e9)
        fig.add(nfloor[int(n)][0], v / 1e9, "GB/s", "tmpfs_probe.json",
                moved="written by %s threads, each into its own file on %s (%s)"
                % ((n,) + where))

    def floor_of(run, lc):
        if run in ("tcpq", "allq", "allqw") and lc in nfloor:
            return nfloor[lc]
        return ("capture.write_probe.gbytes", floor) if floor else None
    runs = ("off", "tcp", "all", "tcpq", "allq", "allw", "allqw")
    for k in sorted(pts, key=lambda k: (k[0], k[1], k[2],
                                         runs.index(k[3]) if k[3] in runs else 9)):
        mode, traffic, lc, run = k
        j, el, f = pts[k]
        raw = "%s/%s" % (CAPT_DIR, f)
        base = "capture.%s.%s.%dlcore.%s" % (mode, traffic, lc, run)
        off = pts.get((mode, traffic, lc, "off"))
        value, sp = mpps_of(f, j)
        off_value, off_sp = mpps_of(off[2], off[0]) if off else (None, None)
        if run in ("allw", "allqw"):
            # Writer threads: the RX lcores outrun writers that cannot
            # keep up (the rest capture drops); what was written counts.
            cvalue, csp = mpps_of(f, j, "captured")
            with_spread(fig.add(
                base + ".captured.mpps", cvalue, "Mpps", raw,
                baseline=("capture.%s.%s.%dlcore.off.mpps" % (mode, traffic, lc),
                          off_value) if off else None),
                csp, off_sp)
        with_spread(fig.add(
            base + ".mpps", value, "Mpps", raw,
            baseline=("capture.%s.%s.%dlcore.off.mpps" % (mode, traffic, lc),
                      off_value) if off and run != "off" else None),
            sp, off_sp)
        if run == "off":
            continue
        fgb = file_gbytes(j, f)
        if fgb is not None:
            fsp = spread(file_gbytes(rj, rel) for rj, rel in rep_files(d, f[:-5]))
            with_spread(fig.add(
                base + ".file.gbytes", rep_value(fsp, fgb), "GB/s",
                raw, baseline=floor_of(run, lc), moved="written to capture files on tmpfs (blocks "
                "and headers included)",
                goal="≥ 5 GB/s captured to tmpfs with ≤ 4 RX lcores "
                "(issue 12)" if run in ("all", "allq", "allw", "allqw") and
                lc <= 4 else None),
                fsp)
        else:
            fig.add(base + ".captured.gbytes", j.get("captured_bytes", 0) / el / 1e9,
                    "GB/s", raw, baseline=floor_of(run, lc), moved="captured packet bytes written to "
                    "capture files on tmpfs")


# --- flow export (bench/flow-export.sh) ------------------------------------

FLOW_GOAL = "≥ 1 M records/s with the packet rate within 10 % of export off (issue 14)"


def flow_export(fig, out):
    d = os.path.join(out, FLOW_DIR)
    if not os.path.isdir(d):
        return
    files = {f: load_json(os.path.join(d, f)) for f in os.listdir(d)
             if re.fullmatch(r"(table|pipe\d*)-[a-z]+-\d+-[a-z0-9-]+\.json", f)}

    def key(f):
        kind, mode, flows, exp = re.fullmatch(
            r"(table|pipe\d*)-([a-z]+)-(\d+)-([a-z0-9-]+)\.json", f).groups()
        return kind, mode, int(flows), exp

    def rate(kind, j):
        if kind == "table":
            return number((j or {}).get("mpps"))
        el = number((j or {}).get("elapsed_s"))
        return j.get("rx_packets", 0) / el / 1e6 if el else None

    def records(kind, j):
        if kind == "table":
            return number((j or {}).get("records_per_s"))
        el = number((j or {}).get("elapsed_s"))
        fx = (j or {}).get("flow_export")
        return (fx["records"] - fx.get("ended", {}).get("exit", 0)) / el \
            if fx and el else None

    # With and without the export alternate: value and floor are the
    # medians of their repetitions.
    def of(fn, kind, f, j):
        sp = spread(fn(kind, rj) for rj, _ in rep_files(d, f[:-5]))
        return rep_value(sp, fn(kind, j)), sp

    exps = ("off", "file", "udp", "file-a0", "file-pb")
    for f in sorted(files, key=lambda f: (lambda k: (k[0] != "table", k[1], k[2],
                                                     exps.index(k[3]) if k[3] in exps else 9))(key(f))):
        j = files[f]
        if not j:
            continue
        kind, mode, flows, exp = key(f)
        raw = "%s/%s" % (FLOW_DIR, f)
        base = "flow_export.%s.%s.%dflows.%s" % (kind, mode, flows, exp)
        offf = "%s-%s-%d-off.json" % (kind, mode, flows)
        off = files.get(offf) if exp != "off" else None
        value, sp = of(rate, kind, f, j)
        off_value, off_sp = of(rate, kind, offf, off) if off else (None, None)
        with_spread(fig.add(
            base + ".mpps", value, "Mpps", raw,
            baseline=("flow_export.%s.%s.%dflows.off.mpps" % (kind, mode, flows),
                      off_value) if off else None,
            goal=FLOW_GOAL if exp != "off" else None), sp, off_sp)
        recs, rsp = of(records, kind, f, j)
        if exp == "off" or recs is None:
            continue
        churn = number(j.get("churn"))
        note = None
        if churn and abs(recs - churn) <= 0.02 * churn:
            note = "equals the offered churn: the exporter's capacity is " \
                   "not measured by this point (flow_export.capacity is)"
        with_spread(fig.add(base + ".records_per_s", recs, "records/s", raw,
                            goal=FLOW_GOAL, note=note), rsp)
    # The exporter's capacity (flow-export.sh's search): no floor, as no
    # run without the export makes a record to set a ceiling.
    for f in sorted(os.listdir(d)):
        m = re.fullmatch(r"capacity-([a-z]+)-(\d+)-([a-z0-9-]+)\.json", f)
        c = load_json(os.path.join(d, f)) if m else None
        best = (c or {}).get("capacity")
        if not best:
            continue
        fig.add("flow_export.capacity.%s.%sflows.%s.records_per_s" % m.groups(),
                best.get("records_per_s"), "records/s", "%s/%s" % (FLOW_DIR, f),
                goal="≥ 10 M records/s at 1 M and 10 M flows (issue 35)",
                note="the table alone at the highest churn that lost nothing "
                     "(%.3g new flows/s: export ring never full, no record "
                     "lost, no overflow, records/s ≥ 0.9 × churn); no floor: "
                     "with the export off no record is made. Bound: %s" % (
                         best.get("churn") or 0, c.get("bound")))


# --- bench/gpus-scaling.sh ---------------------------------------------------

GPUS_DIR = "gpus-scaling"


def gpus_scaling(fig, out):
    """Each mode's median on N GPUs against N times its one-GPU median of
    this run (issue 36: >= 0.9), and the one-GPU figure against the bare
    loop's at the same lcores."""
    s = load_json(os.path.join(out, GPUS_DIR, "gpus_scaling.json"))
    if not s:
        return
    lpg = s.get("lcores_per_gpu")
    for mode, m in s.get("modes", {}).items():
        one = next((p for p in m["points"] if p["gpus"] == 1), None)
        for p in m["points"]:
            if "median" not in p:
                continue
            name = "gpus_scaling.%s.%dgpus.%dlcores_per_gpu.mpps" % (mode, p["gpus"], lpg)
            # The median of the point's runs (runs/MODE-gN.rR.json).
            raw = "%s/gpus_scaling.json" % GPUS_DIR
            if p["gpus"] > 1 and one and "median" in one:
                fig.add(name, p["median"], "Mpps", raw,
                        baseline=("%d x gpus_scaling.%s.1gpus.%dlcores_per_gpu.mpps"
                                  % (p["gpus"], mode, lpg), p["gpus"] * one["median"]),
                        goal="≥ 0.9 of N × the one-GPU figure (issue 36)"
                        if mode in ("host-mapped", "gpu", "gen-gpu") else None,
                        note="floor: N × this run's one-GPU median")
            elif p["gpus"] == 1 and "ceiling_median" in p:
                fig.add(name, p["median"], "Mpps", raw,
                        baseline=("gpus_scaling.%s.1gpus.%dlcores_per_gpu.mpps"
                                  % (m["ceiling"], lpg), p["ceiling_median"]))
            else:
                fig.add(name, p["median"], "Mpps", raw)


def build(out):
    info = run_info(out)
    fig = Figures()
    handoff(fig, out, "handoff", "host_pkts")
    handoff(fig, out, "handoff_gpu_pkts", "gpu_pkts")
    driver(fig, out)
    reg_cache(fig, out)
    bpf_cpu(fig, out)
    kernel_rate(fig, out)
    gpugen(fig, out)
    gen_tx(fig, out)
    tx_build(fig, out)
    gpudma(fig, out)
    capacity(fig, out)
    capture(fig, out)
    flow_export(fig, out)
    gpus_scaling(fig, out)
    info["figures"] = fig.list
    return info


def write(out):
    """Build OUT_DIR's summary and write OUT_DIR/summary.json; returns it."""
    s = build(out)
    path = os.path.join(out, "summary.json")
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(s, f, indent=1, ensure_ascii=False)
        f.write("\n")
    os.replace(tmp, path)
    return s


def fmt(v):
    if v is None:
        return "n/a"
    return "%.3g" % v if abs(v) < 100 else "%.1f" % v


def floors_section(s):
    """report.md's table of the figures that have a floor in this run."""
    rows = [f for f in s["figures"] if f["baseline"] is not None]
    md = ["## Figures against their floors, same run (summary.json)\n",
          "Every ratio is figure / floor, both measured in run %s; a figure "
          "whose floor this run did not measure has none. Ratios above 1 "
          "against a bare loop say that loop is not a ceiling.\n" % s["run_id"],
          "| figure | value | unit | floor | floor value | ratio | note |",
          "|---|---|---|---|---|---|---|"]
    for f in rows:
        md.append("| %s | %s | %s | %s | %s | %s | %s |" % (
            f["figure"], fmt(f["value"]), f["unit"], f["baseline"]["name"],
            fmt(f["baseline"]["value"]),
            "n/a" if f["ratio"] is None else "%.3f" % f["ratio"],
            f.get("note", "")))
    return "\n".join(md) + "\n"


def main():
    if len(sys.argv) != 2 or not os.path.isdir(sys.argv[1]):
        print(__doc__, file=sys.stderr)
        return 2
    s = write(sys.argv[1])
    print("summary.py: wrote %s (%d figures, run %s)" % (
        os.path.join(sys.argv[1], "summary.json"), len(s["figures"]), s["run_id"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
