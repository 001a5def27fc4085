#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Flow expiry and IPFIX export at scale (issue 14), side by side in one
# run, into OUT_DIR/flow-export.md:
# 1. the flow table alone (bench-flow-export): 1 M and 10 M concurrent
#    flows, 1 M new flows a second (the oldest going idle as many, 1 s
#    idle timeout), packets at the GPU's (or the CPU threads') full rate:
#    Mpps with the export off, to an IPFIX file and to nfcapd over UDP;
#    records exported a second; the packet rate's cost of exporting.
# 2. the pipeline (dpdk-gpu-rx): net_pcap replaying 1 M flows, a packet
#    each, without end (infinite_rx), --ts rx, export off and to a file
#    with a 1 s active timeout (every live flow exported every second):
#    received Mpps and records a second. Pipeline variants
#    (BENCH_FLOW_PIPE_EXPORTS, default "off file"): file-a0 (the file,
#    no active timeout: no end in the packet path), file-pb (the file,
#    active 1 s, --launch-per-burst: no turn, GPU only); their lines in
#    the output and OUT_DIR/pipe-*.log, the table holds off and file.
# 3. the exporter's capacity (the table alone, 1 M and 10 M flows): the churn
#    doubled, then bisected between the last rate that lost nothing and
#    the first that did, until the export ring fills (ends put off), a
#    record is lost, the table overflows or fewer records than the churn
#    come out; the highest churn that lost nothing, per target, in
#    OUT_DIR/capacity-<mode>-<flows>-<export>.json, each step's JSON and
#    log in OUT_DIR/capacity/. Bounded by a time budget, a churn ceiling
#    and the memory of a table that holds every flow of a step.
# UDP runs are paced at twice their churn (--ipfix-rate; the writer's
# default, 100 k records/s, would be the bound otherwise). What nfcapd
# received is not checked a run: its totals are in OUT_DIR/nfcapd.log.
# The goal: at least 1 M records/s with the packet rate within 10 % of
# export off.
# With and without the export is a comparison, so 1 and 2 alternate: every
# export of a size (or of the pipeline) once, then again, BENCH_FLOW_REPS
# times; every repetition in OUT_DIR/reps/<name>.r<N>.{json,log}, the one
# of median Mpps copied to OUT_DIR/<name>.{json,log} (the table's row;
# bench/summary.py takes min / median / max over the repetitions).
#
# Usage: bench/flow-export.sh OUT_DIR [BUILD_DIR]
# Env: BENCH_FLOW_MODE gpu|cpu (default: gpu where nvidia-smi sees one)
#      BENCH_FLOW_SIZES (default "1000000 10000000"), BENCH_FLOW_CHURN
#      (1000000), BENCH_FLOW_SECONDS (5), BENCH_FLOW_THREADS (cpu: nproc
#      - 1), BENCH_FLOW_EXPORTS ("off file udp"; noscan: the file
#      without expiry scans, bench-flow-export --no-scan, the export's
#      per-packet cost alone), BENCH_FLOW_PIPE_FLOWS
#      (1000000; 0: no pipeline runs), BENCH_FLOW_PIPE_LCORES (the
#      pipeline's RX lcore counts, default "1"), BENCH_FLOW_PIPE_MEM ("host-mapped"
#      on the GPU), BENCH_FLOW_PIPE_EXPORTS ("off file"), BENCH_EAL_EXTRA,
#      BENCH_FLOW_REPS (repetitions of 1 and 2, alternating; default 3),
#      BENCH_FLOW_CAP (1; 0: no capacity search), BENCH_FLOW_CAP_FLOWS (the
#      table sizes searched: BENCH_FLOW_SIZES), BENCH_FLOW_CAP_START (the churn, first
#      step), BENCH_FLOW_CAP_MAX (2^30, lowered to what the table's memory
#      allows), BENCH_FLOW_CAP_SECONDS (4 a step), BENCH_FLOW_CAP_BUDGET
#      (160 s in all, shared by the targets and sizes), BENCH_FLOW_CAP_BISECT (4
#      steps at most), BENCH_FLOW_CAP_DIR (the file target's directory:
#      OUT_DIR), BENCH_FLOW_ENCODERS (the IPFIX writer's encoder threads:
#      bench-flow-export's --encoders, dpdk-gpu-rx's --ipfix-encoders;
#      default 4).
# Exit: 0; 1 a run failed (its row says so); 2 usage or missing build.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: $0 OUT_DIR [BUILD_DIR]}
build=${2:-$top/build}
bench=$build/bench/bench-flow-export
app=$build/examples/gpu_rx/app/dpdk-gpu-rx
gen=$build/tests/gpu_rx/e2e/gpurx-e2e-genflows
for f in "$bench" "$app" "$gen"; do
	[ -x "$f" ] || { echo "no $f: build first" >&2; exit 2; }
