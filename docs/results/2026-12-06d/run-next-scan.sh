#!/usr/bin/env bash
# For a next session with a device (about 40 s): scan_experiment.cu's tile shapes (threads x values a tile, the
# grouped order and the library's look-back; CUB's sm90 float scan uses 128 x 24), each checked bit for bit against
# its own host reference, beside the library's 256 x 16 and CUB.
#   device: docs/results/2026-12-06d/run-next-scan.sh                 (OUT: the device tool's folder)
cd "$(dirname "$0")/../../.."
export PATH=/usr/local/cuda/bin:$PATH
O=${OUT:-/tmp/out}; mkdir -p $O
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $O/scan_shapes.txt
nvcc -O3 -std=c++17 -arch=sm_90 docs/results/2026-12-06d/scan_experiment.cu -o /tmp/scan_experiment \
  && timeout 240 /tmp/scan_experiment >> $O/scan_shapes.txt 2>&1
cat $O/scan_shapes.txt
