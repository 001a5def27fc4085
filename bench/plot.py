#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Tables and plots from the JSON files bench/run-all.sh writes.

Usage: bench/plot.py OUT_DIR
       bench/plot.py --capacity SWEEP_DIR   (SWEEP_DIR/capacity.png only)
       bench/plot.py --capacity-header
       bench/plot.py --capacity-row JSON MODE SIZE LCORES
       bench/plot.py --capacity-ratios SWEEP_DIR
                     (capacity.md's header, one row of it, and the
                     pipelines' ratios to the source, for
                     pipeline-capacity.sh)
       bench/plot.py --capture-line JSON | --capture-table SWEEP_DIR
                     (a run's line and capture.md, for
                     capture-throughput.sh)

Reads OUT_DIR/{machine,handoff,handoff_gpu_pkts,driver,bpf_cpu,kernel_rate}.json,
OUT_DIR/gpugen.json (or gpugen_cpu.json; optional),
and the capacity sweep in OUT_DIR/capacity-burst128/ (cap-*.json, and the
programs' logs for the memory they hold) and the capture sweep in
OUT_DIR/capture/ (capt-*.json; each optional) and writes
OUT_DIR/report.md (markdown tables, always; its header and its table of
floors from OUT_DIR/summary.json, which bench/summary.py writes first) and
PNG plots (OUT_DIR/*.png, only where matplotlib is installed). Needs
Python 3.6+ and nothing else for the tables.
"""

import json
import math
import os
import sys

import summary
from summary import cap_source_of


def load(out, name):
    path = os.path.join(out, name + ".json")
    if not os.path.exists(path):
        return None
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        print("plot.py: cannot read %s: %s" % (path, e), file=sys.stderr)
        return None


def us(ns):
    if ns is None or (isinstance(ns, float) and math.isnan(ns)):
        return "n/a"
    return "%.2f" % (ns / 1e3)


def ratio(a, b):
    if a is None or b is None or b == 0:
        return None
    return a / b


def fmt_ratio(r, suffix="x"):
    return "n/a" if r is None else "%.2f%s" % (r, suffix)


def table(header, rows):
    lines = ["| " + " | ".join(header) + " |",
             "|" + "|".join("---" for _ in header) + "|"]
    for r in rows:
        lines.append("| " + " | ".join(str(c) for c in r) + " |")
    return "\n".join(lines) + "\n"


def lat(entry, key="median_ns"):
    if entry is None:
        return None
    return entry.get("latency", {}).get(key)


# --- handoff -------------------------------------------------------------

def handoff_section(h, title):
    res = h.get("results", [])
    single = {r["kind"]: r for r in res if "burst" not in r}
    cases = {}
    for r in res:
        if "burst" in r:
            cases[(r["pkt_size"], r["burst"], r["kind"])] = r
    cfg = h.get("config", {})
    status_mem = cfg.get("status_memory", "?")
    floor_kind = "floor_gpu" if status_mem.startswith("gpu") and \
        "floor_gpu" in single else "floor_host"
    flag = single.get(floor_kind)
    # As in summary.py: packets in host memory are taken against the flag
    # floor plus one dependent host load, where the run measured it.
    base_kind = "floor_host_load" if "floor_host_load" in single \
        else floor_kind
    floor = single.get(base_kind)
    md = ["## %s\n" % title,
          "GPU: %s; comm list status: %s memory; packet data: %s; "
          "%d measured rounds per case after %d warm-up rounds; "
          "times in µs from rte_rdtsc_precise().\n" % (
              h.get("gpu", {}).get("name", "?"), status_mem,
              cfg.get("packet_memory", "host (registered)"),
              cfg.get("reps", 0), cfg.get("warmup", 0)),
          ]
    rows = []
    for kind, what in (("floor_host", "ping-pong of one flag, registered host memory"),
                       ("floor_gpu", "ping-pong of one flag, GPU memory mapped by GDRCopy"),
                       ("floor_host_load", "the flag ping-pong + one dependent "
                        "128-byte line read from host memory"),
                       ("launch_empty", "empty kernel launch + cudaStreamSynchronize"),
                       ("wmb", "rte_gpu_wmb()")):
        e = single.get(kind)
        if e is None:
            continue
        rows.append([kind + (" (baseline)" if kind == base_kind else ""), what,
                     us(lat(e)), us(lat(e, "p99_ns")), us(lat(e, "mean_ns"))])
    md.append(table(["case", "what", "median", "p99", "mean"], rows))
    md.append("")
    rows = []
    for (size, burst, kind), r in sorted(cases.items(),
                                         key=lambda kv: (kv[0][0] != "64", kv[0][1])):
        if kind != "handoff":
            continue
        launch = cases.get((size, burst, "launch"))
        pop = cases.get((size, burst, "populate"))
        rows.append([size, burst, us(lat(r)), us(lat(r, "p99_ns")),
                     us(lat(r, "mean_ns")), us(lat(launch)),
                     us(lat(launch, "p99_ns")), us(lat(pop)),
                     fmt_ratio(ratio(lat(r), lat(floor))),
                     fmt_ratio(ratio(lat(r, "p99_ns"), lat(floor, "p99_ns"))),
                     fmt_ratio(ratio(lat(launch), lat(r)))])
    md.append(table(["packet bytes", "burst", "handoff median", "p99", "mean",
                     "launch median", "launch p99", "populate median",
                     "median / baseline median", "p99 / baseline p99",
                     "launch / handoff"], rows))
    # Issue 34's goals for 32-packet bursts of 64-byte packets, against
    # the flag floor: packets in GPU memory ≤ 1.35× at the median and
    # ≤ 1.5× at p99; in host memory ≤ 1.8× (one host read is unavoidable).
    r = cases.get(("64", 32, "handoff"))
    if r is not None and flag is not None:
        g1 = ratio(lat(r), lat(flag))
        g2 = ratio(lat(r, "p99_ns"), lat(flag, "p99_ns"))
        if base_kind == "floor_host_load":
            md.append("\nGoal (32 × 64-byte packets, issue 34): median ≤ "
                      "1.8× the flag floor: %s (%s).\n" % (
                          fmt_ratio(g1), "met" if g1 is not None and
                          g1 <= 1.8 else "missed"))
        else:
            md.append("\nGoals (32 × 64-byte packets, issue 34): median ≤ "
                      "1.35× the flag floor: %s (%s); p99 ≤ 1.5× its p99: "
                      "%s (%s).\n" % (
                          fmt_ratio(g1), "met" if g1 is not None and
                          g1 <= 1.35 else "missed",
                          fmt_ratio(g2), "met" if g2 is not None and
                          g2 <= 1.5 else "missed"))
    return "\n".join(md) + "\n", cases, single, floor_kind


def handoff_plot(plt, out, name, cases, single, floor_kind):
    sizes = sorted({k[0] for k in cases}, key=lambda s: s != "64")
    if not sizes:
        return None
    fig, axes = plt.subplots(1, len(sizes), figsize=(6 * len(sizes), 4.5),
                             squeeze=False)
    for ax, size in zip(axes[0], sizes):
        bursts = sorted({k[1] for k in cases if k[0] == size})
        x = range(len(bursts))
        w = 0.38
        for off, kind, label in ((-w / 2, "handoff", "persistent kernel (comm list)"),
                                 (w / 2, "launch", "launch + sync per burst")):
            med = [lat(cases.get((size, b, kind))) or 0 for b in bursts]
            p99 = [lat(cases.get((size, b, kind)), "p99_ns") or 0 for b in bursts]
            ax.bar([i + off for i in x], [m / 1e3 for m in med], w, label=label + " median")
            ax.scatter([i + off for i in x], [p / 1e3 for p in p99], marker="_",
                       s=300, color="black", zorder=3,
                       label="p99" if kind == "handoff" else None)
        f = single.get(floor_kind)
        if f is not None:
            ax.axhline(lat(f) / 1e3, color="red", linestyle="--",
                       label="floor (flag ping-pong) median")
        ax.set_xticks(list(x))
        ax.set_xticklabels([str(b) for b in bursts])
        ax.set_xlabel("burst (packets)")
        ax.set_ylabel("µs")
        ax.set_yscale("log")
        lo, hi = ax.get_ylim()
        if f is not None:
            lo = lat(f) / 1e3 / 2
        ax.set_ylim(lo, hi * 6)  # room for the legend above the bars
        ax.set_title("handoff latency, %s packets%s" % (
            "64-byte" if size == "64" else "64..1500-byte random",
            ", data in GPU memory" if name != "handoff" else ""))
        ax.legend(fontsize=7, loc="upper left", framealpha=0.8)
    fig.tight_layout()
    path = os.path.join(out, name + ".png")
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


# --- driver ----------------------------------------------------------------

def driver_section(d):
    ops = {}
    for r in d.get("ops", []):
        ops[(r["op"], r["variant"])] = r
    md = ["## Driver cost (bench-driver)\n",
          "Each call timed alone; `raw` = the CUDA calls the driver makes, "
          "context already current; `raw_ctx` = the same inside "
          "cuCtxPushCurrent/cuCtxPopCurrent, as the driver must do. "
          "Times in µs; allocation size %s bytes.\n" % d.get("config", {}).get("size", "?")]
    rows = []
    for op in ("mem_alloc", "mem_free", "mem_register", "mem_unregister", "wmb"):
        rte = ops.get((op, "rte"))
        raw = ops.get((op, "raw"))
        ctx = ops.get((op, "raw_ctx"))
        if rte is None:
            continue
        # rte_gpu_wmb() flushes only on GPUs whose RDMA writes are not
        # ordered for their own kernels; elsewhere it is a store fence,
        # and the flush beside it is another operation, not its floor.
        over = None if op == "wmb" else ratio(lat(rte), lat(raw))
        rows.append([op, us(lat(rte)), us(lat(raw)), us(lat(ctx)),
                     "n/a" if over is None else "%+.1f%%" % (100 * (over - 1)),
                     us(lat(rte, "p99_ns")), us(lat(raw, "p99_ns")),
                     "n/a" if over is None else ("met" if over <= 1.1 else "missed")])
    fence = ops.get(("wmb", "cpu_fence"))
    md.append(table(["op", "rte median", "raw median", "raw_ctx median",
                     "overhead vs raw", "rte p99", "raw p99", "goal ≤ +10%"], rows))
    if fence is not None:
        md.append("\nrte_wmb() (CPU store fence) alone: %s µs median. "
                  "rte_gpu_wmb() is that fence alone where the GPU orders "
                  "GPUDirect RDMA writes for its own kernels, and the fence "
                  "plus cuFlushGPUDirectRDMAWrites where it does not; the "
                  "`raw` column is the flush, for reference, not its "
                  "floor.\n" % us(lat(fence)))
    live = {}
    counts = set()
    for r in d.get("live", []):
        live[(r["op"], r["variant"], r["live"])] = r
        counts.add(r["live"])
    counts = sorted(counts)
    if counts:
        md.append("\n### free / unregister with many live allocations\n")
        md.append("Median (p99) µs of freeing a random one of N live 4 KiB "
                  "allocations / page registrations.\n")
        rows = []
        for op in ("mem_free", "mem_unregister"):
            for v in ("rte", "raw"):
                cells = []
                for n in counts:
                    e = live.get((op, v, n))
                    if e is None or not e.get("complete", True):
                        cells.append("n/a")
                    else:
                        cells.append("%s (%s)" % (us(lat(e)), us(lat(e, "p99_ns"))))
                # Growth from the smallest N above 1: with a single live
                # allocation CUDA takes a slow path that a ratio to it
                # would hide growth behind.
                base_n = next((n for n in counts if n > 1), counts[0])
                first = live.get((op, v, base_n))
                last = live.get((op, v, counts[-1]))
                g = ratio(lat(last), lat(first))
                rows.append([op, v] + cells + [fmt_ratio(g)] +
                            [("met" if g is not None and g <= 1.2 else "missed")
                             if v == "rte" else ""])
        md.append(table(["op", "variant"] + ["N=%d" % n for n in counts] +
                        ["growth %d→%d" % (next((n for n in counts if n > 1),
                                                counts[0]), counts[-1]),
                         "goal ≤ 1.2×"], rows))
    return "\n".join(md) + "\n", ops, live, counts


def driver_plots(plt, out, ops, live, counts):
    paths = []
    names = [op for op in ("mem_alloc", "mem_free", "mem_register",
                           "mem_unregister", "wmb") if (op, "rte") in ops]
    if names:
        fig, ax = plt.subplots(figsize=(8, 4.5))
        w = 0.27
        for i, v in enumerate(("rte", "raw", "raw_ctx")):
            xs = [k + (i - 1) * w for k in range(len(names))]
            med = [(lat(ops.get((op, v))) or 0) / 1e3 for op in names]
            p99 = [(lat(ops.get((op, v)), "p99_ns") or 0) / 1e3 for op in names]
            ax.bar(xs, med, w, label=v + " median")
            ax.scatter(xs, p99, marker="_", s=200, color="black", zorder=3,
                       label="p99" if i == 0 else None)
        ax.set_xticks(range(len(names)))
        ax.set_xticklabels(names)
        ax.set_ylabel("µs")
        ax.set_yscale("log")
        ax.set_title("gpudev driver calls vs raw CUDA")
        ax.legend(fontsize=8)
        fig.tight_layout()
        p = os.path.join(out, "driver_ops.png")
        fig.savefig(p, dpi=120)
        plt.close(fig)
        paths.append(p)
    if counts:
        fig, ax = plt.subplots(figsize=(7, 4.5))
        for op in ("mem_free", "mem_unregister"):
            for v, style in (("rte", "-o"), ("raw", "--s")):
                ys = [lat(live.get((op, v, n))) for n in counts]
                if all(y is None for y in ys):
                    continue
                ax.plot(counts, [(y or float("nan")) / 1e3 for y in ys], style,
                        label="%s %s" % (op, v))
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("live allocations / registrations")
        ax.set_ylabel("median µs")
        ax.set_title("free / unregister vs live count")
        ax.legend(fontsize=8)
        fig.tight_layout()
        p = os.path.join(out, "driver_live.png")
        fig.savefig(p, dpi=120)
        plt.close(fig)
        paths.append(p)
    return paths


# --- bpf cpu ------------------------------------------------------------------

ENGINES = (("pcap_bpf_filter", "libpcap bpf_filter"),
           ("rte_bpf_interp", "rte_bpf interpreter"),
           ("rte_bpf_jit", "rte_bpf JIT"))


def reg_cache_section(r):
    """Registration cache (bench-reg-cache): cached against uncached."""
    md = ["## Registration cache (bench-reg-cache)\n",
          "`rte_gpu_mem_register` + `rte_gpu_mem_unregister` cycles of EAL "
          "memory on GPU %s probed with `reg_cache=1`, %d of each variant "
          "alternated in one run: uncached pins and unpins every time, cached "
          "keeps the registration after the first (lazy unpinning).\n" % (
              r.get("gpudev_name", "?"), r.get("reps", 0))]
    by = {(c["variant"], c["size"]): c for c in r.get("cycles", [])}
    rows, goals = [], []
    for size in sorted({s for _, s in by}):
        u, c = by.get(("uncached", size)), by.get(("cached", size))
        if not u or not c:
            continue
        reg = u["register"]["median_ns"] / c["register"]["median_ns"]
        unreg = u["unregister"]["median_ns"] / c["unregister"]["median_ns"]
        rows.append(["%d MiB" % (size >> 20) if size >= 1 << 20 else "%d KiB" % (size >> 10),
                     us(u["register"]["median_ns"]), us(c["register"]["median_ns"]),
                     fmt_ratio(reg), us(u["unregister"]["median_ns"]),
                     us(c["unregister"]["median_ns"]), fmt_ratio(unreg),
                     us(u["register"]["p99_ns"]), us(c["register"]["p99_ns"])])
        goals.append("%s: %s" % (rows[-1][0], "met" if reg >= 100 else "missed"))
    md.append(table(["size", "register uncached µs", "cached µs", "ratio",
                     "unregister uncached µs", "cached µs", "ratio",
                     "register p99 uncached µs", "cached µs"], rows))
    if goals:
        md.append("Goals: a cached re-registration ≥ 100× cheaper than an "
                  "uncached one: %s.\n" % "; ".join(goals))
    return "\n".join(md)


def bpf_section(b):
    cfg = b.get("config", {})
    md = ["## CPU filter baselines (bench-bpf-cpu)\n",
          "One core (lcore %s), %s packets of %.0f bytes on average "
          "(%.0f MB, more than the caches), median of %s passes; "
          "packets/s in millions.\n" % (
              cfg.get("lcore", "?"), cfg.get("packets", "?"),
              cfg.get("bytes", 0) / max(cfg.get("packets", 1), 1),
              cfg.get("buffer_bytes", 0) / 1e6, cfg.get("reps", "?"))]
    rows = []
    for r in b.get("results", []):
        pps = r.get("pps", {})
        cells = []
        for k, _ in ENGINES:
            v = pps.get(k, {}).get("median")
            cells.append("n/a" if v is None else "%.1f" % (v / 1e6))
        rows.append(["`%s`" % (r.get("expr") or "(empty)"), r.get("cbpf_insns"),
                     r.get("ebpf_insns"),
                     "%.1f%%" % (100.0 * r.get("accepted", 0) / max(cfg.get("packets", 1), 1))]
                    + cells)
    md.append(table(["filter", "cBPF insns", "eBPF insns", "accepted"] +
                    [n + " Mpps" for _, n in ENGINES], rows))
    return "\n".join(md) + "\n"


def bpf_plot(plt, out, b):
    res = b.get("results", [])
    if not res:
        return None
    fig, ax = plt.subplots(figsize=(7, 4.5))
    w = 0.27
    for i, (k, name) in enumerate(ENGINES):
        xs = [j + (i - 1) * w for j in range(len(res))]
        ys = [(r.get("pps", {}).get(k, {}).get("median") or 0) / 1e6 for r in res]
        ax.bar(xs, ys, w, label=name)
    ax.set_xticks(range(len(res)))
    ax.set_xticklabels(["%s\n(%s insns)" % (r["filter"], r.get("cbpf_insns"))
                        for r in res])
    ax.set_ylabel("Mpps, one core")
    ax.set_title("CPU BPF filters")
    ax.legend(fontsize=8)
    fig.tight_layout()
    p = os.path.join(out, "bpf_cpu.png")
    fig.savefig(p, dpi=120)
    plt.close(fig)
    return p


# --- kernel rate ------------------------------------------------------------------

KR_GOAL_PPS = 1.2e9      # 800GbE at 64 bytes
KR_GOAL_PCIE = 0.70      # of the measured PCIe read bandwidth
KR_GOAL_SPEEDUP = 50.0   # over one CPU core


def gpps(v):
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "n/a"
    return "%.3f" % (v / 1e9)


def mpps(v):
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "n/a"
    return "%.1f" % (v / 1e6)


def flows_label(n):
    if n and n % 1000000 == 0:
        return "%dM" % (n // 1000000)
    if n and n % 1000 == 0:
        return "%dk" % (n // 1000)
    return str(n)


def kr_cpu_baselines(b):
    """filter name -> (rte_bpf JIT pps, libpcap pps) from bpf_cpu.json."""
    base = {}
    for r in (b or {}).get("results", []):
        pps = r.get("pps", {})
        base[r.get("filter")] = (pps.get("rte_bpf_jit", {}).get("median"),
                                 pps.get("pcap_bpf_filter", {}).get("median"))
    return base


def kr_key(r):
    return (r.get("pkts") != "64B", r.get("flows", 0),
            ["empty", "tcp443", "complex"].index(r["filter"])
            if r.get("filter") in ("empty", "tcp443", "complex") else 9)


def kernel_rate_section(k, b):
    cfg = k.get("config", {})
    bw = k.get("bandwidth", {})
    gpu = k.get("gpu", {})
    base = kr_cpu_baselines(b)
    res = sorted([r for r in k.get("results", []) if r.get("mem") in ("gpu", "host")],
                 key=kr_key)
    md = ["## GPU kernel rate (bench-kernel-rate)\n",
          "GPU: %s (%s SMs). Parse + cBPF filter + flow-table update "
          "(`gpurx_classify_pkt`) per packet over %s resident packets; "
          "median and p99 (slowest) of %s timed passes after %s warm-up "
          "passes, on a flow table already holding every flow; `first "
          "pass` = the checked pass on an empty table (flow inserts). "
          "Every result is checked against a CPU pass of the same code "
          "over the same packets (all verdicts and the flow table). "
          "Kernel: `gpu_rx-persistent` = dpdk-gpu-rx's own persistent "
          "kernel fed through the ring library (items of 512 packets, "
          "timed from the first READY to the last DONE seen by the CPU); "
          "older results name the bench's own shapes (`thread-*`, "
          "`warp-*`) instead.\n" % (
              gpu.get("name", "?"), gpu.get("sm_count", "?"),
              cfg.get("packets", "?"), cfg.get("reps", "?"),
              cfg.get("warmup", "?")),
          "Measured in the same run: device-memory read %.0f GB/s, PCIe "
          "read from host-mapped memory %.1f GB/s (median). `floor` = "
          "that bandwidth / bytes a kernel must read per packet (headers "
          "to the end of L4 in 32-byte sectors + 14-byte descriptor); "
          "`gather floor` = every packet's descriptor and first %s bytes "
          "loaded by coalesced warps, nothing classified. CPU: one core "
          "running the same per-packet code (`cpu1`), and the filter "
          "alone in DPDK's rte_bpf JIT from bench-bpf-cpu (same "
          "generator and seed; the flow tuples differ).\n" % (
              (bw.get("device_read_Bps_median") or 0) / 1e9,
              (bw.get("pcie_read_Bps_median") or 0) / 1e9,
              min(64, cfg.get("window") or 64))]
    rows = []
    for r in res:
        jit = base.get(r.get("filter"), (None, None))[0]
        best = r.get("rate_pps", {}).get("median")
        rows.append([r.get("pkts"), flows_label(r.get("flows")),
                     r.get("filter"), r.get("mem"), r.get("best") or "-",
                     gpps(best), gpps(r.get("rate_pps", {}).get("p99")),
                     gpps(r.get("first_pass_pps")),
                     gpps(r.get("floor_pps")),
                     # Named gather_pps before the floor was named one.
                     gpps((r.get("floor_gather_pps") or
                           r.get("gather_pps") or {}).get("median")),
                     "%.0f%%" % (100 * r["bw_fraction"]) if r.get("bw_fraction") is not None else "n/a",
                     mpps(r.get("cpu_classify_pps")),
                     fmt_ratio(ratio(best, r.get("cpu_classify_pps"))),
                     mpps(jit), fmt_ratio(ratio(best, jit)),
                     "yes" if r.get("verified") else "**NO**"])
    md.append(table(["pkts", "flows", "filter", "memory", "kernel", "Gpps median",
                     "p99", "first pass", "floor", "gather floor", "of bandwidth",
                     "cpu1 Mpps", "× cpu1", "rte_bpf JIT Mpps", "× JIT",
                     "checked"], rows))
    # Goals of issue 4.
    g64 = [r for r in res if r.get("mem") == "gpu" and r.get("pkts") == "64B"
           and r.get("rate_pps")]
    host = [r for r in res if r.get("mem") == "host" and r.get("bw_fraction") is not None]
    gpu_all = [r for r in res if r.get("mem") == "gpu" and r.get("rate_pps")]
    if g64 or host or gpu_all:
        md.append("\nGoals:\n")
    if g64:
        lo = min(g64, key=lambda r: r["rate_pps"]["median"])
        md.append("- ≥ 1.2 Gpps from GPU memory (64-byte frames): slowest "
                  "configuration %s Gpps (%s flows, %s): %s.\n" % (
                      gpps(lo["rate_pps"]["median"]), flows_label(lo.get("flows")),
                      lo.get("filter"),
                      "met" if lo["rate_pps"]["median"] >= KR_GOAL_PPS else "missed"))
    if host:
        lo = min(host, key=lambda r: r["bw_fraction"])
        md.append("- ≥ 70%% of the PCIe read bandwidth from host-mapped "
                  "memory: lowest %.0f%% (%s, %s flows, %s): %s.\n" % (
                      100 * lo["bw_fraction"], lo.get("pkts"),
                      flows_label(lo.get("flows")), lo.get("filter"),
                      "met" if lo["bw_fraction"] >= KR_GOAL_PCIE else "missed"))
    if gpu_all:
        sp = [(ratio(r["rate_pps"]["median"], r.get("cpu_classify_pps")), r)
              for r in gpu_all]
        sp = [x for x in sp if x[0] is not None]
        if sp:
            lo = min(sp, key=lambda x: x[0])
            md.append("- ≥ 50× one CPU core (same work, GPU memory): lowest "
                      "%.0f× (%s, %s flows, %s): %s.\n" % (
                          lo[0], lo[1].get("pkts"), flows_label(lo[1].get("flows")),
                          lo[1].get("filter"),
                          "met" if lo[0] >= KR_GOAL_SPEEDUP else "missed"))
    cut = [r for r in res if r.get("time_budget_cut")]
    if cut:
        md.append("\nThe time budget cut %d configuration(s) short: see "
                  "kernel_rate.log.\n" % len(cut))
    return "\n".join(md) + "\n"


def kernel_rate_plot(plt, out, k, b):
    res = sorted([r for r in k.get("results", []) if r.get("mem") in ("gpu", "host")],
                 key=kr_key)
    configs = []
    for r in res:
        c = (r.get("pkts"), r.get("flows"), r.get("filter"))
        if c not in configs:
            configs.append(c)
    if not configs:
        return None
    by = {(r.get("pkts"), r.get("flows"), r.get("filter"), r.get("mem")): r for r in res}
    base = kr_cpu_baselines(b)
    series = [("GPU memory", lambda c: (by.get(c + ("gpu",)) or {}).get("rate_pps", {}).get("median")),
              ("host-mapped memory", lambda c: (by.get(c + ("host",)) or {}).get("rate_pps", {}).get("median")),
              ("CPU core, same work", lambda c: ((by.get(c + ("gpu",)) or by.get(c + ("host",)) or {})
                                                 .get("cpu_classify_pps"))),
              ("CPU core, rte_bpf JIT (filter only)", lambda c: base.get(c[2], (None, None))[0]),
              ("CPU core, libpcap bpf_filter", lambda c: base.get(c[2], (None, None))[1])]
    fig, ax = plt.subplots(figsize=(max(8, 1.1 * len(configs) + 2), 5.5))
    w = 0.8 / len(series)
    for i, (label, get) in enumerate(series):
        xs = [j + (i - (len(series) - 1) / 2) * w for j in range(len(configs))]
        ys = [(get(c) or 0) / 1e9 for c in configs]
        if any(ys):
            ax.bar(xs, ys, w, label=label)
    ax.axhline(KR_GOAL_PPS / 1e9, color="red", linestyle="--",
               label="goal: 1.2 Gpps (800GbE at 64 B)")
    ax.set_xticks(range(len(configs)))
    ax.set_xticklabels(["%s\n%s flows\n%s" % (p, flows_label(f), flt)
                        for p, f, flt in configs], fontsize=8)
    ax.set_ylabel("G packets/s (log)")
    ax.set_yscale("log")
    lo, hi = ax.get_ylim()
    ax.set_ylim(lo, hi * 8)  # room for the legend
    ax.set_title("GPU kernel rate (parse + BPF + flow table) vs one CPU core")
    ax.legend(fontsize=7, loc="upper left", ncol=2, framealpha=0.8)
    fig.tight_layout()
    p = os.path.join(out, "kernel_rate.png")
    fig.savefig(p, dpi=120)
    plt.close(fig)
    return p


# --- the generator end to end (bench/gen-tx-rate.sh) ------------------------

GEN_TX_ROWS = (("unbuilt", "none", "frames unbuilt (--no-build): the TX lcores' ceiling"),
               ("cpu", "cpu", "CPU build on the TX lcores"),
               ("host-mapped", "persistent", "GPU build into host-mapped mbufs"),
               ("gpu", "persistent", "GPU build into GPU-memory mbufs"))


def gen_tx_section(summ):
    """Rows per build and port, columns size x queues, from summary.json's
    gen_tx figures; each build's ratio to the unbuilt frames of the same
    port in this run."""
    figs = [f for f in summ["figures"] if f["figure"].startswith("gen_tx.")]
    if not figs:
        return None
    cells = {}
    cols = []
    for f in figs:
        _, mem, b, port, free, size, q, _ = f["figure"].split(".")
        col = (size, q)
        if col not in cols:
            cols.append(col)
        cells[(mem, b, port, free, col)] = f
    rows = []
    for mem, b, what in GEN_TX_ROWS:
        for port, free in sorted({(k[2], k[3]) for k in cells
                                  if k[0] == mem and k[1] == b}):
            row = ["%s, %s, %s frees" % (what, "net_gpudma" if port == "gpudma"
                                          else "net_null", free)]
            for c in cols:
                f = cells.get((mem, b, port, free, c))
                if f is None:
                    row.append("")
                elif f["ratio"] is None:
                    row.append("%.1f" % f["value"])
                else:
                    row.append("%.1f (%.2f)" % (f["value"], f["ratio"]))
            rows.append(row)
    return ("## Generator transmit rate (bench/gen-tx-rate.sh)\n\n"
            "dpdk-gpu-tx unpaced, every packet different (two field-engine "
            "variables, IPv4 and UDP checksums), burst 256, a TX lcore per "
            "queue. Mpps; in brackets the ratio to frames handed out unbuilt "
            "on the same port, frees, size and queues in this run. net_null "
            "drops what it is sent and net_gpudma counts and drops it: these "
            "are packet rates, no frame bytes left the host.\n\n" +
            table(["build, port, frees"] + ["%s × %s q" % (sz.replace("B", " B"), q[1:])
                                             for sz, q in cols], rows))


# --- the generator's build rate (bench-gpugen) ---------------------------

GEN_GOAL_PPS = 1e9       # issue 13: >= 1 Gpps GPU build rate
GEN_MEMS = (("gpu", "GPU memory"), ("host", "host-mapped"),
            ("host-all", "host-mapped, table in host"))


def gpugen_section(g):
    """The build-rate table: one row per frame size and case, the GPU
    memories side by side with the CPU core of the same run."""
    cfg = g.get("config", {})
    res = g.get("results", [])
    rows_by = {}
    order = []
    for r in res:
        key = (r.get("size"), r.get("case"))
        if key not in rows_by:
            rows_by[key] = {}
            order.append(key)
        rows_by[key][r.get("mem")] = r
    md = ["## Generator build rate (bench-gpugen)\n"]
    gpu = g.get("gpu")
    if gpu:
        md.append("GPU %s (%s SMs). libgpugen's build kernel "
                  "(gpugen_gpu_build_ring) into a %d MiB ring of frame slots, "
                  "%d passes of %d frames after %d warm-up; median (p99: the "
                  "slowest pass). The last pass of each configuration checked "
                  "byte for byte against the CPU build. CPU: gpugen_build_cpu "
                  "on one core (lcore %s), median of %d passes of %d frames. "
                  "Gbit/s: frame bits (FCS included) the build wrote into "
                  "that memory; nothing was sent.\n" % (
                      gpu.get("name"), gpu.get("sm_count"),
                      cfg.get("ring_bytes", 0) >> 20, cfg.get("reps", 0),
                      cfg.get("packets", 0), cfg.get("warmup", 0),
                      cfg.get("lcore"), cfg.get("cpu_reps", 0),
                      cfg.get("cpu_packets", 0)))
    else:
        md.append("GPU part skipped (no GPU): the CPU build alone, on one "
                  "core (lcore %s).\n" % cfg.get("lcore"))
    header = ["frame", "case"]
    mems = [(m, name) for m, name in GEN_MEMS
            if any(m in v for v in rows_by.values())]
    for _, name in mems:
        header += ["%s Mpps (p99)" % name, "Gbit/s"]
    header += ["CPU 1 core Mpps", "Gbit/s"]
    # One TX lcore handing out mbufs with their lengths set, no frame
    # byte written: what a sender of built frames is held to.
    unbuilt = any("unbuilt" in v for v in rows_by.values())
    if unbuilt:
        header += ["unbuilt, 1 TX lcore Mpps"]
    if mems:
        header += ["GPU memory × CPU", "frames checked (each memory)"]
    rows = []
    for key in order:
        by = rows_by[key]
        any_r = next(iter(by.values()))
        row = ["%s B" % key[0], "%s: %s" % (key[1], any_r.get("what", ""))]
        for m, _ in mems:
            r = by.get(m)
            if r:
                row += ["%s (%s)" % (mpps(r.get("gpu_pps")), mpps(r.get("gpu_pps_p99"))),
                        "%.1f" % r.get("gpu_gbps", 0)]
            else:
                row += ["n/a", "n/a"]
        row += [mpps(any_r.get("cpu_pps")), "%.1f" % any_r.get("cpu_gbps", 0)]
        if unbuilt:
            row += [mpps((by.get("unbuilt") or {}).get("pps"))]
        if mems:
            ref = by.get("gpu") or next((by[m] for m, _ in mems if m in by), None)
            row += [fmt_ratio(ratio((ref or {}).get("gpu_pps"), any_r.get("cpu_pps"))),
                    str(min((by[m].get("checked") or 0) for m, _ in mems
                            if m in by))]
        rows.append(row)
    md.append(table(header, rows))
    g64 = [r for r in res if r.get("mem") == "gpu" and r.get("size") == 64
           and r.get("gpu_pps")]
    if g64:
        lo = min(g64, key=lambda r: r["gpu_pps"])
        md.append("\nGoals:\n")
        md.append("- ≥ 1 Gpps GPU build rate (64-byte frames, GPU memory): "
                  "slowest case %s Gpps (%s): %s.\n" % (
                      gpps(lo["gpu_pps"]), lo.get("case"),
                      "met" if lo["gpu_pps"] >= GEN_GOAL_PPS else "missed"))
    if g.get("status") != "ok":
        md.append("\n**The run failed** (status %s): see gpugen.log.\n" %
                  g.get("status"))
    return "\n".join(md) + "\n"


# --- pipeline capacity (bench/pipeline-capacity.sh) ----------------------

CAP_DIR = "capacity-burst128"
CAP_MODES = ("source", "gpu-source", "cpu", "host-mapped", "staged", "gpu",
             "gpu-split")
# The modes that are a bare RX-and-free loop (bench-rx-source), not a pipeline.
CAP_SOURCES = ("source", "gpu-source")
CAP_MODE_NAMES = {"source": "source alone",
                  "gpu-source": "net_gpudma alone, mbufs in GPU memory",
                  "cpu": "`--cpu` (baseline)",
                  "host-mapped": "`host-mapped`", "staged": "`staged`",
                  "gpu": "`gpu` (net_gpudma)",
                  "gpu-split": "`gpu` + header/data split (net_gpudma)"}


def size_key(size):
    return (0, 0) if size == "mix" else (1, int(size))


def cap_column(size, lcores):
    return "%s × %d" % (size if size == "mix" else size + " B", lcores)


def cap_label(mode, size, lcores):
    return "%s %s" % (mode, cap_column(size, lcores))


def cap_modes(runs):
    """The sweep's modes, CAP_MODES' order first."""
    modes = [m for m in CAP_MODES if any(k[0] == m for k in runs)]
    return modes + sorted({k[0] for k in runs} - set(modes))


def bytes_moved(mode, size):
    """What carried a capacity run's packet bytes and where to, or None
    where nothing did (bench/summary.py says it for both files)."""
    return summary.capacity_moved(mode, size)


def capacity_rates(j, mode, size):
    """(Mpps, Gbit/s or None) of one run's summary JSON."""
    el = j["elapsed_s"] or 1
    gbps = j["rx_bytes"] * 8 / el / 1e9 if bytes_moved(mode, size) else None
    return j["rx_packets"] / el / 1e6, gbps


CAP_TABLE_HEADER = ("| mode | packet bytes | RX lcores | Mpps | Gbit/s of bytes moved "
                    "| bytes moved by | dropped (ring full) | mbufs returned |\n"
                    "| --- | --- | --- | --- | --- | --- | --- | --- |")


def capacity_row(j, mode, size, lc):
    """One row of capacity.md and the one-line result, from a run's JSON."""
    mpps, gbps = capacity_rates(j, mode, size)
    d = j.get("dropped", {})
    m = j.get("mbufs")
    back = "%d/%d" % (m["returned"], m["total"]) if m else "n/a"
    rate = "%.2f" % gbps if gbps is not None else "–"
    row = "| %s | %s | %s | %.2f | %s | %s | %d | %s |" % (
        mode, size, lc, mpps, rate, bytes_moved(mode, size) or "nothing",
        d.get("ring_full", 0), back)
    line = "capacity mode=%s size=%s lcores=%s rate=%.2fMpps%s ring_full=%d" % (
        mode, size, lc, mpps, " %.2fGbps" % gbps if gbps is not None else "",
        d.get("ring_full", 0))
    return row, line


def load_capacity(d):
    """{(mode, size, lcores): {json, memory lines}} of the sweep in d."""
    runs = {}
    if not os.path.isdir(d):
        return runs
    for f in sorted(os.listdir(d)):
        if not (f.startswith("cap-") and f.endswith(".json")):
            continue
        try:
            mode, size, lc = f[4:-5].rsplit("-", 2)
            lc = int(lc)
        except ValueError:
            continue
        j = load(d, f[:-5])
        if not j or not j.get("elapsed_s"):
            continue
        held = []
        try:
            with open(os.path.join(d, f[:-5] + ".log")) as log:
                held = [l[len("memory: "):].strip() for l in log
                        if l.startswith("memory: ")]
        except OSError:
            pass
        mpps, gbps = capacity_rates(j, mode, size)
        runs[(mode, size, lc)] = {"j": j, "held": held, "mpps": mpps, "gbps": gbps}
    return runs


def capacity_ratios(runs):
    """Markdown: each pipeline's Mpps over its source alone's (the bare
    RX-and-free loop of the same port and memory) at the same packet size
    and lcore count, the share of the receiving lcores' rate the pipeline
    keeps."""
    cols = sorted({(size, lc) for m, size, lc in runs if m in CAP_SOURCES},
                  key=lambda c: (size_key(c[0]), c[1]))
    modes = [m for m in cap_modes(runs)
             if m not in CAP_SOURCES and cap_source_of(m)]
    if not cols or not modes:
        return ""
    rows = []
    for m in modes:
        row = ["%s / %s" % (CAP_MODE_NAMES.get(m, m), cap_source_of(m))]
        for size, lc in cols:
            r, src = runs.get((m, size, lc)), runs.get((cap_source_of(m), size, lc))
            q = r["mpps"] / src["mpps"] if r and src and src["mpps"] else None
            row.append("" if q is None else "%.2f%s" % (
                q, " (%s)" % summary.NOT_A_CEILING if q > 1.0 else ""))
        rows.append(row)
    return ("Ratio to the source alone (RX and free, the same lcores, the "
            "same run): `source` is net_null or net_pcap into host memory, "
            "`gpu-source` net_gpudma into GPU memory (bench-rx-source --gpu); "
            "empty where that source did not run; none for `gpu-split`, whose "
            "port puts the first 128 bytes of each frame in host memory. A "
            "ratio above 1 means the pipeline beat its bare loop: that "
            "baseline is not a ceiling:\n\n" +
            table(["mode / its source"] + [cap_column(s, l) for s, l in cols], rows))


def capacity_plot(plt, d, runs):
    """d/capacity.png: Mpps against RX lcores, a line per mode and size."""
    pts = {}
    for (mode, size, lc), r in runs.items():
        pts.setdefault((mode, size), []).append((lc, r["mpps"]))
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for (mode, size), v in sorted(pts.items()):
        if len(v) < 2:
            continue
        v.sort()
        ax.plot([x for x, _ in v], [y for _, y in v], marker="o", label=f"{mode}, {size}")
    ax.axhline(148.8, color="grey", linestyle="--", label="100GbE line rate, 64 B")
    ax.set_xlabel("RX lcores")
    ax.set_ylabel("Mpps received and processed")
    ax.set_yscale("log")
    ax.set_title("dpdk-gpu-rx pipeline capacity")
    ax.legend(fontsize=8)
    fig.tight_layout()
    p = os.path.join(d, "capacity.png")
    fig.savefig(p, dpi=110)
    plt.close(fig)
    return p


def capacity_section(runs):
    md = ["## Pipeline capacity (dpdk-gpu-rx, bench/pipeline-capacity.sh)\n"]
    cols = sorted({(size, lc) for _, size, lc in runs},
                  key=lambda c: (size_key(c[0]), c[1]))
    modes = cap_modes(runs)
    rows = []
    for m in modes:
        row = [CAP_MODE_NAMES.get(m, m)]
        for size, lc in cols:
            r = runs.get((m, size, lc))
            row.append("%.1f" % r["mpps"] if r else "")
        rows.append(row)
    md.append("Mpps received and fully processed, one RX lcore per queue; "
              "columns: packet bytes (mix = net_pcap replaying realistic "
              "traffic, else net_null; the GPU-memory modes' source is "
              "net_gpudma replaying the same mix or frames of that size) × "
              "RX lcores. These are packet rates "
              "of the pipeline's work: net_null writes no packet bytes and "
              "the pipeline reads only what it inspects, so no bit rate is "
              "given for them; bytes cross a copy only in the mix (net_pcap "
              "copies each frame) and a DMA only in staged mode.\n")
    moved = [(cap_label(m, s, l), "%.1f" % r["gbps"], bytes_moved(m, s))
             for (m, s, l), r in sorted(runs.items(),
                                        key=lambda kv: (kv[0][0], size_key(kv[0][1]), kv[0][2]))
             if r["gbps"] is not None]
    if moved:
        md.append("Gbit/s where packet bytes really moved:\n")
        md.append(table(["run", "Gbit/s", "moved by"], [list(x) for x in moved]))
    md.append(table(["mode"] + [cap_column(s, l) for s, l in cols], rows))
    ratios = capacity_ratios(runs)
    if ratios:
        md.append(ratios)
    lossy = ["%s: %d" % (cap_label(m, s, l), r["j"].get("dropped", {}).get("ring_full", 0))
             for (m, s, l), r in sorted(runs.items())
             if r["j"].get("dropped", {}).get("ring_full", 0)]
    unreturned = [cap_label(m, s, l) for (m, s, l), r in sorted(runs.items())
                  if r["j"].get("mbufs") and
                  r["j"]["mbufs"]["returned"] != r["j"]["mbufs"]["total"]]
    md.append("Ring-full drops: %s. Mbufs not back in their pool at the end: %s.\n" % (
        "; ".join(lossy) if lossy else "none",
        ", ".join(unreturned) if unreturned else "none"))

    goals = []
    best4 = max(((r["mpps"], l) for (m, s, l), r in runs.items()
                 if m == "host-mapped" and s == "64" and l <= 4), default=None)
    # Packet rates of the pipeline's work: net_null hands out frames it
    # never wrote, so no line-rate goal is met or missed by these rows.
    if best4:
        src4 = runs.get(("source", "64", best4[1]))
        goals.append("148.8 Mpps at 64 B with ≤ 4 RX lcores, host-mapped: "
                     "%.1f Mpps on %d%s, a packet rate from net_null, which "
                     "writes no frame bytes: not a line rate" % (
                         best4[0], best4[1],
                         " (%.2f of the bare loop)" % (best4[0] / src4["mpps"])
                         if src4 and src4["mpps"] else ""))
    one1500 = runs.get(("host-mapped", "1500", 1))
    if one1500:
        goals.append("8.2 Mpps at 1500 B on one lcore, host-mapped: %.1f "
                     "Mpps handled, but net_null moves no bytes, so this "
                     "says nothing of 1500-byte frames' bytes: not "
                     "measurable without a port that writes them" % (
                         one1500["mpps"]))
    for m in ("host-mapped", "source", "cpu"):
        lcs = sorted(l for (mm, s, l) in runs if mm == m and s == "64")
        if len(lcs) >= 2 and lcs[0] == 1:
            a, b = runs[(m, "64", 1)]["mpps"], runs[(m, "64", lcs[-1])]["mpps"]
            goals.append("scaling 1 → %d lcores at 64 B, %s: %.1f× (linear: %d×)" % (
                lcs[-1], CAP_MODE_NAMES.get(m, m), b / a, lcs[-1]))
    if goals:
        md.append("Goals: " + "; ".join(goals) + ".\n")

    gpu = [((m, s, l), r["j"]["gpu_items"]) for (m, s, l), r in
           sorted(runs.items(), key=lambda kv: (kv[0][0], size_key(kv[0][1]), kv[0][2]))
           if r["j"].get("gpu_items", {}).get("items")]
    if gpu:
        md.append("Per ring item, from the kernel's clock (`gpu_items`): latency "
                  "READY → DONE seen by the RX lcore, and where the GPU's time "
                  "goes (µs).\n")
        md.append(table(["run", "items", "p50", "p99", "waiting", "busy", "inputs",
                         "staging", "classify", "results"],
                        [[cap_label(*k), g["items"], g["latency_p50_us"],
                          g["latency_p99_us"], g["wait_us"], g["busy_us"],
                          g["inputs_us"], g["staging_us"], g["classify_us"],
                          g["results_us"]] for k, g in gpu]))
    held = [(cap_label(*k), "; ".join(r["held"]))
            for k, r in sorted(runs.items(), key=lambda kv: (kv[0][0], size_key(kv[0][1]), kv[0][2]))
            if k[0] not in CAP_SOURCES]
    if held:
        md.append("Memory held, as `dpdk-gpu-rx` prints it at start:\n")
        md.append(table(["run", "held"], [[n, h or "no memory line in the log"]
                                          for n, h in held]))
    return "\n".join(md)


# --- capture throughput (bench/capture-throughput.sh) ---------------------

CAPT_DIR = "capture"
CAPT_RUNS = ("off", "tcp", "all", "tcpq", "allq")


def capture_point(d, name):
    """Rates of one capture-throughput run, or None where it has no JSON."""
    j = load(d, name)
    if not j or not j.get("elapsed_s"):
        return None
    el = j["elapsed_s"]
    try:
        # The capture file's size, written by the script beside the JSON.
        with open(os.path.join(d, name + ".file")) as fh:
            f = json.load(fh)
    except (OSError, ValueError):
        f = None
    rx = j.get("rx_packets", 0)
    return {"mpps": rx / el / 1e6,
            # With writer threads the RX lcores outrun the writers where
            # they cannot keep up (the rest capture drops): what was
            # written is the rate to compare.
            "cap_mpps": j.get("captured", 0) / el / 1e6,
            "share": j.get("captured", 0) / rx if rx else 0.0,
            "share_pct": 100.0 * j.get("captured", 0) / rx if rx else 0.0,
            "gbps": j.get("captured_bytes", 0) / el / 1e9,
            "file_gbps": f["file_bytes"] / el / 1e9 if f else None,
            "drops": j.get("dropped", {}).get("capture_full", 0)}


def load_capture(d):
    """{(mode, traffic, lcores): {run: point or "failed: why"}} of a sweep."""
    pts = {}
    if not os.path.isdir(d):
        return pts
    for f in sorted(os.listdir(d)):
        if not f.startswith("capt-"):
            continue
        if f.endswith(".json"):
            name = f[:-5]
        elif f.endswith(".failed"):
            name = f[:-7]
        else:
            continue
        try:
            mode, traffic, lc, run = name[5:].rsplit("-", 3)
            lc = int(lc)
        except ValueError:
            continue
        if f.endswith(".failed"):
            with open(os.path.join(d, f)) as fh:
                pt = "failed: " + fh.read().strip()
        else:
            pt = capture_point(d, name)
            if pt is None or os.path.exists(os.path.join(d, name + ".failed")):
                continue
        pts.setdefault((mode, traffic, lc), {})[run] = pt
    return pts


def capture_line(path):
    d, f = os.path.split(path)
    name = f[:-5] if f.endswith(".json") else f
    mode, traffic, lc, run = name[5:].rsplit("-", 3)
    p = capture_point(d or ".", name)
    line = "capture mode=%s traffic=%s lcores=%s run=%s rate=%.2fMpps" % (
        mode, traffic, lc, run, p["mpps"])
    if run != "off":
        line += " captured=%.1f%% %.2fGB/s" % (p["share"] * 100, p["gbps"])
        if p["file_gbps"] is not None:
            line += " file=%.2fGB/s" % p["file_gbps"]
        line += " drops=%d" % p["drops"]
    return line


def capture_section(pts, heading="## Capture throughput (dpdk-gpu-rx, bench/capture-throughput.sh)\n"):
    def cell(r, key, fmt):
        if r is None:
            return ""
        if isinstance(r, str):
            return r
        v = r.get(key)
        return "" if v is None else fmt % v

    md = [heading]
    md.append("net_pcap replaying generated traffic (infinite_rx), one replay "
              "per RX queue and lcore; mix: realistic sizes, mix1500: the same "
              "frames padded to 1500 B. Per point up to five runs (those "
              "BENCH_CAPT_RUNS names; an empty cell did not run): `--filter tcp` "
              "without a capture file, the same writing one (the captured share "
              "of the packets), and every packet written, each into one file "
              "and into a file per RX queue (`--write` with `%q`); where the "
              "runs were repeated, alternating, each cell is the median "
              "repetition (summary.json gives min, median and max). GB/s: bytes "
              "written to the capture files (blocks and headers included) per "
              "second, on tmpfs. Every capture file was read back whole by "
              "libpcap, the files of a run holding as many packets as it "
              "captured.\n")
    rows = []
    # Writer threads' runs (--capture-writers): columns where there are.
    writers = any(run in ("allw", "allqw") for r in pts.values() for run in r)
    for (mode, traffic, lc) in sorted(pts, key=lambda k: (k[0], k[1], k[2])):
        r = pts[(mode, traffic, lc)]
        drops = sum(x["drops"] for x in r.values() if isinstance(x, dict))
        rows.append([mode, traffic, lc,
                     cell(r.get("off"), "mpps", "%.2f"),
                     cell(r.get("tcp"), "mpps", "%.2f"),
                     cell(r.get("tcp"), "share_pct", "%.1f %%"),
                     cell(r.get("tcp"), "file_gbps", "%.2f"),
                     cell(r.get("all"), "mpps", "%.2f"),
                     cell(r.get("all"), "file_gbps", "%.2f"),
                     cell(r.get("tcpq"), "file_gbps", "%.2f"),
                     cell(r.get("allq"), "mpps", "%.2f"),
                     cell(r.get("allq"), "file_gbps", "%.2f")] +
                    ([cell(r.get("allw"), "cap_mpps", "%.2f"),
                      cell(r.get("allw"), "file_gbps", "%.2f"),
                      cell(r.get("allqw"), "cap_mpps", "%.2f"),
                      cell(r.get("allqw"), "file_gbps", "%.2f")]
                     if writers else []) + [drops])
    md.append(table(["mode", "traffic", "RX lcores", "Mpps, no file",
                     "Mpps, tcp written", "captured", "GB/s, tcp",
                     "Mpps, all written", "GB/s, all",
                     "GB/s, tcp, file per queue",
                     "Mpps, all, file per queue", "GB/s, all, file per queue"] +
                    (["Mpps captured, all, writers", "GB/s, all, writers",
                      "Mpps captured, all, file per queue, writers",
                      "GB/s, all, file per queue, writers"]
                     if writers else []) + ["capture drops"], rows))
    goals = []
    for mode in sorted({k[0] for k in pts}):
        for run, what in (("all", "one file"), ("allq", "a file per queue")):
            best = max(((r[run]["file_gbps"], lc) for (m, t, lc), r in pts.items()
                        if m == mode and lc <= 4 and isinstance(r.get(run), dict)
                        and r[run]["file_gbps"] is not None), default=None)
            if best:
                goals.append("≥ 5 GB/s captured to tmpfs with ≤ 4 RX lcores, %s, "
                             "%s: %.2f GB/s on %d: %s" % (
                                 mode, what, best[0], best[1],
                                 "met" if best[0] >= 5 else "missed"))
        for t in sorted({k[1] for k in pts if k[0] == mode}):
            for run, what in (("all", "one file"), ("allq", "a file per queue")):
                lcs = sorted(lc for (m, tt, lc), r in pts.items() if m == mode
                             and tt == t and isinstance(r.get(run), dict))
                if len(lcs) >= 2 and lcs[0] == 1:
                    a = pts[(mode, t, 1)][run]["file_gbps"]
                    b = pts[(mode, t, lcs[-1])][run]["file_gbps"]
                    if a and b:
                        goals.append("capture scaling 1 → %d lcores, %s %s, %s: "
                                     "%.2f× (linear: %d×)" % (
                                         lcs[-1], mode, t, what, b / a, lcs[-1]))
    if goals:
        md.append("Goals: " + "; ".join(goals) + ".\n")
    return "\n".join(md)


def main():
    if len(sys.argv) == 6 and sys.argv[1] == "--capacity-row":
        with open(sys.argv[2]) as f:
            row, line = capacity_row(json.load(f), *sys.argv[3:6])
        print(row)
        print(line, file=sys.stderr)
        return 0
    if len(sys.argv) == 3 and sys.argv[1] == "--capture-line":
        print(capture_line(sys.argv[2]))
        return 0
    if len(sys.argv) == 3 and sys.argv[1] == "--capture-table":
        pts = load_capture(sys.argv[2])
        if not pts:
            print("plot.py: no capt-*.json in %s" % sys.argv[2], file=sys.stderr)
            return 1
        print(capture_section(pts, "# Capture throughput\n"))
        return 0
    if len(sys.argv) == 3 and sys.argv[1] == "--capacity-ratios":
        print(capacity_ratios(load_capacity(sys.argv[2])))
        return 0
    if len(sys.argv) == 2 and sys.argv[1] == "--capacity-header":
        print(CAP_TABLE_HEADER)
        return 0
    capacity_only = len(sys.argv) == 3 and sys.argv[1] == "--capacity"
    if len(sys.argv) != 2 and not capacity_only:
        print(__doc__, file=sys.stderr)
        return 2
    out = sys.argv[-1]
    if not os.path.isdir(out):
        print("plot.py: no directory %s" % out, file=sys.stderr)
        return 2
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        plt = None
        print("plot.py: matplotlib not installed: %s "
              "(rerun bench/plot.py %s where it is)" % (
                  "no plot" if capacity_only else "tables only, no PNG",
                  " ".join(sys.argv[1:])))
    if capacity_only:
        runs = load_capacity(out)
        if plt and runs:
            print("plot.py: wrote %s" % capacity_plot(plt, out, runs))
        return 0

    machine = load(out, "machine")
    d = load(out, "driver")
    b = load(out, "bpf_cpu")
    # summary.json first: report.md's header and floors name its run.
    summ = summary.write(out)
    head = "- run id: %s\n- date: %s\n- GPU: %s\n- driver: %s\n- revision: %s\n" % (
        summ["run_id"], summ["date"], summ["gpu"], summ["driver"], summ["revision"])
    if machine:
        head += ("- CPU: %s (%s CPUs), benchmarks on lcore %s\n"
                 "- OS: %s, kernel %s%s\n" % (
                     machine.get("cpu"), machine.get("cpus"), machine.get("lcore"),
                     machine.get("os"), machine.get("kernel"),
                     "\n- QUICK RUN (fewer repetitions): not for the report"
                     if machine.get("quick") else ""))
        if machine.get("settings"):
            head += "- settings: `%s` (the rest as run-all.sh's defaults)\n" % (
                machine["settings"])
    md = ["# Benchmark results\n", head]
    plots = []
    for name, title in (("handoff", "CPU→GPU→CPU handoff latency (bench-handoff)"),
                        ("handoff_gpu_pkts", "Handoff latency, packet data in GPU "
                         "memory (bench-handoff --pkt-mem gpu)")):
        h = load(out, name)
        if h:
            text, cases, single, floor_kind = handoff_section(h, title)
            md.append(text)
            if plt:
                plots.append(handoff_plot(plt, out, name, cases, single, floor_kind))
        else:
            md.append("## %s\n\nNo %s.json (skipped or failed: see %s.log).\n" % (
                title, name, name))
    if d:
        text, ops, live, counts = driver_section(d)
        md.append(text)
        if plt:
            plots.extend(driver_plots(plt, out, ops, live, counts))
    else:
        md.append("## Driver cost\n\nNo driver.json (skipped or failed: see driver.log).\n")
    rc = load(out, "reg_cache")
    if rc:
        md.append(reg_cache_section(rc))
    else:
        md.append("## Registration cache (bench-reg-cache)\n\nNo reg_cache.json "
                  "(skipped or failed: see reg_cache.log).\n")
    if b:
        md.append(bpf_section(b))
        if plt:
            plots.append(bpf_plot(plt, out, b))
    else:
        md.append("## CPU filter baselines\n\nNo bpf_cpu.json.\n")
    k = load(out, "kernel_rate")
    if k:
        md.append(kernel_rate_section(k, b))
        if plt:
            plots.append(kernel_rate_plot(plt, out, k, b))
    else:
        md.append("## GPU kernel rate\n\nNo kernel_rate.json (skipped or failed: see kernel_rate.log).\n")
    # Only where it ran: without a GPU its CPU part (gpugen_cpu.json).
    gen = load(out, "gpugen") or load(out, "gpugen_cpu")
    if gen:
        md.append(gpugen_section(gen))
    gtx = gen_tx_section(summ)
    if gtx:
        md.append(gtx)
    runs = load_capacity(os.path.join(out, CAP_DIR))
    if runs:
        md.append(capacity_section(runs))
    else:
        md.append("## Pipeline capacity (dpdk-gpu-rx, bench/pipeline-capacity.sh)\n\n"
                  "No %s/cap-*.json (not run: BENCH_CAPACITY=0, or see capacity.log).\n" % CAP_DIR)
    capt = load_capture(os.path.join(out, CAPT_DIR))
    if capt:
        md.append(capture_section(capt))
    # bench/flow-export.sh's own table, as that script wrote it.
    try:
        with open(os.path.join(out, summary.FLOW_DIR, "flow-export.md")) as f:
            md.append("## Flow export (bench/flow-export.sh)\n\n" + f.read())
    except OSError:
        pass
    # bench/gpus-scaling.sh's own tables, where it ran (two GPUs or more).
    try:
        with open(os.path.join(out, summary.GPUS_DIR, "scaling.md")) as f:
            md.append("".join("#" + l if l.startswith("#") else l
                              for l in f.read().splitlines(True)))
    except OSError:
        pass
    md.append(summary.floors_section(summ))
    plots = [p for p in plots if p]
    # Tables redone where matplotlib is missing keep the run's own plots.
    shown = plots if plt else sorted(
        os.path.join(out, f) for f in os.listdir(out) if f.endswith(".png"))
    if shown:
        md.append("## Plots\n")
        for p in shown:
            md.append("![%s](%s)\n" % (os.path.basename(p), os.path.basename(p)))
    path = os.path.join(out, "report.md")
    with open(path, "w") as f:
        f.write("\n".join(md))
    print("plot.py: wrote %s, %s%s" % (path, os.path.join(out, "summary.json"),
                                      "".join(", " + p for p in plots)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
