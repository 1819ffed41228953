#!/usr/bin/env bash
# Session 25, call 1: the gpu build with the row loops' hoisted values and the divisions by a loop-invariant divisor;
# the tests those touch with LAZYFUSE_TEST_REQUIRE_GPU=1 (the IEEE quotient on the device, the numerics policy across
# backends, reductions, fusion, schedules, codegen); then bench_layout's layer norm and bench_reductions' softmax and
# row variance before (.base-src: 116f57d, built for these two benchmarks only) and after, alternately, two rounds.
#   run1.sh <commit>   (OUT: the device tool's folder; .base-src carried: git archive 116f57d | tar x -C .base-src)
cd "$(dirname "$0")/../../.."
export PATH=/usr/local/cuda/bin:$PATH
O=${OUT:-/tmp/out}; mkdir -p $O/logs
T0=$SECONDS
(cd .base-src && cmake --preset gpu -DLAZYFUSE_BUILD_TESTS=OFF -DLAZYFUSE_BUILD_EXAMPLES=OFF > /dev/null &&
  cmake --build build/gpu -j 6 --target bench_layout bench_reductions) > $O/logs/build-base.txt 2>&1 &
BASE=$!
GPU_CHECK_BUDGET_S=200 LOG_DIR=$O/build GPU_CHECK_COMMIT=$1 scripts/gpu-check.sh build > $O/logs/build.txt 2>&1
echo "build rc $? $((SECONDS-T0)) s" >> $O/logs/times.txt
LAZYFUSE_TEST_REQUIRE_GPU=1 LAZYFUSE_TEST_PYTHON=$(command -v python3) timeout 200 ctest --test-dir build/gpu -j12 \
  --output-on-failure -R "test_value_divisors|test_cuda_numerics|test_reductions|test_fusion|test_schedule|test_cuda_schedule|test_codegen|test_compositions|test_cpu_reductions" \
  > $O/logs/ctest.txt 2>&1
echo "ctest rc $? $((SECONDS-T0)) s" >> $O/logs/times.txt
wait $BASE; echo "base build rc $? $((SECONDS-T0)) s" >> $O/logs/times.txt
B="--benchmark_repetitions=5 --benchmark_report_aggregates_only=true"
for i in 1 2; do
  for d in .base-src/build/gpu build/gpu; do
    echo "== $d run $i" | tee -a $O/logs/bench_layout.txt >> $O/logs/bench_reductions.txt
    timeout 60 $d/bench/bench_layout --benchmark_filter='LayerNorm|CopyReference' $B >> $O/logs/bench_layout.txt 2>&1
    timeout 60 $d/bench/bench_reductions --benchmark_filter='Softmax|RowVar' $B >> $O/logs/bench_reductions.txt 2>&1
  done
  echo "round $i $((SECONDS-T0)) s" >> $O/logs/times.txt
done
LAZYFUSE_LOG=launch timeout 30 build/gpu/bench/bench_layout --benchmark_filter=LayerNorm > $O/logs/launch.txt 2>&1
rm -rf $O/build
tar czf $O/logs.tar.gz -C $O logs
cat $O/logs/times.txt; grep -E "tests passed|\(Failed\)|Timeout|Not Run" $O/logs/ctest.txt | head -20
grep -E "^==|median" $O/logs/bench_layout.txt $O/logs/bench_reductions.txt | cut -c1-160
