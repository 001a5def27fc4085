# SPDX-License-Identifier: BSD-3-Clause
#
# Shell helpers of the bench scripts (sourced, not run).

# EAL memory options into the array bench_mem: HUGE_MB of hugepages where
# at least 1024 are free and hugetlbfs is mounted (the GPU reads mbufs in
# host memory through its own page tables, and 4 KiB pages cost it a
# translation per packet buffer), else NOHUGE_MB of 4 KiB pages.
# BENCH_NO_HUGE=1 forces 4 KiB pages. Sets bench_huge to 1 or 0.
bench_eal_mem() {
	local huge_mb=$1 nohuge_mb=$2 free_huge

	free_huge=$(awk '/^HugePages_Free:/ { print $2 }' /proc/meminfo 2>/dev/null)
	if [ "${BENCH_NO_HUGE:-0}" != 1 ] && [ "${free_huge:-0}" -ge 1024 ] &&
			grep -q hugetlbfs /proc/mounts; then
		bench_mem=(-m "$huge_mb")
		bench_huge=1
	else
		bench_mem=(--no-huge -m "$nohuge_mb" --no-shconf)
		bench_huge=0
	fi
}

# The source revision BUILD_DIR's programs were built from: a bundle's
# REVISION file (scripts/make-gpu-bundle.sh; a copy of the tree on the GPU
# machine may have no history, or a stale one), else git, "+dirty" when
# tracked files differ from it.
bench_revision() {
	local build=$1 top=$2 rev

	rev=$(cat "$(dirname "$build")/REVISION" 2>/dev/null || true)
	if [ -z "$rev" ]; then
		rev=$(git -C "$top" rev-parse --short HEAD 2>/dev/null || echo unknown)
		if git -C "$top" status --porcelain 2>/dev/null | grep -qv '^??'; then
			rev="$rev+dirty"
		fi
	fi
	echo "$rev"
}

# The lines a sweep's machine.txt starts with: when, from which revision of
# BUILD_DIR's programs, on which CPU (and caches) and GPU.
bench_machine_lines() {
	local build=$1 top=$2

	echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
	echo "revision: $(bench_revision "$build" "$top")"
	echo "cpu: $(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2- | sed 's/^ *//') ($(nproc) CPUs)"
	lscpu 2>/dev/null | grep -E '^(L2|L3) cache' | sed 's/  */ /g'
	echo "gpu: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader -i 0 2>/dev/null || echo none)"
}

# Where capture files go, into bench_capt_dir: BENCH_CAPT_DIR, else
# /dev/shm where it is a tmpfs with room (4 GiB: a container's is often
# 64 MiB), else TMPDIR. The capture sweep and run-all.sh's tmpfs write
# probe use the same, so that the probe is the sweep's floor.
bench_capt_dir() {
	bench_capt_dir=${BENCH_CAPT_DIR:-}
	[ -n "$bench_capt_dir" ] && return
	bench_capt_dir=${TMPDIR:-/tmp}
	if [ "$(stat -f -c %T /dev/shm 2>/dev/null)" = tmpfs ] &&
			[ "$(df -k --output=avail /dev/shm 2>/dev/null | tail -n 1)" -ge 4194304 ]; then
		bench_capt_dir=/dev/shm
	fi
}

# A repetition count from the environment variable NAME (DEFAULT where it
# is unset or empty) into bench_reps; 2 after a message where it is not a
# positive integer. The A/B runs of the sweeps alternate, each repetition
# running every side once, so that drift over a machine start hits both.
bench_reps() {
	local name=$1 def=$2

	bench_reps=${!name:-$def}
	case $bench_reps in
	'' | *[!0-9]* | 0)
		echo "$name: a positive count, not '$bench_reps'" >&2
		return 2 ;;
	esac
}

# Two builds side by side (bench/ab-capacity.sh, bench/ab-tx-rate.sh):
# bench_ab SCRIPT PATTERN KIND OUT_DIR BUILD_A BUILD_B runs SCRIPT
# OUT_DIR/<rep>-<a|b> BUILD for build a, then b, BENCH_AB_REPS times
# (default 3), each run's output in OUT_DIR/<rep>-<a|b>.txt and a line a
# run with how many of its lines match PATTERN (its points); then
# bench/ab-table.py KIND's table into OUT_DIR/ab.md, and prints it.
# 0; 1 a run failed or no point came; 2 usage.
# A bench's arguments, OUT_DIR [BUILD_DIR] (top: the source tree), for
# the program PROG (a path in the build): bench_prog_args PROG "$@" sets
# out, build and prog (the program's path) and makes OUT_DIR; 2 on a
# usage error or a missing build.
bench_prog_args() {
	prog=$1
	out=${2:-}
	build=${3:-$top/build}
	prog=$build/$prog
	[ -n "$out" ] || { echo "usage: $0 OUT_DIR [BUILD_DIR]" >&2; return 2; }
	[ -x "$prog" ] || { echo "missing $prog: build first (scripts/setup.sh $build)" >&2; return 2; }
	mkdir -p "$out" || return 2
}

# A generator bench's: the same, with tx its dpdk-gpu-tx.
bench_tx_args() {
	bench_prog_args examples/gpu_tx/dpdk-gpu-tx "$@" || return 2
	tx=$prog
}

