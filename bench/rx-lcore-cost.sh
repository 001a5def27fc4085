#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# What the GPU pipeline costs an RX lcore per packet, on any machine, GPU
# or not: dpdk-gpu-rx-standin (dpdk-gpu-rx's own objects, the kernel played
# by a CPU thread: tests/gpu_rx/gpu_standin.c) over the fake CUDA
# driver, one RX lcore, net_null 64-byte frames, beside bench-rx-source
# (receive and free only) in the same run. By default the kernel is run
# per item on the RX lcore itself (--launch-per-burst: the stand-in
# processes the item inside the launch call): nothing waits on another
# thread, and a run on a shared machine repeats to a few percent. The
# lcore's time then includes the stand-in's (the summary's "processing"
# per item; a few ns per packet, frames classified once, bytes in cache),
# the same in A and B: B/A and B's ns/packet less A's are the lcore's. RXC_KERNEL=thread runs the persistent
# form instead (a stand-in thread on the main lcore's core, what a real
# kernel's writes from elsewhere cost the lcore's caches included), with
# --backpressure, so that a stand-in descheduled for a moment slows the
# lcore rather than drop items; its rate moves with the machine's load.
# The stand-in classifies identical frames once, so it keeps ahead.
# RXC_GPU_US=L (thread only) has the stand-in hold each item L us after it
# saw it READY before DONE, items overlapping as on a GPU (10-30 us is
# what an H200 shows per item): about L x the item rate of items and
# their mbufs are then in flight, more than the lcore's mempool cache
# holds, as with a real GPU; without it items come back almost at once.
# Runs alternate source, A[, B] RXC_REPS times (a shared machine's rate
# moves between runs). Each run is timed by the RX lcore's own CPU time
# where perf can sample (cpu-clock samples of its thread, rte-worker-1, at
# a fixed period): on a machine shared with other work the lcore is not
# always on its core, and wall time would count that too; else wall time.
# Prints every run and, per side, the median, the best run (the one
# least disturbed, e.g. by the stand-in thread losing its core) and the
# worst: Mpps per lcore, ns per packet, the pipeline's ns per packet beyond the source's,
# and B/A.
#
# Usage: bench/rx-lcore-cost.sh [BUILD_A [BUILD_B]]   (default: build/)
# Env: RXC_REPS (default 3), RXC_SECONDS (per run, default 3),
#      RXC_BURST (RX burst = packets per ring item, default 128),
#      RXC_MODE (host-mapped, the default, or staged),
#      RXC_KERNEL (inline, the default, or thread),
#      RXC_GPU_US (thread: the stand-in's latency per item, us; default 0),
#      RXC_APP_ARGS (more dpdk-gpu-rx options),
#      RXC_FAKE (the fake libcuda, default BUILD_A/tests/libfakecuda.so),
#      RXC_LCORES (EAL lcores: main, RX; default "-l 0-1"),
#      RXC_CLOCK (cpu, the default where perf samples, or wall),
#      RXC_PERF_DIR (the RX lcore's flat profile of each build over all
#      its runs to RXC_PERF_DIR/profile-<a|b>.txt; needs perf).
# Exit: 0, 1 a run failed, 2 usage or missing build.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
build_a=${1:-$top/build}
build_b=${2:-}
reps=${RXC_REPS:-3}
secs=${RXC_SECONDS:-3}
burst=${RXC_BURST:-128}
mode=${RXC_MODE:-host-mapped}
fake=${RXC_FAKE:-$build_a/tests/libfakecuda.so}
read -r -a app_args <<< "${RXC_APP_ARGS:-}"
read -r -a lcores <<< "${RXC_LCORES:--l 0-1}"
perf_dir=${RXC_PERF_DIR:-}
case $reps in
'' | *[!0-9]* | 0) echo "RXC_REPS: a positive count, not '$reps'" >&2; exit 2 ;;
esac
kernel=${RXC_KERNEL:-inline}
case $kernel in
inline) kargs=(--launch-per-burst) ;;
thread) kargs=(--backpressure) ;;
*) echo "RXC_KERNEL: inline or thread, not $kernel" >&2; exit 2 ;;
esac
gpu_us=${RXC_GPU_US:-0}
case $gpu_us in
'' | *[!0-9]*) echo "RXC_GPU_US: microseconds, not '$gpu_us'" >&2; exit 2 ;;
esac
[ "$gpu_us" = 0 ] || [ "$kernel" = thread ] || {
	echo "RXC_GPU_US: needs RXC_KERNEL=thread" >&2
	exit 2
}
case $mode in
host-mapped|staged) ;;
*) echo "RXC_MODE: host-mapped or staged, not $mode" >&2; exit 2 ;;
esac
sides=(a)
declare -A build=([a]=$build_a)
if [ -n "$build_b" ]; then
	sides+=(b)
	build[b]=$build_b
