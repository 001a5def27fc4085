#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Scaling over several GPUs (issue 36): the capture pipeline (dpdk-gpu-rx,
# host-mapped and gpu, 64 B) and the generator (dpdk-gpu-tx, gpu, 64 B)
# on 1, 2, .. every GPU, with the lcores per GPU fixed (L queues a GPU,
# a lcore a queue: N GPUs take N x L lcores), beside the bare loops at the
# same lcore counts, their ceilings:
#   source      bench-rx-source on net_null (RX burst and free, nothing
#               else): the host-mapped pipeline's ceiling,
#   host-mapped dpdk-gpu-rx --mem host-mapped on net_null, 64 B frames,
#   gpu-source  bench-rx-source --gpus N on net_gpudma replaying 64 B
#               frames into each queue's GPU's memory (RX burst and free):
#               the gpu pipeline's ceiling,
#   gpu         dpdk-gpu-rx --mem gpu --split off on the same port,
#   gen-none    dpdk-gpu-tx --no-build on net_gpudma (frames handed out
#               unbuilt: the TX lcores' own ceiling),
#   gen-gpu     dpdk-gpu-tx --mem gpu on net_gpudma, every frame built by
#               its queue's GPU, every packet different.
# Queue q is on GPU q mod N (--gpus 0,1,..,N-1). Every point runs
# BENCH_GPUS_REPS times, the repetitions alternated over the points (each
# repetition runs every point once), so that drift over the machine's
# start hits every point alike; the median counts, min and max beside.
#
# Output: OUT_DIR/scaling.md (a table a mode: Mpps min / median / max per
# GPU count, the ratio to the same run's one-GPU median and to N times it
# (goal >= 0.9), the ceiling's median at the same lcores and the share of
# it, each GPU's share of the packets), OUT_DIR/gpus_scaling.json (the
# same figures, bench/summary.py reads it), a line per run to stdout
# ("gpus-scaling mode=... gpus=N lcores=Q rep=R mpps=..."), each run's
# JSON and log, OUT_DIR/machine.txt (with nvidia-smi topo -m).
#
# Usage: bench/gpus-scaling.sh OUT_DIR [BUILD_DIR]
# Env: BENCH_GPUS_COUNTS (GPU counts, default 1 2 4 8 up to every GPU,
#        and every GPU), BENCH_GPUS_LCORES (lcores a GPU, default 4, fewer
#        where the CPUs do not hold every GPU's), BENCH_GPUS_MODES (default
#        "source host-mapped gpu-source gpu gen-none gen-gpu"),
#        BENCH_GPUS_REPS (3),
#        BENCH_GPUS_SECONDS (3), BENCH_GPUS_BURST (RX burst = packets a
#        ring item, default 128, as run-all.sh's capacity sweep),
#        BENCH_GPUS_TX_BURST (default 256, as gen-tx-rate.sh),
#        BENCH_EAL_EXTRA.
# Exit: 0; 1 a run failed (its cell says so); 2 usage, missing build;
# 77 fewer than two GPUs (nothing to scale over).
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: $0 OUT_DIR [BUILD_DIR]}
build=${2:-$top/build}
rx=$build/examples/gpu_rx/app/dpdk-gpu-rx
tx=$build/examples/gpu_tx/dpdk-gpu-tx
src=$build/bench/bench-rx-source
gen=$build/tests/gpu_rx/e2e/gpurx-e2e-genpcap
for f in "$rx" "$tx" "$src" "$gen"; do
	[ -x "$f" ] || { echo "missing $f: build first" >&2; exit 2; }
done
mkdir -p "$out" || exit 2
# shellcheck source=bench/bench-lib.sh
. "$top/bench/bench-lib.sh"
bench_reps BENCH_GPUS_REPS 3 || exit 2
reps=$bench_reps
secs=${BENCH_GPUS_SECONDS:-3}
burst=${BENCH_GPUS_BURST:-128}
tx_burst=${BENCH_GPUS_TX_BURST:-256}
read -r -a extra <<< "${BENCH_EAL_EXTRA:-}"

ngpus=$(nvidia-smi -L 2> /dev/null | grep -c '^GPU ')
if [ "${ngpus:-0}" -lt 2 ]; then
	echo "SKIP: ${ngpus:-0} GPU(s) here: nothing to scale over"
	exit 77
fi
counts=${BENCH_GPUS_COUNTS:-}
if [ -z "$counts" ]; then
	for n in 1 2 4 8; do [ "$n" -lt "$ngpus" ] && counts="$counts $n"; done
	counts="$counts $ngpus"
fi
for n in $counts; do
	case $n in
	'' | *[!0-9]* | 0) echo "BENCH_GPUS_COUNTS: '$n' is not a GPU count" >&2; exit 2 ;;
	esac
	[ "$n" -le "$ngpus" ] ||
		{ echo "BENCH_GPUS_COUNTS: $n GPUs, this machine has $ngpus" >&2; exit 2; }
	maxn=$n
done
modes=${BENCH_GPUS_MODES:-source host-mapped gpu-source gpu gen-none gen-gpu}
for mode in $modes; do
	case $mode in
	source | host-mapped | gpu-source | gpu | gen-none | gen-gpu) ;;
	*) echo "BENCH_GPUS_MODES: unknown mode '$mode'" >&2; exit 2 ;;
	esac
