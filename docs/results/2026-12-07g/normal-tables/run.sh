#!/usr/bin/env bash
# On the GPU machine, from anywhere: normal-tables/run.sh <log dir>. Builds normal_tables.cu, runs its host check,
# its device checks and timings, counts each kernel's SASS instructions and profiles one launch of each with ncu.
set -u
cd "$(dirname "$0")"
export PATH=/usr/local/cuda/bin:$PATH
O=${1:-/tmp/normal-tables-out}; mkdir -p "$O"
nvcc -O3 -arch=sm_90 --fmad=false -Xcompiler -ffp-contract=off -o /tmp/normal_tables normal_tables.cu > "$O/nvcc.txt" 2>&1
echo "nvcc rc $?" >> "$O/nvcc.txt"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,power.limit --format=csv > "$O/exp.txt"
/tmp/normal_tables --host-check >> "$O/exp.txt" 2>&1
timeout 150 /tmp/normal_tables >> "$O/exp.txt" 2>&1
echo "exp rc $?" >> "$O/exp.txt"
nvidia-smi --query-gpu=clocks.sm,power.draw --format=csv >> "$O/exp.txt"
cuobjdump -sass /tmp/normal_tables > /tmp/normal_tables.sass 2>&1
# SASS instructions in each gen<> kernel's body (static count; the loop body is most of it).
awk '/Function : /{name=$3} /^ +\/\*[0-9a-f]{4}\*\/ /{if (name ~ /gen/) n[name]++} END{for (k in n) print n[k], k}' \
  /tmp/normal_tables.sass | sort -k2 > "$O/sass-counts.txt"
cp /tmp/normal_tables.sass "$O/"
timeout 120 ncu --clock-control none --section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats \
  --section InstructionStats --section MemoryWorkloadAnalysis_Tables -k regex:gen /tmp/normal_tables --once > "$O/ncu.txt" 2>&1
echo "ncu rc $?" >> "$O/ncu.txt"
cat "$O/exp.txt" "$O/sass-counts.txt"
