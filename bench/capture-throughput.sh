#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Capture throughput of dpdk-gpu-rx: how many packets/s the pipeline takes
# and how many bytes/s it writes into a capture file on tmpfs, per mode and
# number of RX lcores, each capture beside the same run without one. Source:
# net_pcap with infinite_rx=1 replaying generated traffic, one replay per
# queue: "mix" (realistic sizes, 64..1500 B: the per-packet costs bound it)
# and "mix1500" (the same frames padded to 1500 B, headers unchanged, so the
# filters match the same packets: the bytes bound it). Per point five runs
# of BENCH_CAPT_SECONDS (default 3): `off` (--filter tcp, no file), `tcp`
# (--filter tcp --write: a known share of the packets) and `all` (no filter,
# every packet written), each into one file, then `tcpq` and `allq`: the
# same into a file per RX queue (--write with %q), side by side in one run.
# Two more runs where BENCH_CAPT_RUNS names them: `allw` and `allqw`, `all`
# and `allq` with writer threads (--capture-writers BENCH_CAPT_WRITERS)
# doing the writes instead of the RX lcores.
# Each capture file is read back with libpcap (gpurx-e2e-check --valid: it
# must parse to the end; the files of a run together hold exactly the
# packets the run says it captured), then deleted.
# A capture is judged against the run without one, so the runs of a point
# alternate: off, tcp, all, tcpq, allq, then the same again, BENCH_CAPT_REPS
# times (ABAB: drift over the machine start hits every run alike).
#
# Output: every repetition in OUT_DIR/reps/<name>.r<N>.{json,log,file},
# <name> = capt-<mode>-<traffic>-<lcores>-<run>; the repetition of median
# Mpps of each run copied to OUT_DIR/<name>.{json,log,file} (what
# bench/plot.py's table shows; bench/summary.py takes min / median / max
# over the repetitions), OUT_DIR/<name>.failed where a repetition failed,
# the side-by-side table OUT_DIR/capture.md, one line per repetition to
# stdout, the machine in OUT_DIR/machine.txt.
#
# Usage: bench/capture-throughput.sh OUT_DIR [BUILD_DIR]
# Env: BENCH_EAL_EXTRA (as for pipeline-capacity.sh),
#      BENCH_CAPT_MODES (default "host-mapped cpu"; cpu alone without GPU),
#      BENCH_CAPT_TRAFFIC (default "mix mix1500"),
#      BENCH_CAPT_LCORES (default "1 2 4"),
#      BENCH_CAPT_SECONDS (default 3),
#      BENCH_CAPT_RUNS (default "off tcp all tcpq allq"; allw, allqw:
#        all, allq with writer threads),
#      BENCH_CAPT_WRITERS (--capture-writers of allw and allqw; default:
#        one per RX lcore; they run on the CPUs -l leaves free),
#      BENCH_CAPT_REPS (repetitions of every run, alternating; default 3),
#      BENCH_CAPT_DIR (where capture files go; default /dev/shm, a tmpfs,
#        so that the page cache's copy is what a capture costs, where it
#        has 4 GiB free, else TMPDIR; it needs room for one run's file, up
#        to tens of GB at several GB/s: a full one fails the run),
#      BENCH_CAPT_FORMAT (pcapng, the default, or pcap),
#      BENCH_CAPT_VERIFY (1, the default: read every capture back; 0: not),
#      BENCH_CAPT_APP_ARGS (more dpdk-gpu-rx options, e.g. "--burst 128").
# Exit: 0, 1 when a run or a capture check failed (its row says so),
# 2 usage or missing build.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: $0 OUT_DIR [BUILD_DIR]}
build=${2:-$top/build}
app=$build/examples/gpu_rx/app/dpdk-gpu-rx
gen=$build/tests/gpu_rx/e2e/gpurx-e2e-genpcap
check=$build/tests/gpu_rx/e2e/gpurx-e2e-check
secs=${BENCH_CAPT_SECONDS:-3}
fmt=${BENCH_CAPT_FORMAT:-pcapng}
# shellcheck source=bench/bench-lib.sh
. "$top/bench/bench-lib.sh"
bench_capt_dir
dir=$bench_capt_dir
verify=${BENCH_CAPT_VERIFY:-1}
bench_reps BENCH_CAPT_REPS 3 || exit 2
reps=$bench_reps
for p in "$app" "$gen" "$check"; do
	[ -x "$p" ] || { echo "no $p: build first" >&2; exit 2; }
