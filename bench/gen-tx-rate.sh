#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# The generator's end-to-end transmit rate (issue 13, section 4):
# dpdk-gpu-tx unpaced for a few seconds per point, every packet different
# (two field-engine variables, IPv4 and UDP checksums fixed), at 64, 512,
# 1500 B and IMIX, on 1/2/4 TX queues (a worker lcore each), into
#   net_null      host memory: --mem cpu --no-build (frames sent unbuilt:
#                 the TX lcores' own ceiling, allocation, lengths, the
#                 port's TX and frees), --mem cpu (the CPU reference build
#                 on the same lcores) and --mem host-mapped,
#   net_gpudma    GPU memory (--mem gpu), its TX counting and dropping
#                 the frames (no tx_pcap),
# GPU builds by the persistent fill and, for comparison, a kernel launched
# per burst. Frame sizes count the FCS; Gbit/s is frame bits with the FCS.
#
# A mode is MEM[,FLAG...]: MEM none, cpu, host-mapped or gpu; flags
# per-burst (a kernel launch per burst), gpudma (net_gpudma instead of
# net_null: it frees sent mbufs in bulk, RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE,
# as NICs do; gpu always uses it), no-fast-free (the port asked not to:
# the A/B baseline of bulk frees), csum-offload (checksums left to the
# port: net_gpudma's TX offload), table-in-host (GPU builds read the
# streams from host memory: the baseline of the table in GPU memory).
#
# Output: a line per point ("txrate mem=... build=... port=... free=...
# size=... queues=N mpps=... handed_gbps=...": the L2 bits of the frames
# handed to the port, which net_null and net_gpudma drop: none is sent);
# OUT_DIR/txrate.txt the lines;
# OUT_DIR/<point>.json and .log each run's summary and output;
# OUT_DIR/machine.txt.
#
# Usage: bench/gen-tx-rate.sh OUT_DIR [BUILD_DIR]
# Env: BENCH_TXR_MODES (default "none none,gpudma none,gpudma,no-fast-free
#        cpu cpu,gpudma host-mapped host-mapped,gpudma host-mapped,per-burst
#        gpu gpu,no-fast-free gpu,per-burst"; without a GPU only none and
#        cpu run),
#      BENCH_TXR_SIZES (default "64 512 1500 imix"),
#      BENCH_TXR_QUEUES (default "1 2 4"),
#      BENCH_TXR_SECONDS (default 2), BENCH_TXR_BURST (default 256: the best of 128, 256 and 512 on the H100),
#      BENCH_TXR_ITEMS (GPU bursts in flight per queue, default 32),
#      BENCH_TXR_REPS (rounds of every point, default 1; later rounds'
#        files end in .r<round>, their lines in rep=<round>),
#      BENCH_EAL_EXTRA (more EAL options, e.g. "-d .gpu-bundle/pmds").
# Exit: 0; 1 when a point failed; 2 usage or missing build.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/bench-lib.sh
. "$top/bench/bench-lib.sh"
bench_tx_args "$@" || exit 2
secs=${BENCH_TXR_SECONDS:-2}
burst=${BENCH_TXR_BURST:-256}
items=${BENCH_TXR_ITEMS:-32}

bench_eal_mem 2048 2048
read -r -a extra <<< "${BENCH_EAL_EXTRA:-}"
bench_machine_lines "$build" "$top" > "$out/machine.txt"

# Every packet differs: the source address steps through 65534 values,
# the source port through 64512; both checksums are fixed per packet.
vars="var=ipv4.src:inc:10.0.0.1-10.0.255.254,var=udp.sport:inc:1024-65535,stamp=off"
spec() {
	case $1 in
	imix) echo "imix,ipv4,udp,dst=10.1.0.1,$vars" ;;
	*) echo "ipv4,udp,dst=10.1.0.1,$vars,size=$1" ;;
	esac
}

# net_gpudma takes its RX frames from a pcap even when only its TX is
# used: a few frames written by the generator itself.
seed_pcap=$out/gpudma-rx.pcap
"$tx" "${bench_mem[@]}" --no-pci --file-prefix txr-seed -l 0 "${extra[@]}" \
	--vdev "net_pcap0,tx_pcap=$seed_pcap" -- --stream "$(spec 64)" \
	--count 64 > "$out/seed.log" 2>&1 ||
	{ cat "$out/seed.log"; echo "FAIL: could not write $seed_pcap"; exit 1; }

