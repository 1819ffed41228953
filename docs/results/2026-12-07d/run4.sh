#!/usr/bin/env bash
# Call 4 (session 39, issue 18): the tiled scans with streaming loads and stores and a first pause of 1,100 ns (call
# 3's fastest replica). The gpu build; the scan, graph, plan-cache, composition and stream programs with LAZYFUSE_TEST_REQUIRE_GPU=1;
# memcheck of test_cuda_scan; before (.bench-base at a088604) and after, alternately (3 rounds): bench_scan's scans;
# bench_scan whole with the sort peers (CuPy, torch, jax) if time is left (the call ends by 290 s).
#   device: docs/results/2026-12-07d/run4.sh <commit>        (carry .bench-base; OUT: the device tool's folder)
cd "$(dirname "$0")/../../.."
export PATH=/usr/local/cuda/bin:$PATH
O=${OUT:-/tmp/out}; W=/tmp/run4; rm -rf $W; mkdir -p $O $W/logs; T0=$SECONDS
pack() { tar czf $O/logs.tar.gz -C $W logs; }
stage() { echo "$1 rc $2 $((SECONDS - T0)) s" >> $W/logs/times.txt; pack; }
left() { echo $(($1 - SECONDS + T0)); } # seconds until the call's own deadline $1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader > $W/logs/gpu.txt
GPU_CHECK_BUDGET_S=150 LOG_DIR=$W/logs/build GPU_CHECK_COMMIT=$1 scripts/gpu-check.sh build > $W/logs/build.txt 2>&1
stage build $?
LAZYFUSE_TEST_REQUIRE_GPU=1 timeout 90 ctest --test-dir build/gpu -j 14 --output-on-failure -R \
  'test_scan|test_cuda_scan|test_cuda_graphs|test_plan_cache|test_compositions|test_cuda_streams' \
  > $W/logs/tests.txt 2>&1
stage tests $?
LAZYFUSE_POOL=none timeout 40 compute-sanitizer --tool memcheck --error-exitcode 1 build/gpu/tests/test_cuda_scan \
  > $W/logs/memcheck-scan.txt 2>&1
stage memcheck-scan $?
LOG_DIR=$W/logs/compare BENCH_COMPARE_HEAD=$1 BENCH_ONLY="bench_scan" BENCH_FILTER='Cumsum|CopyReference' \
  ROUNDS=3 timeout $(left 290) scripts/gpu-bench-compare.sh > $W/logs/compare.txt 2>&1
stage compare $?
rm -f $W/logs/compare/bench-compare.tar.gz
if ((SECONDS - T0 < 200)); then
  timeout 50 build/gpu/bench/bench_scan --benchmark_repetitions=5 --benchmark_report_aggregates_only=true \
    --benchmark_out=$W/logs/bench_scan.json > $W/logs/bench_scan.txt 2>&1
  stage bench_scan $?
  PYTHONUNBUFFERED=1 timeout $(left 290) python3 bench/peers/run_sort_peers.py --out-md $W/logs/sort-peers.md \
    --out-json $W/logs/sort-peers.json --lazyfuse-json $W/logs/bench_scan.json > $W/logs/peers.txt 2>&1
  stage peers $?
fi
cat $W/logs/gpu.txt $W/logs/times.txt; grep -E "tests passed|tests failed|ERROR SUMMARY" $W/logs/tests.txt $W/logs/memcheck-scan.txt
grep -E "\*\*\*Failed|\*\*\*Timeout" $W/logs/tests.txt | head
cat $W/logs/compare/compare.md 2>/dev/null | tail -9; cat $W/logs/sort-peers.md 2>/dev/null | tail -12; tail -1 $W/logs/diff.txt 2>/dev/null
