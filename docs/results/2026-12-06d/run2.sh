#!/usr/bin/env bash
# Session 31's second call: scan_experiment.cu with the grouped order's kernel (and its host reference).
#   device: docs/results/2026-12-06d/run2.sh                 (OUT: the device tool's folder)
cd "$(dirname "$0")/../../.."
export PATH=/usr/local/cuda/bin:$PATH
O=${OUT:-/tmp/out}; mkdir -p $O
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $O/scan_experiment2.txt
nvcc -O3 -std=c++17 -arch=sm_90 docs/results/2026-12-06d/scan_experiment.cu -o /tmp/scan_experiment \
  && timeout 200 /tmp/scan_experiment >> $O/scan_experiment2.txt 2>&1
cat $O/scan_experiment2.txt
