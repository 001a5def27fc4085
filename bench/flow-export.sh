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
# The goal: at least 1 M records/s with the packet rate within 10 % of
# export off.
#
# Usage: bench/flow-export.sh OUT_DIR [BUILD_DIR]
# Env: BENCH_FLOW_MODE gpu|cpu (default: gpu where nvidia-smi sees one)
#      BENCH_FLOW_SIZES (default "1000000 10000000"), BENCH_FLOW_CHURN
#      (1000000), BENCH_FLOW_SECONDS (5), BENCH_FLOW_THREADS (cpu: nproc
#      - 1), BENCH_FLOW_EXPORTS ("off file udp"), BENCH_FLOW_PIPE_FLOWS
#      (1000000; 0: no pipeline runs), BENCH_FLOW_PIPE_MEM ("host-mapped"
#      on the GPU), BENCH_FLOW_PIPE_EXPORTS ("off file"), BENCH_EAL_EXTRA.
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
read -r -a extra <<< "${BENCH_EAL_EXTRA:-}"
# shellcheck source=bench/bench-lib.sh
. "$top/bench/bench-lib.sh"
margs=(--cpu --threads "$threads")
[ "$mode" = gpu ] && margs=()
failed=0

# nfcapd on the loopback for the UDP runs, where installed.
nfpid=""
cport=$((30000 + $$ % 20000))
if [[ " ${BENCH_FLOW_EXPORTS:-off file udp} " == *" udp "* ]] &&
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
	echo "settings: mode $mode, ${secs} s per run, churn $churn/s, idle 1 s"
} > "$out/machine.txt"

# 1. The table alone.
for flows in ${BENCH_FLOW_SIZES:-1000000 10000000}; do
	for exp in ${BENCH_FLOW_EXPORTS:-off file udp}; do
		case $exp in
		off) target=off ;;
		file) target=$out/table-$flows.ipfix ;;
		udp)
			[ -n "$nfpid" ] || { echo "no nfcapd: UDP runs skipped"; continue; }
			target=udp://127.0.0.1:$cport ;;
		esac
		name=table-$mode-$flows-$exp
		timeout $((${secs%.*} + 300)) "$bench" "${margs[@]}" --flows "$flows" \
			--churn "$churn" --seconds "$secs" --export "$target" \
			--json "$out/$name.json" > "$out/$name.log" 2>&1
		rc=$?
		cat "$out/$name.log"
		[ "$rc" -eq 0 ] || { echo "$name: exit $rc"; failed=1; }
		rm -f "$out/table-$flows.ipfix"
	done
done

# 2. The pipeline: every flow live, exported each second.
if [ "$pipe_flows" -gt 0 ]; then
	"$gen" --many "$pipe_flows" "$out/pipe.pcap" || exit 2
	slots=1024
	while [ $slots -lt $((pipe_flows * 2)) ]; do slots=$((slots * 2)); done
	# The replay keeps every packet in an mbuf of the pool.
	mb=$(( (pipe_flows * 2400 + slots * 160 * 2) / 1048576 + 2048 ))
	bench_eal_mem "$mb" "$mb"
	pargs=(--cpu)
	[ "$mode" = gpu ] && pargs=(--mem "${BENCH_FLOW_PIPE_MEM:-host-mapped}")
	for exp in ${BENCH_FLOW_PIPE_EXPORTS:-off file}; do
		name=pipe-$mode-$pipe_flows-$exp
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
		timeout $((${secs%.*} + 300)) "$app" "${bench_mem[@]}" \
			--file-prefix "$name" -l 0-1 "${extra[@]}" \
			--vdev "net_pcap0,rx_pcap=$out/pipe.pcap,infinite_rx=1" -- \
			"${pargs[@]}" --quiet --mbufs $((pipe_flows + 32768)) \
			--flows $slots --ts rx --duration "$secs" \
			--json "$out/$name.json" "${eargs[@]}" > "$out/$name.log" 2>&1
		rc=$?
		grep -E "^(received|elapsed|gpu items|flow export)" "$out/$name.log" |
			sed "s/^/$exp: /"
		[ "$rc" -eq 0 ] || { echo "$name: exit $rc (see $out/$name.log)"; failed=1; }
		rm -f "$out/pipe.ipfix"
	done
	rm -f "$out/pipe.pcap"
fi

python3 - "$out" "$mode" > "$out/flow-export.md" <<'PY' || failed=1
import glob, json, os, sys

out, mode = sys.argv[1], sys.argv[2]
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
ORDER = {"off.json": 0, "file.json": 1, "udp.json": 2}
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
        "UDP to nfcapd" if j["export"].startswith("udp") else "IPFIX file")
    print(f"| table, {j['flows'] / 1e6:g} M flows, churn {j['churn'] / 1e6:g} M/s"
          f" | {exp} | {j['mpps']:.1f} | {cost} | "
          f"{j['records_per_s'] / 1e6:.2f} M | {j['started_per_s'] / 1e6:.2f} M | "
          f"{j['ring_full']} | {j['overflow_packets']} | {j['lost_records']} |")
for p in sorted(glob.glob(os.path.join(out, "pipe-*-off.json"))):
    off, on = load(p), load(p.replace("-off.json", "-file.json"))
    if off is None:
        continue
    flows = p.split("-")[-2]
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
        print(f"| pipeline ({j['mode']}), {int(flows) / 1e6:g} M flows replayed"
              f" | {exp} | {mpps:.1f} | {cost} | {recs:.2f} M | "
              f"{started:.2f} M | {fx['ring_full'] if fx else ''} | "
              f"{j['flow_overflow_packets']} | "
              f"{sum(s['lost_records'] for s in fx['to']) if fx else ''} |")
PY
cat "$out/flow-export.md"
exit $failed
