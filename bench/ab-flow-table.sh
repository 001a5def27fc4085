#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Two builds of bench-flow-export side by side: the flow table alone of
# bench/flow-export.sh for build A, then build B, repeated, on one machine
# start (a change to the table's per-packet code is judged against the old
# binary in the same start, alternating). Prints, per table size and
# export, every run's Mpps, min / median / max of each build and the
# medians' B/A (bench/ab-table.py), and the same into OUT_DIR/ab.md; each
# run's own output stays in OUT_DIR/<rep>-<a|b>/.
#
# Usage: bench/ab-flow-table.sh OUT_DIR BUILD_A BUILD_B
#        (a build directory, or a copy holding bench/bench-flow-export and
#        what flow-export.sh checks for)
# Env: BENCH_AB_REPS (runs of each build, default 3); flow-export.sh's
#      BENCH_FLOW_* (here by default: BENCH_FLOW_EXPORTS "off file noscan",
#      BENCH_FLOW_SECONDS 3, one repetition a run, no pipeline, no
#      capacity search).
# Exit: 0, 1 a run failed, 2 usage.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=bench/bench-lib.sh
. "$here/bench-lib.sh"
export BENCH_FLOW_EXPORTS=${BENCH_FLOW_EXPORTS:-off file noscan}
export BENCH_FLOW_SECONDS=${BENCH_FLOW_SECONDS:-3}
export BENCH_FLOW_REPS=${BENCH_FLOW_REPS:-1}
export BENCH_FLOW_PIPE_FLOWS=${BENCH_FLOW_PIPE_FLOWS:-0}
export BENCH_FLOW_CAP=${BENCH_FLOW_CAP:-0}
bench_ab "$here/flow-export.sh" '^flow-export:' flowtable "$@"