done
# The lcores a GPU: every GPU's and the main lcore on CPUs of their own.
lpg=${BENCH_GPUS_LCORES:-$(( ($(nproc) - 1) / maxn < 4 ? ($(nproc) - 1) / maxn : 4 ))}
case $lpg in
'' | *[!0-9]* | 0) echo "BENCH_GPUS_LCORES: '$lpg' is not a positive count (or too few CPUs)" >&2; exit 2 ;;
esac
# Too few CPUs (a smoke run): the lcores float over them, and the figures
# are not the machine's rates: said in machine.txt and each line.
float=
[ $((maxn * lpg + 1)) -le "$(nproc)" ] || float=" (lcores share $(nproc) CPUs)"

# Hugepages where there are enough for N pools.
bench_eal_mem 4096 2048
{
	bench_machine_lines "$build" "$top"
	echo "settings: $lpg lcores a GPU, GPU counts $counts, $reps repetitions alternated, ${secs} s a run, RX burst $burst, TX burst $tx_burst, EAL ${bench_mem[*]} ${extra[*]}$float"
	nvidia-smi -L
	nvidia-smi topo -m 2> /dev/null
} > "$out/machine.txt" 2>&1

# 64-byte frames for net_gpudma's RX (replayed without end), and for the
# generator's port, whose RX nothing reads.
frames=$out/scaling-64.pcap
"$gen" --size 64 "$frames" 3 4096 > /dev/null ||
	{ echo "cannot generate $frames" >&2; exit 2; }
vars="var=ipv4.src:inc:10.0.0.1-10.0.255.254,var=udp.sport:inc:1024-65535,stamp=off"

# point MODE N REP: one run; its JSON as OUT_DIR/runs/MODE-gN.rREP.json.
point() {
	local mode=$1 n=$2 r=$3 q list name json rc i lc
	q=$((n * lpg))
	lc=(-l "0-$q")
	[ -z "$float" ] || lc=("--lcores=(0-$q)@(0-$(($(nproc) - 1)))")
	list=0
	for ((i = 1; i < n; i++)); do list="$list,$i"; done
	name=$mode-g$n.r$r
	json=$out/runs/$name.json
	case $mode in
	source | gpu-source)
		local vdev=net_null0,size=64,copy=0 gargs=()
		if [ "$mode" = gpu-source ]; then
			vdev=net_gpudma0,rx_pcap=$frames,loop=0,queues=$q,scatter=1
			gargs=(--gpus "$n")
		fi
		$limit "$src" "${bench_mem[@]}" --file-prefix "gs-$name" "${lc[@]}" \
			"${extra[@]}" --vdev "$vdev" -- "${gargs[@]}" \
			--queues "$q" --burst "$burst" --seconds "$secs" \
			--json "$json" ;;
	host-mapped | gpu)
		local vdev=net_null0,size=64,copy=0 margs=(--mem host-mapped)
		if [ "$mode" = gpu ]; then
			vdev=net_gpudma0,rx_pcap=$frames,loop=0,queues=$q,scatter=1
			margs=(--mem gpu --split off)
		fi
		$limit "$rx" "${bench_mem[@]}" --file-prefix "gs-$name" "${lc[@]}" \
			"${extra[@]}" --vdev "$vdev" -- "${margs[@]}" \
			--gpus "$list" --queues "$q" --filter 'tcp port 443' \
			--duration "$secs" --json "$json" --ts none \
			--burst "$burst" --quiet ;;
	gen-none | gen-gpu)
		local margs=(--mem gpu --gpus "$list") pci=()
		[ "$mode" = gen-none ] && { margs=(--mem cpu --no-build); pci=(--no-pci); }
		$limit "$tx" "${bench_mem[@]}" "${pci[@]}" --file-prefix "gs-$name" \
			"${lc[@]}" "${extra[@]}" \
			--vdev "net_gpudma0,rx_pcap=$frames,queues=$q" -- \
			--stream "ipv4,udp,dst=10.1.0.1,$vars,size=64" \
			"${margs[@]}" --queues "$q" --burst "$tx_burst" \
			--duration "$secs" --wait-link 0 --json "$json" ;;
	esac > "$out/runs/$name.log" 2>&1
	rc=$?
	[ -s "$json" ] || [ "$rc" -ne 0 ] || rc=1
	echo "gpus-scaling mode=$mode gpus=$n lcores=$q rep=$r $(python3 - "$json" "$rc" <<'PY'
import json, sys
try:
    j = json.load(open(sys.argv[1]))
except (OSError, ValueError):
    print("FAILED (exit %s)" % sys.argv[2]); sys.exit(0)
pps = j["pps"] if "pps" in j else j["rx_packets"] / (j["elapsed_s"] or 1)
print("mpps=%.2f%s" % (pps / 1e6, "" if sys.argv[2] == "0" else
                       " FAILED (exit %s)" % sys.argv[2]))
PY
)$float"
	# A failed run's summary is no point of the table (kept beside).
	[ "$rc" -eq 0 ] || { [ ! -e "$json" ] || mv "$json" "$json.failed"; }
	return "$rc"
}

mkdir -p "$out/runs" || exit 2
# A run that does not end by itself is killed, and its cell says so.
limit="timeout --kill-after=5 $((secs + 40))"
failed=0
# The loop runs in tee's pipeline: a failed run is read from its line.
for ((r = 1; r <= reps; r++)); do
	for mode in $modes; do
		for n in $counts; do
			point "$mode" "$n" "$r"
		done
	done
done | tee "$out/scaling.txt"
grep -q 'FAILED' "$out/scaling.txt" && failed=1
rm -f "$frames"

python3 "$top/bench/gpus-scaling.py" "$out" "$reps" "$lpg" "$modes" \
	"$counts" > "$out/scaling.md" || failed=1
[ -z "$float" ] || echo "Not the machine's rates: the lcores shared $(nproc) CPUs." >> "$out/scaling.md"
cat "$out/scaling.md"
exit $failed
