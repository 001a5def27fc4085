#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# net_gpudma on a real GPU (H100): the port filling mbufs in GPU memory
# with the copy engine, read back by a small consumer, and its own rate
# against the PCIe host-to-device bandwidth measured in the same run, with
# 1, 2 and 4 queues, by batched copies and by the scatter kernel (with and
# without bulk copies of large frames, launched a burst and persistent,
# fill=persistent, compared at each queue count), once a copy a segment
# and once with the frames coming from a net_pcap port (rx_port=). Also
# runs the port's CI tests (fake CUDA) first.
#
# Usage: bench/gpudma-gpu.sh [OUT_DIR [BUILD_DIR]]
#   OUT_DIR    logs and summary.txt (default: gpudma-results-<date>)
#   BUILD_DIR  default build/; built with ninja (or scripts/setup.sh) first
# Environment: BENCH_GPU_PCI (default nvidia-smi's GPU 0), GPUDMA_SECONDS
# (default 5 a run), GPUDMA_QUEUES (default "1 2 4"), GPUDMA_BURST (256),
# GPUDMA_BUILD=0 (use BUILD_DIR as it is, e.g. a bundle's; no CI tests).
# Exit: 0 all passed, 1 a check failed, 2 set-up, 77 no GPU.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-gpudma-results-$(date -u +%Y%m%dT%H%MZ)}
build=${2:-$top/build}
case $build in /*) ;; *) build=$PWD/$build ;; esac
mkdir -p "$out" || exit 2

if [ "${GPUDMA_BUILD:-1}" = 0 ]; then
	: # a bundle's build/: binaries as they are
elif [ -f "$build/build.ninja" ]; then
	ninja -C "$build" > "$out/build.log" 2>&1 ||
		{ tail -n 30 "$out/build.log"; echo "build failed" >&2; exit 2; }
else
	bash "$top/scripts/setup.sh" "$build" > "$out/build.log" 2>&1 ||
		{ tail -n 30 "$out/build.log"; echo "setup failed" >&2; exit 2; }
fi
if ! command -v nvidia-smi > /dev/null 2>&1 || [ ! -e /dev/nvidia0 ]; then
	echo "SKIP: no NVIDIA GPU here"
	exit 77
fi

# EAL memory as bench/run-all.sh takes it (hugepages where there are),
# DPDK's libraries from a bundle where the system has none.
# shellcheck source=bench/bench-lib.sh
. "$top/bench/bench-lib.sh"
bench_eal_mem 2048 4096
eal=("${bench_mem[@]}" --file-prefix "gpudma-$$" --log-level lib.eal:warning)
bundle=$top/.gpu-bundle
if [ -d "$bundle/lib" ] && env -u LD_LIBRARY_PATH ldd "$build/bench/bench-gpudma" 2>/dev/null |
		grep -q 'librte_eal.* not found'; then
	export LD_LIBRARY_PATH=$bundle/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
	eal+=(-d "$bundle/pmds")
fi

gpu_pci=${BENCH_GPU_PCI:-$(nvidia-smi --query-gpu=pci.bus_id \
	--format=csv,noheader -i 0 | head -n 1 | tr 'A-F' 'a-f' |
	sed -E 's/^0000([0-9a-f]{4}):/\1:/')}
# The queues' lcores on the GPU's NUMA node, main lcore first.
cpus=$(cat "/sys/bus/pci/devices/$gpu_pci/local_cpulist" 2>/dev/null ||
	echo "0-$(($(nproc) - 1))")
expand() {
	local part lo hi
	for part in ${1//,/ }; do
		lo=${part%-*} hi=${part#*-}
		seq "$lo" "$hi"
	done
}
mapfile -t cpu_list < <(expand "$cpus")

status=0
{
	echo "date: $(date -u +%FT%TZ)"
	echo "revision: $(bench_revision "$build" "$top")"
	echo "EAL memory: ${bench_mem[*]}"
	nvidia-smi --query-gpu=name,driver_version,pci.bus_id,pcie.link.gen.current,pcie.link.width.current \
		--format=csv,noheader -i 0
} > "$out/summary.txt"

if command -v meson > /dev/null 2>&1 && [ "${GPUDMA_BUILD:-1}" != 0 ]; then
	echo "== the port's CI tests (fake CUDA)"
	meson test -C "$build" --suite net_gpudma --print-errorlogs \
		> "$out/ci-tests.log" 2>&1 || { echo "FAIL: CI tests"; status=1; }
	grep -E "^(Ok|Fail):" "$out/ci-tests.log" | tee -a "$out/summary.txt"
fi

# "Q" (batched copies), "Q:no-batch" (one cuMemcpyHtoDAsync a segment),
# "Q:scatter" (the kernel, one launch a fill of a quarter ring; frames of
# 512 B and more cross PCIe as one copy a run first: bulk=auto),
# "Q:scatter:bulk0" (the kernel reading every frame over PCIe itself),
# "Q:persistent" (fill=persistent: one kernel a queue for its life, the
# bursts posted to it, no launch) or "Q:scatter:rx-port" (frames from a
# net_pcap port through rx_port=).
runs=()
for q in ${GPUDMA_QUEUES:-1 2 4}; do
	runs+=("$q" "$q:scatter" "$q:scatter:bulk0" "$q:persistent")
done
runs+=(1:no-batch 1:scatter:rx-port)
for run in "${runs[@]}"; do
	q=${run%%:*}
	flag=()
	IFS=: read -r -a parts <<< "${run#"$q"}"
	for f in "${parts[@]}"; do
		case $f in
		"") ;;
		bulk0) flag+=(--bulk 0) ;;
		persistent) flag+=(--fill persistent) ;;
		*) flag+=("--$f") ;;
		esac
	done
	name=gpudma-q$q$(printf '%s' "${run#"$q"}" | tr ':' '-')
	# The GPU node's CPUs 1..q+1: the main lcore and one a queue.
	if [ $((q + 2)) -gt "${#cpu_list[@]}" ]; then
		echo "== $q queues: not enough CPUs on the GPU's node, skipped"
		continue
	fi
	lcores=$(IFS=,; echo "${cpu_list[*]:1:$((q + 1))}")
	echo "== bench-gpudma, $q queue(s) ${flag[*]}, lcores $lcores"
	"$build/bench/bench-gpudma" "${eal[@]}" -a "$gpu_pci" -l "$lcores" -- \
		--queues "$q" --seconds "${GPUDMA_SECONDS:-5}" \
		--burst "${GPUDMA_BURST:-256}" --dir "$out" "${flag[@]}" \
		> "$out/$name.log" 2>&1
	rc=$?
	cat "$out/$name.log"
	[ "$rc" -eq 0 ] || { echo "FAIL: bench-gpudma exit $rc"; status=1; }
	{
		echo "-- $q queue(s) ${flag[*]}, exit $rc"
		grep -E "^(GPU |cuMemcpyHtoD|PASS|FAIL|gpudma .* total)" "$out/$name.log"
	} >> "$out/summary.txt"
done
# fill=persistent against the launched kernel (bulk=0: both read every
# frame over PCIe) of the same run at each queue count: 64 B Mpps, 1500 B
# GB/s and its share of the run's pinned cuMemcpyHtoD.
total() { # LOG SIZE FIELD: the total line's Mpps (2) or GB/s (4)
	[ -f "$1" ] && awk -v s="$2" -v f="$3" '$1 == "gpudma" && $2 == "gpu" &&
		$3 == s && $5 == "total:" { print $(5 + f); exit }' "$1"
}
{
	echo "-- fill=persistent against fill=launch (bulk=0), same run"
	printf '%-7s %12s %12s %6s %14s %14s %6s %6s\n' queues \
		"64B launch" "64B pers." ratio "1500B launch" "1500B pers." \
		"%H2D" ratio
	for q in ${GPUDMA_QUEUES:-1 2 4}; do
		l=$out/gpudma-q$q-scatter-bulk0.log p=$out/gpudma-q$q-persistent.log
		lm=$(total "$l" 64 1) pm=$(total "$p" 64 1)
		lg=$(total "$l" 1500 3) pg=$(total "$p" 1500 3)
		h2d=$(grep -m1 -oE 'cuMemcpyHtoD, pinned, [0-9]+ MiB: [0-9.]+' "$p" |
			awk '{ print $NF }')
		# Parenthesised: a bare > in printf's arguments redirects.
		awk -v q="$q" -v lm="${lm:-0}" -v pm="${pm:-0}" -v lg="${lg:-0}" \
			-v pg="${pg:-0}" -v h="${h2d:-0}" 'BEGIN {
			printf "%-7s %12.2f %12.2f %6.2f %14.2f %14.2f %5.0f%% %6.2f\n",
				q, lm, pm, (lm > 0 ? pm / lm : 0), lg, pg,
				(h > 0 ? 100 * pg / h : 0), (lg > 0 ? pg / lg : 0) }'
	done
} | tee -a "$out/summary.txt"
rm -f "$out"/bench-gpudma-*.pcap
echo "== summary ($out/summary.txt)"
cat "$out/summary.txt"
exit $status
