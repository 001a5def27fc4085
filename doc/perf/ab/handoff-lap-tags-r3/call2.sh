#!/bin/bash
# Call 2: pipeline capacity A (main 86e4ca2) against B (h-sv3, tags on),
# 64 B, host-mapped / staged / gpu, 1/4/8 lcores, 3 rounds alternated;
# synccheck of B's rx and tx; racecheck of a named-barrier micro kernel.
cd "$(dirname "$0")/.." || exit 1
. build-gpu/prep.sh
top=$PWD; R=$PWD/sv2; rm -rf "$R"; mkdir -p "$R"
save() { tar czf "$OUT/sv2.tgz" sv2; }
B=.gpu-bundle/build; A=.gpu-bundle/buildA; pmd="-d $top/.gpu-bundle/pmds"
mkdir -p $A && tar xzf build-gpu/A/main-86e4ca2.tgz -C $A --strip-components 1 && ln -sfn ../build/drivers $A/drivers
cs=/usr/local/cuda/bin/compute-sanitizer
t0=$(date +%s)
timeout 60 $cs --tool racecheck build-gpu/rc/nb > "$R/nb-racecheck.log" 2>&1; echo "nb racecheck rc=$?"; tail -3 "$R/nb-racecheck.log"
$B/tests/gpu_rx/e2e/gpurx-e2e-genpcap "$R/t.pcap" 7 3000 40 > /dev/null
timeout 120 $cs --tool synccheck --error-exitcode 3 $B/examples/gpu_rx/app/dpdk-gpu-rx --no-huge -m 2048 --no-shconf --file-prefix sc1 -l 0-1 $pmd \
	--vdev net_gpudma0,rx_pcap=$R/t.pcap,scatter=1 -- --mem gpu --backpressure --filter 'tcp or udp' \
	--write "$R/rc.pcapng" --idle-exit 2000 --quiet --stall-ms 0 > "$R/rx-synccheck.log" 2>&1
echo "rx gpu synccheck rc=$?"; tail -2 "$R/rx-synccheck.log"
timeout 120 $cs --tool synccheck --error-exitcode 3 $B/examples/gpu_tx/dpdk-gpu-tx --no-huge -m 2048 --no-shconf --file-prefix sc2 -l 0-1 $pmd \
	--vdev net_gpudma0 -- --mem gpu --stream 'ipv4,udp,size=100' --count 4096 --burst 32 --wait-link 0 --quiet > "$R/tx-synccheck.log" 2>&1
echo "tx gpu synccheck rc=$?"; tail -2 "$R/tx-synccheck.log"
rm -f "$R"/*.pcap*; save
echo "sanitizers took $(( $(date +%s) - t0 )) s"; t0=$(date +%s)
BENCH_EAL_EXTRA="$pmd" BENCH_AB_REPS=3 BENCH_CAP_MODES="host-mapped staged gpu" \
BENCH_CAP_SIZES=64 BENCH_CAP_LCORES="1 4 8" BENCH_CAP_SECONDS=2 \
	timeout 420 bash bench/ab-capacity.sh "$R/cap" $A $B > "$R/cap.log" 2>&1
echo "cap rc=$?"; tail -14 "$R/cap.log"; save
echo "cap took $(( $(date +%s) - t0 )) s"
