#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Two builds' bench-handoff side by side: bench/handoff-latency.sh for
# build A, then build B, repeated, on one machine start (the flag floor
# moves between starts: a change is judged against the old binary in the
# same start, alternating). Prints, per packet memory, size and burst,
# every run's median handoff (us), min / median / max of each build and
# the medians' B/A (bench/ab-table.py), and the same into OUT_DIR/ab.md;
# each run's own output stays in OUT_DIR/<rep>-<a|b>/ (handoff.txt has
# every run's p99 and floor).
#
# Usage: bench/ab-handoff.sh OUT_DIR BUILD_A BUILD_B
#        (a build directory, or a copy holding bench/bench-handoff and the
#        drivers its run path names)
# Env: BENCH_AB_REPS (runs of each build, default 3), and
#      handoff-latency.sh's BENCH_HO_*, BENCH_GPU_PCI and BENCH_EAL_EXTRA.
# Exit: 0, 1 a run failed, 2 usage.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=bench/bench-lib.sh
. "$here/bench-lib.sh"
bench_ab "$here/handoff-latency.sh" '^handoff pkt=' handoff "$@"
