#!/bin/bash
# TX lcores (issue 35 goal 1): same-start gen-tx-rate (unbuilt vs GPU, 64 B,
# 1/2/4 queues, 3 rounds), then perf profiles of both with annotations.
# Run from the repository root with the GPU bundle unpacked, hugepages
# set and LD_LIBRARY_PATH / PATH as in doc/gpu-results.md#how-to-run;
# OUT: where the results go.
top=$PWD; R=$PWD/p1; rm -rf "$R"; mkdir -p "$R"
save() { tar czf "$OUT/p1.tgz" p1; }
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; echo "rev $(cat .gpu-bundle/REVISION) $(date -u +%FT%TZ)"; lscpu | grep -E 'Model name|L2|L3|^CPU\(s\)'; } > "$R/machine.txt" 2>&1
B=.gpu-bundle/build; pmd="-d $top/.gpu-bundle/pmds"
perf --version; cat /proc/sys/kernel/perf_event_paranoid
for r in 1 2 3; do
	BENCH_EAL_EXTRA="$pmd" BENCH_TXR_MODES="none,gpudma gpu" BENCH_TXR_SIZES=64 \
		timeout 100 bash bench/gen-tx-rate.sh "$R/rate-$r" $B > "$R/rate-$r.log" 2>&1
	echo "rate r$r rc=$?"; grep txrate "$R/rate-$r.log"
done; save
BENCH_EAL_EXTRA="$pmd" BENCH_PROF_KEEP=1 timeout 150 bash bench/profile-tx-lcore.sh "$R/prof" $B > "$R/prof.log" 2>&1
echo "prof rc=$?"; cat "$R/prof.log"
for d in "$R"/prof/*.perf.data; do
	b=${d%.perf.data}; q=${b##*-q}
	comms=$(seq -s, -f 'rte-worker-%g' 1 "$q")
	perf report -i "$d" --stdio --comms "$comms" --sort sym -q 2>/dev/null | awk '$1+0 >= 3 {print $NF}' | head -4 > "$b.top"
	while read -r s; do
		perf annotate -i "$d" --stdio --comms "$comms" -s "$s" 2>/dev/null | grep -v '^\s*0.00 :' | awk '$1+0 >= 0.3 || /^ *Percent/' | head -80 > "$b.ann-$s.txt"
	done < "$b.top"
	perf annotate -i "$d" --stdio --comms "$comms" 2>/dev/null | head -3000 > "$b.ann-all.txt"
done
command -v objdump || echo "no objdump here"; save
