#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Nsight Compute profile of bench-kernel-rate's gather floor (issue 18):
# for each filter and memory kind, 64-byte packets, one timed pass each.
# The shipped kernel the bench times (dpdk-gpu-rx's persistent kernel)
# runs until the CPU raises its quit flag while the CPU feeds it, which
# ncu's serialised, replayed launches cannot profile: use nsys for it.
# Per launch: duration, achieved memory and SM
# throughput (% of peak), DRAM and PCIe-read bandwidth, achieved
# occupancy (and registers per thread, the blocks per SM they allow), and
# the warp stall reasons that dominate (warps stalled per issued
# instruction, by reason).
#
# Output: OUT_DIR/ncu-<filter>-<mem>.csv (ncu --page raw), and
# OUT_DIR/ncu-summary.txt, a line per kernel launch profiled.
#
# Usage: bench/profile-kernel-ncu.sh OUT_DIR [BUILD_DIR]
# Env: NCU (default: ncu on PATH, else $CUDA_HOME/bin/ncu),
#      PROF_FILTERS (default "empty tcp443 complex"), PROF_MEMS ("gpu
#      host"), PROF_SIZES ("64"), PROF_FLOWS ("1000"), PROF_PACKETS
#      (1048576).
# Exit: 0; 1 a run failed; 2 usage or missing build; 77 no ncu or no GPU.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: $0 OUT_DIR [BUILD_DIR]}
build=${2:-$top/build}
bench=$build/bench/bench-kernel-rate
[ -x "$bench" ] || { echo "no $bench: build first" >&2; exit 2; }
ncu=${NCU:-$(command -v ncu || echo "${CUDA_HOME:-/usr/local/cuda}/bin/ncu")}
[ -x "$ncu" ] || { echo "skipped: no Nsight Compute (ncu)"; exit 77; }
nvidia-smi -L > /dev/null 2>&1 || { echo "skipped: no GPU"; exit 77; }
mkdir -p "$out" || exit 2

failed=0
: > "$out/ncu-summary.txt"
for f in ${PROF_FILTERS:-empty tcp443 complex}; do
	for m in ${PROF_MEMS:-gpu host}; do
		csv=$out/ncu-$f-$m.csv
		# The floor's warm-up-free timed pass (--warmup 0 --reps 1).
		"$ncu" --csv --page raw --section SpeedOfLight \
			--section MemoryWorkloadAnalysis --section Occupancy \
			--section WarpStateStats -k 'regex:^kr_gather_kernel' \
			"$bench" --packets "${PROF_PACKETS:-1048576}" --reps 1 \
			--warmup 0 --flows "${PROF_FLOWS:-1000}" \
			--sizes "${PROF_SIZES:-64}" --mem "$m" --filters "$f" \
			--budget-s 120 > "$csv" 2> "$out/ncu-$f-$m.log"
		rc=$?
		if [ $rc -ne 0 ]; then
			echo "ncu filter=$f mem=$m FAILED (exit $rc)" | tee -a "$out/ncu-summary.txt"
			failed=1
			continue
		fi
		python3 - "$csv" "$f" "$m" <<'PY' | tee -a "$out/ncu-summary.txt"
import csv, re, sys
path, filt, mem = sys.argv[1:4]
rows = [r for r in csv.reader(open(path)) if r]
# ncu's raw page: a header row, a units row, then a row per launch.
hdr = next((i for i, r in enumerate(rows) if "Kernel Name" in r), None)
if hdr is None:
    print(f"ncu filter={filt} mem={mem}: no kernel profiled")
    sys.exit(0)
names = rows[hdr]
def col(r, name):
    try:
        return float(r[names.index(name)].replace(",", ""))
    except (ValueError, IndexError):
        return None
stall = [(i, re.sub(r"^smsp__average_warps_issue_stalled_|_per_issue_active\.ratio$", "", n))
         for i, n in enumerate(names)
         if n.startswith("smsp__average_warps_issue_stalled_") and
         n.endswith("_per_issue_active.ratio") and "selected" not in n]
for r in rows[hdr + 2:]:
    if len(r) != len(names):
        continue
    k = r[names.index("Kernel Name")]
    k = k.split("(")[0]
    dur = col(r, "gpu__time_duration.sum")
    unit = rows[hdr + 1][names.index("gpu__time_duration.sum")] if "gpu__time_duration.sum" in names else ""
    if dur is not None:
        dur *= {"nsecond": 1e-3, "usecond": 1.0, "msecond": 1e3, "second": 1e6}.get(unit, 1e-3)
    mem_pct = col(r, "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed")
    dram = col(r, "dram__bytes.sum.per_second")
    regs = col(r, "launch__registers_per_thread")
    lim = col(r, "launch__occupancy_limit_registers")
    sm = col(r, "sm__throughput.avg.pct_of_peak_sustained_elapsed")
    occ = col(r, "sm__warps_active.avg.pct_of_peak_sustained_active")
    st = []
    for i, n in stall:
        try:
            st.append((float(r[i].replace(",", "")), n))
        except ValueError:
            pass
    st.sort(reverse=True)
    top = ", ".join(f"{n} {v:.1f}" for v, n in st[:4])
    def f(v, fmt):
        return "n/a" if v is None else fmt % v
    print(f"ncu filter={filt} mem={mem} kernel={k} duration_us={f(dur, '%.1f')} "
          f"mem_pct={f(mem_pct, '%.1f')} dram_GBps={f(dram and dram / 1e9, '%.0f')} sm_pct={f(sm, '%.1f')} "
          f"regs={f(regs, '%.0f')} blocks_by_regs={f(lim, '%.0f')} "
          f"occupancy_pct={f(occ, '%.1f')} stalls_per_issue=[{top}]")
PY
	done
done
exit $failed
