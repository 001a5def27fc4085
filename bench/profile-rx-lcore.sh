#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Where an RX lcore of dpdk-gpu-rx spends its time: perf samples (cpu-clock,
# which works where no hardware counters are exposed, as in a VM) of the
# pipeline fed by net_null with 64-byte packets, the case the RX lcores'
# CPU time bounds. One run per lcore count; for each, the program's log
# and flat profiles of the RX lcores (threads rte-worker-*), by library
# and by symbol, go to OUT_DIR/profile-<mode>-<lcores>.{log,txt}.
#
# Usage: bench/profile-rx-lcore.sh OUT_DIR [BUILD_DIR]
# Env: BENCH_EAL_EXTRA (as for pipeline-capacity.sh), PERF (the perf
#      program, default "perf"), BENCH_PROF_LCORES (default "1 8"),
#      BENCH_PROF_MODE (host-mapped, the default, staged or cpu),
#      BENCH_PROF_SECONDS (run length, default 3),
#      BENCH_PROF_ARGS (more dpdk-gpu-rx options; default "--burst 128"),
#      BENCH_PROF_KEEP=1 (keep each run's samples, .perf.data).
# Exit: 0, 1 a run failed or gave no samples, 2 usage or missing build,
# 77 no perf, or perf cannot sample here (perf_event_paranoid, seccomp).
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: $0 OUT_DIR [BUILD_DIR]}
build=${2:-$top/build}
app=$build/examples/gpu_rx/app/dpdk-gpu-rx
[ -x "$app" ] || { echo "no $app: build first" >&2; exit 2; }
# shellcheck source=bench/bench-lib.sh
. "$top/bench/bench-lib.sh"
bench_perf_check
read -r -a extra <<< "${BENCH_EAL_EXTRA:-}"
read -r -a app_args <<< "${BENCH_PROF_ARGS:---burst 128}"
mode=${BENCH_PROF_MODE:-host-mapped}
case $mode in
cpu) margs=(--cpu) ;;
host-mapped|staged) margs=(--mem "$mode") ;;
*) echo "BENCH_PROF_MODE: host-mapped, staged or cpu, not $mode" >&2; exit 2 ;;
esac
mkdir -p "$out"
bench_eal_mem 2048 2048
mem=("${bench_mem[@]}")

failed=0
for lc in ${BENCH_PROF_LCORES:-1 8}; do
	name=profile-$mode-$lc
	bench_perf_lcores "$out/$name" "$lc" \
		"$app" "${mem[@]}" --file-prefix "$name" -l "0-$lc" \
		"${extra[@]}" --vdev net_null0,size=64,copy=0 -- \
		"${margs[@]}" --queues "$lc" --filter 'tcp port 443' \
		--duration "${BENCH_PROF_SECONDS:-3}" --ts none "${app_args[@]}" ||
		{ failed=1; continue; }
	rate=$(grep -o 'rx [0-9]* pps' "$out/$name.log" | tail -n 1)
	echo "profile mode=$mode lcores=$lc ($rate in the last second):"
	sed -n '2,7p' "$out/$name.txt"
done
exit $failed