done
mkdir -p "$out"
mode=${BENCH_FLOW_MODE:-}
if [ -z "$mode" ]; then
	mode=cpu
	nvidia-smi -L > /dev/null 2>&1 && mode=gpu
fi
secs=${BENCH_FLOW_SECONDS:-5}
churn=${BENCH_FLOW_CHURN:-1000000}
threads=${BENCH_FLOW_THREADS:-$(( $(nproc) > 1 ? $(nproc) - 1 : 1 ))}
pipe_flows=${BENCH_FLOW_PIPE_FLOWS:-1000000}
sizes=${BENCH_FLOW_SIZES:-1000000 10000000}
exports=${BENCH_FLOW_EXPORTS:-off file udp}
read -r -a extra <<< "${BENCH_EAL_EXTRA:-}"
# shellcheck source=bench/bench-lib.sh
. "$top/bench/bench-lib.sh"
bench_reps BENCH_FLOW_REPS 3 || exit 2
reps=$bench_reps
mkdir -p "$out/reps"
# The writer's encoder threads, in every export run (the capacity search
# too): the exporter's capacity is theirs.
encoders=${BENCH_FLOW_ENCODERS:-4}
margs=(--cpu --threads "$threads" --encoders "$encoders")
[ "$mode" = gpu ] && margs=(--encoders "$encoders")
failed=0

# nfcapd on the loopback for the UDP runs, where installed.
nfpid=""
cport=$((30000 + $$ % 20000))
if [[ " $exports " == *" udp "* ]] &&
		command -v nfcapd > /dev/null; then
	mkdir -p "$out/nfcapd"
	nfcapd -w "$out/nfcapd" -b 127.0.0.1 -p $cport -t 3600 -B 8388608 \
		> "$out/nfcapd.log" 2>&1 &
	nfpid=$!
	trap 'kill $nfpid 2> /dev/null' EXIT
	sleep 1
fi

{
	echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
	echo "revision: $(bench_revision "$build" "$top")"
	echo "cpu: $(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2- | sed 's/^ *//') ($(nproc) CPUs)"
	echo "gpu: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader -i 0 2>/dev/null || echo none)"
	echo "settings: mode $mode, ${secs} s per run, churn $churn/s, idle 1 s, $reps repetition(s) alternating"
} > "$out/machine.txt"

# The median repetition of each of the runs NAME... under its plain name
# (none where every repetition failed: its row is missing).
keep_medians() {
	local rate=$1 name

	shift
	for name in "$@"; do
		rm -f "$out/$name.json" "$out/$name.log"
		bench_keep_median "$out" "$name" "$reps" "$rate" || failed=1
	done
}

# bench-flow-export's --export for EXP into target, FILE for a file; 1
# where EXP has no target here (udp without nfcapd).
export_target() {
	case $1 in
	off) target=off ;;
	file|noscan) target=$2 ;;
	udp)
		[ -n "$nfpid" ] || return 1
		target=udp://127.0.0.1:$cport ;;
	esac
}

# The writer paces UDP at 100 k records/s unless told: a UDP run at the
# churn C is paced at 2 C, so that it measures the exporter, not the
# pacing (the capacity search does the same a step).
rate_args() {
	rate_args=()
	[ "$1" = udp ] && rate_args=(--ipfix-rate $((2 * churn)))
}

# 1. The table alone.
[ -n "$nfpid" ] || [[ " $exports " != *" udp "* ]] ||
	echo "no nfcapd: UDP runs skipped"
