#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# A/B of the ring's CPU populate (bench/bench_ring_fill.c) on this CPU:
# the bench compiled against A's and B's lib/gpucomm with the project's
# flags, run alternately A B A B ..., each with the lap tags off and (if
# the tree has them) on. The summary: per variant, min / median / max of
# the runs' medians, and B/A of the medians of medians.
#   bench/ring-fill-ab.sh A_TREE B_TREE [REPS] [ROUNDS]
# A_TREE, B_TREE: directories holding lib/gpucomm (e.g. from git archive).
set -eu
a=$1 b=$2 reps=${3:-3} rounds=${4:-20000}
src=$(dirname "$0")/bench_ring_fill.c
out=${TMPDIR:-/tmp}/ring-fill-ab.$$
mkdir -p "$out"
for v in a b; do
	eval tree=\$$v
	cc -O2 -std=c11 -D_GNU_SOURCE -DALLOW_EXPERIMENTAL_API \
		$(pkg-config --cflags libdpdk) -I"$tree/lib/gpucomm" \
		"$src" -o "$out/$v" $(pkg-config --libs libdpdk)
done
runs() {
for i in $(seq "$reps"); do
	# A B in odd repetitions, B A in even ones: neither always first.
	order="a b"
	[ $((i % 2)) -eq 0 ] && order="b a"
	for v in $order; do
		for t in 0 1; do
			"$out/$v" --rounds "$rounds" --tags $t 2>/dev/null |
				sed "s/^/$v rep=$i /" || true
		done
	done
done
}
runs | tee "$out/runs"
awk '{
	split($3, b, "="); split($4, t, "="); split($6, m, "=");
	k = $1 " burst=" b[2] " tags=" t[2]; v = m[2] + 0;
	n[k]++; x[k, n[k]] = v
} END {
	for (k in n) {
		for (i = 1; i <= n[k]; i++)
			for (j = i + 1; j <= n[k]; j++)
				if (x[k, j] < x[k, i]) {
					s = x[k, i]; x[k, i] = x[k, j]; x[k, j] = s
				}
		med[k] = x[k, int((n[k] + 1) / 2)]
		printf "%s: %.1f / %.1f / %.1f ns (%d runs)\n", k, x[k, 1],
			med[k], x[k, n[k]], n[k]
	}
	for (k in med)
		if (substr(k, 1, 1) == "b") {
			ka = "a" substr(k, 2); sub(/tags=1/, "tags=0", ka)
			if (ka in med)
				printf "B/A %s: %.3f\n", substr(k, 3), med[k] / med[ka]
		}
}' "$out/runs" | sort
rm -rf "$out"
