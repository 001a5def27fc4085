# capacity search (1 M and 10 M flows, UDP) with the tail read's waiters, then the GPU suite
# (build-gpu/cap1m.sh is ../run.sh, the capacity search)
SIZES="1000000 10000000" bash build-gpu/cap1m.sh
. build-gpu/prep.sh   # unpacks the GPU bundle as in doc/gpu-results.md, hugepages, LD_LIBRARY_PATH, PATH (nfcapd)
t0=$(date +%s)
GPU_SUITE_TIMEOUT=200 timeout -k 5 200 bash scripts/run-gpu-suite.sh $OUT/suite .gpu-bundle/build > $OUT/suite.log 2>&1; echo "suite rc=$? $(( $(date +%s)-t0 ))s"
grep -A1 "^== " $OUT/suite.log | grep -v "^== \|^--" | sort | uniq -c
find $OUT/suite -size +1M -delete; cd $OUT && tar czf suite.tgz suite && rm -rf suite
