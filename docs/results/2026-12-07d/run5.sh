#!/usr/bin/env bash
# Call 5 (session 39, issue 18; the session's device time nearly spent by failed starts): run4.sh's checks without
# the before/after: the gpu build; the scan, graph and plan-cache programs with LAZYFUSE_TEST_REQUIRE_GPU=1; bench_scan's
# scans and the copy reference (3 repetitions; the same benchmarks took 0.1194 / 0.1226 / 0.1013 ms on an H100 in
# session 38's call 6, with the first pause at 700 ns and plain loads and stores).
#   device: docs/results/2026-12-07d/run5.sh <commit>        (OUT: the device tool's folder)
cd "$(dirname "$0")/../../.."
export PATH=/usr/local/cuda/bin:$PATH
O=${OUT:-/tmp/out}; W=/tmp/run5; rm -rf $W; mkdir -p $O $W/logs; T0=$SECONDS
pack() { tar czf $O/logs.tar.gz -C $W logs; }
stage() { echo "$1 rc $2 $((SECONDS - T0)) s" >> $W/logs/times.txt; pack; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader > $W/logs/gpu.txt
GPU_CHECK_BUDGET_S=100 LOG_DIR=$W/logs/build GPU_CHECK_COMMIT=$1 scripts/gpu-check.sh build > $W/logs/build.txt 2>&1
stage build $?
LAZYFUSE_TEST_REQUIRE_GPU=1 timeout 50 ctest --test-dir build/gpu -j 14 --output-on-failure -R \
  'test_scan|test_cuda_scan|test_cuda_graphs|test_plan_cache|test_cuda_streams' > $W/logs/tests.txt 2>&1
stage tests $?
cmake --build build/gpu --target bench_scan > $W/logs/bench-build.txt 2>&1 && timeout 25 build/gpu/bench/bench_scan \
  --benchmark_filter='Cumsum|CopyReference' --benchmark_repetitions=3 --benchmark_report_aggregates_only=true \
  > $W/logs/bench_scan.txt 2>&1
stage bench_scan $?
cat $W/logs/gpu.txt $W/logs/times.txt; grep -E "tests passed|tests failed" $W/logs/tests.txt
grep -E "\*\*\*Failed|\*\*\*Timeout" $W/logs/tests.txt | head; grep median $W/logs/bench_scan.txt | cut -c1-120
