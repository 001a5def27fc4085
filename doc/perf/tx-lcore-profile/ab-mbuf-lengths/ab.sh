#!/bin/bash
# TX post A/B: A = 7a22eb6 (bundle), V1 = lap tag in a local, V2 = V1 +
# mbuf lengths stored only where they differ. gen-tx-rate (unbuilt and
# GPU, 64 B, 2/4 queues), 3 rounds alternated; suite on V2; e2e on A;
# suite on A.
# Run from the repository root with the GPU bundle unpacked, hugepages
# set and LD_LIBRARY_PATH / PATH as in doc/gpu-results.md#how-to-run;
# OUT: where the results go. The variants were dpdk-gpu-tx built from
# 7a22eb6 with V1.diff and V2.diff, carried as build-gpu/var.tgz.
top=$PWD; R=$PWD/v; rm -rf "$R"; mkdir -p "$R"
save() { tar czf "$OUT/v.tgz" v; }
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; echo "rev $(cat .gpu-bundle/REVISION) $(date -u +%FT%TZ)"; } > "$R/machine.txt" 2>&1
pmd="-d $top/.gpu-bundle/pmds"
mkdir -p build-gpu/var && tar xzf build-gpu/var.tgz -C build-gpu/var
for v in V1 V2; do
	d=.gpu-bundle/build$v; cp -rs "$top/.gpu-bundle/build" $d
	rm $d/examples/gpu_tx/dpdk-gpu-tx; cp build-gpu/var/tx-$v $d/examples/gpu_tx/dpdk-gpu-tx
done
ln -sfn build .gpu-bundle/buildA
t0=$(date +%s)
for r in 1 2 3; do for v in A V1 V2; do
	BENCH_EAL_EXTRA="$pmd" BENCH_TXR_MODES="none,gpudma gpu" BENCH_TXR_SIZES=64 BENCH_TXR_QUEUES="2 4" \
		timeout 80 bash bench/gen-tx-rate.sh "$R/rate-$v-$r" .gpu-bundle/build$v > "$R/rate-$v-$r.log" 2>&1
	echo "$v r$r rc=$? $(grep txrate "$R/rate-$v-$r.log" | sed 's/.*mem=\([a-z]*\).* queues=\([0-9]\) mpps=\([0-9.]*\).*/\1 q\2 \3/' | tr '\n' ' ')"
done; done | tee "$R/rates.txt"; save
echo "ab took $(( $(date +%s) - t0 )) s"; t0=$(date +%s)
timeout 120 bash scripts/run-gpu-suite.sh "$R/suite-V2" .gpu-bundle/buildV2 > "$R/suite-V2.log" 2>&1
echo "suite V2 rc=$? $(grep -c '^## ' $R/suite-V2/results.md) parts, $(grep '^## ' $R/suite-V2/results.md | grep -vc 'exit 0') nonzero" | tee -a "$R/rc.txt"; save
GPU_RX_EAL_EXTRA="$pmd" GPU_RX_E2E_MODES="host-mapped gpu staged" \
	timeout 240 sh tests/gpu_rx/e2e/run-gpu-e2e.sh .gpu-bundle/build "$R/e2e" > "$R/e2e.log" 2>&1
echo "e2e A rc=$? $(tail -1 $R/e2e.log)" | tee -a "$R/rc.txt"
find "$R/e2e" -name '*.pcap*' -size +1M -delete; find "$R/e2e" -name '*.ipfix' -size +1M -delete; save
echo "e2e took $(( $(date +%s) - t0 )) s"
timeout 100 bash scripts/run-gpu-suite.sh "$R/suite-A" .gpu-bundle/build > "$R/suite-A.log" 2>&1
echo "suite A rc=$? $(grep -c '^## ' $R/suite-A/results.md) parts, $(grep '^## ' $R/suite-A/results.md | grep -vc 'exit 0') nonzero" | tee -a "$R/rc.txt"; save
grep '^## ' $R/suite-*/results.md | grep -v 'exit 0'
