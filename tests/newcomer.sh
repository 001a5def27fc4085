#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# The README's commands as a newcomer runs them, from a copy of this
# checkout below a directory every user may write (as /tmp is) and in a
# path with a space. EAL refuses plugins below such a directory, so
# nothing that loads the driver may depend on EAL's -d. Runs
# scripts/run-main.sh there (set-up, build, the main job), then, from that
# copy's build, the suites that load the driver, and checks what a user
# is told who passes such a -d path anyway.
#
# Usage: tests/newcomer.sh SOURCE_DIR
# Exit: 0 passed, 1 failed, 77 skipped (inside another newcomer run).
set -uo pipefail

src=$1
if [ -n "${GPU_NEWCOMER_INNER:-}" ]; then
	echo "SKIP: already inside a newcomer run"
	exit 77
fi
fail() { echo "FAIL: $*"; exit 1; }

parent=$(mktemp -d) || fail "mktemp"
trap 'rm -rf "$parent"' EXIT
chmod 1777 "$parent" || fail "chmod $parent"
dst="$parent/new comer/clone"
mkdir -p "$dst" || fail "mkdir $dst"

# What a clone holds, with the work not committed yet: the files git
# tracks and those it does not ignore (a tarball: all but build trees).
if git -C "$src" rev-parse --is-inside-work-tree > /dev/null 2>&1; then
	(cd "$src" && git ls-files -z -co --exclude-standard) |
		while IFS= read -r -d '' f; do
			[ -e "$src/$f" ] && printf '%s\0' "$f"
		done | (cd "$src" && tar --null -T - -cf -) | tar -xf - -C "$dst" ||
		fail "copy of $src"
else
	(cd "$src" && tar --exclude='./build*' --exclude='./.deps' -cf - .) |
		tar -xf - -C "$dst" || fail "copy of $src"
fi
# The driver-SDK headers setup.sh fetches from the distribution's source
# package: taken from this checkout where it has them, to spare the
# download (the fetch itself takes the same quoted paths).
if [ -d "$src/.deps/dpdk-sdk" ]; then
	mkdir -p "$dst/.deps" && cp -a "$src/.deps/dpdk-sdk" "$dst/.deps/" ||
		fail "copy of .deps"
fi
cd "$dst" || fail "cd $dst"
echo "newcomer: copy in '$dst' (parent mode $(stat -c %a "$parent"))"
export GPU_NEWCOMER_INNER=1

# README command 1: set up, build and run the main job.
bash scripts/run-main.sh > run-main.log 2>&1 ||
	{ tail -n 40 run-main.log; fail "scripts/run-main.sh exit $?"; }
[ -s build/sample/capture.pcapng ] ||
	{ tail -n 40 run-main.log; fail "no capture from scripts/run-main.sh"; }
grep -q "^captured: *[1-9]" run-main.log ||
	{ tail -n 40 run-main.log; fail "scripts/run-main.sh captured nothing"; }
echo "PASS: scripts/run-main.sh: $(grep '^captured:' run-main.log)"

# The suites that load the driver: the fake-CUDA driver tests, the gpudev
# functional test (skips without a GPU) and dpdk-gpu-rx end to end.
meson test -C build --no-rebuild --print-errorlogs --num-processes 2 \
	--suite driver > driver-tests.log 2>&1 ||
	{ cat driver-tests.log; fail "driver suite"; }
meson test -C build --no-rebuild --print-errorlogs test-gpudev \
	gpurx-e2e-cpu-all gpurx-e2e-cpu-no-gpu gpurx-e2e-cpu-short-chain \
	> app-tests.log 2>&1 || { cat app-tests.log; fail "program tests"; }
grep -E '^ *[0-9]+/[0-9]+ ' driver-tests.log app-tests.log
grep -q "test-gpudev *\(OK\|SKIP\)" app-tests.log ||
	fail "test-gpudev neither passed nor skipped"

# A -d path EAL refuses: the program says which directory and what to do.
plugin=$dst/build/drivers/gpu/cuda/librte_gpu_cuda.so
build/examples/gpu_rx/app/dpdk-gpu-rx --no-huge -m 512 --no-pci \
	--no-shconf --no-telemetry -d "$plugin" --vdev net_null0 -- --cpu \
	> refused.log 2>&1
rc=$?
[ $rc -ne 0 ] || fail "EAL took a plugin below a world-writable directory"
grep -q "^error: EAL option -d $plugin: .* is writable by every user" \
	refused.log || { cat refused.log; fail "no reason given for the refused -d"; }
grep -q "leave that -d out" refused.log ||
	{ cat refused.log; fail "no advice for the refused -d"; }
echo "PASS: a refused -d path is explained"
echo "PASS: the README's commands from '$dst'"
