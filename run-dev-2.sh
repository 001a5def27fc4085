. ./run-dev-common.sh
mkdir -p $OUT/capacity
date -u
BENCH_EAL_EXTRA="$X" BENCH_CAP_LCORES="1 2 4 8" BENCH_CAP_SECONDS=3 BENCH_CAP_BURST=32 timeout 500 bash bench/pipeline-capacity.sh $OUT/capacity $B > $OUT/capacity.txt 2>&1
echo "capacity rc=$?"
date -u
grep -E '^capacity|plot' $OUT/capacity.txt | tail -45
cd $OUT && tar cJf capacity.tar.xz capacity && rm -rf capacity
