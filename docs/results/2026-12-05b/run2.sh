#!/usr/bin/env bash
# Session 21, run 2 (one device call, on what was left of the session's device time): build the gpu preset's library
# and three programs at <commit> (the scale pass of at().add's fixed-point sums skips the atomics that cannot raise a
# bin's scale), run the scatter-add tests with LAZYFUSE_TEST_REQUIRE_GPU=1, and time BM_ScatterAdd (5 repetitions;
# the peers are run 1's).
#   run2.sh <commit>   (OUT: the device tool's folder)
cd "$(dirname "$0")/../../.."
export PATH=/usr/local/cuda/bin:$PATH
O=${OUT:-/tmp/out}; mkdir -p $O/logs
T0=$SECONDS
{ echo "commit $1"; cmake --preset gpu && cmake --build build/gpu -j 16 --target test_gather test_cuda_gather bench_gather; } \
  > $O/logs/build.txt 2>&1
echo "build rc $? $((SECONDS-T0)) s" >> $O/logs/times.txt
for t in "test_cuda_gather *ScatterAdd*" "test_gather *Add*"; do
  set -- $t
  LAZYFUSE_TEST_REQUIRE_GPU=1 timeout 60 build/gpu/tests/$1 --gtest_filter="$2" >> $O/logs/tests.txt 2>&1
  echo "$1 rc $? $((SECONDS-T0)) s" >> $O/logs/times.txt
done
timeout 60 build/gpu/bench/bench_gather --benchmark_filter='CopyReference|ScatterAdd' --benchmark_repetitions=5 \
  --benchmark_report_aggregates_only=true --benchmark_out=$O/bench_gather.json --benchmark_out_format=json \
  > $O/logs/bench_gather.txt 2>&1
echo "bench_gather rc $? $((SECONDS-T0)) s" >> $O/logs/times.txt
tar czf $O/logs.tar.gz -C $O logs
cat $O/logs/times.txt; grep -E "PASSED|FAILED|Failure" $O/logs/tests.txt | head
grep -E "median" $O/logs/bench_gather.txt | cut -c1-100,120-330
