#!/usr/bin/env bash
# Call 1 (session 39): the scan tile-shape experiment (scan_tiles_experiment.cu), then the whole suite on the GPU at
# <commit> (scripts/gpu-check.sh build test, LAZYFUSE_TEST_REQUIRE_GPU=1): session 38's scans ran only their own
# programs on a GPU; this adds bincount's range from the counters and the refused stream capture.
#   device: docs/results/2026-12-07d/run1.sh <commit>        (OUT: the device tool's folder)
cd "$(dirname "$0")/../../.."
export PATH=/usr/local/cuda/bin:$PATH
O=${OUT:-/tmp/out}; W=/tmp/run1; rm -rf $W; mkdir -p $O $W/logs; T0=$SECONDS
pack() { tar czf $O/logs.tar.gz -C $W logs; }
stage() { echo "$1 rc $2 $((SECONDS - T0)) s" >> $W/logs/times.txt; pack; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader > $W/logs/gpu.txt
(cd docs/results/2026-12-07d && nvcc -O3 -std=c++17 -arch=sm_90 scan_tiles_experiment.cu -o $W/scan_tiles) \
  > $W/logs/scan_tiles.txt 2>&1 && timeout 100 $W/scan_tiles >> $W/logs/scan_tiles.txt 2>&1
stage scan-tiles $?
GPU_CHECK_BUDGET_S=$((575 - SECONDS + T0)) LOG_DIR=$W/logs/check GPU_CHECK_COMMIT=$1 scripts/gpu-check.sh build test \
  > $W/logs/check.txt 2>&1
stage check $?
cat $W/logs/gpu.txt $W/logs/times.txt $W/logs/scan_tiles.txt; tail -15 $W/logs/check.txt
