#!/usr/bin/env bash
# Call 6 (session 38, issue 18): tiled scans by blockIdx.x with epoch-tagged statuses (branch next/scan-epochs), the
# selection's lessons applied to cumsum. The gpu build; the scan, graph and plan-cache test programs with
# LAZYFUSE_TEST_REQUIRE_GPU=1; memcheck of test_cuda_scan; before (.bench-base at b51454e) and after, alternately
# (3 rounds): bench_scan's scans; a short GPU differential if time is left.
#   device: docs/results/2026-12-07c/run6.sh <commit>        (carry .bench-base; OUT: the device tool's folder)
cd "$(dirname "$0")/../../.."
export PATH=/usr/local/cuda/bin:$PATH
O=${OUT:-/tmp/out}; W=/tmp/run6; rm -rf $W; mkdir -p $O $W/logs; T0=$SECONDS
pack() { tar czf $O/logs.tar.gz -C $W logs; }
stage() { echo "$1 rc $2 $((SECONDS - T0)) s" >> $W/logs/times.txt; pack; }
left() { echo $(($1 - SECONDS + T0)); }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader > $W/logs/gpu.txt
GPU_CHECK_BUDGET_S=150 LOG_DIR=$W/logs/build GPU_CHECK_COMMIT=$1 scripts/gpu-check.sh build > $W/logs/build.txt 2>&1
stage build $?
LAZYFUSE_TEST_REQUIRE_GPU=1 timeout 60 ctest --test-dir build/gpu -j 14 --output-on-failure -R \
  'test_scan|test_cuda_scan|test_cuda_graphs|test_plan_cache|test_cuda_gather' > $W/logs/tests.txt 2>&1
stage tests $?
LAZYFUSE_POOL=none timeout 40 compute-sanitizer --tool memcheck --error-exitcode 1 build/gpu/tests/test_cuda_scan \
  > $W/logs/memcheck-scan.txt 2>&1
stage memcheck-scan $?
LOG_DIR=$W/logs/compare BENCH_COMPARE_HEAD=$1 BENCH_ONLY="bench_scan" BENCH_FILTER='Cumsum|CopyReference' \
  ROUNDS=3 timeout $(left 260) scripts/gpu-bench-compare.sh > $W/logs/compare.txt 2>&1
stage compare $?
rm -f $W/logs/compare/bench-compare.tar.gz
if ((SECONDS - T0 < 230)); then
  GPU_DIFF_BUDGET_S=$(left 300) GPU_DIFF_CASES=60 GPU_DIFF_COMMIT=$1 LOG_DIR=$W/logs/diff scripts/gpu-differential.sh \
    > $W/logs/diff.txt 2>&1
  stage differential $?
  rm -f $W/logs/diff/gpu-differential.tar.gz
fi
cat $W/logs/gpu.txt $W/logs/times.txt; grep -E "tests passed|tests failed|ERROR SUMMARY" $W/logs/tests.txt $W/logs/memcheck-scan.txt
grep -E "\*\*\*Failed|\*\*\*Timeout" $W/logs/tests.txt | head
cat $W/logs/compare/compare.md 2>/dev/null | tail -9; tail -1 $W/logs/diff.txt 2>/dev/null
