# the suite at the merged head, then the exporter's UDP capacity (GSO), 1 M and 10 M flows
. build-gpu/prep.sh   # unpacks the GPU bundle as in doc/gpu-results.md, hugepages, LD_LIBRARY_PATH, PATH (nfcapd)
t0=$(date +%s)
bash scripts/run-gpu-suite.sh $OUT/suite .gpu-bundle/build > $OUT/suite.log 2>&1; echo "suite rc=$? $(( $(date +%s)-t0 ))s"
grep -A1 "^== " $OUT/suite.log | grep -v "^== \|^--" | sort | uniq -c
BENCH_EAL_EXTRA="-d .gpu-bundle/pmds" BENCH_FLOW_EXPORTS="udp" BENCH_FLOW_PIPE_FLOWS=0 BENCH_FLOW_REPS=1 \
 BENCH_FLOW_CAP_START=10000000 BENCH_FLOW_CAP_BUDGET=180 bash bench/flow-export.sh $OUT/fe .gpu-bundle/build > $OUT/fe.log 2>&1
echo "fe rc=$? $(( $(date +%s)-t0 ))s"
grep -i "capacity" $OUT/fe.log | tail -12
for f in $OUT/fe/capacity-*.json; do echo "$f: $(python3 -c "import json,sys;j=json.load(open('$f'));print({k:j.get(k) for k in ('capacity','first_unclean','why','records_per_s')})")"; done
grep -l "segmentation offload" $OUT/fe/capacity/*.log 2>/dev/null | head -3
grep -i "Ident\|Sequence" $OUT/fe/nfcapd.log | tail -4
find $OUT -name '*.ipfix' -delete; find $OUT -size +1M -delete
cd $OUT && tar czf fe.tgz fe && rm -rf fe suite/*.pcap*
