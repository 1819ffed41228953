#!/usr/bin/env bash
# Call 1 (session 40, issue 18): the tiled scans with streaming loads and stores and a first pause of 1,100 ns
# (session 39's replica: 78% -> 93% of copy), and bincount's count and range as 32-bit words with one maximum an
# element. The gpu build; the scan, bincount, gather, graph, plan-cache, composition and stream programs with
# LAZYFUSE_TEST_REQUIRE_GPU=1; memcheck of test_cuda_scan and test_bincount; before (.bench-base at fe037fc) and after,
# alternately (3 rounds): bench_scan's scans and counts; bench_scan whole with the sort peers if time is left (the
# call ends by 300 s).
#   device: docs/results/2026-12-07e/run1.sh <commit>        (carry .bench-base; OUT: the device tool's folder)
cd "$(dirname "$0")/../../.."
export PATH=/usr/local/cuda/bin:$PATH
O=${OUT:-/tmp/out}; W=/tmp/run1; rm -rf $W; mkdir -p $O $W/logs; T0=$SECONDS
pack() { tar czf $O/logs.tar.gz -C $W logs; }
stage() { echo "$1 rc $2 $((SECONDS - T0)) s" >> $W/logs/times.txt; pack; }
left() { echo $(($1 - SECONDS + T0)); } # seconds until the call's own deadline $1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader > $W/logs/gpu.txt
GPU_CHECK_BUDGET_S=150 LOG_DIR=$W/logs/build GPU_CHECK_COMMIT=$1 scripts/gpu-check.sh build > $W/logs/build.txt 2>&1
stage build $?
LAZYFUSE_TEST_REQUIRE_GPU=1 timeout 100 ctest --test-dir build/gpu -j 14 --output-on-failure -R \
  'test_scan|test_cuda_scan|test_bincount|test_gather|test_cuda_graphs|test_plan_cache|test_compositions|test_cuda_streams' \
  > $W/logs/tests.txt 2>&1
stage tests $?
for p in test_cuda_scan test_bincount; do
  LAZYFUSE_POOL=none timeout 30 compute-sanitizer --tool memcheck --error-exitcode 1 build/gpu/tests/$p \
    > $W/logs/memcheck-$p.txt 2>&1
  stage memcheck-$p $?
done
LOG_DIR=$W/logs/compare BENCH_COMPARE_HEAD=$1 BENCH_ONLY="bench_scan" BENCH_FILTER='Cumsum|Bincount|CopyReference' \
  ROUNDS=3 timeout $(left 300) scripts/gpu-bench-compare.sh > $W/logs/compare.txt 2>&1
stage compare $?
rm -f $W/logs/compare/bench-compare.tar.gz
if ((SECONDS - T0 < 210)); then
  timeout 50 build/gpu/bench/bench_scan --benchmark_repetitions=5 --benchmark_report_aggregates_only=true \
    --benchmark_out=$W/logs/bench_scan.json > $W/logs/bench_scan.txt 2>&1
  stage bench_scan $?
  PYTHONUNBUFFERED=1 timeout $(left 300) python3 bench/peers/run_sort_peers.py --out-md $W/logs/sort-peers.md \
    --out-json $W/logs/sort-peers.json --lazyfuse-json $W/logs/bench_scan.json > $W/logs/peers.txt 2>&1
  stage peers $?
fi
cat $W/logs/gpu.txt $W/logs/times.txt
grep -E "tests passed|tests failed|ERROR SUMMARY" $W/logs/tests.txt $W/logs/memcheck-*.txt
grep -E "\*\*\*Failed|\*\*\*Timeout" $W/logs/tests.txt | head
cat $W/logs/compare/compare.md 2>/dev/null | tail -12; cat $W/logs/sort-peers.md 2>/dev/null | tail -12
