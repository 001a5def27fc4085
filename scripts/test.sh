#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Sets up, builds and runs the whole test suite. Suites that need a GPU
# report SKIP (exit 77) with their reason on machines without one.
#
# Usage: scripts/test.sh [BUILD_DIR]
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-build}
cd "$top"
bash scripts/setup.sh "$build"
. scripts/cuda-env.sh
meson test -C "$build" --print-errorlogs --num-processes 2
