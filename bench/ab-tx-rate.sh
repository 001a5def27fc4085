#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Two builds of dpdk-gpu-tx side by side: bench/gen-tx-rate.sh for build A,
# then build B, repeated, on one machine start (a virtual machine's rates
# move by tens of percent between starts: a change is judged against the
# old binary in the same start, alternating). Prints, per point (mode,
# port, frees, size, queues), every run's Mpps, min / median / max of each
# build and the medians' B/A (bench/ab-table.py), and the same into
# OUT_DIR/ab.md; each run's
# own output stays in OUT_DIR/<rep>-<a|b>/.
#
# Usage: bench/ab-tx-rate.sh OUT_DIR BUILD_A BUILD_B
#        (a build directory, or a copy holding examples/gpu_tx/dpdk-gpu-tx
#        and the drivers its run path names)
# Env: BENCH_AB_REPS (runs of each build, default 3), and gen-tx-rate.sh's
#      BENCH_TXR_* and BENCH_EAL_EXTRA (its default modes are many: set
#      BENCH_TXR_MODES, e.g. "none,gpudma gpu", the unbuilt ceiling and the
#      GPU build on the same port).
# Exit: 0, 1 a run failed, 2 usage.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=bench/bench-lib.sh
. "$here/bench-lib.sh"
bench_ab "$here/gen-tx-rate.sh" 'mpps=' txrate "$@"
