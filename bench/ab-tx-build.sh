#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Two builds of dpdk-gpu-tx side by side: bench/tx-build-latency.sh for
# build A, then build B, repeated, on one machine start (the flag floor
# and every part move between starts: a change is judged against the old
# binary in the same start, alternating). Prints, per case, every run's
# median posted -> DONE seen (us), min / median / max of each build and
# the medians' B/A (bench/ab-table.py), and the same into OUT_DIR/ab.md;
# each run's own output stays in OUT_DIR/<rep>-<a|b>/ (txbuild.txt has
# every part and the floor).
#
# Usage: bench/ab-tx-build.sh OUT_DIR BUILD_A BUILD_B
#        (a build directory, or a copy holding examples/gpu_tx/dpdk-gpu-tx
#        and the drivers its run path names)
# Env: BENCH_AB_REPS (runs of each build, default 3), and
#      tx-build-latency.sh's BENCH_TXB_* and BENCH_EAL_EXTRA.
# Exit: 0, 1 a run failed, 2 usage.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=bench/bench-lib.sh
. "$here/bench-lib.sh"
bench_ab "$here/tx-build-latency.sh" 'total_us=' txbuild "$@"
