#!/usr/bin/env bash
# Call 3 (session 39, issue 18, warm): the scan experiment again (scan_tiles_experiment.cu -DSTREAMING_SWEEP), with
# streaming loads and stores (cs) across pauses and shapes.
cd "$(dirname "$0")"
export PATH=/usr/local/cuda/bin:$PATH
O=${OUT:-/tmp/out}; mkdir -p $O
nvcc -O3 -std=c++17 -arch=sm_90 -DSTREAMING_SWEEP scan_tiles_experiment.cu -o /tmp/scan_tiles2 &&
  timeout 100 /tmp/scan_tiles2 | tee $O/scan_tiles2.txt