fi
# The stand-in is built beside its source in tests/gpu_rx; a side may be
# an older build, which has it in examples/gpu_rx/tests or app/.
declare -A standin
for s in "${sides[@]}"; do
	for d in tests/gpu_rx examples/gpu_rx/tests examples/gpu_rx/app; do
		f=${build[$s]}/$d/dpdk-gpu-rx-standin
		if [ -z "${standin[$s]:-}" ] && [ -x "$f" ]; then
			standin[$s]=$f
		fi
	done
	[ -n "${standin[$s]:-}" ] || {
		echo "no dpdk-gpu-rx-standin in ${build[$s]}/tests/gpu_rx: build first" >&2
		exit 2
	}
done
source_bench=$build_a/bench/bench-rx-source
[ -x "$source_bench" ] || { echo "no $source_bench: build first" >&2; exit 2; }
[ -r "$fake" ] || { echo "no fake CUDA library $fake (RXC_FAKE)" >&2; exit 2; }
work=$(mktemp -d "${TMPDIR:-/tmp}/rx-lcore-cost.XXXXXX") || exit 2
trap 'rm -rf "$work"' EXIT
clock=${RXC_CLOCK:-}
if [ -z "$clock" ]; then
	clock=wall
	perf record -q -e cpu-clock -o "$work/probe" -- true > /dev/null 2>&1 &&
		clock=cpu
fi
case $clock in
cpu|wall) ;;
*) echo "RXC_CLOCK: cpu or wall, not $clock" >&2; exit 2 ;;
esac
if [ -n "$perf_dir" ]; then
	[ "$clock" = cpu ] || { echo "RXC_PERF_DIR: perf cannot sample here" >&2; exit 2; }
	mkdir -p "$perf_dir" || exit 2
fi
# cpu-clock sampling period (ns): the RX lcore's CPU time is its samples
# times this.
period=250000
eal=(--no-huge -m 1024 --no-pci --no-shconf --log-level=lib.eal:warning
	"${lcores[@]}")

# One run of a program: COMMAND... under perf (clock cpu) into $1.data.
timed() { # NAME COMMAND...
	local name=$1
	shift
	if [ "$clock" = cpu ]; then
		perf record -q -e cpu-clock -c $period -o "$work/$name.data" -- "$@"
	else
		"$@"
	fi
}

