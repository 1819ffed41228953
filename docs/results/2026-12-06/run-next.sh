#!/usr/bin/env bash
# For the next session: the register path's partial last trip (9a24006, reverted on main until it runs on a GPU).
#   here:   B=$(git rev-parse --short HEAD); git revert --no-edit 4b9a8fd (re-applies 9a24006);
#           scripts/gpu-bench-compare.sh --prepare $B (main without it), then carry .bench-base
#   device: timeout 420 docs/results/2026-12-06/run-next.sh <commit>       (OUT: the device tool's folder)
# Stages: the gpu build; softmax over rows of 768 .. 10240, the layer norms, softmax and row variance before and
# after, 2 rounds; then the row-kernel tests and the random graphs with LAZYFUSE_TEST_REQUIRE_GPU=1 in the time left.
# Only logs.tar.gz comes back (packed after each stage, so a call cut short still returns its logs).
cd "$(dirname "$0")/../../.."
export PATH=/usr/local/cuda/bin:$PATH
O=${OUT:-/tmp/out}; W=/tmp/run-next; rm -rf $W; mkdir -p $O $W/logs
T0=$SECONDS
pack() { tar czf $O/logs.tar.gz -C $W logs; }
GPU_CHECK_BUDGET_S=200 LOG_DIR=$W/logs/build GPU_CHECK_COMMIT=$1 scripts/gpu-check.sh build > $W/logs/build.txt 2>&1
echo "build rc $? $((SECONDS-T0)) s" >> $W/logs/times.txt; pack
ROUNDS=${ROUNDS:-2} BENCH_ONLY="bench_layout bench_reductions" BENCH_FILTER='LayerNorm|Softmax|RowVar/eager:0|CopyReference' \
  BENCH_COMPARE_HEAD=$1 LOG_DIR=$W/logs timeout 170 scripts/gpu-bench-compare.sh > $W/logs/compare.txt 2>&1
echo "compare rc $? $((SECONDS-T0)) s" >> $W/logs/times.txt; pack
cat $W/logs/compare.md 2>/dev/null || tail -20 $W/logs/compare.txt
LAZYFUSE_TEST_REQUIRE_GPU=1 LAZYFUSE_TEST_PYTHON=$(command -v python3) timeout $((400 - SECONDS + T0)) \
  ctest --test-dir build/gpu -j14 --output-on-failure \
  -R "test_reductions|test_schedule|test_cuda_schedule|test_codegen|test_random_graphs" > $W/logs/ctest.txt 2>&1
echo "ctest rc $? $((SECONDS-T0)) s" >> $W/logs/times.txt; pack
cat $W/logs/times.txt; grep -E "tests passed|\(Failed\)|Timeout|Not Run" $W/logs/ctest.txt | head -20
