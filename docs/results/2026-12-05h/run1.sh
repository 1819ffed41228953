#!/usr/bin/env bash
# Session 27's first call: session 26's ../2026-12-05g/run1.sh (rows in registers; on main again as 6fe0a29, the
# revert of d110069) with timeouts that fit one 600 s call (ctest 120 s; the before/after comparison 230 s over 2
# rounds; bench_host's host costs last, 40 s). The gpu build; the tests the change touches with LAZYFUSE_TEST_REQUIRE_GPU=1 and 300 random graphs; then,
# through scripts/gpu-bench-compare.sh, the layer norms, softmax and row variance before (257552d: main without the
# path) and after.
#   here:   scripts/gpu-bench-compare.sh --prepare 257552d          (then carry .bench-base)
#   device: docs/results/2026-12-05h/run1.sh <commit>                (OUT: the device tool's folder)
cd "$(dirname "$0")/../../.."
export PATH=/usr/local/cuda/bin:$PATH
O=${OUT:-/tmp/out}; W=/tmp/run1; rm -rf $W; mkdir -p $O $W/logs # logs kept outside $O: only the archive comes back
T0=$SECONDS
pack() { tar czf $O/logs.tar.gz -C $W logs; } # after each stage: a call cut short still returns its logs
GPU_CHECK_BUDGET_S=200 LOG_DIR=$W/logs/build GPU_CHECK_COMMIT=$1 scripts/gpu-check.sh build > $W/logs/build.txt 2>&1
echo "build rc $? $((SECONDS-T0)) s" >> $W/logs/times.txt; pack
LAZYFUSE_TEST_REQUIRE_GPU=1 LAZYFUSE_TEST_RANDOM_GRAPHS=300 LAZYFUSE_TEST_PYTHON=$(command -v python3) timeout 120 \
  ctest --test-dir build/gpu -j12 --output-on-failure \
  -R "test_reductions|test_fusion|test_schedule|test_cuda_schedule|test_codegen|test_compositions|test_cpu_reductions|test_random_graphs|test_cuda_numerics" \
  > $W/logs/ctest.txt 2>&1
echo "ctest rc $? $((SECONDS-T0)) s" >> $W/logs/times.txt; pack
ROUNDS=${ROUNDS:-2} BENCH_ONLY="bench_layout bench_reductions" BENCH_FILTER='LayerNorm|Softmax|RowVar/eager:0|CopyReference' \
  BENCH_COMPARE_HEAD=$1 LOG_DIR=$W/logs timeout 230 scripts/gpu-bench-compare.sh > $W/logs/compare.txt 2>&1
echo "compare rc $? $((SECONDS-T0)) s" >> $W/logs/times.txt; pack
cmake --build build/gpu --target bench_host > $W/logs/build-host.txt 2>&1 &&
  timeout 40 build/gpu/bench/bench_host --benchmark_filter='Record|Signature|EvalTimeLoop|Lower|Host' \
    --benchmark_repetitions=3 --benchmark_report_aggregates_only=true > $W/logs/bench_host.txt 2>&1
echo "bench_host rc $? $((SECONDS-T0)) s" >> $W/logs/times.txt
pack
cat $W/logs/times.txt; grep -E "tests passed|\(Failed\)|Timeout|Not Run" $W/logs/ctest.txt | head -20
cat $W/logs/compare.md 2>/dev/null || tail -20 $W/logs/compare.txt
grep median $W/logs/bench_host.txt | cut -c1-150
