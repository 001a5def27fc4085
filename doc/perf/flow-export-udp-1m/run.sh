# exporter capacity over UDP at 1 M flows (bench/flow-export.sh's search), current build
. build-gpu/prep.sh   # unpacks the GPU bundle as in doc/gpu-results.md, hugepages, LD_LIBRARY_PATH, PATH (nfcapd)
t0=$(date +%s)
BENCH_FLOW_EXPORTS="udp" BENCH_FLOW_PIPE_FLOWS=0 BENCH_FLOW_REPS=1 BENCH_FLOW_SIZES=1000000 \
 BENCH_FLOW_CAP_START=10000000 BENCH_FLOW_CAP_BUDGET=150 timeout -k 5 400 bash bench/flow-export.sh $OUT/fe .gpu-bundle/build > $OUT/fe.log 2>&1
echo "fe rc=$? $(( $(date +%s)-t0 ))s"
grep -i "capacity" $OUT/fe.log | tail -12
for f in $OUT/fe/capacity-*.json; do python3 -c "import json;j=json.load(open('$f'));print({k:j.get(k) for k in ('capacity','first_unclean','why','records_per_s')})"; done
for f in $OUT/fe/capacity/*.log; do echo "$(basename $f): $(grep -ohE 'churn=[0-9]+|records_per_s=[0-9]+|ring_full=[0-9]+|scans=[0-9]+|scan_ms_max=[0-9.]+|pull_s=[0-9.]+' $f | tr '\n' ' ')"; done
grep -i "Ident" $OUT/fe/nfcapd.log | tail -2
find $OUT -name '*.ipfix' -delete; find $OUT -size +1M -delete
cd $OUT && tar czf fe.tgz fe && rm -rf fe
