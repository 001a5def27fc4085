# persistent fill with park/resume: launch-per-burst app, sanitizer, e2e gpu modes, bench 1/4/8 queues
. build-gpu/prep.sh   # unpacks the GPU bundle as in doc/gpu-results.md, hugepages, LD_LIBRARY_PATH, PATH (nfcapd)
B=.gpu-bundle/build
t0=$(date +%s)
$B/tests/gpu_rx/e2e/gpurx-e2e-genpcap $OUT/t.pcap 7 3000 40 > /dev/null
rx=$B/examples/gpu_rx/app/dpdk-gpu-rx
cs=/usr/local/cuda/bin/compute-sanitizer
sample() { sleep $3; for t in /proc/$1/task/*; do echo "$(cat $t/comm) $(awk '{print $3}' $t/stat) $(cat $t/wchan)"; done > $2 2>&1; nvidia-smi --query-gpu=utilization.gpu --format=csv,noheader >> $2 2>&1; }
run_rx() { name=$1 lim=$2; shift 2
	timeout -k 5 $lim env "$@" > $OUT/$name.log 2>&1 & p=$!
	sleep 2; rp=$(pgrep -n -x dpdk-gpu-rx); ( sample $rp $OUT/$name.s1 25 ) & sp=$!
	wait $p; rc=$?; kill $sp 2>/dev/null
	echo "$name rc=$rc $(( $(date +%s)-t0 ))s"; grep -E "^received|^captured|^gpu items|stopped by|mbufs:" $OUT/$name.log | cut -c1-150; }
eal="--no-huge -m 2048 --no-shconf -d $PWD/.gpu-bundle/pmds -l 0-1"
V=net_gpudma0,rx_pcap=$OUT/t.pcap,scatter=1
run_rx pf-lpb 40 A=1 $rx $eal --file-prefix a1 --vdev $V,fill=persistent -- --mem gpu --launch-per-burst --backpressure --filter "tcp or udp" --idle-exit 2000 --stall-ms 0
run_rx la-lpb 40 A=1 $rx $eal --file-prefix a2 --vdev $V -- --mem gpu --launch-per-burst --backpressure --filter "tcp or udp" --idle-exit 2000 --stall-ms 0
run_rx pf-san 120 A=1 $cs --tool memcheck --error-exitcode 3 $rx $eal --file-prefix a3 --vdev $V,fill=persistent -- --mem gpu --backpressure --filter "tcp or udp" --idle-exit 2000 --stall-ms 0
grep "ERROR SUMMARY" $OUT/pf-san.log
GPU_RX_EAL_EXTRA="-d $PWD/.gpu-bundle/pmds" GPU_RX_E2E_GPUDMA=fill=persistent GPU_RX_E2E_MODES="gpu gpu+split gpu,no-lap-tags" \
  timeout -k 5 170 sh tests/gpu_rx/e2e/run-gpu-e2e.sh $B $OUT/e2e > $OUT/e2e.log 2>&1; echo "e2e rc=$? $(( $(date +%s)-t0 ))s"
grep -E "passed|^FAIL" $OUT/e2e.log | tail -6
GPUDMA_BUILD=0 GPUDMA_QUEUES="1 4 8" GPUDMA_SECONDS=1 timeout -k 5 150 bash bench/gpudma-gpu.sh $OUT/gd $B > $OUT/gd.log 2>&1; echo "gd rc=$? $(( $(date +%s)-t0 ))s"
grep -A12 "fill=persistent against" $OUT/gd.log
rm -f $OUT/*.pcap*; find $OUT -size +1M -delete
cd $OUT && tar czf logs.tgz gd e2e *.log *.s1 2>/dev/null; rm -rf gd e2e
