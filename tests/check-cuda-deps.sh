#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
#
# The build knows which headers each CUDA object includes, so a changed
# header rebuilds the kernels (meson 1.0 never asked nvcc for them: a
# changed flow_table.h left the GPU objects stale beside fresh C objects;
# scripts/nvcc-depfile.sh writes them). Usage: check-cuda-deps.sh BUILD_DIR
set -u
build=$1
obj=lib/gpuflow/libgpuflow_scan.a.p/flow_scan.cu.o
deps=$(ninja -C "$build" -t deps "$obj" 2>&1)
if ! printf '%s\n' "$deps" | grep -q 'flow_table\.h'; then
	echo "FAIL: ninja knows no header of $obj: CUDA objects are not rebuilt"
	echo "when a header changes. Configure the build with scripts/setup.sh"
	echo "(nvcc through scripts/nvcc-depfile.sh). ninja -t deps says:"
	printf '%s\n' "$deps" | head -5
	exit 1
fi
echo "PASS: $obj depends on $(printf '%s\n' "$deps" | grep -c '\.h') headers, flow_table.h among them"
