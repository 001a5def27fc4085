#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Sets up a Debian 12 / Ubuntu machine and builds the project into BUILD_DIR
# (default: build): installs the missing packages with apt, fetches the DPDK
# driver-SDK headers matching the installed DPDK, configures and builds.
#
# Usage: scripts/setup.sh [BUILD_DIR]
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-build}
cd "$top"

say() { echo "setup: $*" >&2; }

sudo_cmd=()
if [ "$(id -u)" != 0 ]; then
	command -v sudo >/dev/null || { say "not root and no sudo: install the packages below by hand"; }
	sudo_cmd=(sudo)
fi

# Debian package -> what shows it is there.
packages=(
	"pkg-config:command pkg-config"
	"meson:command meson"
	"ninja-build:command ninja"
	"gcc:command gcc"
	"make:command make"
	"libdpdk-dev:pkgconfig libdpdk"
	"libpcap-dev:pkgconfig libpcap"
	"libjansson-dev:pkgconfig jansson"
	"dpkg-dev:command dpkg-source"
	"xz-utils:command xz"
	"clang:command clang"
	"python3:command python3"
	"linux-perf:command perf"
	"tcpdump:command tcpdump"
	"tshark:command tshark"
	"libfixbuf-dev:pkgconfig libfixbuf"
	"nfdump:command nfcapd"
)
missing=()
for p in "${packages[@]}"; do
	name=${p%%:*}
	check=${p#*:}
	case $check in
	command\ *) command -v "${check#command }" >/dev/null 2>&1 || missing+=("$name") ;;
	pkgconfig\ *) pkg-config --exists "${check#pkgconfig }" 2>/dev/null || missing+=("$name") ;;
	esac
done
if [ ${#missing[@]} -gt 0 ]; then
	say "installing ${missing[*]}"
	"${sudo_cmd[@]}" apt-get update -q
	DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -q "${missing[@]}"
fi

# CUDA toolkit: nvcc and cuda.h (12.0 or newer; not in Debian's main archive).
. "$top/scripts/cuda-env.sh" || true
if ! command -v nvcc >/dev/null 2>&1; then
	say "no CUDA toolkit: nvcc is not on PATH, nor under \$CUDA_HOME, \$CUDA_PATH or /usr/local/cuda."
	say "Install the CUDA toolkit 12.0 or newer (NVIDIA's packages for your distribution) and run again."
	exit 1
fi

# DPDK's driver-SDK headers, from the distribution's source package; again
# when the installed DPDK changed or the build came to need more of them
# (the script's own list says which).
if ! bash scripts/fetch-dpdk-driver-headers.sh --check "$top/.deps/dpdk-sdk"; then
	"${sudo_cmd[@]}" bash scripts/fetch-dpdk-driver-headers.sh "$top/.deps/dpdk-sdk"
fi

# nvcc through scripts/nvcc-depfile.sh, so that ninja learns each CUDA
# object's headers (meson 1.0 never asks nvcc for them: a changed header
# left CUDA objects stale). A build configured without it is set up again.
mkdir -p "$top/.deps"
native=$top/.deps/nvcc-depfile.ini
printf "[binaries]\ncuda = ['%s', '%s']\n" "$top/scripts/nvcc-depfile.sh" \
	"$(command -v nvcc)" > "$native"
if [ ! -f "$build/build.ninja" ]; then
	meson setup --native-file "$native" "$build"
elif ! grep -q "nvcc-depfile.sh" "$build/build.ninja"; then
	say "$build was configured with plain nvcc (no header dependencies for its CUDA objects): configuring it again"
	meson setup --wipe --native-file "$native" "$build"
fi
ninja -C "$build"
say "built in $build"
