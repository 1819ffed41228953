#!/usr/bin/env bash
# Call 2 (session 38, issue 17): select_experiment.cu, the one-pass selection's switches against CUB's select.
#   device: docs/results/2026-12-07c/run2.sh        (OUT: the device tool's folder)
cd "$(dirname "$0")"
export PATH=/usr/local/cuda/bin:$PATH
O=${OUT:-/tmp/out}; mkdir -p $O
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader | tee $O/select_experiment.txt
nvcc -O3 -std=c++17 -arch=sm_90 select_experiment.cu -o /tmp/select_experiment 2>&1 | tee -a $O/select_experiment.txt
timeout 120 /tmp/select_experiment 2>&1 | tee -a $O/select_experiment.txt
