#!/usr/bin/env bash
# Call 1 (about 100 s): the small read-back's mechanisms (sync_experiment.cu), then session 31's scan tile shapes
# (docs/results/2026-12-06d/run-next-scan.sh).
#   device: docs/results/2026-12-06e/run1.sh                    (OUT: the device tool's folder)
cd "$(dirname "$0")/../../.."
export PATH=/usr/local/cuda/bin:$PATH
O=${OUT:-/tmp/out}; mkdir -p $O
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $O/sync.txt
nvcc -O3 -std=c++17 -arch=sm_90 docs/results/2026-12-06e/sync_experiment.cu -o /tmp/sync_experiment \
  && timeout 120 /tmp/sync_experiment >> $O/sync.txt 2>&1
cat $O/sync.txt
OUT=$O timeout 300 docs/results/2026-12-06d/run-next-scan.sh > /dev/null 2>&1; cat $O/scan_shapes.txt
