#!/usr/bin/env bash
# Call 2 (session 39, issue 18, on call 1's warm machine): bincount with its range read from the block's nonzero
# counters, before (.bench-base at a088604, the session's start) and after, alternately (5 rounds): bench_scan's
# bincounts and unique with the copy reference; then the GPU differential, shortened, with the time left.
#   device: docs/results/2026-12-07d/run2.sh <commit>        (carry .bench-base; OUT: the device tool's folder)
cd "$(dirname "$0")/../../.."
export PATH=/usr/local/cuda/bin:$PATH
O=${OUT:-/tmp/out}; W=/tmp/run2; rm -rf $W; mkdir -p $O $W/logs; T0=$SECONDS
pack() { tar czf $O/logs.tar.gz -C $W logs; }
stage() { echo "$1 rc $2 $((SECONDS - T0)) s" >> $W/logs/times.txt; pack; }
left() { echo $(($1 - SECONDS + T0)); } # seconds until the call's own deadline $1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader > $W/logs/gpu.txt
LOG_DIR=$W/logs/compare BENCH_COMPARE_HEAD=$1 BENCH_ONLY="bench_scan" BENCH_FILTER='Bincount|Unique|CopyReference' \
  ROUNDS=5 timeout $(left 300) scripts/gpu-bench-compare.sh > $W/logs/compare.txt 2>&1
stage compare $?
rm -f $W/logs/compare/bench-compare.tar.gz
GPU_DIFF_BUDGET_S=$(left 570) GPU_DIFF_CASES=${DIFF_CASES:-100} GPU_DIFF_COMMIT=$1 LOG_DIR=$W/logs/diff \
  scripts/gpu-differential.sh > $W/logs/diff.txt 2>&1
stage differential $?
rm -f $W/logs/diff/gpu-differential.tar.gz
cat $W/logs/gpu.txt $W/logs/times.txt; cat $W/logs/compare/compare.md 2>/dev/null | tail -12; tail -3 $W/logs/diff.txt
