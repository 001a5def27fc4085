#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Sets up, builds and runs the main job: the gpudev functional test through
# the CUDA driver on the first NVIDIA GPU. Says so clearly when there is no
# GPU (and exits 0: nothing is wrong with the build).
#
# Usage: scripts/run-main.sh [BUILD_DIR]
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-build}
cd "$top"
bash scripts/setup.sh "$build"

set +e
"$build/app/test-gpudev/dpdk-test-gpudev" --no-huge -m 1024 --no-shconf \
	--file-prefix gpu-main -d "$build/drivers/gpu/cuda/librte_gpu_cuda.so" --
rc=$?
set -e
if [ $rc -eq 77 ]; then
	echo "run-main: no NVIDIA GPU usable here (no GPU on the PCI bus, or no CUDA driver): nothing to run." >&2
	exit 0
fi
exit $rc
