#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Debian/Ubuntu ship DPDK without the driver-SDK headers a gpudev driver
# needs. Fetch the distribution's source package of exactly the installed
# libdpdk-dev version and extract only those headers into .deps/dpdk-sdk.
#
# Usage: scripts/fetch-dpdk-driver-headers.sh [--check] [DEST]
# (--check: exit 0 when DEST already has them all, 1 when not; fetches
# nothing and needs no root)
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
check=0
if [ "${1:-}" = --check ]; then
	check=1
	shift
fi
dest=${1:-$top/.deps/dpdk-sdk}

# The headers meson.build needs, as paths inside the DPDK source tree.
headers=(
	lib/gpudev/gpudev_driver.h
	lib/eal/include/dev_driver.h
	lib/eal/include/bus_driver.h
	drivers/bus/pci/bus_pci_driver.h
	drivers/bus/vdev/bus_vdev_driver.h
	lib/ethdev/ethdev_driver.h
	lib/ethdev/ethdev_vdev.h
)

die() { echo "fetch-dpdk-driver-headers: $*" >&2; exit 1; }

pkgver=$(dpkg-query -W -f '${Version}' libdpdk-dev 2>/dev/null) ||
	die "libdpdk-dev is not installed (apt-get install libdpdk-dev)"
upstream=$(pkg-config --modversion libdpdk) ||
	die "pkg-config cannot find libdpdk"

# A tree fetched before a header joined the list above is fetched again.
have_all() {
	[ -f "$dest/VERSION" ] && [ "$(cat "$dest/VERSION")" = "$upstream" ] ||
		return 1
	for h in "${headers[@]}"; do [ -f "$dest/${h##*/}" ] || return 1; done
}
if have_all; then
	[ $check = 1 ] || echo "DPDK $upstream driver-SDK headers already in $dest"
	exit 0
fi
[ $check = 0 ] || exit 1

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# apt-get source needs deb-src entries. If the system has none, derive them
# from the existing binary entries, in a file of our own that is easy to
# spot and remove.
have_src() {
	grep -rqsE '^(deb-src|Types:.*deb-src)' /etc/apt/sources.list /etc/apt/sources.list.d/ 2>/dev/null
}
if ! have_src; then
	[ "$(id -u)" = 0 ] || die "no deb-src entries in apt sources; run as root to add them, or pass -Ddpdk_sdk=<DPDK source tree> to meson"
	out=/etc/apt/sources.list.d/gpu-cuda-dpdk-src.sources
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		case "$f" in *disabled*|"$out") continue ;; esac
		sed -E 's/^Types:.*/Types: deb-src/' "$f"
		echo
	done > "$out.tmp"
	if [ -f /etc/apt/sources.list ]; then
		grep -E '^deb ' /etc/apt/sources.list |
			sed -E 's/^deb /deb-src /' > "${out%.sources}.list" || true
	fi
	if [ -s "$out.tmp" ]; then mv "$out.tmp" "$out"; else rm -f "$out.tmp"; fi
	have_src || die "could not derive deb-src entries from the apt sources"
	echo "added deb-src entries ($out) for the DPDK source package"
	apt-get update -q >/dev/null
fi

cd "$work"
src=$(dpkg-query -W -f '${source:Package}' libdpdk-dev)
apt-get source -q --download-only "$src=$pkgver" >/dev/null 2>"$work/apt.err" || {
	# A stale package list is the usual reason; refresh once and retry.
	[ "$(id -u)" = 0 ] && apt-get update -q >/dev/null
	apt-get source -q --download-only "$src=$pkgver" >/dev/null 2>"$work/apt.err"
} || die "apt-get source $src=$pkgver failed: $(cat "$work/apt.err")"

orig=$(ls ./*.orig.tar.* 2>/dev/null | head -n 1)
[ -n "$orig" ] || die "no upstream tarball in the $src source package"
prefix=$( (tar tf "$orig" 2>/dev/null || true) | head -n 1 | cut -d/ -f1)

members=("$prefix/VERSION")
for h in "${headers[@]}"; do members+=("$prefix/$h"); done
mkdir -p "$work/x"
tar xf "$orig" -C "$work/x" --strip-components=1 "${members[@]}" ||
	die "the $src source package lacks one of: ${headers[*]}"

srcver=$(cat "$work/x/VERSION")
[ "$srcver" = "$upstream" ] ||
	die "source package has DPDK $srcver but libdpdk is $upstream"

rm -rf "$dest"
mkdir -p "$dest"
for h in "${headers[@]}"; do cp "$work/x/$h" "$dest/"; done
echo "$srcver" > "$dest/VERSION"
echo "DPDK $srcver driver-SDK headers extracted into $dest"
