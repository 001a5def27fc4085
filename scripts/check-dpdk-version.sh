#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Checks the project against one DPDK release: builds DPDK at that release
# (a minimal driver set, with its driver-SDK headers) from SRC, builds the
# project against it, runs the tests that need no GPU and makes the GPU
# bundle (scripts/make-gpu-bundle.sh) that carries this build to a GPU
# machine. Writes a short summary (summary.md) into the work directory.
#
# Usage: scripts/check-dpdk-version.sh VERSION SRC
#   VERSION  a DPDK release: 24.11 (or its tag, v24.11)
#   SRC      a DPDK git repository (bare or not) holding tag vVERSION, or
#            a DPDK source tree of that version
# Environment:
#   DPDK_CHECK_DIR  work directory (default: .dpdk-check/vVERSION): src/,
#                   dpdk-build/, dpdk-inst/, build/, bundle/, summary.md
#   DPDK_CHECK_SRC, DPDK_CHECK_DPDK_BUILD, DPDK_CHECK_DPDK_INST
#                   the DPDK source, build and install directories, when
#                   they are to live elsewhere (a DPDK already installed
#                   there at this version is not built again)
#   DPDK_CHECK_BUILD  the project's build directory (default: build/ there)
#   GPU_ARCHS       the project's gpu_archs, comma-separated (default: the
#                   project's); the kernels do not depend on DPDK, and one
#                   architecture (90: H100) halves the nvcc time
#   NVCC            the nvcc to build with (default: the one on PATH; a
#                   wrapper such as "ccache nvcc" in a script shares the
#                   kernels between versions, which do not include DPDK)
#   JOBS            parallel compile jobs (default 2)
set -euo pipefail

die() { echo "check-dpdk-version: $*" >&2; exit 1; }

