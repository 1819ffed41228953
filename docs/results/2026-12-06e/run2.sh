#!/usr/bin/env bash
# Call 2: the read-back experiment (sync_experiment.cu), then the gpu build and the whole suite with
# LAZYFUSE_TEST_REQUIRE_GPU=1 (the answers read back through mapped host slots: bincount's range, the selections'
# counts, the sort's NaN check, small downloads, the error words; the scan helpers' shared shuffle).
#   device: docs/results/2026-12-06e/run2.sh <commit>                (OUT: the device tool's folder)
cd "$(dirname "$0")/../../.."
export PATH=/usr/local/cuda/bin:$PATH
O=${OUT:-/tmp/out}; mkdir -p $O/logs; T0=$SECONDS
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $O/logs/gpu.txt
nvcc -O3 -std=c++17 -arch=sm_90 docs/results/2026-12-06e/sync_experiment.cu -o /tmp/sync_experiment \
  && timeout 90 /tmp/sync_experiment > $O/logs/sync_experiment.txt 2>&1
echo "experiment rc $? $((SECONDS - T0)) s" >> $O/logs/times.txt
GPU_CHECK_BUDGET_S=$((585 - SECONDS + T0)) CTEST_JOBS=14 LOG_DIR=$O/check GPU_CHECK_COMMIT=$1 \
  scripts/gpu-check.sh build test > $O/logs/check.txt 2>&1
echo "check rc $? $((SECONDS - T0)) s" >> $O/logs/times.txt
mv $O/check/* $O/logs/ 2>/dev/null; rm -rf $O/check
tar czf $O/logs.tar.gz -C $O logs
cat $O/logs/gpu.txt $O/logs/times.txt $O/logs/sync_experiment.txt; tail -8 $O/logs/check.txt; rm -rf $O/logs
