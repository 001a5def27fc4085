#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Runs the GPU test suites on a machine with an NVIDIA GPU, from a build made
# by meson (here or on another machine: DPDK's libraries may travel in
# .gpu-bundle/, made by scripts/make-gpu-bundle.sh). Writes one log per
# suite and a summary (results.md) into OUT_DIR.
#
# Usage: scripts/run-gpu-suite.sh [OUT_DIR] [BUILD_DIR]
# (GPU_BUNDLE_DIR: a bundle elsewhere than .gpu-bundle; GPU_SUITE_TIMEOUT:
# seconds a case may take, default 300, past it the case fails)
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$top/build/gpu-results}
build=${2:-$top/build}
bundle=${GPU_BUNDLE_DIR:-$top/.gpu-bundle}
mkdir -p "$out"

eal=(--no-huge -m 2048 --no-shconf --file-prefix gpu-suite
	--log-level=pmd.gpu.cuda:info)
if [ -d "$bundle/lib" ]; then
	export LD_LIBRARY_PATH=$bundle/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
	eal+=(-d "$bundle/pmds")
fi
# The programs are linked with the build's librte_gpu_cuda.so: no -d for it.

summary=$out/results.md
gpu=$(nvidia-smi --query-gpu=name,driver_version,pci.bus_id --format=csv,noheader 2>/dev/null | head -n 1)
{
	echo "# GPU suite results"
	echo
	echo "- date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
	echo "- GPU, driver, PCI: ${gpu:-none found by nvidia-smi}"
	echo "- host: $(. /etc/os-release && echo "$PRETTY_NAME"), kernel $(uname -r)"
	echo "- command: scripts/run-gpu-suite.sh"
	echo
} > "$summary"

failed=0
# run NAME COMMAND...: logs to NAME.log, keeps the case lines for the summary.
run() {
	local name=$1 rc
	shift
	echo "== $name: $*" | tee "$out/$name.log"
	# A case that hangs fails (124) rather than holding up the rest.
	timeout --kill-after=10 "${GPU_SUITE_TIMEOUT:-300}" "$@" \
		>> "$out/$name.log" 2>&1
	rc=$?
	[ $rc -eq 124 ] || [ $rc -eq 137 ] &&
		echo "TIMEOUT: $name: no end in ${GPU_SUITE_TIMEOUT:-300} s" >> "$out/$name.log"
	{
		echo "## $name (exit $rc)"
		echo
		echo '```'
		grep -E '^(PASS|FAIL|SKIP)|passed|^ERROR SUMMARY|^=========|^mbufs:|^reg-cache' "$out/$name.log" | head -n 200
		echo '```'
		echo
	} >> "$summary"
	echo "   exit $rc"
	[ $rc -eq 0 ] || failed=1
}

# Functional test through PCI probing, then through a vdev.
run test-gpudev-pci "$build/app/test-gpudev/dpdk-test-gpudev" "${eal[@]}" --
run test-gpudev-vdev "$build/app/test-gpudev/dpdk-test-gpudev" "${eal[@]}" \
	--no-pci --vdev gpu_cuda0,dev=0 -- --case info --case mem_alloc_kernel --case errors

# The driver's registration cache and dma-buf export (issue 16): a dma-buf
# fd of real GPU memory checked (lseek/fstat size), then register/unregister
# of 2 MiB and 64 MiB with and without the cache. The GPU as a vdev with
# reg_cache=1 (no PCI scan: the same GPU cannot be probed twice).
run bench-reg-cache "$build/bench/bench-reg-cache" "${eal[@]}" --no-pci \
	--vdev gpu_cuda0,dev=0,reg_cache=1 -- --reps 200 --out "$out"

# The capture pipeline's per-packet core on the GPU against the CPU.
for t in "$build"/examples/gpu_rx/*gpu-test* "$build"/tests/*/*gpu-test*; do
	[ -f "$t" ] && [ -x "$t" ] && run "$(basename "$t")" "$t"
done
# The flow table on the GPU: the scan kernel against the CPU's, and GPU
# threads updating the table while scans run and a host thread takes the
# records (every packet in exactly one record or live entry).
t=$build/tests/gpuflow/gpurx-gpu-flow-test
[ -x "$t" ] && run gpurx-gpu-flow-test "$t"

