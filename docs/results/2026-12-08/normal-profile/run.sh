#!/usr/bin/env bash
# On the GPU machine: normal-profile/run.sh <log dir>. Builds normal_profile.cu, times its variants, then ncu of
# C, CN, BMN and C2 with the stall reasons and the pipelines' utilization.
set -u
cd "$(dirname "$0")"
export PATH=/usr/local/cuda/bin:$PATH
O=${1:-/tmp/normal-profile}; mkdir -p "$O"
nvcc -O3 -arch=sm_90 --fmad=false -Xcompiler -ffp-contract=off -Xptxas -v -o /tmp/normal_profile normal_profile.cu \
  > "$O/nvcc.txt" 2>&1
echo "nvcc rc $?" >> "$O/nvcc.txt"
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv > "$O/exp.txt"
timeout 120 /tmp/normal_profile >> "$O/exp.txt" 2>&1
echo "exp rc $?" >> "$O/exp.txt"
timeout 150 ncu --clock-control none --section SpeedOfLight --section WarpStateStats --section Occupancy \
  --metrics 'regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio,regex:sm__inst_executed_pipe_.*\.avg\.pct_of_peak_sustained_active,regex:sm__pipe_.*_cycles_active\.avg\.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active' \
  -k regex:gen /tmp/normal_profile --once > "$O/ncu.txt" 2>&1
echo "ncu rc $?" >> "$O/ncu.txt"
cuobjdump -sass /tmp/normal_profile > "$O/sass.txt" 2>&1
cat "$O/exp.txt"
