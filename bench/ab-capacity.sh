#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Two builds of dpdk-gpu-rx side by side: bench/pipeline-capacity.sh for
# build A, then build B, repeated, on one machine. A shared or virtual
# machine's pipeline rate moves by tens of percent between machine starts
# (doc/performance.md), so a change is judged against the old binary in
# the same start, alternating, never against a number from another day.
# Prints, per mode, size and lcore count, every run's Mpps, the medians and
# B/A; writes the same to OUT_DIR/ab.md. Each run's own output stays in
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
[ $# -eq 3 ] || { echo "usage: $0 OUT_DIR BUILD_A BUILD_B" >&2; exit 2; }
out=$1
declare -A builds=([a]="$2" [b]="$3")
# shellcheck source=bench/bench-lib.sh
. "$here/bench-lib.sh"
bench_reps BENCH_AB_REPS 3 || exit 2
reps=$bench_reps
mkdir -p "$out"

failed=0
for ((r = 1; r <= reps; r++)); do
	for side in a b; do
		"$here/pipeline-capacity.sh" "$out/$r-$side" "${builds[$side]}" \
			> "$out/$r-$side.txt" 2>&1 || failed=1
		echo "run $r, build $side (${builds[$side]}): $(grep -c '^capacity' "$out/$r-$side.txt") points"
	done
done

python3 - "$out" "$reps" "$2" "$3" <<'PY' > "$out/ab.md" || failed=1
import statistics, sys

out, reps, build_a, build_b = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
runs = {}
for r in range(1, reps + 1):
    for side in "ab":
        try:
            lines = open(f"{out}/{r}-{side}/capacity.md").read().splitlines()
        except OSError:
            continue
        for line in lines[2:]:
            c = [x.strip() for x in line.strip().strip("|").split("|")]
            if len(c) < 4:
                continue
            try:
                mpps = float(c[3])
            except ValueError:
                continue        # a failed run's row
            runs.setdefault((c[0], c[1], c[2]), {"a": [], "b": []})[side].append(mpps)

if not runs:
    print("no run of either build gave a result", file=sys.stderr)
    sys.exit(1)
print(f"A = {build_a}, B = {build_b}, {reps} run(s) each, alternating\n")
print("| mode | packet bytes | RX lcores | A (Mpps) | B (Mpps) | median A | median B | B/A |")
print("| --- | --- | --- | --- | --- | --- | --- | --- |")
for (mode, size, lc), v in runs.items():
    a, b = v["a"], v["b"]
    ma = statistics.median(a) if a else float("nan")
    mb = statistics.median(b) if b else float("nan")
    ratio = f"{mb / ma:.2f}" if a and b and ma > 0 else "n/a"
    fa = " / ".join(f"{x:.1f}" for x in a)
    fb = " / ".join(f"{x:.1f}" for x in b)
    print(f"| {mode} | {size} | {lc} | {fa} | {fb} | {ma:.1f} | {mb:.1f} | {ratio} |")
PY
cat "$out/ab.md"
exit $failed
