#!/usr/bin/env bash
# Call 2 (session 40, issue 18): bincount's blocks publish the range before they add their counters (the host's
# wait ends before the kernel's tail). The gpu build; test_bincount, test_gather and test_cuda_graphs with
# LAZYFUSE_TEST_REQUIRE_GPU=1; memcheck of test_bincount; before (.bench-base at fe037fc) and after, alternately
# (5 rounds): bench_scan's counts (the call ends by 240 s).
#   device: docs/results/2026-12-07e/run2.sh <commit>        (carry .bench-base; OUT: the device tool's folder)
cd "$(dirname "$0")/../../.."
export PATH=/usr/local/cuda/bin:$PATH
O=${OUT:-/tmp/out}; W=/tmp/run2; rm -rf $W; mkdir -p $O $W/logs; T0=$SECONDS
pack() { tar czf $O/logs.tar.gz -C $W logs; }
stage() { echo "$1 rc $2 $((SECONDS - T0)) s" >> $W/logs/times.txt; pack; }
left() { echo $(($1 - SECONDS + T0)); } # seconds until the call's own deadline $1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader > $W/logs/gpu.txt
GPU_CHECK_BUDGET_S=150 LOG_DIR=$W/logs/build GPU_CHECK_COMMIT=$1 scripts/gpu-check.sh build > $W/logs/build.txt 2>&1
stage build $?
LAZYFUSE_TEST_REQUIRE_GPU=1 timeout 60 ctest --test-dir build/gpu -j 14 --output-on-failure \
  -R 'test_bincount|test_gather|test_cuda_graphs' > $W/logs/tests.txt 2>&1
stage tests $?
LAZYFUSE_POOL=none timeout 30 compute-sanitizer --tool memcheck --error-exitcode 1 build/gpu/tests/test_bincount \
  > $W/logs/memcheck-test_bincount.txt 2>&1
stage memcheck $?
LOG_DIR=$W/logs/compare BENCH_COMPARE_HEAD=$1 BENCH_ONLY="bench_scan" BENCH_FILTER='Bincount|Unique|CopyReference' \
  ROUNDS=5 timeout $(left 240) scripts/gpu-bench-compare.sh > $W/logs/compare.txt 2>&1
stage compare $?
rm -f $W/logs/compare/bench-compare.tar.gz
cat $W/logs/gpu.txt $W/logs/times.txt
grep -E "tests passed|tests failed|ERROR SUMMARY" $W/logs/tests.txt $W/logs/memcheck-*.txt
grep -E "\*\*\*Failed|\*\*\*Timeout" $W/logs/tests.txt | head
cat $W/logs/compare/compare.md 2>/dev/null | tail -8
