#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Two builds of dpdk-gpu-rx side by side: bench/pipeline-capacity.sh for
# build A, then build B, repeated, on one machine. A shared or virtual
# machine's pipeline rate moves by tens of percent between machine starts
# (doc/performance.md), so a change is judged against the old binary in
# the same start, alternating, never against a number from another day.
# Prints, per mode, size and lcore count, every run's Mpps, min / median /
# max of each build and the medians' B/A (bench/ab-table.py); writes the
# same to OUT_DIR/ab.md. Each run's own output stays in
# OUT_DIR/<rep>-<a|b>/.
#
# Usage: bench/ab-capacity.sh OUT_DIR BUILD_A BUILD_B
#        (a build directory, or a copy with examples/gpu_rx/app/dpdk-gpu-rx,
#        bench/bench-rx-source and tests/gpu_rx/e2e/gpurx-e2e-genpcap)
# Env: BENCH_AB_REPS (runs of each build, default 3), and the BENCH_CAP_*
#      and BENCH_EAL_EXTRA variables of pipeline-capacity.sh (its default
#      modes include source, which does not depend on the build: set
#      BENCH_CAP_MODES).
# Exit: 0, 1 a run failed, 2 usage.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=bench/bench-lib.sh
. "$here/bench-lib.sh"
bench_ab "$here/pipeline-capacity.sh" '^capacity' capacity "$@"