has_gpu=1
"$tx" "${bench_mem[@]}" --file-prefix txr-probe -l 0 "${extra[@]}" \
	--vdev net_null0 -- --stream "$(spec 64)" --mem host-mapped --count 64 \
	> "$out/probe.log" 2>&1 || has_gpu=0
[ $has_gpu = 1 ] || echo "no GPU build possible here ($(grep -m1 error "$out/probe.log")): cpu only"

failed=0
: > "$out/txrate.txt"
default_modes="none none,gpudma none,gpudma,no-fast-free cpu cpu,gpudma \
host-mapped host-mapped,gpudma host-mapped,per-burst gpu gpu,no-fast-free \
gpu,per-burst"
bench_reps BENCH_TXR_REPS 1 || exit 2
# Modes innermost: a point's build and its unbuilt ceiling run seconds
# apart, not a whole sweep apart (this VM's rates drift between them).
for ((rep = 1; rep <= bench_reps; rep++)); do
for size in ${BENCH_TXR_SIZES:-64 512 1500 imix}; do
for q in ${BENCH_TXR_QUEUES:-1 2 4}; do
for mode in ${BENCH_TXR_MODES:-$default_modes}; do
	IFS=, read -r -a f <<< "$mode"
	mem=${f[0]} build_kind=persistent margs=() port=null free=bulk
	for flag in "${f[@]:1}"; do
		case $flag in
		per-burst) build_kind=per-burst; margs+=(--launch-per-burst) ;;
		gpudma) port=gpudma ;;
		no-fast-free) margs+=(--no-fast-free) ;;
		csum-offload) margs+=(--csum-offload); port=gpudma ;;
		table-in-host) margs+=(--table-in-host); build_kind=$build_kind+table-in-host ;;
		*) echo "unknown mode flag '$flag' in '$mode'" >&2; exit 2 ;;
		esac
	done
	[ "$mem" = gpu ] && port=gpudma
	[ "$mem" = cpu ] && build_kind=cpu
	[ "$mem" = none ] && { mem=cpu build_kind=none margs+=(--no-build); }
	# net_null has no bulk frees; asked or not, it frees per packet.
	[[ $port = null || " ${margs[*]} " = *" --no-fast-free "* ]] && free=per-packet
	[[ " ${margs[*]} " = *" --csum-offload "* ]] && free=$free+csum-offload
	if [ "$mem" != cpu ] && [ $has_gpu = 0 ]; then
		continue
	fi
	pci=(--no-pci)
	[ "$mem" = cpu ] || pci=()
	name=txrate-$mem-$build_kind-$port-$free-$size-q$q
	# Later rounds beside the first's files.
	[ "$rep" = 1 ] || name=$name.r$rep
	if [ "$port" = gpudma ]; then
		vdev="net_gpudma0,rx_pcap=$seed_pcap,queues=$q"
	else
		vdev=net_null0
	fi
	# A CPU each where there are enough (else floating, and the
	# figures are not rates of the machine: said so).
	lcores=(-l "0-$q")
	[ $((q + 1)) -le "$(nproc)" ] ||
		lcores=("--lcores=(0-$q)@(0-$(($(nproc) - 1)))")
	"$tx" "${bench_mem[@]}" "${pci[@]}" --file-prefix "$name" \
		"${lcores[@]}" "${extra[@]}" --vdev "$vdev" -- \
		--stream "$(spec "$size")" --mem "$mem" "${margs[@]}" \
		--queues "$q" --burst "$burst" --ring-items "$items" \
		--duration "$secs" --wait-link 0 --json "$out/$name.json" \
		> "$out/$name.log" 2>&1
	rc=$?
	if [ $rc -ne 0 ] || [ ! -s "$out/$name.json" ]; then
		line="txrate mem=$mem build=$build_kind port=$port free=$free size=$size queues=$q FAILED (exit $rc: $(grep -m1 error "$out/$name.log"))"
		failed=1
	else
		line=$(python3 - "$out/$name.json" "$mem" "$build_kind" "$port" "$free" "$size" "$q" <<'PY2'
import json, sys
j = json.load(open(sys.argv[1]))
print("txrate mem=%s build=%s port=%s free=%s size=%s queues=%s mpps=%.1f "
      "handed_gbps=%.1f packets=%d" % (*sys.argv[2:8], j["pps"] / 1e6,
                                j["bps"] / 1e9, j["packets"]))
PY2
)
	fi
	[ $((q + 1)) -le "$(nproc)" ] || line="$line (lcores share $(nproc) CPUs)"
	[ "$bench_reps" = 1 ] || line="$line rep=$rep"
	echo "$line" | tee -a "$out/txrate.txt"
done
done
done
done
exit $failed
