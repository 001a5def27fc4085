#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Closed-loop latency of the generator: dpdk-gpu-tx sends stamped frames
# over a wire to dpdk-gpu-rx --cpu --stamps in another process (the loop
# of tests/gpu_tx/run-loop.sh, which this runs), at a few rates;
# per point the receiver's median and p99 latency (its RX time minus the
# stamp's tx_ns, both CLOCK_REALTIME: doc/gpu_tx.md, "Closing the loop")
# and the loss. "max" sends unpaced, then, where that lost packets, at
# half the rate it reached, and so on (at most four times): the highest
# rate the loop took without loss.
#
# Output: one line per point to stdout; OUT_DIR/<wire>-<mem>-<rate>/ the
# runs' tx.json, rx.json and logs; OUT_DIR/loop.txt the lines;
# OUT_DIR/machine.txt the machine.
#
# Usage: bench/gen-loop.sh OUT_DIR [BUILD_DIR]
# Env: BENCH_LOOP_WIRES (default "memif"; "memif veth": veth needs root),
#      BENCH_LOOP_MEMS (dpdk-gpu-tx --mem; default "cpu"; on a GPU machine
#        "cpu host-mapped": the frames built by the GPU into host-mapped
#        mbufs; --mem gpu is not for these ports, the CPU copies frames),
#      BENCH_LOOP_RATES (default "10kpps 1Mpps max"),
#      BENCH_LOOP_SECONDS (packets per point: rate x seconds; default 2),
#      BENCH_LOOP_MAX_COUNT (packets of an unpaced point; default 2000000),
#      BENCH_LOOP_STREAMS (1-3 stream specs of run-loop.sh, default 1:
#        70-300 B random sizes, IPv4/UDP),
#      BENCH_EAL_EXTRA (more EAL options of both programs, e.g.
#        "-d .gpu-bundle/pmds" with LD_LIBRARY_PATH=.gpu-bundle/lib where
#        DPDK comes from scripts/make-gpu-bundle.sh).
# Exit: 0; 1 when a point did not run or lost packets at a paced rate;
# 2 usage or missing build.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: $0 OUT_DIR [BUILD_DIR]}
build=${2:-$top/build}
tx=$build/examples/gpu_tx/dpdk-gpu-tx
rx=$build/examples/gpu_rx/app/dpdk-gpu-rx
loop=$top/tests/gpu_tx/run-loop.sh
secs=${BENCH_LOOP_SECONDS:-2}
for p in "$tx" "$rx"; do
	[ -x "$p" ] || { echo "missing $p: build first (scripts/setup.sh $build)" >&2; exit 2; }
done
mkdir -p "$out" || exit 2

# shellcheck source=bench/bench-lib.sh
. "$top/bench/bench-lib.sh"
# Two processes: each its own share (run-loop.sh adds --no-shconf).
bench_eal_mem 1024 512
eal_mem="${bench_mem[*]/--no-shconf/} ${BENCH_EAL_EXTRA:-}"
bench_machine_lines "$build" "$top" > "$out/machine.txt"
echo "eal: $eal_mem (each process; --no-pci but for GPU builds)" >> "$out/machine.txt"

# Packets for a rate like 10kpps, 1.5Mpps.
packets() {
	awk -v r="$1" -v s="$secs" 'BEGIN {
		m = 1
		if (r ~ /kpps$/) m = 1e3; else if (r ~ /Mpps$/) m = 1e6
		sub(/[kM]?pps$/, "", r)
		n = int(r * m * s)
		print n < 1000 ? 1000 : n
	}'
}

# One run into DIR; prints its line.
point() {
	local wire=$1 mem=$2 rate=$3 n=$4 dir=$5 rc tx_pci=--no-pci

	# A GPU build needs the GPU, which EAL finds on the PCI bus.
	[ "$mem" = cpu ] || tx_pci=
	LOOP_QUIET=1 LOOP_RATE=$rate LOOP_COUNT=$n \
		LOOP_STREAMS=${BENCH_LOOP_STREAMS:-1} TX_MEM=$mem \
		TX_EAL="$eal_mem $tx_pci" RX_EAL="$eal_mem --no-pci" \
		bash "$loop" "$wire" "$tx" "$rx" "$dir" > "$dir.log" 2>&1
	rc=$?
	if [ $rc -eq 77 ]; then
		echo "$wire $mem $rate: skipped: $(grep -m1 SKIP "$dir.log")"
		return 0
	fi
	if [ ! -s "$dir/rx.json" ] || [ ! -s "$dir/tx.json" ]; then
		echo "$wire $mem $rate: FAILED (exit $rc): $(grep -m1 -E 'FAIL|error' "$dir.log")"
		return 1
	fi
	python3 - "$dir" "$wire" "$mem" "$rate" <<'PY'
import json, sys

d, wire, mem, rate = sys.argv[1:]
tx = json.load(open(d + "/tx.json"))
rx = json.load(open(d + "/rx.json"))
st = rx["stamps"]["streams"]
got = sum(s["received"] - s["duplicates"] for s in st)
lost = tx["packets"] - got
# Streams share bursts and so latencies; the first stands for them.
lat = st[0]["latency_ns"] if st else {"median": 0, "p99": 0, "min": 0,
                                      "max": 0}
print("%s %s %s: %.0f pps, sent %d, received %d, lost %d, "
      "reordered %d; latency us median %.1f p99 %.1f (min %.1f max %.1f)"
      % (wire, mem, rate, tx["pps"], tx["packets"], got,
         lost, sum(s["reordered"] for s in st), lat["median"] / 1e3,
         lat["p99"] / 1e3, lat["min"] / 1e3, lat["max"] / 1e3))
PY
}

status=0
: > "$out/loop.txt"
for wire in ${BENCH_LOOP_WIRES:-memif}; do
	for mem in ${BENCH_LOOP_MEMS:-cpu}; do
		for rate in ${BENCH_LOOP_RATES:-10kpps 1Mpps max}; do
			if [ "$rate" != max ]; then
				point "$wire" "$mem" "$rate" "$(packets "$rate")" \
					"$out/$wire-$mem-$rate" > "$out/point.txt"
				tee -a "$out/loop.txt" < "$out/point.txt"
				grep -q " lost 0,\|skipped" "$out/point.txt" || status=1
				continue
			fi
			# Unpaced, then half of what it reached while it loses.
			r=max n=${BENCH_LOOP_MAX_COUNT:-2000000}
			for try in 1 2 3 4 5; do
				point "$wire" "$mem" "$r" "$n" \
					"$out/$wire-$mem-max$try" > "$out/point.txt"
				tee -a "$out/loop.txt" < "$out/point.txt"
				grep -q " lost [1-9]" "$out/point.txt" || break
				pps=$(sed -n 's/.*: \([0-9]*\) pps,.*/\1/p' "$out/point.txt")
				[ "${pps:-0}" -ge 2000 ] || break
				r="$((pps / 2000))kpps" n=$(packets "$r")
			done
		done
	done
done
rm -f "$out/point.txt"
exit $status