bench_ab() {
	local script=$1 pattern=$2 kind=$3 failed=0 r side build reps

	shift 3
	[ $# -eq 3 ] || { echo "usage: $0 OUT_DIR BUILD_A BUILD_B" >&2; return 2; }
	local out=$1 a=$2 b=$3
	bench_reps BENCH_AB_REPS 3 || return 2
	reps=$bench_reps
	mkdir -p "$out" || return 2
	for ((r = 1; r <= reps; r++)); do
		for side in a b; do
			build=$a
			[ "$side" = b ] && build=$b
			"$script" "$out/$r-$side" "$build" > "$out/$r-$side.txt" 2>&1 ||
				failed=1
			echo "run $r, build $side ($build): $(grep -c "$pattern" "$out/$r-$side.txt") points"
		done
	done
	python3 "$(dirname "${BASH_SOURCE[0]}")/ab-table.py" "$out" "$reps" "$a" "$b" \
		"$kind" > "$out/ab.md" || failed=1
	cat "$out/ab.md"
	return $failed
}

# Keep the median repetition of a run under its plain name: DIR/reps/
# NAME.r1.json .. NAME.rREPS.json are its repetitions (with side files
# NAME.rN.EXT); the one whose rate is the median (the lower of the two
# middle ones for an even count) is copied with its side files to
# DIR/NAME.json and DIR/NAME.EXT, so that a reader of one run a name reads
# the median one. RATE: mpps (its "mpps") or rx (rx_packets / elapsed_s).
# Repetitions without a rate (a failed run) are left out. 1 where none has
# one.
bench_keep_median() {
	python3 - "$@" <<'PY'
import glob, json, os, shutil, sys

d, name, reps, rate = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
runs = []
for r in range(1, reps + 1):
    p = os.path.join(d, "reps", "%s.r%d.json" % (name, r))
    try:
        with open(p) as f:
            j = json.load(f)
        v = j["mpps"] if rate == "mpps" else j["rx_packets"] / j["elapsed_s"]
    except (OSError, ValueError, KeyError, TypeError, ZeroDivisionError):
        continue
    runs.append((v, r))
if not runs:
    sys.exit(1)
runs.sort()
r = runs[(len(runs) - 1) // 2][1]
stem = os.path.join(d, "reps", "%s.r%d." % (name, r))
for p in glob.glob(glob.escape(stem) + "*"):
    shutil.copyfile(p, os.path.join(d, name + "." + p[len(stem):]))
PY
}

# The first GPU (nvidia-smi's GPU 0) in DPDK's PCI format, or
# BENCH_GPU_PCI ("any": no -a, EAL probes every device), into
# bench_gpu_pci and the EAL options bench_gpu_args (empty without one).
bench_gpu_pci() {
	bench_gpu_pci=${BENCH_GPU_PCI:-}
	if [ -z "$bench_gpu_pci" ] && command -v nvidia-smi > /dev/null 2>&1; then
		bench_gpu_pci=$(nvidia-smi --query-gpu=pci.bus_id --format=csv,noheader -i 0 2> /dev/null |
			head -n 1 | tr 'A-F' 'a-f' | sed -E 's/^0000([0-9a-f]{4}):/\1:/')
	fi
	bench_gpu_args=()
	if [ -n "$bench_gpu_pci" ] && [ "$bench_gpu_pci" != any ]; then
		bench_gpu_args=(-a "$bench_gpu_pci")
	fi
}

# perf for the lcore profiles: exits the script with 77 where PERF (default
# "perf") is missing or cannot sample here. Sets bench_perf.
bench_perf_check() {
	local probe

	bench_perf=${PERF:-perf}
	"$bench_perf" --version > /dev/null 2>&1 ||
		{ echo "skipped: no perf ($bench_perf)" >&2; exit 77; }
	probe=$(mktemp "${TMPDIR:-/tmp}/bench-perf.XXXXXX")
	if ! "$bench_perf" record -q -e cpu-clock -o "$probe" -- true > /dev/null 2>&1; then
		rm -f "$probe"
		echo "skipped: $bench_perf cannot sample here (see /proc/sys/kernel/perf_event_paranoid)" >&2
		exit 77
	fi
	rm -f "$probe"
}

# Runs CMD... under perf (cpu-clock samples; its output to BASE.log) and
# writes the flat profile of its lcores rte-worker-1..LCORES to BASE.txt:
# shares by library, then symbols of >= 0.5 %. Shares are of those
# threads' samples only (start-up and the main lcore's sleeping are not
# the lcores' cost). perf's own --sort dso misattributed a library here
# (perf 6.1), so the per-library lines are sums over the symbol lines.
# BENCH_PROF_KEEP=1 keeps the samples as BASE.perf.data (for perf
# annotate). Returns 0; 1 when CMD failed or its lcores have no samples
# (said on stdout).
bench_perf_lcores() {
	local base=$1 lcores=$2 data rc

	shift 2
	data=$base.perf.data
	"$bench_perf" record -q -e cpu-clock -F 2999 -o "$data" -- "$@" \
		> "$base.log" 2>&1
	rc=$?
	if [ $rc -ne 0 ]; then
		echo "$(basename "$base") FAILED (exit $rc, see $base.log)"
		rm -f "$data"
		return 1
	fi
	"$bench_perf" report -i "$data" --stdio --percentage relative \
		--comms "$(seq -s, -f 'rte-worker-%g' 1 "$lcores")" \
		--sort dso,sym 2> /dev/null |
		awk '/^ *[0-9.]+%/ {
			p = $1; sub("%", "", p); lib[$2] += p
			if (p >= 0.5) sym[++n] = $0
		}
		END {
			print "## by library (sum over its symbols)"
			for (l in lib)
				if (lib[l] >= 0.5)
					printf "%8.2f%%  %s\n", lib[l], l | "sort -rn"
			close("sort -rn")
			print "## by symbol (>= 0.5 %)"
			for (i = 1; i <= n; i++)
				print sym[i]
		}' > "$base.txt"
	[ "${BENCH_PROF_KEEP:-0}" = 1 ] || rm -f "$data"
	grep -q '\[\.\]' "$base.txt" && return 0
	echo "$(basename "$base"): no samples of its $lcores lcore(s)"
	return 1
}
