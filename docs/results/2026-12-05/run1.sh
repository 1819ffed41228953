#!/usr/bin/env bash
# Session 20, run 1 (one device call; not run in session 20, whose device was not lent): build the gpu preset at
# <commit> (sessions 19 and 20: recording and the signature, the pinned-bytes bound, the split of kernels over 512
# printed instructions, the per-thread node pools and copy_shape, the CPU interpreter's short columns, the weighted
# bincount behind at().add with its CUB sort and reduce-by-key) and run the whole test suite with
# LAZYFUSE_TEST_REQUIRE_GPU=1. The build stays for run 2.
#   run1.sh <commit>   (OUT: the device tool's folder)
cd "$(dirname "$0")/../../.."
export PATH=/usr/local/cuda/bin:$PATH
O=${OUT:-/tmp/out}; mkdir -p $O/logs
T0=$SECONDS
GPU_CHECK_BUDGET_S=170 LOG_DIR=$O/build GPU_CHECK_COMMIT=$1 scripts/gpu-check.sh build > $O/logs/build.txt 2>&1
echo "build $((SECONDS-T0)) s" >> $O/logs/times.txt
LAZYFUSE_TEST_REQUIRE_GPU=1 LAZYFUSE_TEST_PYTHON=$(command -v python3) timeout $((570 - (SECONDS - T0))) \
  ctest --test-dir build/gpu -j14 --output-on-failure > $O/logs/ctest.txt 2>&1
echo "ctest rc $? $((SECONDS-T0)) s" >> $O/logs/times.txt
rm -rf $O/build
tar czf $O/logs.tar.gz -C $O logs
cat $O/logs/times.txt; grep -E "tests passed|\(Failed\)|Timeout|Not Run" $O/logs/ctest.txt | head -30
