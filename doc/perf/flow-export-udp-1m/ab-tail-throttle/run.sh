# A/B of the throttled tail read (B) against 735819d's (A) past the exporter's capacity, then the GPU suite with B's bundle
# bfe-A, bfe-B: bench/bench-flow-export of the two builds (README.md says which), stripped
# (build-gpu/ab-scan.sh is ../ab-scan-priority/run.sh)
CHURNS="11250000 12500000 15000000" bash build-gpu/ab-scan.sh
. build-gpu/prep.sh   # unpacks the GPU bundle as in doc/gpu-results.md, hugepages, LD_LIBRARY_PATH, PATH (nfcapd)
t0=$(date +%s)
GPU_SUITE_TIMEOUT=200 timeout -k 5 330 bash scripts/run-gpu-suite.sh $OUT/suite .gpu-bundle/build > $OUT/suite.log 2>&1; echo "suite rc=$? $(( $(date +%s)-t0 ))s"
grep -A1 "^== " $OUT/suite.log | grep -v "^== \|^--" | sort | uniq -c
grep -B1 -E "exit [1-9]" $OUT/suite.log | grep "^==" | cut -c1-120
find $OUT/suite -size +1M -delete; cd $OUT && tar czf suite.tgz suite && rm -rf suite
