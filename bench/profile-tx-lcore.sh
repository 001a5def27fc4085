#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Where a TX lcore of dpdk-gpu-tx spends its time: perf samples (cpu-clock,
# which works where no hardware counters are exposed, as in a VM) of the
# generator's TX lcores sending 64-byte frames, every one different, into
# net_gpudma, the case of bench/gen-tx-rate.sh that issue 35's TX-lcore
# goal is read from. Modes: "gpu" (frames built by the GPU in GPU memory)
# and "none" (frames handed out unbuilt: the ceiling the GPU build is
# judged against), each with the same ports, burst and ring items, so
# what one has beyond the other is the build's lcore cost. One run per
# mode and queue count; for each, the program's log and flat profiles of
# the TX lcores (threads rte-worker-*), by library and by symbol, go to
# OUT_DIR/profile-tx-<mode>-q<queues>.{log,txt}.
#
# Usage: bench/profile-tx-lcore.sh OUT_DIR [BUILD_DIR]
# Env: BENCH_EAL_EXTRA (as for gen-tx-rate.sh), PERF (the perf program,
#      default "perf"), BENCH_PROF_MODES (default "gpu none"),
#      BENCH_PROF_QUEUES (default "1 2 4"), BENCH_PROF_SECONDS (run
#      length, default 2), BENCH_PROF_SIZE (default 64), BENCH_TXR_BURST
#      and BENCH_TXR_ITEMS (as gen-tx-rate.sh: 256 and 32),
#      BENCH_PROF_KEEP=1 (keep each run's samples, .perf.data).
# Exit: 0, 1 a run failed or gave no samples, 2 usage or missing build,
# 77 no perf, or perf cannot sample here.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/bench-lib.sh
. "$top/bench/bench-lib.sh"
bench_tx_args "$@" || exit 2
bench_perf_check
read -r -a extra <<< "${BENCH_EAL_EXTRA:-}"
bench_eal_mem 2048 2048
size=${BENCH_PROF_SIZE:-64}
burst=${BENCH_TXR_BURST:-256}
items=${BENCH_TXR_ITEMS:-32}
bench_machine_lines "$build" "$top" > "$out/machine.txt"
# gen-tx-rate.sh's stream: every frame differs in source address and port.
stream="ipv4,udp,dst=10.1.0.1,var=ipv4.src:inc:10.0.0.1-10.0.255.254,var=udp.sport:inc:1024-65535,stamp=off,size=$size"

failed=0
for mode in ${BENCH_PROF_MODES:-gpu none}; do
	case $mode in
	gpu) margs=(--mem gpu) ;;
	none) margs=(--mem cpu --no-build) ;;
	*) echo "BENCH_PROF_MODES: gpu or none, not $mode" >&2; exit 2 ;;
	esac
	for q in ${BENCH_PROF_QUEUES:-1 2 4}; do
		name=profile-tx-$mode-q$q
		bench_perf_lcores "$out/$name" "$q" \
			"$tx" "${bench_mem[@]}" --file-prefix "$name" -l "0-$q" \
			"${extra[@]}" --vdev "net_gpudma0,queues=$q" -- \
			--stream "$stream" "${margs[@]}" --queues "$q" \
			--burst "$burst" --ring-items "$items" \
			--duration "${BENCH_PROF_SECONDS:-2}" --wait-link 0 \
			--json "$out/$name.json" || { failed=1; continue; }
		mpps=$(python3 -c 'import json, sys; print("%.1f" % (json.load(open(sys.argv[1]))["pps"] / 1e6))' \
			"$out/$name.json" 2> /dev/null)
		echo "profile-tx mode=$mode queues=$q (${mpps:-?} Mpps under perf):"
		sed -n '2,7p' "$out/$name.txt"
	done
done
exit $failed
