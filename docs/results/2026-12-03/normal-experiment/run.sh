#!/usr/bin/env bash
# On the GPU machine, from the repository root: LOG_DIR=$OUT docs/results/2026-12-03/normal-experiment/run.sh
set -u
cd "$(dirname "$0")"
export PATH=/usr/local/cuda/bin:$PATH
OUTD=${LOG_DIR:-/tmp/normal-exp-out}
mkdir -p "$OUTD"
nvcc -O3 -arch=sm_90 --fmad=false -o /tmp/normal_exp normal_exp.cu 2>&1 | grep -v 'declared but never\|^$\|\^' 
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv > "$OUTD/exp.txt"
/tmp/normal_exp >> "$OUTD/exp.txt" 2>&1
nvidia-smi --query-gpu=clocks.sm,power.draw --format=csv >> "$OUTD/exp.txt"
cuobjdump -sass /tmp/normal_exp > "$OUTD/normal_exp.sass" 2>&1
timeout 200 ncu --clock-control none --section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats \
  --section InstructionStats -k regex:gen /tmp/normal_exp --once > "$OUTD/ncu.txt" 2>&1
echo "ncu exit $?" >> "$OUTD/ncu.txt"
cat "$OUTD/exp.txt"
