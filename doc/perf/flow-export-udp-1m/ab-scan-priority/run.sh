# A/B: flow scan stream at least (A) or greatest (B) priority; exporter over UDP at 1 M flows, churn 10 and 11 M/s, ABAB x3
# bfe-A, bfe-B: bench/bench-flow-export of the two builds (README.md says which), stripped
. build-gpu/prep.sh   # unpacks the GPU bundle as in doc/gpu-results.md, hugepages, LD_LIBRARY_PATH, PATH (nfcapd)
cp build-gpu/bfe-A .gpu-bundle/build/bench/bfe-A; cp build-gpu/bfe-B .gpu-bundle/build/bench/bfe-B
P=31999; mkdir -p $OUT/nf
nfcapd -w $OUT/nf -b 127.0.0.1 -p $P -t 3600 -B 8388608 > $OUT/nfcapd.log 2>&1 & nf=$!
sleep 1; t0=$(date +%s)
for rep in 1 2 3; do for churn in ${CHURNS:-10000000 11000000}; do for v in A B; do
	n=$v-$churn-$rep
	timeout -k 5 60 .gpu-bundle/build/bench/bfe-$v --encoders 4 --flows 1000000 --churn $churn --seconds 4 \
		--export udp://127.0.0.1:$P --ipfix-rate $((2*churn)) --json $OUT/$n.json > $OUT/$n.log 2>&1
	echo "$n rc=$? $(( $(date +%s)-t0 ))s $(grep -h '^flow-export' $OUT/$n.log | grep -oE 'records_per_s=[0-9]+|ring_full=[0-9]+|scans=[0-9]+|scan_ms_max=[0-9.]+|pull_s=[0-9.]+|ipfix_s=[0-9.]+' | tr '\n' ' ')"
done; done; done
kill $nf; sleep 1; tail -3 $OUT/nfcapd.log; rm -rf $OUT/nf
cd $OUT && tar czf ab.tgz *.json *.log && rm -f *.json [AB]-*.log
