. ./run-dev-common.sh
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv
mkdir -p $OUT/perf
date -u
BENCH_EAL_EXTRA="$X" timeout 560 bash bench/run-all.sh $OUT/perf $B > $OUT/run-all.txt 2>&1
echo "run-all rc=$?"
date -u
tail -40 $OUT/run-all.txt
cd $OUT && tar cJf perf.tar.xz perf && rm -rf perf
