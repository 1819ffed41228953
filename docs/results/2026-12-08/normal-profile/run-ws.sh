#!/usr/bin/env bash
# On the GPU machine: normal-profile/run-ws.sh <log dir>. Builds ws.cu, checks and times it, ncu of its kernels.
set -u
cd "$(dirname "$0")"
export PATH=/usr/local/cuda/bin:$PATH
O=${1:-/tmp/ws}; mkdir -p "$O"
nvcc -O3 -arch=sm_90 --fmad=false -Xcompiler -ffp-contract=off -Xptxas -v -o /tmp/ws ws.cu > "$O/nvcc.txt" 2>&1
echo "nvcc rc $?" >> "$O/nvcc.txt"
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv > "$O/exp.txt"
timeout 120 /tmp/ws >> "$O/exp.txt" 2>&1
echo "exp rc $?" >> "$O/exp.txt"
M='smsp__issue_active.avg.pct_of_peak_sustained_active,smsp__average_warps_issue_stalled_dispatch_stall_per_issue_active.ratio,smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio'
for k in gen_ws:3 gen_pn:1; do
  timeout 60 ncu --clock-control none -k regex:${k%:*} -c ${k#*:} --section SpeedOfLight --metrics "$M" /tmp/ws \
    >> "$O/ncu.txt" 2>&1
done
echo "ncu rc $?" >> "$O/ncu.txt"
cat "$O/exp.txt"
