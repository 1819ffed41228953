#!/usr/bin/env bash
# Session 21, run 2 (one device call): build the gpu preset at <commit> (the scale pass of at().add's fixed-point sums
# skips the atomics that cannot raise a bin's scale), run the tests of scatters and counts with
# LAZYFUSE_TEST_REQUIRE_GPU=1, and bench_gather (5 repetitions; the peers are run 1's).
#   run2.sh <commit>   (OUT: the device tool's folder)
cd "$(dirname "$0")/../../.."
export PATH=/usr/local/cuda/bin:$PATH
O=${OUT:-/tmp/out}; mkdir -p $O/logs
T0=$SECONDS
GPU_CHECK_BUDGET_S=170 LOG_DIR=$O/build GPU_CHECK_COMMIT=$1 scripts/gpu-check.sh build > $O/logs/build.txt 2>&1
echo "build $((SECONDS-T0)) s" >> $O/logs/times.txt
LAZYFUSE_TEST_REQUIRE_GPU=1 timeout 100 ctest --test-dir build/gpu -j14 --output-on-failure \
  -R "Gather.Add|ScatterAdd|bincount|BinCount|histogram|Histogram" > $O/logs/ctest.txt 2>&1
echo "ctest rc $? $((SECONDS-T0)) s" >> $O/logs/times.txt
timeout 60 build/gpu/bench/bench_gather --benchmark_repetitions=5 --benchmark_report_aggregates_only=true \
  --benchmark_out=$O/bench_gather.json --benchmark_out_format=json > $O/logs/bench_gather.txt 2>&1
echo "bench_gather rc $? $((SECONDS-T0)) s" >> $O/logs/times.txt
rm -rf $O/build
tar czf $O/logs.tar.gz -C $O logs
cat $O/logs/times.txt; grep -E "tests passed|\(Failed\)|Timeout" $O/logs/ctest.txt | head -20
grep -E "median" $O/logs/bench_gather.txt | cut -c1-100,120-330
