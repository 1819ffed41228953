#!/usr/bin/env bash
# Session 31's third call: the grouped scan order in the library. The gpu build; the scan tests and the random
# graphs on the GPU (LAZYFUSE_TEST_REQUIRE_GPU=1); bench_scan's cumsum rows before (the base in .bench-base) and
# after, alternately (scripts/gpu-bench-compare.sh, 3 rounds); bench_scan whole (5 repetitions, JSON) and the sort
# peers (torch, jax, cupy) with it.
#   device: docs/results/2026-12-06d/run3.sh <commit>       (carry .bench-base; OUT: the device tool's folder)
cd "$(dirname "$0")/../../.."
export PATH=/usr/local/cuda/bin:$PATH
O=${OUT:-/tmp/out}; W=/tmp/run3; rm -rf $W; mkdir -p $O $W/logs; T0=$SECONDS
pack() { tar czf $O/logs.tar.gz -C $W logs; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $W/logs/gpu.txt
GPU_CHECK_BUDGET_S=200 LOG_DIR=$W/logs/build GPU_CHECK_COMMIT=$1 scripts/gpu-check.sh build > $W/logs/build.txt 2>&1
echo "build rc $? $((SECONDS - T0)) s" >> $W/logs/times.txt; pack
for t in test_cuda_scan test_scan; do
  LAZYFUSE_TEST_REQUIRE_GPU=1 timeout 120 build/gpu/tests/$t > $W/logs/$t.txt 2>&1
  echo "$t rc $? $((SECONDS - T0)) s" >> $W/logs/times.txt
done; pack
LOG_DIR=$W/logs/compare BENCH_COMPARE_HEAD=$1 BENCH_ONLY=bench_scan BENCH_FILTER='Cumsum|CopyReference' ROUNDS=3 \
  timeout 240 scripts/gpu-bench-compare.sh > $W/logs/compare.txt 2>&1
echo "compare rc $? $((SECONDS - T0)) s" >> $W/logs/times.txt; pack
timeout 60 build/gpu/bench/bench_scan --benchmark_repetitions=5 --benchmark_report_aggregates_only=true \
  --benchmark_out=$W/logs/bench_scan.json > $W/logs/bench_scan.txt 2>&1
echo "bench_scan rc $? $((SECONDS - T0)) s" >> $W/logs/times.txt; pack
PYTHONUNBUFFERED=1 timeout $((480 - SECONDS + T0)) python3 bench/peers/run_sort_peers.py --out-md $W/logs/sort-peers.md \
  --out-json $W/logs/sort-peers.json --lazyfuse-json $W/logs/bench_scan.json > $W/logs/peers.txt 2>&1
echo "peers rc $? $((SECONDS - T0)) s" >> $W/logs/times.txt; pack
LAZYFUSE_TEST_REQUIRE_GPU=1 timeout $((570 - SECONDS + T0)) build/gpu/tests/test_random_graphs \
  > $W/logs/random_graphs.txt 2>&1
echo "random graphs rc $? $((SECONDS - T0)) s" >> $W/logs/times.txt; pack
cat $W/logs/gpu.txt $W/logs/times.txt; tail -3 $W/logs/test_cuda_scan.txt $W/logs/test_scan.txt
cat $W/logs/compare/compare.md 2>/dev/null | head -20; grep median $W/logs/bench_scan.txt | cut -c1-150
head -30 $W/logs/sort-peers.md 2>/dev/null; tail -4 $W/logs/random_graphs.txt
