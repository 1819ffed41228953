#!/usr/bin/env bash
# Session 26's five calls (none returned; README.md) and the next session's first: rows in registers (6ad3d9b ..
# 2d4b9b5, re-applied by `git revert d110069`). The gpu build; the tests the change touches with
# LAZYFUSE_TEST_REQUIRE_GPU=1 (reductions, fusion, schedules, codegen, compositions, the CPU's reductions and the
# random graphs against their reference and NumPy); then bench_layout's layer norms and bench_reductions' softmax
# (16384 x 4096 and 2^26 in rows of 1024, 2048, 8192, 10240) and row variance, before (.base-src: 1647068, built
# for these two benchmarks only) and after, alternately, two rounds.
#   run1.sh <commit>   (timeouts cut to fit session 26's last device time; OUT: the device tool's folder; .base-src carried: git archive 1647068 | tar x -C .base-src)
cd "$(dirname "$0")/../../.."
export PATH=/usr/local/cuda/bin:$PATH
O=${OUT:-/tmp/out}; mkdir -p $O/logs
T0=$SECONDS
(cd .base-src && cmake --preset gpu -DLAZYFUSE_BUILD_TESTS=OFF -DLAZYFUSE_BUILD_EXAMPLES=OFF > /dev/null &&
  cmake --build build/gpu -j 6 --target bench_layout bench_reductions) > $O/logs/build-base.txt 2>&1 &
BASE=$!
GPU_CHECK_BUDGET_S=200 LOG_DIR=$O/build GPU_CHECK_COMMIT=$1 scripts/gpu-check.sh build > $O/logs/build.txt 2>&1
echo "build rc $? $((SECONDS-T0)) s" >> $O/logs/times.txt
LAZYFUSE_TEST_REQUIRE_GPU=1 LAZYFUSE_TEST_RANDOM_GRAPHS=300 LAZYFUSE_TEST_PYTHON=$(command -v python3) timeout 100 \
  ctest --test-dir build/gpu -j12 --output-on-failure \
  -R "test_reductions|test_fusion|test_schedule|test_cuda_schedule|test_codegen|test_compositions|test_cpu_reductions|test_random_graphs|test_cuda_numerics" \
  > $O/logs/ctest.txt 2>&1
echo "ctest rc $? $((SECONDS-T0)) s" >> $O/logs/times.txt
wait $BASE; echo "base build rc $? $((SECONDS-T0)) s" >> $O/logs/times.txt
B="--benchmark_repetitions=5 --benchmark_report_aggregates_only=true"
for i in 1 2; do
  ((SECONDS - T0 > 250)) && break
  for d in .base-src/build/gpu build/gpu; do
    echo "== $d run $i" | tee -a $O/logs/bench_layout.txt >> $O/logs/bench_reductions.txt
    timeout 60 $d/bench/bench_layout --benchmark_filter='LayerNorm|CopyReference' $B >> $O/logs/bench_layout.txt 2>&1
    timeout 90 $d/bench/bench_reductions --benchmark_filter='Softmax|RowVar/eager:0' $B >> $O/logs/bench_reductions.txt 2>&1
  done
  echo "round $i $((SECONDS-T0)) s" >> $O/logs/times.txt
done
rm -rf $O/build
tar czf $O/logs.tar.gz -C $O logs
cat $O/logs/times.txt; grep -E "tests passed|\(Failed\)|Timeout|Not Run" $O/logs/ctest.txt | head -20
grep -E "^==|median" $O/logs/bench_layout.txt $O/logs/bench_reductions.txt | cut -c1-150
