#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Pipeline capacity of dpdk-gpu-rx: packets/s received and fully processed
# from sources that cost little per packet, per memory mode, packet size and
# number of RX lcores; `--cpu` is the baseline. Sources: net_pcap with
# infinite_rx=1 replaying a generated pcap of realistic traffic (every
# protocol, 64..1500 B and jumbo frames: "mix"), and net_null (fixed sizes,
# all-zero frames: the cheapest possible input). Each run lasts
# BENCH_CAP_SECONDS (default 4) and writes its summary JSON; the table goes
# to OUT_DIR/capacity.md, followed by each pipeline's ratio to the source
# alone at the same size and lcores, and the host and GPU memory each
# dpdk-gpu-rx run holds (and capacity.png where matplotlib is installed;
# the machine, revision and settings to OUT_DIR/machine.txt),
# one line per run to stdout. Mode "source" is the source alone
# (bench-rx-source: RX burst and free, nothing else): the ceiling of any
# pipeline fed by it on those lcores. Modes "gpu" and "gpu-split" (packets
# in GPU memory; split: headers in host memory) take their packets from
# net_gpudma replaying the same mix, or generated frames of the size, into
# GPU memory; mode "gpu-source" is that port alone (bench-rx-source --gpu:
# RX into GPU memory and free), their ceiling, which their ratios are
# taken against.
#
# Usage: bench/pipeline-capacity.sh OUT_DIR [BUILD_DIR]
# Env: BENCH_EAL_EXTRA (e.g. "-d .gpu-bundle/pmds -d build/.../librte_gpu_cuda.so"),
#      BENCH_CAP_MODES (default "source cpu host-mapped staged"; also
#      gpu-source, gpu, gpu-split),
#      BENCH_CAP_BURST (RX burst = packets per GPU ring item, default 32),
#      BENCH_CAP_SIZES (default "mix 64 512 1500"; mix = the pcap source),
#      BENCH_CAP_LCORES ("1 2 4"; sizes other than 64 and mix on the
#      first only, unless BENCH_CAP_EVERY_LCORES=1),
#      BENCH_CAP_APP_ARGS (more dpdk-gpu-rx options, e.g. "--ring-items 16").
# Exit: 0, 1 when a run failed (its row says so), 2 usage or missing build.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: $0 OUT_DIR [BUILD_DIR]}
build=${2:-$top/build}
app=$build/examples/gpu_rx/app/dpdk-gpu-rx
source_bench=$build/bench/bench-rx-source
secs=${BENCH_CAP_SECONDS:-4}
burst=${BENCH_CAP_BURST:-32}
mkdir -p "$out"
[ -x "$app" ] && [ -x "$source_bench" ] ||
	{ echo "no $app or $source_bench: build first" >&2; exit 2; }
read -r -a extra <<< "${BENCH_EAL_EXTRA:-}"
read -r -a app_args <<< "${BENCH_CAP_APP_ARGS:-}"

# shellcheck source=bench/bench-lib.sh
. "$top/bench/bench-lib.sh"
bench_eal_mem 2048 2048
mem=("${bench_mem[@]}")

# What the table was measured on, from what.
{
	bench_machine_lines "$build" "$top"
	echo "settings: ${secs} s per point, --burst $burst, EAL ${mem[*]} ${extra[*]}, app ${app_args[*]}"
} > "$out/machine.txt"

# Realistic traffic for the pcap source (seed 3; no jumbo frames: net_pcap
# replays in infinite_rx mode only what fits one mbuf).
gen=$build/tests/gpu_rx/e2e/gpurx-e2e-genpcap
traffic=$out/capacity-traffic.pcap
"$gen" "$traffic" 3 4000 0 > /dev/null || { echo "cannot generate $traffic" >&2; exit 2; }

table=$out/capacity.md
# Bit rates only where bytes moved: bench/plot.py says which (bytes_moved).
python3 "$top/bench/plot.py" --capacity-header > "$table"
# What each dpdk-gpu-rx configuration holds, from its "memory:" lines.
mem_table=$out/memory.md
{
	echo "| mode | packet bytes | RX lcores | held (as dpdk-gpu-rx prints it at start) |"
	echo "| --- | --- | --- | --- |"
} > "$mem_table"

