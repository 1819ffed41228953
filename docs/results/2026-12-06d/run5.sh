#!/usr/bin/env bash
# Session 31's fifth call: scan_experiment.cu with the library's look-back replicated, and with the tile's own group
# and the walk's first group read in one round trip (pauses and blocks per SM varied).
#   device: docs/results/2026-12-06d/run5.sh                 (OUT: the device tool's folder)
cd "$(dirname "$0")/../../.."
export PATH=/usr/local/cuda/bin:$PATH
O=${OUT:-/tmp/out}; mkdir -p $O
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $O/scan_experiment5.txt
nvcc -O3 -std=c++17 -arch=sm_90 docs/results/2026-12-06d/scan_experiment.cu -o /tmp/scan_experiment \
  && timeout 120 /tmp/scan_experiment >> $O/scan_experiment5.txt 2>&1
cat $O/scan_experiment5.txt