# Mpps of a run per second of the RX lcore's time: from its JSON
# (rx_packets, elapsed_s) and, clock cpu, its samples. Nothing on error.
mpps() { # NAME
	local cpu_s=
	if [ "$clock" = cpu ]; then
		cpu_s=$(perf script -i "$work/$1.data" -F comm 2> /dev/null |
			awk -v p=$period '$1 == "rte-worker-1" { n++ }
				END { if (n > 0) printf "%.6f", n * p / 1e9 }')
		[ -n "$cpu_s" ] || return
	fi
	python3 -c 'import json, sys
j = json.load(open(sys.argv[1]))
s = float(sys.argv[2]) if sys.argv[2] else j["elapsed_s"]
print("%.3f" % (j["rx_packets"] / s / 1e6))' "$work/$1.json" "$cpu_s" 2> /dev/null
}

failed=0
declare -A rates=()
for ((r = 1; r <= reps; r++)); do
	json=$work/source-$r.json
	timed source-$r timeout $((secs + 60)) "$source_bench" "${eal[@]}" \
		--file-prefix "rxc-src-$$" --vdev net_null0,size=64,copy=0 -- \
		--queues 1 --burst "$burst" --seconds "$secs" --json "$json" \
		> "$work/source-$r.log" 2>&1
	v=$(mpps source-$r)
	if [ -z "$v" ]; then
		echo "run $r source FAILED:"; tail -n 5 "$work/source-$r.log"
		failed=1
	else
		rates[source]+="$v "
		echo "run $r source: $v Mpps"
	fi
	for s in "${sides[@]}"; do
		json=$work/$s-$r.json
		GPU_CUDA_LIBCUDA=$fake GPURX_STANDIN_GPU_US=$gpu_us timed $s-$r timeout $((secs + 60)) \
			"${standin[$s]}" \
			"${eal[@]}" --file-prefix "rxc-$s-$$" \
			--vdev gpu_cuda0,dev=0 --vdev net_null0,size=64,copy=0 -- \
			--mem "$mode" --queues 1 --burst "$burst" "${kargs[@]}" \
			--filter 'tcp port 443' --ts none --quiet \
			--duration "$secs" --json "$json" "${app_args[@]}" \
			> "$work/$s-$r.log" 2>&1
		v=$(mpps $s-$r)
		if [ -z "$v" ]; then
			echo "run $r build $s FAILED:"; tail -n 8 "$work/$s-$r.log"
			failed=1
			continue
		fi
		rates[$s]+="$v "
		echo "run $r build $s (${build[$s]}): $v Mpps"
	done
done

if [ -n "$perf_dir" ]; then
	for s in "${sides[@]}"; do
		# The RX lcore only (EAL names it rte-worker-1), every run.
		for f in "$work/$s"-*.data; do
			perf report -i "$f" --stdio --comms rte-worker-1 \
				--percentage relative --sort dso,sym 2> /dev/null | grep -E '^ *[0-9.]+%'
		done | awk '{ p = $1; sub("%", "", p); $1 = ""; w[$0] += p; n[$0]++ }
			END { for (k in w) printf "%7.2f%% %s\n", w[k] / '"$reps"', k }' |
			sort -rn > "$perf_dir/profile-$s.txt"
		echo "profile of build $s's RX lcore: $perf_dir/profile-$s.txt"
		head -n 12 "$perf_dir/profile-$s.txt"
	done
fi

python3 - "${rates[source]:-}" "${rates[a]:-}" "${rates[b]:-}" "$mode" "$burst" "$clock" "$kernel" "$gpu_us" <<'PY'
import statistics, sys

src, a, b = ([float(x) for x in s.split()] for s in sys.argv[1:4])
mode, burst, clock, kernel, gpu_us = sys.argv[4:9]
if gpu_us != "0":
    kernel += f" ({gpu_us} us per item)"
if not src:
    sys.exit("no run of the source gave a result")
print(f"\nrx-lcore-cost: 1 RX lcore, net_null 64 B, burst {burst}, {mode}, "
      f"kernel {kernel}, "
      f"{max(len(src), len(a), len(b))} run(s), Mpps per second of the RX "
      f"lcore's {'CPU' if clock == 'cpu' else 'wall'} time")
for stat, f in (("median", statistics.median), ("best", max), ("worst", min)):
    ms = f(src)
    print(f"  {stat:6} source (RX and free) {ms:8.2f} Mpps {1e3 / ms:7.2f} ns/packet")
    for name, v in (("A", a), ("B", b)):
        if not v:
            continue
        m = f(v)
        print(f"  {stat:6} pipeline {name}           {m:8.2f} Mpps {1e3 / m:7.2f} "
              f"ns/packet, {1e3 / m - 1e3 / ms:+7.2f} beyond the source, "
              f"{m / ms:.2f} of its rate")
    if a and b:
        print(f"  {stat:6} B/A {f(b) / f(a):.3f} "
              f"({1e3 / f(b) - 1e3 / f(a):+.2f} ns/packet)")
PY
exit $failed
