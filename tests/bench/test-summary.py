#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The report step's summary.json against check-summary.py's schema.

Usage: test-summary.py SOURCE_ROOT

1. bench/plot.py on a copy of fixture/ (a few raw files of a real run,
   doc/perf/run-283115e, cut down): summary.json valid, its raw files in
   the run's directory, report.md naming the same run, the ratios the
   issue asks for present.
2. A pipeline faster than its bare loop is marked "baseline is not a
   ceiling", in summary.json and in report.md; a tmpfs write probe
   becomes the capture's floor; the floor + one dependent host load
   becomes the host-memory handoffs' floor, and the unbuilt-frame rate
   the generator builds'.
   Alternating repetitions (reps/NAME.rN.json, as capture-throughput.sh
   and flow-export.sh leave them): the median is the value, min / median /
   max / reps on the figure and its floor, the ratio median / median; the
   flow exporter's capacity search gives a figure with no floor.
3. The checker rejects broken-summary.json and each fault put into a
   valid summary one at a time: the test can fail.
4. doc/perf/summary.json, where it is committed (after a full GPU run).
"""

import copy
import json
import os
import shutil
import subprocess
import sys
import tempfile

failures = []


def expect(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL: " + what)


def run(argv):
    # No __pycache__ left in the source tree by bench/'s modules.
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    p = subprocess.run([sys.executable] + argv, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, universal_newlines=True,
                       env=env)
    return p.returncode, p.stdout


def figure(s, fid):
    return next((f for f in s["figures"] if f["figure"] == fid), None)


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    top = sys.argv[1]
    here = os.path.join(top, "tests", "bench")
    checker = os.path.join(here, "check-summary.py")
    sys.dont_write_bytecode = True
    sys.path.insert(0, here)
    check = __import__("check-summary").check
    tmp = tempfile.mkdtemp(prefix="bench-summary-")
    try:
        out = os.path.join(tmp, "out")
        shutil.copytree(os.path.join(here, "fixture"), out)
        # 1. The report step on the fixture.
        rc, text = run([os.path.join(top, "bench", "plot.py"), out])
        expect(rc == 0, "plot.py on the fixture: exit %d\n%s" % (rc, text))
        path = os.path.join(out, "summary.json")
        rc, text = run([checker, path, "--out", out])
        expect(rc == 0, "the fixture's summary is invalid:\n" + text)
        with open(path) as f:
            s = json.load(f)
        with open(os.path.join(out, "report.md")) as f:
            report = f.read()
        expect("- run id: %s\n" % s["run_id"] in report,
               "report.md's header does not name run %s" % s["run_id"])
        for k in ("gpu", "driver", "revision", "date"):
            expect(s[k] and str(s[k]) in report, "report.md lacks the %s" % k)
        pairs = (("capacity.host-mapped.64B.1lcore.mpps", "capacity.source.64B.1lcore.mpps"),
                 ("handoff.host_pkts.64B.burst32.median.us",
                  "handoff.host_pkts.floor_host.median.us"),
                 ("kernel_rate.gpu.64B.1000flows.empty.mpps",
                  "kernel_rate.gpu.64B.1000flows.empty.gather_floor.mpps"),
                 ("capture.host-mapped.mix.1lcore.all.mpps",
                  "capture.host-mapped.mix.1lcore.off.mpps"),
                 ("flow_export.table.cpu.1000000flows.file.mpps",
                  "flow_export.table.cpu.1000000flows.off.mpps"),
                 ("flow_export.pipe.cpu.1000000flows.file.mpps",
                  "flow_export.pipe.cpu.1000000flows.off.mpps"),
                 ("driver.mem_alloc.rte.median.us", "driver.mem_alloc.raw.median.us"))
        for fid, base in pairs:
            f = figure(s, fid)
            expect(f is not None and f["baseline"] is not None and
                   f["baseline"]["name"] == base,
                   "%s has no baseline %s" % (fid, base))
            if f is not None and f["baseline"] is not None:
                expect("| %s |" % fid in report, "report.md has no floor row for %s" % fid)
        # Floors the fixture has no run of: no baseline, never an old one.
        for fid in ("capacity.gpu.64B.1lcore.mpps", "capacity.gpu-split.64B.1lcore.mpps"):
            f = figure(s, fid)
            expect(f is not None and f["baseline"] is None and f["ratio"] is None,
                   "%s has a baseline the run did not measure" % fid)
        f = figure(s, "capacity.gpu-split.64B.1lcore.gbps")
        expect(f is not None and f["moved"].startswith("headers only"),
               "gpu-split at 64 B does not say only headers moved")

        # 2. A mode beating its bare loop: the loop is not a ceiling.
        with open(os.path.join(out, "capacity-burst128", "cap-gpu-64-1.json")) as fh:
            j = json.load(fh)
        j["rx_packets"] = int(j["rx_packets"] * 0.9)
        with open(os.path.join(out, "capacity-burst128", "cap-gpu-source-64-1.json"), "w") as fh:
            json.dump(j, fh)
        # And the capture sweep's floors: one writer into its directory,
        # and four writers, each into its own file, for a file per queue
        # on four lcores.
        with open(os.path.join(out, "tmpfs_probe.json"), "w") as fh:
            json.dump({"bench": "tmpfs_probe", "dir": "/dev/shm", "fstype": "tmpfs",
                       "write_Bps_median": 4e9,
                       "threads": {"1": {"write_Bps_median": 4e9},
                                   "4": {"write_Bps_median": 9e9}}}, fh)
        shutil.copy(os.path.join(out, "capture", "capt-host-mapped-mix-1-all.json"),
                    os.path.join(out, "capture", "capt-host-mapped-mix-4-allq.json"))
        rc, text = run([os.path.join(top, "bench", "plot.py"), out])
        expect(rc == 0, "plot.py with a gpu-source run: exit %d\n%s" % (rc, text))
        with open(path) as fh:
            s = json.load(fh)
        with open(os.path.join(out, "report.md")) as fh:
            report = fh.read()
        f = figure(s, "capacity.gpu.64B.1lcore.mpps")
        expect(f is not None and f["ratio"] is not None and f["ratio"] > 1 and
               f.get("note") == "baseline is not a ceiling",
               "gpu over a slower gpu-source is not marked: %r" % f)
        f = figure(s, "capture.host-mapped.mix.1lcore.all.captured.gbytes")
        expect(f is not None and f["baseline"] is not None and
               f["baseline"]["name"] == "capture.write_probe.gbytes" and
               f["baseline"]["value"] == 4.0, "capture has no write-probe floor: %r" % f)
        f = figure(s, "capture.host-mapped.mix.4lcore.allq.captured.gbytes")
        expect(f is not None and f["baseline"] is not None and
               f["baseline"]["name"] == "capture.write_probe.4threads.gbytes" and
               f["baseline"]["value"] == 9.0,
               "a file per queue on 4 lcores is not against 4 writers: %r" % f)
        expect("(baseline is not a ceiling)" in report,
               "report.md's ratio table does not say the baseline is not a ceiling")
        expect(check(s, out) == [], "the summary with gpu-source is invalid: %s" % check(s, out))

        # 2b. Three alternating repetitions of A and B: the plain names
        # are the median ones (bench_keep_median), the figures the medians.
        def reps(sub, name, scales, key):
            d = os.path.join(out, sub)
            os.makedirs(os.path.join(d, "reps"), exist_ok=True)
            with open(os.path.join(d, name + ".json")) as fh:
                j = json.load(fh)
            for r, x in enumerate(scales, 1):
                t = dict(j, **{k: j[k] * x for k in key})
                with open(os.path.join(d, "reps", "%s.r%d.json" % (name, r)), "w") as fh:
                    json.dump(t, fh)
        reps("capture", "capt-host-mapped-mix-1-off", (1.0, 0.8, 1.1), ["rx_packets"])
        reps("capture", "capt-host-mapped-mix-1-all", (0.9, 1.0, 0.5), ["rx_packets"])
        reps("flow-export", "table-cpu-1000000-off", (1.0, 1.2, 0.9), ["mpps"])
        reps("flow-export", "table-cpu-1000000-file", (1.0, 0.7, 0.8),
             ["mpps", "records_per_s"])
        with open(os.path.join(out, "flow-export", "capacity-cpu-1000000-file.json"), "w") as fh:
            json.dump({"flows": 1000000, "export": "file", "steps": [{}, {}],
                       "capacity": {"churn": 4000000, "records_per_s": 3.9e6,
                                    "started_per_s": 4.1e6, "mpps": 20.0},
                       "bound": "at 8e+06 new flows/s: the export ring was full"}, fh)
        rc, text = run([os.path.join(top, "bench", "plot.py"), out])
        expect(rc == 0, "plot.py with repetitions: exit %d\n%s" % (rc, text))
        with open(path) as fh:
            s = json.load(fh)
        expect(check(s, out) == [], "the summary with repetitions is invalid: %s" %
               check(s, out))
        for fid, base in (("capture.host-mapped.mix.1lcore.all.mpps",
                           "capture.host-mapped.mix.1lcore.off.mpps"),
                          ("flow_export.table.cpu.1000000flows.file.mpps",
                           "flow_export.table.cpu.1000000flows.off.mpps")):
            f = figure(s, fid)
            one = figure(s, base)
            ok = f is not None and one is not None and f.get("reps") == 3 and \
                f["baseline"].get("reps") == 3 and one.get("reps") == 3 and \
                f["min"] < f["median"] < f["max"] and f["value"] == f["median"] and \
                f["baseline"]["value"] == one["median"] and \
                abs(f["ratio"] - f["median"] / one["median"]) < 1e-12
            expect(ok, "%s is not median / median of 3 repetitions: %r" % (fid, f))
        f = figure(s, "flow_export.table.cpu.1000000flows.file.records_per_s")
        expect(f is not None and f.get("reps") == 3 and f["value"] == f["median"],
               "records/s has no spread of its repetitions: %r" % f)
        f = figure(s, "flow_export.capacity.cpu.1000000flows.file.records_per_s")
        expect(f is not None and f["value"] == 3.9e6 and f["baseline"] is None and
               "export ring was full" in f.get("note", ""),
               "the exporter's capacity is missing or has a floor: %r" % f)

        # 2c. The handoff's and the generator's same-run floors: with the
        # floor + one dependent host load in handoff.json, the host-memory
        # packets' handoffs are taken against it, the flag floor kept as a
        # figure; the generator's builds against its unbuilt-frame rows.
        hp = os.path.join(out, "handoff.json")
        with open(hp) as fh:
            h = json.load(fh)
        flag = next(r for r in h["results"] if r.get("kind") == "floor_host")
        load = copy.deepcopy(flag)
        load.update(kind="floor_host_load", flag_memory="host")
        for k in ("median_ns", "p99_ns"):
            load["latency"][k] = flag["latency"][k] + 1000
        h["results"].append(load)
        with open(hp, "w") as fh:
            json.dump(h, fh)
        gen = [{"case": "v0", "size": 64, "mem": "gpu", "what": "IPv4/UDP",
                "gpu_pps": 1.5e9, "gpu_pps_p99": 1.4e9, "gpu_gbps": 1000.0,
                "cpu_pps": 30e6, "cpu_gbps": 20.0, "checked": 1},
               {"case": "v0", "size": 64, "mem": "unbuilt", "pps": 120e6,
                "cpu_pps": 30e6, "cpu_gbps": 20.0}]
        with open(os.path.join(out, "gpugen.json"), "w") as fh:
            json.dump({"bench": "gpugen", "config": {}, "results": gen,
                       "status": "ok"}, fh)
        rc, text = run([os.path.join(top, "bench", "plot.py"), out])
        expect(rc == 0, "plot.py with the floor + load: exit %d\n%s" % (rc, text))
        with open(path) as fh:
            s = json.load(fh)
        for fid, base, value in (
                ("handoff.host_pkts.64B.burst32.median.us",
                 "handoff.host_pkts.floor_host_load.median.us",
                 load["latency"]["median_ns"] / 1e3),
                ("handoff.host_pkts.64B.burst32.p99.us",
                 "handoff.host_pkts.floor_host_load.p99.us",
                 load["latency"]["p99_ns"] / 1e3),
                ("gpugen.cpu.64B.v0.mpps", "gpugen.unbuilt.64B.v0.mpps", 120.0),
                ("gpugen.gpu.64B.v0.mpps", "gpugen.unbuilt.64B.v0.mpps", 120.0)):
            f = figure(s, fid)
            expect(f is not None and f["baseline"] is not None and
                   f["baseline"]["name"] == base and
                   abs(f["baseline"]["value"] - value) < 1e-9 and
                   figure(s, base) is not None,
                   "%s is not taken against %s = %s: %r" % (fid, base, value, f))
        f = figure(s, "handoff.host_pkts.64B.burst32.median.us")
        expect(f is not None and "dependent host load" in (f["goal"] or ""),
               "the handoff's goal does not say which floor: %r" % f)
        expect(figure(s, "handoff.host_pkts.floor_host.median.us") is not None,
               "the flag floor is no longer a figure")
        f = figure(s, "gpugen.gpu.64B.v0.mpps")
        expect(f is not None and f.get("note", "").startswith("GPU build"),
               "the GPU build over the lcore's ceiling is not explained: %r" % f)
        expect(check(s, out) == [], "the summary with the floor + load is "
               "invalid: %s" % check(s, out))

        # 2d. gen-tx-rate.sh's points: a GPU build against the unbuilt
        # frames of the same port, frees, size and queues, its note saying
        # where its TX lcores waited (dpdk-gpu-tx's JSON); none on the
        # unbuilt point, which has no ring.
        gd = os.path.join(out, "gen-tx-rate")
        os.makedirs(gd)
        with open(os.path.join(gd, "txrate.txt"), "w") as fh:
            fh.write("txrate mem=cpu build=none port=gpudma free=bulk "
                     "size=64 queues=2 mpps=300.0\n"
                     "txrate mem=gpu build=gpu port=gpudma free=bulk "
                     "size=64 queues=2 mpps=150.0\n")
        for mem, b, extra in (("cpu", "none", {}),
                              ("gpu", "gpu", {"ring_items": 32,
                                              "inflight_mean": 20.5})):
            j = {"pps": 1, "lcore_wait": {"gpu_share": 0.25,
                                          "mbuf_share": 0.0}}
            j.update(extra)
            with open(os.path.join(gd, "txrate-%s-%s-gpudma-bulk-64-q2.json"
                                   % (mem, b)), "w") as fh:
                json.dump(j, fh)
        rc, text = run([os.path.join(top, "bench", "plot.py"), out])
        expect(rc == 0, "plot.py with gen-tx-rate: exit %d\n%s" % (rc, text))
        with open(path) as fh:
            s = json.load(fh)
        f = figure(s, "gen_tx.gpu.gpu.gpudma.bulk.64B.q2.mpps")
        expect(f is not None and f["baseline"] is not None and
               abs(f["ratio"] - 0.5) < 1e-9 and "waited 25 % of their time "
               "for the GPU, 0 % for mbufs; 20.5 of 32 bursts" in
               f.get("note", ""),
               "the GPU build's TX waits are not in its note: %r" % f)
        f = figure(s, "gen_tx.unbuilt.none.gpudma.bulk.64B.q2.mpps")
        expect(f is not None and "note" not in f,
               "the unbuilt point got a wait note: %r" % f)
        expect(check(s, out) == [], "the summary with gen-tx-rate is "
               "invalid: %s" % check(s, out))

        # 3. The checker rejects what it must.
        rc, text = run([checker, os.path.join(here, "broken-summary.json")])
        expect(rc == 1, "check-summary accepted broken-summary.json (exit %d)" % rc)
        i = next(n for n, f in enumerate(s["figures"]) if f["baseline"])
        b = next(n for n, f in enumerate(s["figures"]) if f["unit"] == "Gbit/s")
        m = next(n for n, f in enumerate(s["figures"])
                 if "reps" in f and f["baseline"] and "reps" in f["baseline"])
        faults = {
            "same_run false": lambda t: t["figures"][i].update(same_run=False),
            "ratio off by 1e-6": lambda t: t["figures"][i].update(
                ratio=t["figures"][i]["ratio"] * (1 + 1e-6)),
            "ratio without baseline": lambda t: t["figures"][i].update(baseline=None),
            "baseline without ratio": lambda t: t["figures"][i].update(ratio=None),
            "unknown unit": lambda t: t["figures"][i].update(unit="Mbps"),
            "absolute raw": lambda t: t["figures"][i].update(raw="/tmp/x.json"),
            "raw outside the run": lambda t: t["figures"][i].update(raw="../x.json"),
            "missing raw file": lambda t: t["figures"][i].update(raw="nothere.json"),
            "no moved on a byte rate": lambda t: t["figures"][b].update(moved=None),
            "moved on a packet rate": lambda t: t["figures"][i].update(moved="somewhere"),
            "value NaN": lambda t: t["figures"][i].update(value=float("nan")),
            "no goal key": lambda t: t["figures"][i].pop("goal"),
            "figure twice": lambda t: t["figures"].append(copy.deepcopy(t["figures"][i])),
            "no run_id": lambda t: t.pop("run_id"),
            "no figures": lambda t: t.update(figures=[]),
            "min above the median": lambda t: t["figures"][m].update(
                min=t["figures"][m]["median"] * 2),
            "two repetitions": lambda t: t["figures"][m].update(reps=2),
            "median without reps": lambda t: t["figures"][m].pop("reps"),
            "value not the median": lambda t: t["figures"][m].update(
                median=t["figures"][m]["median"] * 1.01),
            "baseline max under its median": lambda t: t["figures"][m]["baseline"].update(
                max=t["figures"][m]["baseline"]["median"] / 2),
        }
        for what, hurt in faults.items():
            t = copy.deepcopy(s)
            hurt(t)
            expect(check(t, out) != [], "check-summary accepted: " + what)

        # 4. The committed summary of the last full GPU run.
        perf = os.path.join(top, "doc", "perf")
        committed = os.path.join(perf, "summary.json")
        if os.path.exists(committed):
            rc, text = run([checker, committed, "--out", perf])
            print(text, end="")
            expect(rc == 0, "doc/perf/summary.json is invalid")
        else:
            print("doc/perf/summary.json: not committed yet (it comes with the "
                  "next full GPU run): that half skipped")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if failures:
        print("%d failure(s)" % len(failures))
        return 1
    print("bench summary: fixture, markers, %d rejected faults: ok" % len(faults))
    return 0


if __name__ == "__main__":
    sys.exit(main())
