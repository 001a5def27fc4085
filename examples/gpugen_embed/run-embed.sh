#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
#
# Builds gpugen-embed against a staged `meson install` of the project,
# through pkg-config only, and runs it (meson test).
# Usage: run-embed.sh CASE MESON BUILD SOURCE PREFIX LIBDIR PLUGIN_DIR
#                     CHECK FAKE_CUDA WORKDIR
# CASE: shared         the libraries and the driver linked shared; frames
#                      written through net_pcap, checked against the CPU
#                      reference by gputx-check (CHECK);
#       static-driver  the driver's static archive linked in (pkg-config
#                      librte_gpu_cuda-static) and the generator's; it
#                      must probe the fake CUDA's GPU (FAKE_CUDA) with no
#                      plugin to load, and run without CUDA.
# Env: EMBED_EAL, the shared case's EAL memory and device options
# (default "--no-huge -m 512 --no-pci"; on a GPU machine drop --no-pci so
# gpudev finds the GPU and the example also builds on it and compares).
set -u

case_name=$1 meson=$2 build=$3 src=$4 prefix=$5 libdir=$6 plugin_dir=$7
check=$8 fake=$9 work=${10}
check=$(readlink -f "$check") fake=$(readlink -f "$fake")
rm -rf "$work" && mkdir -p "$work" || exit 1

fail() { echo "FAIL: $*"; exit 1; }

. "$(dirname "$0")/stage-install.sh"
stage_install "$meson" "$build" "$work" "$prefix" "$libdir" "$plugin_dir" \
	libgpugen.pc libgpugen-cuda.pc libgpugen-dpdk.pc librte_gpu_cuda.pc \
	librte_gpu_cuda-static.pc librte_net_gpudma.pc
for f in "$stage$prefix/include/gpugen.h" "$stage$libdir/libgpugen.a" \
		"$stage$libdir/libgpugen_cuda.a" "$stage$libdir/libgpugen_dpdk.a" \
		"$stage$libdir/librte_gpu_cuda.a" \
		"$stage$plugin_dir/librte_gpu_cuda.so" \
		"$stage$plugin_dir/librte_net_gpudma.so"; do
	[ -f "$f" ] || fail "$f not installed"
done
# The staged files first, then the DPDK the tree was built against
# (another release than the system's in scripts/check-dpdk-version.sh),
# whose libraries the programs run with.
export PKG_CONFIG_PATH="$pcdir${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
dpdk_libdir=$(pkg-config --variable=libdir libdpdk) || fail "no libdpdk.pc"
cc=${CC:-cc}

# The GPU build's core is for programs with any DPDK or none: DPDK is
# required by its DPDK layer alone.
! pkg-config --print-requires libgpugen-cuda | grep -q dpdk ||
	fail "libgpugen-cuda.pc requires DPDK"
pkg-config --print-requires libgpugen-dpdk | grep -q '^libdpdk' ||
	fail "libgpugen-dpdk.pc does not require libdpdk"

# The installed headers compile alone, with only pkg-config's flags.
for h in gpugen.h:libgpugen gpugen_frames.h:libgpugen-cuda \
		gpugen_fill.h:libgpugen-dpdk rte_pmd_gpu_cuda.h:librte_gpu_cuda \
		rte_pmd_net_gpudma.h:librte_net_gpudma; do
	# shellcheck disable=SC2046
	printf '#include <%s>\nint main(void) { return 0; }\n' "${h%%:*}" |
		$cc -Wall -Wextra -Werror -x c -o /dev/null - \
			$(pkg-config --cflags "${h#*:}") ||
		fail "${h%%:*} does not compile alone"
done
# The port's own API links through its .pc alone.
# shellcheck disable=SC2046
printf '#include <rte_pmd_net_gpudma.h>\nint main(void) { return rte_pmd_gpudma_is_port(0) > 0; }\n' |
	$cc -Wall -Wextra -Werror -x c -o "$work/gpudma-link" - \
		$(pkg-config --cflags --libs librte_net_gpudma) ||
	fail "rte_pmd_gpudma_is_port does not link through librte_net_gpudma.pc"
readelf -d "$work/gpudma-link" | grep -q 'NEEDED.*\[librte_net_gpudma.so\]' ||
	fail "the program does not need librte_net_gpudma.so"

eal() {
	echo ${EMBED_EAL:---no-huge -m 512 --no-pci} --no-shconf \
		--file-prefix "gpugen-embed-$case_name-$$" -l 0 \
		--log-level=lib.eal:warning
}
exe=$work/gpugen-embed
spec="ipv4,udp,dst=198.18.0.1,var=udp.sport:inc:1024-1087,var=ipv4.src:random:10.0.0.1-10.0.0.99,size=90-1518:random,stamp=on"
count=1000 seed=7 burst=32

