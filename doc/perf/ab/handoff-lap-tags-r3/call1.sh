#!/bin/bash
# Call 1: A = main 86e4ca2, B = h-sv3 (bundle), one start, alternated.
# handoff 3 rounds (A, B tags on, B tags off), tx build breakdown A/B,
# racecheck/synccheck of B's tagged kernels.
cd "$(dirname "$0")/.." || exit 1
. build-gpu/prep.sh
top=$PWD; R=$PWD/sv1; rm -rf "$R"; mkdir -p "$R"
save() { tar czf "$OUT/sv1.tgz" sv1; }
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; echo "B rev $(cat .gpu-bundle/REVISION) $(date -u +%FT%TZ)"; } > "$R/machine.txt" 2>&1
B=.gpu-bundle/build; A=.gpu-bundle/buildA; pmd="-d $top/.gpu-bundle/pmds"
mkdir -p $A && tar xzf build-gpu/A/main-86e4ca2.tgz -C $A --strip-components 1 && ln -sfn ../build/drivers $A/drivers
t0=$(date +%s)
for r in 1 2 3; do for v in A on off; do for pm in host gpu; do
	case $v in A) bin=$A/bench/bench-handoff; x= ;; *) bin=$B/bench/bench-handoff; x="--lap-tags $v" ;; esac
	timeout 60 $bin -m 2048 --file-prefix hk -l 1 -a 0000:00:06.0 $pmd -- --out "$R/hk-$v-$pm-$r" \
		--pkt-mem $pm --bursts 32,1024 --sizes 64 $x > "$R/hk-$v-$pm-$r.log" 2>&1
	echo "hk $v $pm r$r rc=$? $(grep -E 'floor|burst=(32|1024) ' "$R/hk-$v-$pm-$r.log" | sed 's/launch_.*//' | tr '\n' ' ')"
done; done; done | tee "$R/hk.txt"; save
echo "handoff took $(( $(date +%s) - t0 )) s"; t0=$(date +%s)
BENCH_EAL_EXTRA="$pmd" BENCH_AB_REPS=3 timeout 240 bash bench/ab-tx-build.sh "$R/txb" $A $B > "$R/txb.log" 2>&1
echo "txb rc=$?"; tail -12 "$R/txb.log"; save
echo "txb took $(( $(date +%s) - t0 )) s"; t0=$(date +%s)
cs=/usr/local/cuda/bin/compute-sanitizer
$B/tests/gpu_rx/e2e/gpurx-e2e-genpcap "$R/t.pcap" 7 3000 40 > /dev/null
for tool in racecheck synccheck; do
	timeout 100 $cs --tool $tool --error-exitcode 3 $B/examples/gpu_rx/app/dpdk-gpu-rx -m 2048 --file-prefix rc -l 0-1 $pmd \
		--vdev net_gpudma0,rx_pcap=$R/t.pcap,scatter=1 -- --mem gpu --backpressure --filter 'tcp or udp' \
		--write "$R/rc.pcapng" --idle-exit 2000 --quiet --stall-ms 0 > "$R/rx-$tool.log" 2>&1
	echo "rx gpu $tool rc=$?" | tee -a "$R/rc.txt"; tail -2 "$R/rx-$tool.log"
	timeout 100 $cs --tool $tool --error-exitcode 3 $B/examples/gpu_tx/dpdk-gpu-tx -m 2048 --file-prefix rc -l 0-1 $pmd \
		--vdev net_gpudma0 -- --mem gpu --stream 'ipv4,udp,size=100' --count 4096 --burst 64 --wait-link 0 --quiet > "$R/tx-$tool.log" 2>&1
	echo "tx gpu $tool rc=$?" | tee -a "$R/rc.txt"; tail -2 "$R/tx-$tool.log"
	timeout 100 $cs --tool $tool --error-exitcode 3 $B/app/test-gpudev/dpdk-test-gpudev -m 2048 --file-prefix tg -l 0-1 -a 0000:00:06.0 $pmd \
		-- --case comm_list > "$R/tg-$tool.log" 2>&1
	echo "tg $tool rc=$?" | tee -a "$R/rc.txt"; tail -2 "$R/tg-$tool.log"
done
rm -f "$R"/*.pcap*; save
echo "sanitizers took $(( $(date +%s) - t0 )) s"
