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
# driver_fake_secondary starts a DPDK secondary process, which DPDK 22.11
# cannot attach to --no-huge memory: as root, make sure of 32 free 2 MiB
# hugepages and a hugetlbfs mount (said; the test skips without them).
hp=/sys/kernel/mm/hugepages/hugepages-2048kB
if [ "$(id -u)" = 0 ] && [ -w "$hp/nr_hugepages" ]; then
	free=$(cat "$hp/free_hugepages")
	if [ "$free" -lt 32 ]; then
		echo $(( $(cat "$hp/nr_hugepages") + 32 - free )) > "$hp/nr_hugepages" || true
		echo "test.sh: reserved 2 MiB hugepages for the multi-process test: $(cat "$hp/free_hugepages") free"
	fi
	if ! grep -q " hugetlbfs " /proc/mounts; then
		mkdir -p /dev/hugepages &&
			mount -t hugetlbfs nodev /dev/hugepages &&
			echo "test.sh: mounted hugetlbfs on /dev/hugepages" || true
	fi
fi
set +e
meson test -C "$build" --print-errorlogs --num-processes 2
rc=$?
set -e
# One closing line any CI reads: N passed, N failed, N skipped.
python3 - "$build/meson-logs/testlog.json" <<'PY' || true
import json, sys
counts = {"OK": 0, "FAIL": 0, "SKIP": 0}
for line in open(sys.argv[1]):
    r = json.loads(line).get("result", "")
    key = {"OK": "OK", "EXPECTEDFAIL": "OK", "SKIP": "SKIP"}.get(r, "FAIL")
    counts[key] += 1
print(f"{counts['OK']} passed, {counts['FAIL']} failed, {counts['SKIP']} skipped")
PY
exit $rc