for flows in $sizes; do
	names=()
	for ((r = 1; r <= reps; r++)); do
		for exp in $exports; do
			export_target "$exp" "$out/table-$flows.ipfix" || continue
			name=table-$mode-$flows-$exp
			[ "$r" -eq 1 ] && names+=("$name")
			rn=$out/reps/$name.r$r
			rm -f "$rn.json"
			rate_args "$exp"
			[ "$exp" = noscan ] && rate_args+=(--no-scan)
			timeout $((${secs%.*} + 300)) "$bench" "${margs[@]}" --flows "$flows" \
				--churn "$churn" --seconds "$secs" --export "$target" \
				"${rate_args[@]}" \
				--json "$rn.json" > "$rn.log" 2>&1
			rc=$?
			cat "$rn.log"
			[ "$rc" -eq 0 ] || { echo "$name, repetition $r: exit $rc"; failed=1; }
			rm -f "$out/table-$flows.ipfix"
		done
	done
	keep_medians mpps "${names[@]}"
done

# 2. The pipeline: every flow live, exported each second. On L RX lcores
# (BENCH_FLOW_PIPE_LCORES) each queue replays its own L-th of the flows, as
# RSS would spread them; the runs' kind is pipe on one lcore, pipeL on L.
if [ "$pipe_flows" -gt 0 ]; then
	slots=1024
	while [ $slots -lt $((pipe_flows * 2)) ]; do slots=$((slots * 2)); done
	pargs=(--cpu)
	[ "$mode" = gpu ] && pargs=(--mem "${BENCH_FLOW_PIPE_MEM:-host-mapped}")
	for lc in ${BENCH_FLOW_PIPE_LCORES:-1}; do
	kind=pipe
	[ "$lc" -gt 1 ] && kind=pipe$lc
	per=$((pipe_flows / lc))
	vdev=net_pcap0,infinite_rx=1
	for ((q = 0; q < lc; q++)); do
		"$gen" --many "$per" "$out/pipe-q$q.pcap" $((q * per)) || exit 2
		vdev+=",rx_pcap=$out/pipe-q$q.pcap"
	done
	# The replay keeps every packet in an mbuf of the pool.
	mbufs=$((per * lc + 32768 * lc))
	mb=$(( (mbufs * 2400 + slots * 160 * 2) / 1048576 + 2048 ))
	bench_eal_mem "$mb" "$mb"
	names=()
	for ((r = 1; r <= reps; r++)); do
		for exp in ${BENCH_FLOW_PIPE_EXPORTS:-off file}; do
			name=$kind-$mode-$pipe_flows-$exp
			rn=$out/reps/$name.r$r
			rm -f "$rn.json"
			eargs=()
			case $exp in
			off) ;;
			file) eargs=(--ipfix-file "$out/pipe.ipfix" --flow-active 1) ;;
			file-a0) eargs=(--ipfix-file "$out/pipe.ipfix" --flow-active 0) ;;
			file-pb)
				[ "$mode" = gpu ] || continue
				eargs=(--ipfix-file "$out/pipe.ipfix" --flow-active 1
					--launch-per-burst) ;;
			*) echo "unknown pipeline export $exp" >&2; exit 2 ;;
			esac
			[ "$exp" = off ] || eargs+=(--ipfix-encoders "$encoders")
			timeout $((${secs%.*} + 300)) "$app" "${bench_mem[@]}" \
				--file-prefix "$name" -l 0-"$lc" "${extra[@]}" \
				--vdev "$vdev" -- \
				"${pargs[@]}" --queues "$lc" --quiet --mbufs "$mbufs" \
				--flows $slots --ts rx --duration "$secs" \
				--json "$rn.json" "${eargs[@]}" > "$rn.log" 2>&1
			rc=$?
			grep -E "^(received|elapsed|gpu items|flow export)" "$rn.log" |
				sed "s/^/$exp, $lc RX lcore(s): /"
			[ "$rc" -eq 0 ] || { echo "$name, repetition $r: exit $rc (see $rn.log)"; failed=1; }
			rm -f "$out/pipe.ipfix"
		done
	done
	for exp in ${BENCH_FLOW_PIPE_EXPORTS:-off file}; do
		case $exp in file-pb) [ "$mode" = gpu ] || continue ;; esac
		names+=("$kind-$mode-$pipe_flows-$exp")
	done
	keep_medians rx "${names[@]}"
	rm -f "$out"/pipe-q*.pcap
	done
fi

