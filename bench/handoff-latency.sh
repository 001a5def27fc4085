#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# CPU -> GPU -> CPU handoff latency through the shipped ring (issue 34,
# goal 1): bench-handoff with the packets in host memory and in GPU
# memory, each run measuring its own flag floor first. A line per packet
# size, burst and memory ("handoff pkt=... [mem=gpu] burst=...
# median=...us p99=...us ... floor_median=...us ... vs_floor=...", as
# bench-handoff prints it) into OUT_DIR/handoff.txt and stdout; each run's
# log and JSON in OUT_DIR/<mem>.log and OUT_DIR/<mem>/; OUT_DIR/machine.txt.
#
# Usage: bench/handoff-latency.sh OUT_DIR [BUILD_DIR]
# Env: BENCH_HO_MEMS (default "host gpu"), BENCH_HO_BURSTS (default
#        "32,1024"), BENCH_HO_SIZES (default 64), BENCH_HO_ARGS (more
#        bench-handoff options, e.g. "--lap-tags off"), BENCH_LCORE (the
#        lcore, default 1), BENCH_GPU_PCI (as run-all.sh),
#      BENCH_EAL_EXTRA (more EAL options, e.g. "-d .gpu-bundle/pmds").
# Exit: 0; 1 when a run failed; 2 usage or missing build; 77 no GPU.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/bench-lib.sh
. "$top/bench/bench-lib.sh"
bench_prog_args bench/bench-handoff "$@" || exit 2
bench_eal_mem 2048 2048
bench_gpu_pci
read -r -a extra <<< "${BENCH_EAL_EXTRA:-}"
read -r -a args <<< "${BENCH_HO_ARGS:-}"
bench_machine_lines "$build" "$top" > "$out/machine.txt"

failed=0 skipped=0
: > "$out/handoff.txt"
for mem in ${BENCH_HO_MEMS:-host gpu}; do
	case $mem in
	host|gpu) ;;
	*) echo "BENCH_HO_MEMS: host or gpu, not $mem" >&2; exit 2 ;;
	esac
	"$prog" "${bench_mem[@]}" --file-prefix "handoff-$mem" \
		-l "${BENCH_LCORE:-1}" "${bench_gpu_args[@]}" "${extra[@]}" -- \
		--out "$out/$mem" --pkt-mem "$mem" \
		--bursts "${BENCH_HO_BURSTS:-32,1024}" \
		--sizes "${BENCH_HO_SIZES:-64}" "${args[@]}" \
		> "$out/$mem.log" 2>&1
	rc=$?
	case $rc in
	0) grep '^handoff pkt=' "$out/$mem.log" | tee -a "$out/handoff.txt" ;;
	77) skipped=$((skipped + 1))
		echo "handoff mem=$mem skipped: $(grep -m1 -E 'SKIP|skipped' "$out/$mem.log")" ;;
	*) failed=1
		echo "handoff mem=$mem FAILED (exit $rc, see $mem.log)" |
			tee -a "$out/handoff.txt" ;;
	esac
done
[ $failed = 0 ] && [ "$skipped" -gt 0 ] && [ ! -s "$out/handoff.txt" ] && exit 77
exit $failed
