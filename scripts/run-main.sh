#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Sets up, builds and runs the main job: dpdk-gpu-rx capturing from a sample
# traffic file the project generates (every protocol it parses, malformed
# and jumbo packets included), on the first NVIDIA GPU when there is one,
# else with the same code on the CPU (--cpu), saying which.
#
# Usage: scripts/run-main.sh [BUILD_DIR] [FILTER]
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-build}
filter=${2:-tcp or udp}
cd "$top"
bash scripts/setup.sh "$build"

work=$build/sample
mkdir -p "$work"
sample=$work/traffic.pcap
# seed 1, 20000 packets, a jumbo frame every 50th
"$build/tests/gpu_rx/e2e/gpurx-e2e-genpcap" "$sample" 1 20000 50

# An NVIDIA display/3D controller on the PCI bus and the CUDA driver library.
has_gpu() {
	local d
	ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1' || return 1
	for d in /sys/bus/pci/devices/*; do
		[ "$(cat "$d/vendor" 2>/dev/null)" = 0x10de ] || continue
		case $(cat "$d/class" 2>/dev/null) in 0x0300*|0x0302*) return 0 ;; esac
	done
	return 1
}
if has_gpu; then
	mode=(--mem host-mapped --backpressure)
	echo "run-main: NVIDIA GPU found: packets in host memory mapped into the GPU, processed by the persistent kernel" >&2
else
	mode=(--cpu)
	echo "run-main: no NVIDIA GPU usable here (none on the PCI bus, or no CUDA driver): running the same pipeline on the CPU (--cpu)" >&2
fi

"$build/examples/gpu_rx/app/dpdk-gpu-rx" --no-huge -m 1024 --no-shconf \
	--file-prefix gpu-rx-main -l 0-1 \
	--vdev "net_pcap0,rx_pcap=$sample" -- \
	"${mode[@]}" --filter "$filter" --write "$work/capture.pcapng" \
	--idle-exit 500 --json "$work/summary.json" --quiet
echo "run-main: capture in $work/capture.pcapng, summary in $work/summary.json" >&2