done
case $fmt in pcapng|pcap) ;; *) echo "BENCH_CAPT_FORMAT: pcapng or pcap, not $fmt" >&2; exit 2 ;; esac
mkdir -p "$out/reps" || exit 2
if [ ! -d "$dir" ] || [ ! -w "$dir" ]; then
	echo "BENCH_CAPT_DIR $dir: not a writable directory" >&2
	exit 2
fi
fstype=$(stat -f -c %T "$dir" 2>/dev/null || echo unknown)
[ "$fstype" = tmpfs ] ||
	echo "warning: $dir is $fstype, not tmpfs: the figures include the storage" >&2
read -r -a extra <<< "${BENCH_EAL_EXTRA:-}"
read -r -a app_args <<< "${BENCH_CAPT_APP_ARGS:-}"

bench_eal_mem 2048 2048
mem=("${bench_mem[@]}")

{
	bench_machine_lines "$build" "$top"
	echo "kernel: $(uname -r)"
	echo "capture files: $dir ($fstype, $(df -h --output=avail "$dir" 2>/dev/null | tail -n 1 | tr -d ' ') free), format $fmt"
	echo "settings: ${secs} s per run, $reps repetition(s) alternating, EAL ${mem[*]} ${extra[*]}, app ${app_args[*]}, capture writers (allw, allqw) ${BENCH_CAPT_WRITERS:-one per RX lcore}"
} > "$out/machine.txt"

# The pipeline-capacity sweep's traffic (seed 3, no jumbo frames: net_pcap
# replays in infinite_rx mode only what fits one mbuf), and the same frames
# padded to 1500 B: bytes after the IP packet, as Ethernet padding is.
traffic_mix=$out/capture-traffic-mix.pcap
traffic_1500=$out/capture-traffic-mix1500.pcap
"$gen" "$traffic_mix" 3 4000 0 > /dev/null || { echo "cannot generate $traffic_mix" >&2; exit 2; }
python3 - "$traffic_mix" "$traffic_1500" <<'PY' || { echo "cannot write $traffic_1500" >&2; exit 2; }
import struct, sys
src = open(sys.argv[1], "rb").read()
out = [src[:24]]
pos = 24
while pos + 16 <= len(src):
    sec, usec, caplen, wirelen = struct.unpack_from("<IIII", src, pos)
    data = src[pos + 16:pos + 16 + caplen]
    pos += 16 + caplen
    if caplen < 1500:
        data += bytes(1500 - caplen)
    out.append(struct.pack("<IIII", sec, usec, len(data), max(wirelen, len(data))) + data)
open(sys.argv[2], "wb").write(b"".join(out))
PY

# lcore arguments for main + lc RX lcores: one CPU each where there are
# enough, else the main lcore (asleep but every 10 ms) shares the first
# RX lcore's CPU.
lcore_args() {
	local lc=$1 ncpu map i
	ncpu=$(nproc)
	if [ $((lc + 1)) -le "$ncpu" ]; then
		echo "-l 0-$lc"
		return
	fi
	map="0@0"
	for ((i = 1; i <= lc; i++)); do map+=",$i@$(((i - 1) % ncpu))"; done
	echo "--lcores $map"
}

