#!/usr/bin/env bash
# Call 3 (session 35): the gpu build and the whole suite with LAZYFUSE_TEST_REQUIRE_GPU=1 (the first whole run since
# session 31's: the slots, the polled reads, the bucketed scatter-add and its shared halves had run only their own
# test programs on a GPU).
#   device: docs/results/2026-12-06h/run3.sh <commit>        (OUT: the device tool's folder)
cd "$(dirname "$0")/../../.."
export PATH=/usr/local/cuda/bin:$PATH
O=${OUT:-/tmp/out}; mkdir -p $O/logs; T0=$SECONDS
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $O/logs/gpu.txt
GPU_CHECK_BUDGET_S=${BUDGET:-480} CTEST_JOBS=14 LOG_DIR=$O/check GPU_CHECK_COMMIT=$1 \
  scripts/gpu-check.sh build test > $O/logs/check.txt 2>&1
echo "check rc $? $((SECONDS - T0)) s" >> $O/logs/times.txt
mv $O/check/* $O/logs/ 2>/dev/null; rm -rf $O/check
tar czf $O/logs.tar.gz -C $O logs
cat $O/logs/gpu.txt $O/logs/times.txt; tail -12 $O/logs/check.txt; rm -rf $O/logs