case $case_name in
shared)
	# shellcheck disable=SC2046
	$cc -Wall -Wextra -Werror -o "$exe" "$src" \
		$(pkg-config --cflags --libs libgpugen libgpugen-dpdk librte_gpu_cuda) ||
		fail "out-of-tree build"
	readelf -d "$exe" > "$work/dyn.txt" || fail "readelf"
	for lib in libgpugen.so.0 libgpugen_dpdk.so.0 librte_gpu_cuda.so; do
		grep -q "NEEDED.*\[$lib\]" "$work/dyn.txt" || fail "$exe does not need $lib"
	done
	# The rpath names the plugin directory (staged here); the rest is
	# found through the library path, which must not reach the build.
	export LD_LIBRARY_PATH="$stage$libdir:$dpdk_libdir"
	ldd "$exe" > "$work/ldd.txt" || fail "ldd"
	for lib in libgpugen.so.0 libgpugen_dpdk.so.0 librte_gpu_cuda.so; do
		grep -q "$lib => $stage/" "$work/ldd.txt" ||
			{ cat "$work/ldd.txt"; fail "$lib not taken from the staged install"; }
	done
	# shellcheck disable=SC2046
	"$exe" $(eal) --vdev "net_pcap0,tx_pcap=$work/out.pcap" -- \
		--spec "$spec" --count $count --seed $seed --burst $burst \
		> "$work/out.txt" 2>&1
	rc=$?
	cat "$work/out.txt"
	[ $rc -eq 0 ] || fail "gpugen-embed exit $rc"
	grep -q "^sent $count frames, .* (port counts $count frames" "$work/out.txt" ||
		fail "not $count frames sent and counted by the port"
	bytes=$(sed -n "s/^sent $count frames, \([0-9]*\) bytes.*/\1/p" "$work/out.txt")
	grep -q "port counts $count frames, $bytes bytes" "$work/out.txt" ||
		fail "the port counted other bytes than $bytes"
	if grep -q "GPU build:" "$work/out.txt"; then
		grep -q "GPU build: 0 of $count frames differ" "$work/out.txt" ||
			fail "the GPU build differs from the CPU reference"
	fi
	# Every frame byte-identical to the CPU reference for the same spec.
	"$check" "$work/out.pcap" $count $seed $burst "$spec" || fail "frames"
	;;
static-driver)
	# The driver's archive before DPDK's libraries, which come with
	# --as-needed; libdpdk.pc does not list the buses the driver uses.
	# The generator's archives too, with what their .pc files give a
	# static link (the DPDK layer's archive before the core's, and
	# libgpugen-cuda's Libs.private: the CUDA runtime),
	# DPDK staying shared: -Wl,-Bstatic would take DPDK's archives too.
	# shellcheck disable=SC2046
	$cc -Wall -Wextra -Werror -o "$exe" "$src" \
		$(pkg-config --cflags --libs librte_gpu_cuda-static) \
		"$stage$libdir/libgpugen_dpdk.a" "$stage$libdir/libgpugen_cuda.a" \
		"$stage$libdir/libgpugen.a" $(sed -n 's/^Libs.private: //p' "$pcdir/libgpugen-cuda.pc") \
		$(pkg-config --cflags libgpugen) \
		$(pkg-config --cflags --libs libdpdk libpcap) \
		-lrte_bus_pci -lrte_bus_vdev || fail "out-of-tree build"
	readelf -d "$exe" > "$work/dyn.txt" || fail "readelf"
	! grep -q 'NEEDED.*\(librte_gpu_cuda\|libgpugen\)' "$work/dyn.txt" ||
		fail "$exe needs a shared library of the project: not all linked in"
	export LD_LIBRARY_PATH="$stage$libdir:$dpdk_libdir"
	EMBED_EAL="--no-huge -m 512 --no-pci"	# the fake's GPU alone
	# The fake CUDA's one GPU, probed by the linked-in driver alone: no
	# plugin directory holds it (-d is not given).
	# shellcheck disable=SC2046
	GPU_CUDA_LIBCUDA=$fake FAKE_CUDA_GPUS=0000:01:00.0 \
		"$exe" $(eal) --vdev gpu_cuda0,dev=0 --vdev net_null0 -- \
		--cpu --spec "$spec" --count 64 --seed $seed > "$work/out.txt" 2>&1
	rc=$?
	cat "$work/out.txt"
	[ $rc -eq 0 ] || fail "gpugen-embed exit $rc"
	grep -q "gpudev GPUs: 1$" "$work/out.txt" ||
		fail "the statically linked driver did not probe the fake GPU"
	grep -q "^sent 64 frames, .* (port counts 64 frames" "$work/out.txt" ||
		fail "not 64 frames sent"
	# Without CUDA: EAL starts, no GPU, the CPU path runs.
	GPU_CUDA_LIBCUDA=/nonexistent/libcuda.so.1 \
		"$exe" $(eal) --vdev gpu_cuda0,dev=0 --vdev net_null0 -- \
		--spec "$spec" --count 64 > "$work/nocuda.txt" 2>&1 ||
		{ cat "$work/nocuda.txt"; fail "gpugen-embed without CUDA"; }
	grep -q "gpudev GPUs: 0$" "$work/nocuda.txt" &&
		grep -q "build: CPU reference only" "$work/nocuda.txt" ||
		{ cat "$work/nocuda.txt"; fail "no CUDA: not the CPU path alone"; }
	;;
*)
	fail "unknown case $case_name"
	;;
esac
echo "ok: $case_name"
