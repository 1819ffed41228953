#!/usr/bin/env bash
# Session 26's five calls (none returned; README.md) and the next session's first: rows in registers (6ad3d9b ..
# 2d4b9b5, re-applied by `git revert d110069`). The gpu build; the tests the change touches with
# LAZYFUSE_TEST_REQUIRE_GPU=1 (reductions, fusion, schedules, codegen, compositions, the CPU's reductions, the
# numerics policy and the random graphs against their reference and NumPy); then, through
# scripts/gpu-bench-compare.sh, bench_layout's layer norms and bench_reductions' softmax (16384 x 4096 and 2^26 in
# rows of 1024, 2048, 8192, 10240) and row variance, before (1647068) and after, alternately, ROUNDS rounds.
#   here:   scripts/gpu-bench-compare.sh --prepare 1647068          (then carry .bench-base)
#   device: docs/results/2026-12-05g/run1.sh <commit>                (OUT: the device tool's folder)
cd "$(dirname "$0")/../../.."
export PATH=/usr/local/cuda/bin:$PATH
O=${OUT:-/tmp/out}; mkdir -p $O/logs
T0=$SECONDS
GPU_CHECK_BUDGET_S=200 LOG_DIR=$O/build GPU_CHECK_COMMIT=$1 scripts/gpu-check.sh build > $O/logs/build.txt 2>&1
echo "build rc $? $((SECONDS-T0)) s" >> $O/logs/times.txt
LAZYFUSE_TEST_REQUIRE_GPU=1 LAZYFUSE_TEST_RANDOM_GRAPHS=300 LAZYFUSE_TEST_PYTHON=$(command -v python3) timeout 200 \
  ctest --test-dir build/gpu -j12 --output-on-failure \
  -R "test_reductions|test_fusion|test_schedule|test_cuda_schedule|test_codegen|test_compositions|test_cpu_reductions|test_random_graphs|test_cuda_numerics" \
  > $O/logs/ctest.txt 2>&1
echo "ctest rc $? $((SECONDS-T0)) s" >> $O/logs/times.txt
ROUNDS=${ROUNDS:-3} BENCH_ONLY="bench_layout bench_reductions" BENCH_FILTER='LayerNorm|Softmax|RowVar/eager:0|CopyReference' \
  BENCH_COMPARE_HEAD=$1 LOG_DIR=$O/logs timeout 300 scripts/gpu-bench-compare.sh > $O/logs/compare.txt 2>&1
echo "compare rc $? $((SECONDS-T0)) s" >> $O/logs/times.txt
rm -rf $O/build
tar czf $O/logs.tar.gz -C $O logs
cat $O/logs/times.txt; grep -E "tests passed|\(Failed\)|Timeout|Not Run" $O/logs/ctest.txt | head -20
cat $O/logs/compare.md 2>/dev/null || tail -20 $O/logs/compare.txt