[ $# = 2 ] || die "usage: $0 VERSION SRC (e.g. $0 24.11 ~/dpdk.git)"
ver=${1#v}
srcarg=$2
[[ $ver =~ ^[0-9]{2}\.[0-9]{2}(\.[0-9]+)?$ ]] ||
	die "VERSION '$1' is not a DPDK release such as 24.11"
[ -e "$srcarg" ] || die "SRC '$srcarg' does not exist"
srcarg=$(cd "$srcarg" && pwd)

top=$(cd "$(dirname "$0")/.." && pwd)
work=${DPDK_CHECK_DIR:-$top/.dpdk-check/v$ver}
mkdir -p "$work"
work=$(cd "$work" && pwd)
src=${DPDK_CHECK_SRC:-$work/src}
dbuild=${DPDK_CHECK_DPDK_BUILD:-$work/dpdk-build}
inst=${DPDK_CHECK_DPDK_INST:-$work/dpdk-inst}
build=${DPDK_CHECK_BUILD:-$work/build}
jobs=${JOBS:-2}
summary=$work/summary.md
log=$work/check.log
: > "$log"

say() { echo "check-dpdk-version: $*" | tee -a "$log" >&2; }
# step NAME CMD...: runs CMD with its output in check.log; on failure the
# summary says which step failed before the script stops.
step() {
	local name=$1
	shift
	say "$name"
	if ! "$@" >> "$log" 2>&1; then
		record "FAILED at: $name (see $log)"
		die "$name failed; its output is in $log"
	fi
}
record() { echo "- $*" >> "$summary"; }

{
	echo "# DPDK $ver check"
	echo
	echo "- date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
	echo "- command: scripts/check-dpdk-version.sh $1 $2"
	rev=$(git -C "$top" rev-parse --short HEAD 2>/dev/null || echo unknown)
	git -C "$top" diff --quiet HEAD -- 2>/dev/null || rev="$rev+dirty"
	echo "- project revision: $rev"
} > "$summary"

# --- DPDK source at that release ----------------------------------------
# A DPDK source tree names its release in VERSION (24.11.0, 24.11.1 ...).
tree_version() { cat "$1/VERSION" 2>/dev/null || true; }
matches() { [[ $1 == "$ver" || $1 == "$ver".* ]]; }

if [ -f "$srcarg/VERSION" ] && [ -f "$srcarg/lib/gpudev/gpudev_driver.h" ]; then
	matches "$(tree_version "$srcarg")" ||
		die "SRC is a DPDK $(tree_version "$srcarg") tree, not $ver"
	src=$srcarg
elif git --git-dir="$srcarg" rev-parse --git-dir >/dev/null 2>&1 ||
		git -C "$srcarg" rev-parse --git-dir >/dev/null 2>&1; then
	gitdir=$(git -C "$srcarg" rev-parse --absolute-git-dir 2>/dev/null ||
		echo "$srcarg")
	git --git-dir="$gitdir" rev-parse -q --verify "refs/tags/v$ver" >/dev/null ||
		die "the repository $srcarg has no tag v$ver"
	if ! matches "$(tree_version "$src")"; then
		rm -rf "$src"
		mkdir -p "$src"
		step "extract DPDK v$ver into $src" \
			sh -c 'git --git-dir="$1" archive "$2" | tar -x -C "$3"' \
			sh "$gitdir" "v$ver" "$src"
	fi
else
	die "SRC '$srcarg' is neither a DPDK source tree nor a git repository"
fi
dpdk_full=$(tree_version "$src")
record "DPDK source: $dpdk_full ($src)"

# --- DPDK: the libraries the project uses and the drivers its tests and
# bundle load; the driver-SDK headers installed with them. ---------------
dpdk_drivers=bus/pci,bus/vdev,mempool/ring,net/null,net/ring,net/pcap,net/memif,net/af_packet
dpdk_libs=kvargs,telemetry,log,ring,rcu,mempool,mbuf,net,meter,ethdev,pci,cmdline,hash,gpudev,bpf,pcapng,metrics,timer
pcdir() {
	local d
	for d in "$inst"/lib/pkgconfig "$inst"/lib/*/pkgconfig; do
		[ -f "$d/libdpdk.pc" ] && { echo "$d"; return; }
	done
}
installed=$(d=$(pcdir) && [ -n "$d" ] &&
	PKG_CONFIG_PATH=$d pkg-config --modversion libdpdk 2>/dev/null || true)
if [ "$installed" != "$dpdk_full" ]; then
	# DPDK's build describes its drivers with pmdinfogen, in Python.
	python3 -c 'import elftools' 2>/dev/null ||
		die "DPDK's build needs pyelftools (apt-get install python3-pyelftools)"
	if [ ! -f "$dbuild/build.ninja" ]; then
		# enable_libs came with 23.11; older releases build all
		# libraries (their default).
		libs_opt=()
		grep -q "option('enable_libs'" "$src/meson_options.txt" &&
			libs_opt=(-Denable_libs=$dpdk_libs)
		step "configure DPDK $dpdk_full" \
			env CC="${CC:-$(command -v ccache >/dev/null && echo 'ccache gcc' || echo gcc)}" \
			meson setup "$dbuild" "$src" --prefix="$inst" --libdir=lib \
			-Denable_drivers=$dpdk_drivers "${libs_opt[@]}" \
			-Ddisable_apps='*' -Dtests=false -Dexamples= \
			-Denable_driver_sdk=true
	fi
	step "build DPDK $dpdk_full" ninja -C "$dbuild" -j "$jobs"
	step "install DPDK $dpdk_full into $inst" meson install -C "$dbuild" --quiet
fi
pc=$(pcdir)
[ -n "$pc" ] || die "no libdpdk.pc under $inst after the install"
export PKG_CONFIG_PATH=$pc
dpdk_libdir=$(pkg-config --variable=libdir libdpdk)
# The programs find DPDK's libraries here when their run path does not.
export LD_LIBRARY_PATH=$dpdk_libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}

# --- The project against it -----------------------------------------------
. "$top/scripts/cuda-env.sh" || die "no CUDA toolkit (nvcc) found"
native=$work/nvcc-depfile.ini
printf "[binaries]\ncuda = ['%s', '%s']\n" "$top/scripts/nvcc-depfile.sh" \
	"${NVCC:-$(command -v nvcc)}" > "$native"
if [ ! -f "$build/build.ninja" ]; then
	# Without the sanitized variants: they double the build, and the
	# 22.11 CI runs them; the driver sources are the same on every DPDK.
	step "configure the project against DPDK $dpdk_full" \
		meson setup --native-file "$native" -Ddpdk_sdk="$src" \
		-Dsanitizers=false ${GPU_ARCHS:+-Dgpu_archs=$GPU_ARCHS} \
		"$build" "$top"
fi
step "build the project" ninja -C "$build" -j "$jobs"
# Where meson install puts the plugin: the DPDK's own plugin directory.
plugin_dir=$(meson introspect --installed "$build" | python3 -c '
import json, os, sys
print(next((os.path.dirname(d) for d in json.load(sys.stdin).values()
	if d.endswith("/librte_gpu_cuda.so")), ""))')
record "built: driver, net_gpudma, dpdk-gpu-rx, dpdk-gpu-tx, dpdk-test-gpudev; meson install puts the plugin into ${plugin_dir:-the DPDK plugin directory}"

# --- Tests that need no GPU -------------------------------------------------
# The GPU suites would skip here (exit 77); bench and fuzz take long and do
# not depend on the DPDK version; newcomer sets a copy of the tree up with
# the distribution's DPDK package, whichever DPDK is checked here.
say "meson test (all but the gpu, bench, fuzz and newcomer suites)"
set +e
meson test -C "$build" --num-processes "$jobs" --print-errorlogs \
	--no-suite gpu --no-suite bench --no-suite fuzz --no-suite newcomer \
	>> "$log" 2>&1
test_rc=$?
set -e
counts=$(python3 - "$build/meson-logs/testlog.json" <<'PY'
import json, sys
c = {"OK": 0, "FAIL": 0, "SKIP": 0}
for line in open(sys.argv[1]):
    r = json.loads(line).get("result", "")
    c[{"OK": "OK", "EXPECTEDFAIL": "OK", "SKIP": "SKIP"}.get(r, "FAIL")] += 1
print(f"{c['OK']} passed, {c['FAIL']} failed, {c['SKIP']} skipped")
PY
)
record "tests (meson test --no-suite gpu --no-suite bench --no-suite fuzz --no-suite newcomer): $counts"

# --- GPU bundle for this version -------------------------------------------
step "make the GPU bundle" env GPU_BUNDLE_DIR="$work/bundle" \
	bash "$top/scripts/make-gpu-bundle.sh" "$build"
record "GPU bundle: $work/bundle (run with GPU_BUNDLE_DIR=$work/bundle scripts/run-gpu-suite.sh OUT $work/bundle/build)"

if [ $test_rc = 0 ]; then record "result: PASS"; else record "result: FAIL"; fi
cat "$summary"
exit $test_rc
