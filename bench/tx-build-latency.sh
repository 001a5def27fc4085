#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# The generator's build latency (issue 35, goal 2): dpdk-gpu-tx
# --build-breakdown, one burst at a time, paced, per case a run that
# measures its own flag floor first, then splits posted -> DONE seen into
# post, handoff, load, build and publish (doc/gpu_tx.md). A case is
# MEM:SIZES: MEM gpu (net_gpudma, frames in GPU memory) or host-mapped
# (net_null), SIZES one frame size or several joined by "+" (a stream
# each). Output: a line per case ("txbuild mem=... sizes=... floor_us=...
# total_us=... post_us=... handoff_us=... load_us=... build_us=...
# publish_us=... ratio=...": medians, ratio the total's over the floor's)
# into OUT_DIR/txbuild.txt and stdout; OUT_DIR/<case>.json and .log each
# run's own; OUT_DIR/machine.txt.
#
# Usage: bench/tx-build-latency.sh OUT_DIR [BUILD_DIR]
# Env: BENCH_TXB_CASES (default "gpu:100 host-mapped:100 host-mapped:300
#        gpu:100+90"), BENCH_TXB_BURST (default 32), BENCH_TXB_RATE
#        (default 400kpps), BENCH_TXB_SECONDS (default 2),
#      BENCH_EAL_EXTRA (more EAL options, e.g. "-d .gpu-bundle/pmds").
# Exit: 0; 1 when a case failed; 2 usage or missing build; 77 no GPU.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/bench-lib.sh
. "$top/bench/bench-lib.sh"
bench_tx_args "$@" || exit 2
read -r -a cases <<< "${BENCH_TXB_CASES:-gpu:100 host-mapped:100 host-mapped:300 gpu:100+90}"
burst=${BENCH_TXB_BURST:-32}
rate=${BENCH_TXB_RATE:-400kpps}
secs=${BENCH_TXB_SECONDS:-2}

bench_eal_mem 2048 2048
read -r -a extra <<< "${BENCH_EAL_EXTRA:-}"
bench_machine_lines "$build" "$top" > "$out/machine.txt"
command -v nvidia-smi > /dev/null && nvidia-smi -L 2> /dev/null | grep -q '^GPU ' ||
	{ echo "skipped: no GPU (nvidia-smi lists none)"; exit 77; }

failed=0
: > "$out/txbuild.txt"
for c in "${cases[@]}"; do
	mem=${c%%:*} sizes=${c#*:}
	case $mem in
	gpu) vdev=net_gpudma0 ;;
	host-mapped) vdev=net_null0 ;;
	*) echo "BENCH_TXB_CASES: $c: memory gpu or host-mapped" >&2; exit 2 ;;
	esac
	streams=() k=0
	for s in ${sizes//+/ }; do
		# Streams apart by their destination, as the generator's
		# streams of a tester are.
		streams+=(--stream "ipv4,udp,dst=10.9.$k.1,size=$s")
		k=$((k + 1))
	done
	name=$mem-${sizes//+/_}
	"$tx" "${bench_mem[@]}" --file-prefix txb -l 0-1 "${extra[@]}" \
		--vdev "$vdev" -- --mem "$mem" "${streams[@]}" --burst "$burst" \
		--rate "$rate" --duration "$secs" --wait-link 0 -q \
		--build-breakdown --json "$out/$name.json" > "$out/$name.log" 2>&1
	rc=$?
	line=$(python3 - "$out/$name.json" "$mem" "$sizes" <<'PY' 2> /dev/null
import json, sys
b = json.load(open(sys.argv[1]))["build_breakdown_us"]
parts = " ".join("%s_us=%.3f" % (k, b[k]["median"]) for k in
                 ("floor", "total", "post", "handoff", "load", "build",
                  "publish"))
print("txbuild mem=%s sizes=%s %s ratio=%.2f" % (sys.argv[2], sys.argv[3],
      parts, b["total"]["median"] / b["floor"]["median"]))
PY
	)
	if [ $rc -ne 0 ] || [ -z "$line" ]; then
		line="txbuild mem=$mem sizes=$sizes FAILED (exit $rc, see $name.log)"
		failed=1
	fi
	echo "$line" | tee -a "$out/txbuild.txt"
done
exit $failed