failed=0
for mode in ${BENCH_CAP_MODES:-source cpu host-mapped staged}; do
	for size in ${BENCH_CAP_SIZES:-mix 64 512 1500}; do
		for lc in ${BENCH_CAP_LCORES:-1 2 4}; do
			# More lcores only for the smallest packets and the
			# realistic mix (that is where the per-packet cost
			# limits), unless BENCH_CAP_EVERY_LCORES=1.
			[ "${BENCH_CAP_EVERY_LCORES:-0}" != 1 ] && [ "$size" != 64 ] &&
				[ "$size" != mix ] && [ "$lc" != 1 ] && continue
			if [[ $mode == gpu* ]]; then
				file=$traffic
				if [ "$size" != mix ]; then
					file=$out/capacity-$size.pcap
					[ -s "$file" ] || "$gen" --size "$size" "$file" 3 4096 \
						> /dev/null || { echo "cannot generate $file" >&2; exit 2; }
				fi
				# Replayed forever, RX by the scatter kernel, frames
				# dealt round-robin to the queues.
				vdev=net_gpudma0,rx_pcap=$file,loop=0,queues=$lc,scatter=1
				pool=()
			elif [ "$size" = mix ]; then
				# One replay file per queue: net_pcap has one
				# rx_pcap per RX queue.
				vdev=net_pcap0,infinite_rx=1
				for ((i = 0; i < lc; i++)); do vdev+=",rx_pcap=$traffic"; done
				# infinite_rx keeps the whole file in mbufs of the
				# pool, per queue, besides what the pipeline holds.
				pool=(--mbufs $((lc * 4096 + 16384)))
			else
				vdev=net_null0,size=$size,copy=0
				pool=()
			fi
			name=cap-$mode-$size-$lc
			json=$out/$name.json
			if [ "$mode" = source ] || [ "$mode" = gpu-source ]; then
				# dpdk-gpu-rx --mem gpu's pool: GPU 0's memory.
				gpool=()
				[ "$mode" = gpu-source ] && gpool=(--gpu 0)
				timeout $((secs + 60)) "$source_bench" "${mem[@]}" \
					--file-prefix "$name" -l "0-$lc" "${extra[@]}" \
					--vdev "$vdev" -- "${pool[@]}" "${gpool[@]}" \
					--queues "$lc" --burst "$burst" --seconds "$secs" \
					--json "$json" > "$out/$name.log" 2>&1
				rc=$?
			else
				case $mode in
				cpu) margs=(--cpu) ;;
				gpu) margs=(--mem gpu --split off) ;;
				gpu-split) margs=(--mem gpu --split 128) ;;
				*) margs=(--mem "$mode") ;;
				esac
				timeout $((secs + 60)) "$app" "${mem[@]}" --file-prefix "$name" \
					-l "0-$lc" "${extra[@]}" \
					--vdev "$vdev" -- \
					"${margs[@]}" "${pool[@]}" --queues "$lc" --filter 'tcp port 443' \
					--duration "$secs" --json "$json" --ts none --burst "$burst" \
					"${app_args[@]}" \
					> "$out/$name.log" 2>&1
				rc=$?
			fi
			if [ $rc -ne 0 ] || [ ! -s "$json" ]; then
				echo "capacity mode=$mode size=$size lcores=$lc FAILED (exit $rc, see $name.log)"
				failed=1
				echo "| $mode | $size | $lc | failed (exit $rc) | | | |" >> "$table"
				continue
			fi
			python3 "$top/bench/plot.py" --capacity-row "$json" "$mode" \
				"$size" "$lc" >> "$table"
			if [ "$mode" != source ] && [ "$mode" != gpu-source ]; then
				held=$(sed -n 's/^memory: //p' "$out/$name.log" | paste -sd ';' | sed 's/;/; /g')
				if [ -z "$held" ]; then
					echo "capacity mode=$mode size=$size lcores=$lc: no memory line in $name.log"
					failed=1
				fi
				echo "| $mode | $size | $lc | ${held:-missing} |" >> "$mem_table"
			fi
		done
	done
done 2>&1
rm -f "$traffic" "$out"/capacity-[0-9]*.pcap
{
	echo
	python3 "$top/bench/plot.py" --capacity-ratios "$out" || failed=1
	echo
	echo "Memory held:"
	echo
	cat "$mem_table"
} >> "$table"
rm -f "$mem_table"
cat "$table"

# A plot of the table, where matplotlib is installed.
python3 "$top/bench/plot.py" --capacity "$out"
exit $failed