# The generator: its GPU build against the CPU reference, then dpdk-gpu-tx
# with frames built on the GPU, host-mapped into net_pcap and in GPU memory
# through net_gpudma's TX, each written file frame by frame against the
# CPU reference (gputx-check), checksums by tshark where installed.
for t in "$build"/tests/gpu_tx/*gpu*-test; do
	[ -f "$t" ] && [ -x "$t" ] && run "$(basename "$t")" "$t"
done
txe2e=$top/tests/gpu_tx/run-tx-e2e.sh
pmds=""
[ -d "$bundle/pmds" ] && pmds="-d $bundle/pmds"
# tx_case NAME CASE MEM VDEV ARGS: one case of run-tx-e2e.sh.
tx_case() {
	TX_MEM=$3 TX_VDEV=$4 TX_ARGS=$5 TX_EAL="--no-huge -m 2048 $pmds" \
		run "$1" sh "$txe2e" "$2" "$build/examples/gpu_tx/dpdk-gpu-tx" \
		"$build/tests/gpu_tx/gputx-check" \
		"$build/examples/gpu_rx/app/dpdk-gpu-rx" "$out/$1"
}
if [ -x "$build/examples/gpu_tx/dpdk-gpu-tx" ]; then
	# The persistent fill, and a kernel per burst; several TX queues (a
	# ring each) where the port writes a file per queue (net_pcap).
	for m in host-mapped:net_pcap0 gpu:net_gpudma0; do
		# tshark where installed (the GPU machine may have none).
		# csum-offload: the GPU's frames readied for the port's TX
		# checksum offload (net_gpudma's, whatever TX_VDEV says).
		# jumbo: frames up to 9216 bytes, replayed, offloaded.
		cases="cpu-ref cpu-ref:--launch-per-burst csum-offload jumbo"
		cases="$cases jumbo:--launch-per-burst"
		[ "${m%%:*}" = host-mapped ] && cases="$cases queues queues:--launch-per-burst"
		command -v tshark > /dev/null && cases="$cases tshark"
		for cc in $cases; do
			c=${cc%%:*} args=
			[ "$cc" != "$c" ] && args=${cc#*:}
			tx_case "gputx-$c-${m%%:*}${args:+-per-burst}" "$c" \
				"${m%%:*}" "${m#*:}" "$args"
		done
	done
	# Several GPUs (issue 36): the three queues' frames built by every
	# GPU in turn (--gpus all), each file against the reference; and
	# every frame built by the last GPU in its own memory, sent by a
	# net_gpudma port on that GPU.
	ngpus=$(nvidia-smi -L 2> /dev/null | grep -c '^GPU ')
	if [ "$ngpus" -ge 2 ]; then
		last=$((ngpus - 1))
		for cc in "queues:host-mapped:net_pcap0:--gpus all" \
				"queues:host-mapped:net_pcap0:--gpus all --launch-per-burst" \
				"cpu-ref:gpu:net_gpudma0,gpu=$last:--gpus $last"; do
			IFS=: read -r c m v args <<< "$cc"
			tx_case "gputx-gpus-$c-$m$([ "${args#*launch}" != "$args" ] &&
				echo -per-burst)" "$c" "$m" "$v" "$args"
		done
	fi
fi

# GPU memory errors, with NVIDIA's compute-sanitizer where it is installed.
. "$top/scripts/cuda-env.sh"
cs=$(command -v compute-sanitizer || { command -v nvcc >/dev/null &&
	ls "$(dirname "$(command -v nvcc)")/compute-sanitizer" 2>/dev/null; })
if [ -n "$cs" ]; then
	run test-gpudev-memcheck "$cs" --tool memcheck --error-exitcode 3 \
		"$build/app/test-gpudev/dpdk-test-gpudev" "${eal[@]}" -- \
		--case mem_alloc_kernel --case mem_register_kernel --case comm_list
fi

# The capture pipeline's GPU modes under memcheck too (no stall watch:
# memcheck slows the kernel by orders of magnitude).
rx=$build/examples/gpu_rx/app/dpdk-gpu-rx
gen=$build/tests/gpu_rx/e2e/gpurx-e2e-genpcap
if [ -n "$cs" ] && [ -x "$rx" ] && [ -x "$gen" ]; then
	"$gen" "$out/memcheck-traffic.pcap" 7 3000 40 > /dev/null
	# gpu: packets in GPU memory, put there by net_gpudma; gpu-persistent:
	# by its persistent fill kernel (fill=persistent), beside the app's.
	cases="host-mapped staged gpu gpu-persistent"
	for case in $cases; do
		mode=${case%-persistent}
		vdev=net_pcap0,rx_pcap=$out/memcheck-traffic.pcap
		[ "$mode" = gpu ] &&
			vdev=net_gpudma0,rx_pcap=$out/memcheck-traffic.pcap,scatter=1
		[ "$case" = gpu-persistent ] && vdev=$vdev,fill=persistent
		run "gpu-rx-memcheck-$case" "$cs" --tool memcheck --error-exitcode 3 \
			"$rx" "${eal[@]}" -l 0-1 --vdev "$vdev" -- \
			--mem "$mode" --backpressure --filter 'tcp or udp' \
			--write "$out/memcheck-$case.pcapng" --idle-exit 2000 --quiet \
			--stall-ms 0
	done
	rm -f "$out"/memcheck-*.pcap*
fi

# The generator's fill under memcheck: frames staged in the block's
# shared slots (100 B) and in its scratch in GPU memory (300 B frames in
# host memory), then copied out by all its warps.
tx=$build/examples/gpu_tx/dpdk-gpu-tx
if [ -n "$cs" ] && [ -x "$tx" ]; then
	for tc in gpu:100:net_gpudma0 host-mapped:300:net_null0; do
		IFS=: read -r mode size vdev <<< "$tc"
		run "gpu-tx-memcheck-$mode-$size" "$cs" --tool memcheck \
			--error-exitcode 3 "$tx" "${eal[@]}" -l 0-1 --vdev "$vdev" \
			-- --mem "$mode" --stream "ipv4,udp,size=$size" \
			--count 4096 --burst 64 --wait-link 0 --quiet
	done
fi

echo "summary: $summary"
cat "$summary"
exit $failed
