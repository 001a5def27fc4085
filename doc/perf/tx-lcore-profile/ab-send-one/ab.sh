#!/bin/bash
# TX lcores A/B: A = f19d14d, P = entry lines prefetched for writing,
# S = one built burst sent per post, PS = both. gen-tx-rate (unbuilt and
# GPU, 64 B, 1/2/4 queues) per variant, 3 rounds alternated; profile PS.
# Run from the repository root with the GPU bundle unpacked, hugepages
# set and LD_LIBRARY_PATH / PATH as in doc/gpu-results.md#how-to-run;
# OUT: where the results go. The variants were dpdk-gpu-tx built from
# f19d14d with P.diff, S.diff and both, carried as build-gpu/var.tgz.
top=$PWD; R=$PWD/p2; rm -rf "$R"; mkdir -p "$R"
save() { tar czf "$OUT/p2.tgz" p2; }
pmd="-d $top/.gpu-bundle/pmds"
mkdir -p build-gpu/var && tar xzf build-gpu/var.tgz -C build-gpu/var
for v in P S PS; do
	d=.gpu-bundle/build$v; mkdir -p $d/examples/gpu_tx; cp build-gpu/var/tx-$v $d/examples/gpu_tx/dpdk-gpu-tx
	ln -sfn ../build/drivers $d/drivers
done
ln -sfn build .gpu-bundle/buildA
for r in 1 2 3; do for v in A P S PS; do
	BENCH_EAL_EXTRA="$pmd" BENCH_TXR_MODES="none,gpudma gpu" BENCH_TXR_SIZES=64 \
		timeout 100 bash bench/gen-tx-rate.sh "$R/rate-$v-$r" .gpu-bundle/build$v > "$R/rate-$v-$r.log" 2>&1
	echo "$v r$r rc=$? $(grep txrate "$R/rate-$v-$r.log" | sed 's/.*mem=\([a-z]*\).* queues=\([0-9]\) mpps=\([0-9.]*\).*/\1 q\2 \3/' | tr '\n' ' ')"
done; done | tee "$R/rates.txt"; save
BENCH_EAL_EXTRA="$pmd" BENCH_PROF_MODES=gpu BENCH_PROF_QUEUES="2 4" timeout 100 bash bench/profile-tx-lcore.sh "$R/prof-PS" .gpu-bundle/buildPS > "$R/prof.log" 2>&1
echo "prof rc=$?"; cat "$R/prof.log"; save
