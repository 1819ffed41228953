#!/usr/bin/env bash
# Session 31's sixth call: scan_experiment.cu, what the ticket before the loads costs (the tile from blockIdx.x,
# or the loads of tile blockIdx.x issued while the ticket is in flight).
#   device: docs/results/2026-12-06d/run6.sh                 (OUT: the device tool's folder)
cd "$(dirname "$0")/../../.."
export PATH=/usr/local/cuda/bin:$PATH
O=${OUT:-/tmp/out}; mkdir -p $O
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $O/scan_experiment6.txt
nvcc -O3 -std=c++17 -arch=sm_90 docs/results/2026-12-06d/scan_experiment.cu -o /tmp/scan_experiment \
  && timeout 120 /tmp/scan_experiment >> $O/scan_experiment6.txt 2>&1
cat $O/scan_experiment6.txt
