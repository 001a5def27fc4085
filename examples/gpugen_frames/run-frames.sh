#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
#
# Builds gpugen-frames against a staged `meson install` of the project
# with its own Makefile, pkg-config and no DPDK, both ways (shared
# libraries, archives), and runs each (meson test).
# Usage: run-frames.sh MESON BUILD SRCDIR PREFIX LIBDIR CUDA_HOME WORKDIR
# Exit 77 (skip) when there is no GPU for the GPU part, once the builds
# and the CPU part passed.
set -u

meson=$1 build=$2 src=$3 prefix=$4 libdir=$5 cuda=$6 work=$7
rm -rf "$work" && mkdir -p "$work" || exit 1

fail() { echo "FAIL: $*"; exit 1; }

. "$(dirname "$0")/../gpugen_embed/stage-install.sh"
stage_install "$meson" "$build" "$work" "$prefix" "$libdir" "" \
	libgpugen.pc libgpugen-cuda.pc
export PKG_CONFIG_PATH="$pcdir"
! pkg-config --print-requires libgpugen-cuda | grep -q dpdk ||
	fail "libgpugen-cuda.pc requires DPDK"
export LD_LIBRARY_PATH="$stage$libdir"
skip=0
for link in shared static; do
	cp "$src/Makefile" "$src/gpugen_frames.c" "$work/" || exit 1
	make -s -C "$work" clean > /dev/null
	make -s -C "$work" LINK=$link CUDA_HOME="$cuda" ||
		fail "out-of-tree build ($link)"
	readelf -d "$work/gpugen-frames" > "$work/dyn-$link.txt" || fail "readelf"
	! grep -q 'NEEDED.*librte_' "$work/dyn-$link.txt" ||
		fail "gpugen-frames ($link) needs DPDK"
	if [ $link = shared ]; then
		grep -q 'NEEDED.*\[libgpugen_cuda.so.0\]' "$work/dyn-$link.txt" ||
			fail "gpugen-frames (shared) does not need libgpugen_cuda.so.0"
	else
		! grep -q 'NEEDED.*libgpugen' "$work/dyn-$link.txt" ||
			fail "gpugen-frames (static) needs a shared libgpugen"
	fi
	"$work/gpugen-frames" --count 500 > "$work/out-$link.txt" 2>&1
	rc=$?
	sed "s/^/$link: /" "$work/out-$link.txt"
	grep -q "^CPU reference: struct stream vs spec: 0 of 500 frames differ" \
		"$work/out-$link.txt" || fail "CPU part ($link)"
	case $rc in
	0)	[ "$(grep -c '^GPU build: 0 of 500 frames differ' "$work/out-$link.txt")" = 2 ] ||
			fail "GPU part ($link)" ;;
	77)	grep -q "^GPU part skipped: " "$work/out-$link.txt" ||
			fail "skipped with no reason ($link)"
		skip=1 ;;
	*)	fail "gpugen-frames ($link) exit $rc" ;;
	esac
done
[ $skip = 0 ] || { echo "SKIP: no GPU for the GPU part (built and CPU-checked)"; exit 77; }
echo "ok"
