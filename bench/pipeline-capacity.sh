#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Pipeline capacity of dpdk-gpu-rx: packets/s received and fully processed
# from a source that costs little per packet (net_null), per memory mode,
# packet size and number of RX lcores; `--cpu` is the baseline. Each run
# lasts BENCH_CAP_SECONDS (default 4) and writes its summary JSON; the
# table goes to OUT_DIR/capacity.md and one line per run to stdout.
#
# Usage: bench/pipeline-capacity.sh OUT_DIR [BUILD_DIR]
# Env: BENCH_EAL_EXTRA (e.g. "-d .gpu-bundle/pmds -d build/.../librte_gpu_cuda.so"),
#      BENCH_CAP_MODES (default "cpu host-mapped staged"),
#      BENCH_CAP_SIZES (default "64 512 1500"), BENCH_CAP_LCORES ("1 2 4").
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: $0 OUT_DIR [BUILD_DIR]}
build=${2:-$top/build}
app=$build/examples/gpu_rx/app/dpdk-gpu-rx
secs=${BENCH_CAP_SECONDS:-4}
mkdir -p "$out"
[ -x "$app" ] || { echo "no $app: build first" >&2; exit 2; }
read -r -a extra <<< "${BENCH_EAL_EXTRA:-}"

free_huge=$(awk '/^HugePages_Free:/ { print $2 }' /proc/meminfo 2>/dev/null)
if [ "${free_huge:-0}" -ge 1024 ] && grep -q hugetlbfs /proc/mounts; then
	mem=(-m 2048)
else
	mem=(--no-huge -m 2048 --no-shconf)
fi

table=$out/capacity.md
{
	echo "| mode | packet bytes | RX lcores | Mpps | Gbit/s | dropped (ring full) | mbufs returned |"
	echo "| --- | --- | --- | --- | --- | --- | --- |"
} > "$table"

for mode in ${BENCH_CAP_MODES:-cpu host-mapped staged}; do
	for size in ${BENCH_CAP_SIZES:-64 512 1500}; do
		for lc in ${BENCH_CAP_LCORES:-1 2 4}; do
			# More lcores only for the smallest packets: that is
			# where the per-packet cost limits.
			[ "$size" != 64 ] && [ "$lc" != 1 ] && continue
			name=cap-$mode-$size-$lc
			json=$out/$name.json
			if [ "$mode" = cpu ]; then margs=(--cpu); else margs=(--mem "$mode"); fi
			timeout $((secs + 60)) "$app" "${mem[@]}" --file-prefix "$name" \
				-l "0-$lc" "${extra[@]}" \
				--vdev "net_null0,size=$size,copy=0" -- \
				"${margs[@]}" --queues "$lc" --filter 'tcp port 443' \
				--duration "$secs" --json "$json" --ts none \
				> "$out/$name.log" 2>&1
			rc=$?
			if [ $rc -ne 0 ] || [ ! -s "$json" ]; then
				echo "capacity mode=$mode size=$size lcores=$lc FAILED (exit $rc, see $name.log)"
				echo "| $mode | $size | $lc | failed (exit $rc) | | | |" >> "$table"
				continue
			fi
			python3 - "$json" "$mode" "$size" "$lc" >> "$table" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
mode, size, lc = sys.argv[2:5]
el = j["elapsed_s"] or 1
mpps = j["rx_packets"] / el / 1e6
gbps = j["rx_bytes"] * 8 / el / 1e9
d = j["dropped"]
m = j["mbufs"]
print(f"| {mode} | {size} | {lc} | {mpps:.2f} | {gbps:.2f} | {d.get('ring_full', 0)} | {m['returned']}/{m['total']} |")
print(f"capacity mode={mode} size={size} lcores={lc} rate={mpps:.2f}Mpps {gbps:.2f}Gbps ring_full={d.get('ring_full', 0)}", file=sys.stderr)
PY
		done
	done
done 2>&1
cat "$table"
