#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Collects the shared libraries the built programs need (DPDK and its
# dependencies, minus the C runtime every Linux has) into .gpu-bundle/lib,
# and the built programs into .gpu-bundle/build, so a build made here runs
# on a GPU machine that has no DPDK installed (for example one without
# package registries). DPDK's bus and net drivers go to .gpu-bundle/pmds, to
# be loaded with EAL -d.
#
# Usage: scripts/make-gpu-bundle.sh [BUILD_DIR]
# (GPU_BUNDLE_DIR: another place than .gpu-bundle, e.g. one bundle per DPDK
# version, scripts/check-dpdk-version.sh; GPU_BUNDLE_PERF=1: this machine's
# perf too, with its libraries, about 25 MB more, for the CPU profiles of
# bench/profile-rx-lcore.sh on a GPU machine that has none)
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$top/build}
out=${GPU_BUNDLE_DIR:-$top/.gpu-bundle}
libdir=$(pkg-config --variable=libdir libdpdk)
pmd_src=$(ls -d "$libdir"/dpdk/pmds-* 2>/dev/null | head -n 1)
[ -n "$pmd_src" ] || { echo "no DPDK plugin directory under $libdir/dpdk" >&2; exit 1; }
pmds="librte_bus_pci librte_bus_vdev librte_mempool_ring librte_net_null librte_net_ring librte_net_pcap librte_net_memif librte_net_af_packet"

rm -rf "$out"
mkdir -p "$out/lib" "$out/pmds"

# The C runtime and compiler runtime come from the target system.
skip='^(linux-vdso|ld-linux|libc\.|libm\.|libdl\.|librt\.|libpthread\.|libgcc_s\.|libstdc\+\+\.|libcuda\.)'

# Host-sanitizer builds (ASan/UBSan: *-san, *-asan, *_asan.so) stay out:
# their suites need no GPU and run on the build machine (CI); the GPU
# machine runs compute-sanitizer on the plain programs. They would double
# the bundle, which travels by a size-limited copy.
san='(-san|-asan|_asan\.so)$'
binaries=$(find "$build" -type f \( -name 'dpdk-*' -o -name '*.so' -o -name 'gpurx-*' -o -name 'bench-*' \) -perm -u+x 2>/dev/null | grep -Ev "$san")
for p in $pmds; do
	f=$(ls "$pmd_src/$p".so.* 2>/dev/null | head -n 1) || true
	[ -n "$f" ] || { echo "missing DPDK plugin $p in $pmd_src" >&2; exit 1; }
	# A link into lib/: the plugin and the same library needed by another
	# one must be one file, or the loader would map it twice.
	so=$(basename "$f" | sed -E 's/(\.so\.[0-9]+).*/\1/')
	cp -L "$f" "$out/lib/$so"
	# EAL loads from a directory only names ending in .so (or .so.<ABI>).
	ln -s "../lib/$so" "$out/pmds/${so%.so.*}.so"
	binaries="$binaries $f"
done

# nfdump's collector and reader where installed here, for the flow-export
# tests (tests/gpu_rx/e2e/run-ipfix-e2e.sh; PATH=.gpu-bundle/bin), their
# libraries with the others.
mkdir -p "$out/bin"
tools="nfcapd nfdump"
if [ "${GPU_BUNDLE_PERF:-0}" = 1 ]; then
	# Debian's /usr/bin/perf is the program itself (some distributions
	# ship a wrapper script that picks a per-kernel binary: refused).
	p=$(command -v perf 2>/dev/null) && head -c 4 "$p" | grep -q ELF ||
		{ echo "GPU_BUNDLE_PERF=1: no perf program here (apt install linux-perf)" >&2; exit 1; }
	tools="$tools perf"
fi
for t in $tools; do
	p=$(command -v "$t" 2>/dev/null) || continue
	cp -L "$p" "$out/bin/$t"
	binaries="$binaries $p"
done

for b in $binaries; do
	ldd "$b" 2>/dev/null | awk '/=> \// { print $1, $3 }'
done | sort -u | while read -r name path; do
	[[ $name =~ $skip ]] && continue
	# The build's own libraries (the CUDA driver the programs link) come
	# with build/ below, found through the programs' run paths.
	[[ $(readlink -f "$path") == "$(readlink -f "$build")"/* ]] && continue
	[ -f "$out/lib/$name" ] || cp -L "$path" "$out/lib/$name"
done

# The build's programs and libraries (not its objects), same layout, so the
# GPU machine can run them as .gpu-bundle/build/... with their relative
# run paths intact. The embedding tests' staged installs (a copy of every
# program, examples/gpugen_embed/*/stage and examples/gpugen_frames/work/
# stage) stay out: they run in CI.
(cd "$build" && find . -path ./meson-private -prune -o -name '*.p' -prune -o \
	-path './examples/gpugen_embed/*/stage' -prune -o \
	-path './examples/gpugen_frames/work/stage' -prune -o \
	-type f \( -perm -u+x -o -name '*.so' \) -print) | grep -Ev "$san" | while read -r f; do
	mkdir -p "$out/build/$(dirname "$f")"
	cp -p "$build/$f" "$out/build/$f"
	# Without DWARF (symbols stay, for perf): half the size, and the
	# bundle travels to the GPU machine by a size-limited copy. Scripts
	# among the executables are left as they are.
	if head -c 4 "$out/build/$f" | grep -q 'ELF'; then
		strip --strip-debug "$out/build/$f" ||
			{ echo "strip failed on $f" >&2; exit 1; }
	fi
done

# The source revision the programs were built from: a copy of the tree on
# the GPU machine may not carry the repository's history (bench/run-all.sh
# records this instead).
rev=$(git -C "$top" rev-parse --short HEAD 2>/dev/null || echo unknown)
git -C "$top" diff --quiet HEAD -- 2>/dev/null || rev="$rev+dirty"
echo "$rev" > "$out/REVISION"

# EAL refuses plugins from group- or world-writable places.
chmod -R go-w "$out"
du -sh "$out" | awk '{ print "bundle: " $1 " in '"$out"'" }'
ls "$out/lib" | tr '\n' ' '; echo
