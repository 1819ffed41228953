#!/usr/bin/env bash
# Session 15, run 1 (one device call; about 245 s of device time were left to this session): build the gpu preset
# (this session's CPU-side files compile with the GPU machine's g++ 13, without LLVM), then bench_workloads' fused
# rows (chain, Black-Scholes, heat2d), 5 repetitions: heat2d's kernel unravels by the fast-division constants since
# 97e93d4, not re-measured then.
#   run1.sh <commit>   (OUT: the device tool's folder)
cd "$(dirname "$0")/../../.."
export PATH=/usr/local/cuda/bin:$PATH
O=${OUT:-/tmp/out}; mkdir -p $O
T0=$SECONDS
GPU_CHECK_BUDGET_S=120 LOG_DIR=$O/build GPU_CHECK_COMMIT=$1 scripts/gpu-check.sh build > $O/build.txt 2>&1
echo "build $((SECONDS-T0)) s" >> $O/times.txt
B="--benchmark_repetitions=5 --benchmark_report_aggregates_only=true"
timeout 40 build/gpu/bench/bench_workloads $B --benchmark_filter='BM_(CopyReference|Chain/eager:0|BlackScholes/eager:0|Heat2d/eager:0)' \
  > $O/bench_workloads.txt 2>&1
echo "workloads $((SECONDS-T0)) s" >> $O/times.txt
tail -3 $O/build.txt; rm -rf $O/build
cat $O/times.txt; grep -h -E "median" $O/bench_*.txt | cut -c1-60,100-230
