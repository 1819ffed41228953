#!/usr/bin/env bash
# Call 4 (session 33): the bucketed scatter-add with the long runs summed per chunk in shared memory. The gpu build;
# the touched test programs with LAZYFUSE_TEST_REQUIRE_GPU=1; memcheck of the scatter-add tests (the million-element
# one has long buckets); ncu's duration of each kernel of the first calls of BM_ScatterAdd and BM_ScatterAddSkewed;
# bench_gather's scatter-adds (5 repetitions); then before (.bench-base at f7715a5, the global atomics, with this
# bench_gather.cpp given the global kernels' counts) and after, alternately (3 rounds).
#   device: docs/results/2026-12-06f/run4.sh <commit>        (carry .bench-base; OUT: the device tool's folder)
cd "$(dirname "$0")/../../.."
export PATH=/usr/local/cuda/bin:$PATH
O=${OUT:-/tmp/out}; W=/tmp/run4; rm -rf $W; mkdir -p $O $W/logs; T0=$SECONDS
pack() { tar czf $O/logs.tar.gz -C $W logs; }
stage() { echo "$1 rc $2 $((SECONDS - T0)) s" >> $W/logs/times.txt; pack; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $W/logs/gpu.txt
GPU_CHECK_BUDGET_S=200 LOG_DIR=$W/logs/build GPU_CHECK_COMMIT=$1 scripts/gpu-check.sh build > $W/logs/build.txt 2>&1
stage build $?
LAZYFUSE_TEST_REQUIRE_GPU=1 timeout 100 ctest --test-dir build/gpu -j 14 --output-on-failure -R \
  'test_gather|test_cuda_gather|test_bincount' > $W/logs/tests.txt 2>&1
stage tests $?
for f in BM_ScatterAdd BM_ScatterAddSkewed; do
  timeout 50 ncu --clock-control none --metrics gpu__time_duration.sum -c 24 build/gpu/bench/bench_gather \
    --benchmark_filter="$f\$" 2>&1 | grep -E "^  [a-zA-Z_].*\(|gpu__time_duration" > $W/logs/ncu-$f.txt
  stage "ncu $f" $?
done
timeout 30 build/gpu/bench/bench_gather --benchmark_filter='ScatterAdd|CopyReference' --benchmark_repetitions=5 \
  --benchmark_report_aggregates_only=true > $W/logs/bench_gather.txt 2>&1
stage bench_gather $?
LAZYFUSE_POOL=none timeout 60 compute-sanitizer --tool memcheck --error-exitcode 1 build/gpu/tests/test_cuda_gather \
  --gtest_filter='*ScatterAdd*' > $W/logs/memcheck.txt 2>&1
stage memcheck-cuda-gather $?
LAZYFUSE_POOL=none timeout 90 compute-sanitizer --tool memcheck --error-exitcode 1 build/gpu/tests/test_gather \
  --gtest_filter='*Millions*' > $W/logs/memcheck-millions.txt 2>&1
stage memcheck-millions $?
LOG_DIR=$W/logs/compare BENCH_COMPARE_HEAD=$1 BENCH_ONLY="bench_gather" BENCH_FILTER='ScatterAdd|CopyReference' \
  ROUNDS=3 timeout $((465 - SECONDS + T0)) scripts/gpu-bench-compare.sh > $W/logs/compare.txt 2>&1
stage compare $?
cat $W/logs/gpu.txt $W/logs/times.txt; grep -E "tests passed|\(Failed\)" $W/logs/tests.txt
for f in BM_ScatterAdd BM_ScatterAddSkewed; do echo "== $f"; paste - - < $W/logs/ncu-$f.txt | sed -E 's/ +/ /g; s/\(int, int, int\)//' | cut -c1-150 | sed -n 1,13p; done
grep median $W/logs/bench_gather.txt | cut -c1-150; tail -n 2 $W/logs/memcheck.txt $W/logs/memcheck-millions.txt
cat $W/logs/compare/compare.md 2>/dev/null | head -12
