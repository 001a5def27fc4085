# A/B: prefetchw of the next head item's entry lines (gpucomm_ring_advance)
. build-gpu/prep.sh   # unpacks the GPU bundle as in doc/gpu-results.md, hugepages, LD_LIBRARY_PATH
rm -rf .gpu-bundle/buildB; cp -rs $PWD/.gpu-bundle/build .gpu-bundle/buildB
mkdir -p /tmp/vb && tar xzf build-gpu/var.tgz -C /tmp/vb
rm .gpu-bundle/buildB/examples/gpu_tx/dpdk-gpu-tx .gpu-bundle/buildB/examples/gpu_rx/app/dpdk-gpu-rx
cp /tmp/vb/dpdk-gpu-tx .gpu-bundle/buildB/examples/gpu_tx/; cp /tmp/vb/dpdk-gpu-rx .gpu-bundle/buildB/examples/gpu_rx/app/
t0=$(date +%s)
BENCH_EAL_EXTRA="-d .gpu-bundle/pmds" BENCH_TXR_MODES="none,gpudma gpu" BENCH_TXR_SIZES=64 \
  bash bench/ab-tx-rate.sh $OUT/abtx .gpu-bundle/build .gpu-bundle/buildB > $OUT/abtx.log 2>&1; echo "abtx rc=$? $(( $(date +%s)-t0 ))s"
cat $OUT/abtx/ab.md
BENCH_EAL_EXTRA="-d .gpu-bundle/pmds" BENCH_CAP_MODES="source host-mapped" BENCH_CAP_SIZES=64 BENCH_CAP_LCORES="1 4 8" BENCH_CAP_BURST=128 BENCH_CAP_SECONDS=2 \
  bash bench/ab-capacity.sh $OUT/abrx .gpu-bundle/build .gpu-bundle/buildB > $OUT/abrx.log 2>&1; echo "abrx rc=$? $(( $(date +%s)-t0 ))s"
cat $OUT/abrx/ab.md
cd $OUT && tar czf ab-runs.tgz --exclude='*.pcap' abtx abrx && rm -rf abtx abrx
