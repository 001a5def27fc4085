#!/bin/bash
# Call 3: handoff A/B of main against ab-sv (lap tags round 2), memcheck.
cd "$(dirname "$0")/.." || exit 1
. build-gpu/prep.sh
top=$PWD; R=$PWD/c3; rm -rf "$R"; mkdir -p "$R"
save() { tar czf "$OUT/c3.tgz" c3; }
B=.gpu-bundle/build; pmd="-d $top/.gpu-bundle/pmds"
# --- handoff: A = main, B = ab-sv with lap tags on / off; 3 rounds
SV=.gpu-bundle/buildSV; mkdir -p $SV; cp -a build-gpu/svB/* $SV/; ln -sfn ../build/drivers $SV/drivers
for r in 1 2 3; do for v in A on off; do for pm in host gpu; do
	case $v in A) bin=$B/bench/bench-handoff; x= ;; *) bin=$SV/bench/bench-handoff; x="--lap-tags $v" ;; esac
	timeout 60 $bin -m 2048 --file-prefix hk -l 1 -a 0000:00:06.0 $pmd -- --out "$R/hk-$v-$pm-$r" \
		--pkt-mem $pm --bursts 32,1024 --sizes 64 $x > "$R/hk-$v-$pm-$r.log" 2>&1
	echo "hk $v $pm r$r rc=$? $(grep -E 'floor|burst=(32|1024) ' "$R/hk-$v-$pm-$r.log" | sed 's/launch_.*//' | tr '\n' ' ')"
done; done; done | tee "$R/hk.txt"; save
timeout 120 /usr/local/cuda/bin/compute-sanitizer --tool memcheck --error-exitcode 3 \
	$SV/app/test-gpudev/dpdk-test-gpudev -m 2048 --file-prefix tg -l 0-1 -a 0000:00:06.0 $pmd -- > "$R/sv-tg-memcheck.log" 2>&1
echo "sv test-gpudev memcheck rc=$?" | tee -a "$R/rc.txt"; tail -3 "$R/sv-tg-memcheck.log"; save
cat "$R/rc.txt"