failed=0
modes=${BENCH_CAPT_MODES:-host-mapped cpu}
for mode in $modes; do
	if [ "$mode" = cpu ]; then margs=(--cpu); else margs=(--mem "$mode"); fi
	for traffic in ${BENCH_CAPT_TRAFFIC:-mix mix1500}; do
		case $traffic in
		mix) tfile=$traffic_mix ;;
		mix1500) tfile=$traffic_1500 ;;
		*) echo "BENCH_CAPT_TRAFFIC: mix or mix1500, not $traffic" >&2; exit 2 ;;
		esac
		for lc in ${BENCH_CAPT_LCORES:-1 2 4}; do
			vdev=net_pcap0,infinite_rx=1
			for ((i = 0; i < lc; i++)); do vdev+=",rx_pcap=$tfile"; done
			# infinite_rx holds the whole file in mbufs, per queue.
			pool=(--mbufs $((lc * 12288 + 16384)))
			# shellcheck disable=SC2207
			lcores=($(lcore_args "$lc"))
			runs=${BENCH_CAPT_RUNS:-off tcp all tcpq allq}
			for run in $runs; do
				rm -f "$out/capt-$mode-$traffic-$lc-$run".{json,log,file,failed} \
					"$out/reps/capt-$mode-$traffic-$lc-$run".r*.*
			done
			for ((r = 1; r <= reps; r++)); do
				for run in $runs; do
					name=capt-$mode-$traffic-$lc-$run
					rn=$out/reps/$name.r$r
					# One file, or (tcpq, allq) a file per queue.
					wargs=()
					case $run in
					*w) wargs=(--capture-writers "${BENCH_CAPT_WRITERS:-$lc}") ;;
					esac
					case $run in
					*q|*qw) cap=$dir/gpurx-$name-$$-q%q.$fmt
					    caps=()
					    for ((i = 0; i < lc; i++)); do
						caps+=("$dir/gpurx-$name-$$-q$i.$fmt")
					    done ;;
					*) cap=$dir/gpurx-$name-$$.$fmt; caps=("$cap") ;;
					esac
					case $run in
					off) rargs=(--filter tcp) ;;
					tcp|tcpq) rargs=(--filter tcp --format "$fmt" --write "$cap") ;;
					all|allq|allw|allqw) rargs=(--format "$fmt" --write "$cap" "${wargs[@]}") ;;
					*) echo "BENCH_CAPT_RUNS: off, tcp, all, tcpq, allq, allw or allqw, not $run" >&2; exit 2 ;;
					esac
					rm -f "${caps[@]}" "$rn.file"
					timeout $((secs + 120)) "$app" "${mem[@]}" --file-prefix "$name" \
						"${lcores[@]}" "${extra[@]}" --vdev "$vdev" -- \
						"${margs[@]}" "${pool[@]}" --queues "$lc" --ts none \
						--duration "$secs" --quiet --json "$rn.json" \
						"${rargs[@]}" "${app_args[@]}" > "$rn.log" 2>&1
					rc=$?
					why=
					if [ $rc -ne 0 ] || [ ! -s "$rn.json" ]; then
						why="exit $rc, see reps/$name.r$r.log"
					elif [ "$run" != off ]; then
						size=0
						for c in "${caps[@]}"; do
							size=$((size + $(stat -c %s "$c" 2>/dev/null || echo 0)))
						done
						echo "{\"file_bytes\": $size, \"files\": ${#caps[@]}, \"verified\": $verify, \"writers\": ${wargs[1]:-0}}" > "$rn.file"
						if [ "$verify" = 1 ]; then
							# The files of a run are read back at
							# once, a reader each: reading them one
							# after the other took most of the
							# sweep's time (GBs a file on tmpfs).
							pids=()
							for ((i = 0; i < ${#caps[@]}; i++)); do
								"$check" --valid "${caps[i]}" > "$rn.valid$i" 2> "$rn.valid$i.err" &
								pids+=($!)
							done
							wait "${pids[@]}"
							n=0
							for ((i = 0; i < ${#caps[@]}; i++)); do
								c=${caps[i]}
								cat "$rn.valid$i.err" >> "$rn.log"
								k=$(sed -n 's/.* is valid, \([0-9]*\) packets$/\1/p' "$rn.valid$i")
								if [ -z "$k" ]; then
									why="capture file $(basename "$c") invalid, see reps/$name.r$r.log"
									break
								fi
								n=$((n + k))
							done
							rm -f "$rn".valid*
							want=$(sed -n 's/^ *"captured": \([0-9]*\),$/\1/p' "$rn.json")
							if [ -z "$why" ] && [ "$n" != "$want" ]; then
								why="capture files hold $n packets, the run says $want"
							fi
						fi
					fi
					rm -f "${caps[@]}"
					if [ -n "$why" ]; then
						echo "capture mode=$mode traffic=$traffic lcores=$lc run=$run rep=$r FAILED ($why)"
						echo "repetition $r: $why" >> "$out/$name.failed"
						failed=1
						continue
					fi
					python3 "$top/bench/plot.py" --capture-line "$rn.json"
				done
			done
			# A run any of whose repetitions failed has no median.
			for run in $runs; do
				name=capt-$mode-$traffic-$lc-$run
				[ -f "$out/$name.failed" ] ||
					bench_keep_median "$out" "$name" "$reps" rx || failed=1
			done
		done
	done
done 2>&1
rm -f "$traffic_mix" "$traffic_1500"
{
	python3 "$top/bench/plot.py" --capture-table "$out" &&
	echo "Each cell: of $reps repetition(s) of every run, alternating, the one of" \
		"median Mpps (every one in reps/)."
} > "$out/capture.md" || failed=1
cat "$out/capture.md"
exit $failed