# 3. The exporter's capacity, per target: the churn raised until something
# is lost or put off. A step is clean when the run ended well, the export
# ring was never full (no end put off), no record was lost, the table did
# not overflow and at least 90 % of the churn came out as records a second
# (the export keeping up). The table holds every flow of a step (as in 1),
# so the table's memory caps the churn: half the free memory (the table
# rounds up to a power of two) of the GPU, or of the host with --cpu.
if [ "${BENCH_FLOW_CAP:-1}" = 1 ]; then
	# Every table size of 1 by default: issue 35 asks the capacity at 1 M
	# and at 10 M concurrent flows.
	cap_sizes=${BENCH_FLOW_CAP_FLOWS:-$sizes}
	cap_dir=${BENCH_FLOW_CAP_DIR:-$out}
	mem_free=$(awk '/^MemAvailable:/ { print $2 * 1024 }' /proc/meminfo 2>/dev/null)
	if [ "$mode" = gpu ]; then
		mem_free=$(nvidia-smi --query-gpu=memory.free --format=csv,noheader,nounits -i 0 2>/dev/null |
			awk '{ print $1 * 1048576 }')
	fi
	mkdir -p "$out/capacity"
	ntargets=0
	# Without scans nothing ends by time: no capacity to search.
	for exp in $exports; do
		[ "$exp" != off ] && [ "$exp" != noscan ] &&
			export_target "$exp" - && ntargets=$((ntargets + 1))
	done
	# The budget is shared by every search: targets times sizes.
	read -r -a cap_list <<< "$cap_sizes"
	ntargets=$((ntargets * ${#cap_list[@]}))
	for cap_flows in "${cap_list[@]}"; do
	for exp in $exports; do
		[ "$exp" != off ] && [ "$exp" != noscan ] &&
			export_target "$exp" "$cap_dir/capacity-$cap_flows.ipfix" || continue
		name=capacity-$mode-$cap_flows-$exp
		python3 - "$out" "$name" "$target" "$cap_flows" \
			"${BENCH_FLOW_CAP_START:-$churn}" "${BENCH_FLOW_CAP_MAX:-1073741824}" \
			"${mem_free:-0}" "${BENCH_FLOW_CAP_SECONDS:-4}" \
			"$(awk -v b="${BENCH_FLOW_CAP_BUDGET:-160}" -v n=$ntargets 'BEGIN { print b / n }')" \
			"${BENCH_FLOW_CAP_BISECT:-4}" \
			"$bench" "${margs[@]}" <<'PY' || failed=1
import json, os, subprocess, sys, time

(out, name, target, flows, start, cmax, mem, secs, budget, bisect) = sys.argv[1:11]
cmd0 = sys.argv[11:]
flows, start, cmax, bisect = int(flows), int(start), int(cmax), int(bisect)
mem, secs, budget = float(mem), float(secs), float(budget)
ENTRY = 160		# bytes a flow slot (flow_layout.h)
# bench-flow-export's table: (flows + churn * seconds) * 1.25 slots,
# rounded up to a power of two.
mem_max = int((mem / 2 / ENTRY / 1.25 - flows) / secs) if mem > 0 else cmax
ceiling, by_mem = (mem_max, True) if 0 < mem_max < cmax else (cmax, False)
t0 = time.monotonic()
steps = []


def judge(rc, j, log):
    if rc != 0 or j is None:
        try:
            last = [l for l in open(log).read().splitlines() if l.strip()][-1:]
        except OSError:
            last = []
        return "the run failed (exit %d%s)" % (rc, ": " + last[0] if last else "")
    if j.get("ring_full"):
        return "the export ring was full: %d flow ends put off" % j["ring_full"]
    if j.get("lost_records"):
        return "%d records lost on the way out" % j["lost_records"]
    if j.get("overflow_packets"):
        return "the table overflowed (%d packets): flows not ended in time" % \
            j["overflow_packets"]
    if (j.get("records_per_s") or 0) < 0.9 * j["churn"]:
        return "%.3g records/s came out, under 90 %% of the churn: the export " \
            "fell behind" % (j.get("records_per_s") or 0)
    return None


def run(churn):
    stem = os.path.join(out, "capacity", "%s.step%d" % (name, len(steps) + 1))
    t = time.monotonic()
    for p in (stem + ".json",):
        if os.path.exists(p):
            os.remove(p)
    with open(stem + ".log", "w") as log:
        try:
            pace = ["--ipfix-rate", str(2 * churn)] if target.startswith("udp://") else []
            rc = subprocess.run(cmd0 + ["--flows", str(flows), "--churn", str(churn),
                                        "--seconds", str(secs), "--export", target,
                                        "--json", stem + ".json"] + pace,
                                stdout=log, stderr=subprocess.STDOUT,
                                timeout=secs + 300).returncode
        except subprocess.TimeoutExpired:
            rc = 124
    if "://" not in target and os.path.exists(target):
        os.remove(target)
    try:
        with open(stem + ".json") as f:
            j = json.load(f)
    except (OSError, ValueError):
        j = None
    st = {"churn": churn, "exit": rc, "wall_s": round(time.monotonic() - t, 2),
          "json": os.path.relpath(stem + ".json", out) if j else None}
    for k in ("records_per_s", "started_per_s", "mpps", "ring_full",
              "lost_records", "overflow_packets", "pull_s", "ipfix_s",
              "scan_busy_ticks", "scan_ms_max"):
        if j is not None and k in j:
            st[k] = j[k]
    st["why"] = judge(rc, j, stem + ".log")
    st["clean"] = st["why"] is None
    steps.append(st)
    print("flow-export-capacity: %s churn=%d %s" % (
        name, churn, "clean, %.0f records/s" % st["records_per_s"]
        if st["clean"] else "not clean: " + st["why"]), flush=True)
    return st["clean"]


def time_left():
    # The next step takes as long as the longest so far.
    need = max([s["wall_s"] for s in steps] or [secs + 2])
    return time.monotonic() - t0 + need <= budget


lo = hi = None		# the highest clean churn, the lowest unclean one
stop = None
c = min(start, ceiling)
while True:
    if run(c):
        lo = c
        if c >= ceiling:
            stop = "ceiling"
            break
        c = min(c * 2, ceiling)
    else:
        hi = c
        break
    if not time_left():
        stop = "time"
        break
for _ in range(bisect):
    if hi is None or not time_left():
        break
    base = lo or 0
    # Within 5 % is as close as runs of a few seconds tell apart.
    if hi - base <= max(hi // 20, 1000):
        break
    mid = (base + hi) // 2
    if run(mid):
        lo = mid
    else:
        hi = mid
best = next((s for s in steps if s["churn"] == lo and s["clean"]), None)
first = min((s for s in steps if not s["clean"]), key=lambda s: s["churn"],
            default=None)
if hi is not None:
    bound = "at %.3g new flows/s: %s" % (first["churn"], first["why"])
elif stop == "ceiling":
    bound = ("nothing lost up to the search's ceiling, %.3g new flows/s: %s; "
             "the exporter's capacity is at least this" % (ceiling,
             "the table's memory (every flow of a %g s step)" % secs if by_mem
             else "BENCH_FLOW_CAP_MAX"))
else:
    bound = ("nothing lost up to %.3g new flows/s when the time budget "
             "(%g s) ran out: the exporter's capacity is at least this" %
             (lo, budget))
res = {"name": name, "flows": flows, "export": target if "://" in target
       else "file", "file_dir": None if "://" in target
       else os.path.dirname(os.path.abspath(target)),
       "seconds_per_step": secs, "budget_s": budget, "ceiling": ceiling,
       "ceiling_by_memory": by_mem, "elapsed_s": round(time.monotonic() - t0, 1),
       "clean": "exit 0, ring_full 0, lost 0, overflow 0, records/s >= 0.9 x churn",
       "capacity": None if best is None else {
           k: best.get(k) for k in ("churn", "records_per_s", "started_per_s",
                                    "mpps", "json")},
       "first_unclean": None if first is None else {
           "churn": first["churn"], "why": first["why"]},
       "bound": bound, "steps": steps}
with open(os.path.join(out, name + ".json"), "w") as f:
    json.dump(res, f, indent=1)
    f.write("\n")
print("flow-export-capacity: %s: %s; %s" % (
    name, "%.0f records/s at churn %d" % (best["records_per_s"], best["churn"])
    if best else "no clean step", bound))
sys.exit(0 if best else 1)
PY
	done
	done
fi

python3 - "$out" "$mode" "$reps" > "$out/flow-export.md" <<'PY' || failed=1
import glob, json, os, sys

out, mode, reps = sys.argv[1], sys.argv[2], sys.argv[3]
def load(p):
    try:
        with open(p) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None

print(f"Flow export at scale ({mode}; "
      f"{open(os.path.join(out, 'machine.txt')).read().splitlines()[-1]})")
print()
print("| workload | export | Mpps | vs export off | records/s | "
      "records started/s | ring full | overflow pkts | lost |")
print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
ORDER = {"off.json": 0, "file.json": 1, "noscan.json": 2, "udp.json": 3}
rows = sorted(glob.glob(os.path.join(out, "table-*.json")),
              key=lambda p: (int(p.split("-")[-2]), ORDER.get(p.split("-")[-1], 3)))
for p in rows:
    j = load(p)
    if j is None:
        continue
    off = load(p.rsplit("-", 1)[0] + "-off.json")
    cost = ("%+.1f %%" % ((j["mpps"] / off["mpps"] - 1) * 100)
            if off and j["export"] != "off" and off["mpps"] else "")
    exp = "off" if j["export"] == "off" else (
        "UDP to nfcapd" if j["export"].startswith("udp") else
        "IPFIX file, no scan" if j.get("no_scan") else "IPFIX file")
    print(f"| table, {j['flows'] / 1e6:g} M flows, churn {j['churn'] / 1e6:g} M/s"
          f" | {exp} | {j['mpps']:.1f} | {cost} | "
          f"{j['records_per_s'] / 1e6:.2f} M | {j['started_per_s'] / 1e6:.2f} M | "
          f"{j['ring_full']} | {j['overflow_packets']} | {j['lost_records']} |")
for p in sorted(glob.glob(os.path.join(out, "pipe*-off.json"))):
    off, on = load(p), load(p.replace("-off.json", "-file.json"))
    if off is None:
        continue
    flows = p.split("-")[-2]
    lcores = os.path.basename(p).split("-")[0][4:] or "1"
    for j, exp in ((off, "off"), (on, "IPFIX file, active 1 s")):
        if j is None:
            continue
        mpps = j["rx_packets"] / j["elapsed_s"] / 1e6
        fx = j.get("flow_export")
        cost = ("%+.1f %%" % ((mpps / (off["rx_packets"] / off["elapsed_s"] / 1e6) - 1) * 100)
                if fx else "")
        recs = ((fx["records"] - fx["ended"]["exit"]) / j["elapsed_s"] / 1e6
                if fx else 0)
        started = (fx["started"] / j["elapsed_s"] / 1e6) if fx else 0
        print(f"| pipeline ({j['mode']}), {int(flows) / 1e6:g} M flows replayed,"
              f" {lcores} RX lcore(s)"
              f" | {exp} | {mpps:.1f} | {cost} | {recs:.2f} M | "
              f"{started:.2f} M | {fx['ring_full'] if fx else ''} | "
              f"{j['flow_overflow_packets']} | "
              f"{sum(s['lost_records'] for s in fx['to']) if fx else ''} |")
print()
print(f"Each row is the run of median Mpps of {reps}, export off and on "
      "alternating (every run in reps/).")
caps = [j for j in map(load, sorted(glob.glob(os.path.join(out, "capacity-*.json"))))
        if j]
if caps:
    print()
    print("Exporter capacity, the table alone: the highest churn that lost "
          "nothing (ring never full, no record lost, no overflow, records/s "
          "at least 90 % of the churn).")
    print()
    print("| flows | export | highest clean churn | records/s | Mpps | steps | "
          "seconds | what bounds it |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for j in caps:
        c = j["capacity"] or {}
        exp = "UDP to nfcapd" if "://" in j["export"] else "IPFIX file"
        print(f"| {j['flows'] / 1e6:g} M | {exp} | "
              + (f"{c['churn'] / 1e6:.3g} M/s | {c['records_per_s'] / 1e6:.3g} M | "
                 f"{c['mpps']:.1f}" if c else "none | | ")
              + f" | {len(j['steps'])} | {j['elapsed_s']:g} | {j['bound']} |")
PY
cat "$out/flow-export.md"
exit $failed
