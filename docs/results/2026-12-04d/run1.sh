#!/usr/bin/env bash
# Session 19, run 1 (one device call): build the gpu preset at <commit>; the tests whose code was not yet run on a
# GPU (b0e6e32's iota lowering, the graph tests' fresh seeds, da91b99's bounds-checked replay) with
# LAZYFUSE_TEST_REQUIRE_GPU=1; then the baselines this session works against: bench_host (recording, signature),
# bench_loops (Jacobi solver, stencil step), bench_compute (the generated sum), 5 repetitions, medians.
#   run1.sh <commit>   (OUT: the device tool's folder)
cd "$(dirname "$0")/../../.."
export PATH=/usr/local/cuda/bin:$PATH
O=${OUT:-/tmp/out}; mkdir -p $O/logs
T0=$SECONDS
GPU_CHECK_BUDGET_S=170 LOG_DIR=$O/build GPU_CHECK_COMMIT=$1 scripts/gpu-check.sh build > $O/logs/build.txt 2>&1
echo "build $((SECONDS-T0)) s" >> $O/logs/times.txt
LAZYFUSE_TEST_REQUIRE_GPU=1 LAZYFUSE_TEST_PYTHON=$(command -v python3) timeout 200 ctest --test-dir build/gpu -j14 \
  --output-on-failure -R "test_cuda_graphs|test_value_divisors|test_codegen|test_ops|test_random_graphs|test_plan_cache|test_fusion" \
  > $O/logs/ctest.txt 2>&1
echo "ctest rc $? $((SECONDS-T0)) s" >> $O/logs/times.txt
B="--benchmark_repetitions=5 --benchmark_report_aggregates_only=true"
for b in bench_host bench_loops bench_compute; do
  timeout 100 build/gpu/bench/$b $B --benchmark_out=$O/$b.json --benchmark_out_format=json > $O/logs/$b.txt 2>&1
  echo "$b $((SECONDS-T0)) s" >> $O/logs/times.txt
done
rm -rf $O/build
tar czf $O/logs.tar.gz -C $O logs
cat $O/logs/times.txt; grep -E "tests passed|\(Failed\)|Timeout|Not Run" $O/logs/ctest.txt | head -20
grep -h -E "median|ERROR" $O/logs/bench_*.txt | cut -c1-100,120-330
