#!/usr/bin/env bash
# Session 24, one device call when little device time is left (about 400 s of command time): the gpu build at
# <commit>, the tests of the device paths sessions 22-24 changed (gathers, masks and at().add with its fixed-point
# count in shared memory, counts, the plan cache, fusion, time loops, the random differential graphs) with
# LAZYFUSE_TEST_REQUIRE_GPU=1 (the experiments compile meanwhile), then the kernel experiments (run-experiments.sh)
# and bench_gather's x[x > 0] and at().add.
#   run-lean.sh <commit>   (OUT: the device tool's folder)
cd "$(dirname "$0")/../../.."
export PATH=/usr/local/cuda/bin:$PATH
O=${OUT:-/tmp/out}; mkdir -p $O/logs
T0=$SECONDS
GPU_CHECK_BUDGET_S=170 LOG_DIR=$O/build GPU_CHECK_COMMIT=$1 scripts/gpu-check.sh build > $O/logs/build.txt 2>&1
echo "build $((SECONDS-T0)) s" >> $O/logs/times.txt
docs/results/2026-12-05e/run-experiments.sh build > $O/logs/experiments-build.txt 2>&1 &
LAZYFUSE_TEST_REQUIRE_GPU=1 LAZYFUSE_TEST_PYTHON=$(command -v python3) timeout 220 ctest --test-dir build/gpu -j12 \
  --output-on-failure -R "test_cuda_|test_gather|test_bincount|test_random_graphs|test_plan_cache|test_fusion|test_repeated_steps|test_graph" \
  > $O/logs/ctest.txt 2>&1
echo "ctest rc $? $((SECONDS-T0)) s" >> $O/logs/times.txt
wait
timeout 90 docs/results/2026-12-05e/run-experiments.sh run > $O/logs/experiments.txt 2>&1
echo "experiments rc $? $((SECONDS-T0)) s" >> $O/logs/times.txt
B="--benchmark_repetitions=5 --benchmark_report_aggregates_only=true"
timeout 60 build/gpu/bench/bench_gather --benchmark_filter='MaskSelect|ScatterAdd' $B > $O/logs/bench_gather.txt 2>&1
echo "bench_gather rc $? $((SECONDS-T0)) s" >> $O/logs/times.txt
rm -rf $O/build
tar czf $O/logs.tar.gz -C $O logs
cat $O/logs/times.txt; grep -E "tests passed|\(Failed\)|Timeout|Not Run" $O/logs/ctest.txt | head -20
cat $O/logs/experiments.txt | tail -30; grep median $O/logs/bench_gather.txt | cut -c1-200
