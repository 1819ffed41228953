#!/usr/bin/env bash
# Session 24, run 1 (one device call): the gpu build at <commit>, the whole test suite with
# LAZYFUSE_TEST_REQUIRE_GPU=1 (sessions 22-24: the node handle, release batches, the partitioner's index, lowering's
# tasks, the plan-cache signature, the fixed-point count of at().add in shared memory), then the kernel experiments
# (run-experiments.sh: layer norm, CUB's selection; compiled while the tests run). The build stays for run 2.
#   run1.sh <commit>   (OUT: the device tool's folder)
cd "$(dirname "$0")/../../.."
export PATH=/usr/local/cuda/bin:$PATH
O=${OUT:-/tmp/out}; mkdir -p $O/logs
T0=$SECONDS
GPU_CHECK_BUDGET_S=170 LOG_DIR=$O/build GPU_CHECK_COMMIT=$1 scripts/gpu-check.sh build > $O/logs/build.txt 2>&1
echo "build $((SECONDS-T0)) s" >> $O/logs/times.txt
docs/results/2026-12-05e/run-experiments.sh build > $O/logs/experiments-build.txt 2>&1 &
LAZYFUSE_TEST_REQUIRE_GPU=1 LAZYFUSE_TEST_PYTHON=$(command -v python3) timeout $((540 - (SECONDS - T0))) \
  ctest --test-dir build/gpu -j14 --output-on-failure > $O/logs/ctest.txt 2>&1
echo "ctest rc $? $((SECONDS-T0)) s" >> $O/logs/times.txt
wait
timeout $((590 - (SECONDS - T0))) docs/results/2026-12-05e/run-experiments.sh run > $O/logs/experiments.txt 2>&1
echo "experiments rc $? $((SECONDS-T0)) s" >> $O/logs/times.txt
rm -rf $O/build
tar czf $O/logs.tar.gz -C $O logs
cat $O/logs/times.txt; cat $O/logs/experiments.txt | tail -20
grep -E "tests passed|\(Failed\)|Timeout|Not Run" $O/logs/ctest.txt | head -30
