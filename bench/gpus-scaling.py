#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The tables of bench/gpus-scaling.sh: each mode's Mpps (min / median /
max of the repetitions) per GPU count, against the same run's one-GPU
median (goal >= 0.9 x N) and the ceiling mode's median at the same lcores.
Writes OUT_DIR/gpus_scaling.json, prints the markdown.

Usage: gpus-scaling.py OUT_DIR REPS LCORES_PER_GPU "MODES" "COUNTS"
"""
import json
import os
import statistics
import sys

GOAL = 0.9
# The bare loop each mode is read against: same port, lcores and memory.
CEILING = {"host-mapped": "source", "gpu": "gpu-source", "gen-gpu": "gen-none"}
WHAT = {
    "source": "bench-rx-source, net_null 64 B, host memory (bare RX loop)",
    "host-mapped": "dpdk-gpu-rx --mem host-mapped, net_null 64 B",
    "gpu-source": "bench-rx-source --gpus N, net_gpudma 64 B into GPU memory (bare RX loop)",
    "gpu": "dpdk-gpu-rx --mem gpu --split off, net_gpudma 64 B into GPU memory",
    "gen-none": "dpdk-gpu-tx --no-build, net_gpudma 64 B (frames unbuilt)",
    "gen-gpu": "dpdk-gpu-tx --mem gpu, net_gpudma 64 B, built by each queue's GPU",
}


def rate(j):
    if "pps" in j:
        return j["pps"]
    return j["rx_packets"] / (j["elapsed_s"] or 1)


def shares(j):
    """Each GPU's share of the packets, from per_gpu, or None."""
    per = j.get("per_gpu")
    if not per:
        return None
    counts = [g.get("rx_packets", g.get("packets", 0)) for g in per]
    total = sum(counts) or 1
    return [{"gpu": g["gpu"], "share": c / total} for g, c in zip(per, counts)]


def load(out, mode, n, reps):
    runs = []
    for r in range(1, reps + 1):
        p = os.path.join(out, "runs", "%s-g%d.r%d.json" % (mode, n, r))
        try:
            with open(p) as f:
                runs.append(json.load(f))
        except (OSError, ValueError):
            pass
    return runs


def main():
    out, reps, lpg = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    modes, counts = sys.argv[4].split(), [int(c) for c in sys.argv[5].split()]
    res = {"lcores_per_gpu": lpg, "reps": reps, "gpu_counts": counts,
           "goal_of_n_times_one": GOAL, "modes": {}}
    for mode in modes:
        pts = []
        for n in counts:
            runs = load(out, mode, n, reps)
            mpps = sorted(rate(j) / 1e6 for j in runs)
            p = {"gpus": n, "lcores": n * lpg, "mpps": mpps, "runs": len(runs)}
            if mpps:
                med = statistics.median_low(mpps)
                p.update(min=mpps[0], median=med, max=mpps[-1])
                mid = next(j for j in runs if rate(j) / 1e6 == med)
                p["gpu_shares"] = shares(mid)
                if "inflight_mean" in mid:
                    # The generator's median run: where its lcores waited.
                    w = mid.get("lcore_wait") or {}
                    p["tx_wait"] = {"gpu_share": w.get("gpu_share"),
                                    "mbuf_share": w.get("mbuf_share"),
                                    "inflight_mean": mid["inflight_mean"],
                                    "ring_items": mid.get("ring_items")}
            pts.append(p)
        one = next((p.get("median") for p in pts if p["gpus"] == 1), None)
        for p in pts:
            if one and "median" in p:
                p["vs_one_gpu"] = p["median"] / one
                p["of_n_times_one"] = p["median"] / (one * p["gpus"])
        res["modes"][mode] = {"what": WHAT.get(mode, mode),
                              "ceiling": CEILING.get(mode), "points": pts}
    for mode, m in res["modes"].items():
        ceil = res["modes"].get(m["ceiling"]) if m["ceiling"] else None
        for p in m["points"]:
            c = next((q for q in ceil["points"] if q["gpus"] == p["gpus"]),
                     None) if ceil else None
            if c and "median" in c and "median" in p:
                p["ceiling_median"] = c["median"]
                p["of_ceiling"] = p["median"] / c["median"]
    with open(os.path.join(out, "gpus_scaling.json"), "w") as f:
        json.dump(res, f, indent=2)
        f.write("\n")

    print("# Scaling over GPUs (bench/gpus-scaling.sh)\n")
    print("%d lcores a GPU (N GPUs: N x %d RX or TX lcores, queue q on GPU "
          "q mod N); min / median / max of %d repetitions, alternated; "
          "\"of N x one\" is the median over N times the one-GPU median of "
          "this run (goal >= %.1f); the ceiling is the bare loop's median "
          "at the same lcores in this run.\n" % (lpg, lpg, reps, GOAL))
    for mode, m in res["modes"].items():
        print("## %s: %s\n" % (mode, m["what"]))
        print("| GPUs | lcores | Mpps min / median / max | x one GPU | of N x one "
              "| ceiling (%s) Mpps | of ceiling | GPUs' shares |" % (m["ceiling"] or "none"))
        print("| --- | --- | --- | --- | --- | --- | --- | --- |")
        for p in m["points"]:
            if "median" not in p:
                print("| %d | %d | failed (%d of %d runs) | | | | | |" % (
                    p["gpus"], p["lcores"], p["runs"], reps))
                continue
            sh = p.get("gpu_shares")
            print("| %d | %d | %.2f / %.2f / %.2f%s | %s | %s | %s | %s | %s |" % (
                p["gpus"], p["lcores"], p["min"], p["median"], p["max"],
                "" if p["runs"] == reps else " (%d of %d runs)" % (p["runs"], reps),
                "%.2f" % p["vs_one_gpu"] if "vs_one_gpu" in p else "–",
                "%.2f" % p["of_n_times_one"] if "of_n_times_one" in p else "–",
                "%.2f" % p["ceiling_median"] if "ceiling_median" in p else "–",
                "%.2f" % p["of_ceiling"] if "of_ceiling" in p else "–",
                ", ".join("GPU %d %.0f %%" % (s["gpu"], 100 * s["share"])
                          for s in sh) if sh else "–"))
        waits = [(p["gpus"], p["tx_wait"]) for p in m["points"]
                 if p.get("tx_wait")]
        if waits:
            print("\nTX lcores of the median runs: " + "; ".join(
                "%d GPU%s: %.0f %% of their time waiting for the GPU, "
                "%.0f %% for mbufs, %.1f of %s bursts in flight at a post" % (
                    n, "s" if n > 1 else "", 100 * (w["gpu_share"] or 0),
                    100 * (w["mbuf_share"] or 0), w["inflight_mean"],
                    w["ring_items"]) for n, w in waits) + ".")
        print()


if __name__ == "__main__":
    main()
