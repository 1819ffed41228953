#!/usr/bin/env bash
# Session 17, run 3 (one device call): Nsight Compute's duration of the 1,000-step loop's kernel over 2^20 elements
# (examples/zz_phases.cpp, scratch), then the whole GPU suite: scripts/gpu-check.sh build test
# (LAZYFUSE_TEST_REQUIRE_GPU=1, CTEST_JOBS=14).
#   run3.sh <commit>   (OUT: the device tool's folder)
cd "$(dirname "$0")/../../.."
export PATH=/usr/local/cuda/bin:$PATH
O=${OUT:-/tmp/out}; mkdir -p $O/logs
T0=$SECONDS
GPU_CHECK_BUDGET_S=170 LOG_DIR=$O/build GPU_CHECK_COMMIT=$1 scripts/gpu-check.sh build > $O/logs/build.txt 2>&1
echo "build $((SECONDS-T0)) s" >> $O/logs/times.txt
timeout 40 ncu --metrics gpu__time_duration.sum -k regex:lf_k --launch-skip 80 --launch-count 5 \
  build/gpu/examples/zz_phases > $O/logs/ncu-loop.txt 2>&1
echo "ncu $((SECONDS-T0)) s" >> $O/logs/times.txt
GPU_CHECK_BUDGET_S=$((585 - (SECONDS - T0))) LOG_DIR=$O CTEST_JOBS=14 GPU_CHECK_COMMIT=$1 scripts/gpu-check.sh test \
  > $O/logs/gpu-check.txt 2>&1
echo "test $((SECONDS-T0)) s" >> $O/logs/times.txt
rm -rf $O/build
tar czf $O/logs.tar.gz -C $O logs
cat $O/logs/times.txt; grep -E "lf_k|gpu__time_duration" $O/logs/ncu-loop.txt | head -12; tail -8 $O/logs/gpu-check.txt
