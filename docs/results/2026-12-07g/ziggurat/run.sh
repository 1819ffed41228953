#!/usr/bin/env bash
# On the GPU machine (written in session 42, not yet run): ziggurat/run.sh <log dir>. Builds ziggurat.cu, runs its
# checks and timings, profiles one launch of each kernel with ncu.
set -u
cd "$(dirname "$0")"
export PATH=/usr/local/cuda/bin:$PATH
O=${1:-/tmp/ziggurat-out}; mkdir -p "$O"
nvcc -O3 -arch=sm_90 --fmad=false -Xcompiler -ffp-contract=off -o /tmp/ziggurat ziggurat.cu > "$O/nvcc.txt" 2>&1
echo "nvcc rc $?" >> "$O/nvcc.txt"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,power.limit --format=csv > "$O/exp.txt"
timeout 200 /tmp/ziggurat >> "$O/exp.txt" 2>&1
echo "exp rc $?" >> "$O/exp.txt"
timeout 120 ncu --clock-control none --section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats \
  --section InstructionStats -k regex:gen /tmp/ziggurat --once > "$O/ncu.txt" 2>&1
echo "ncu rc $?" >> "$O/ncu.txt"
cat "$O/exp.txt"
