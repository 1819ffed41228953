#!/usr/bin/env bash
# Call 1 (session 33): the polled slots (cherry-picked 1becd78, 5bb3ae3). The gpu build; the touched test programs with LAZYFUSE_TEST_REQUIRE_GPU=1; bench_scan
# whole (5 repetitions) and the sort peers (CuPy, torch, jax.jit) in the same call; x[x > 0]; then in the time left
# before (.bench-base at 8651362: slots read after a stream wait) and after, alternately (3 rounds): bincount, unique, the sorts, x[x > 0].
#   device: docs/results/2026-12-06f/run1.sh <commit>        (carry .bench-base; OUT: the device tool's folder)
cd "$(dirname "$0")/../../.."
export PATH=/usr/local/cuda/bin:$PATH
O=${OUT:-/tmp/out}; W=/tmp/run1; rm -rf $W; mkdir -p $O $W/logs; T0=$SECONDS
pack() { tar czf $O/logs.tar.gz -C $W logs; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $W/logs/gpu.txt
GPU_CHECK_BUDGET_S=200 LOG_DIR=$W/logs/build GPU_CHECK_COMMIT=$1 scripts/gpu-check.sh build > $W/logs/build.txt 2>&1
echo "build rc $? $((SECONDS - T0)) s" >> $W/logs/times.txt; pack
LAZYFUSE_TEST_REQUIRE_GPU=1 timeout 120 ctest --test-dir build/gpu -j 14 --output-on-failure -R \
  'test_bincount|test_cuda_sort|test_cuda_gather|test_gather|test_cuda_runtime|test_cuda_accelerators|test_cuda_streams' \
  > $W/logs/tests.txt 2>&1
echo "tests rc $? $((SECONDS - T0)) s" >> $W/logs/times.txt; pack
timeout 60 build/gpu/bench/bench_scan --benchmark_repetitions=5 --benchmark_report_aggregates_only=true \
  --benchmark_out=$W/logs/bench_scan.json > $W/logs/bench_scan.txt 2>&1
echo "bench_scan rc $? $((SECONDS - T0)) s" >> $W/logs/times.txt; pack
PYTHONUNBUFFERED=1 timeout 100 python3 bench/peers/run_sort_peers.py --out-md $W/logs/sort-peers.md \
  --out-json $W/logs/sort-peers.json --lazyfuse-json $W/logs/bench_scan.json > $W/logs/peers.txt 2>&1
echo "peers rc $? $((SECONDS - T0)) s" >> $W/logs/times.txt; pack
timeout 20 build/gpu/bench/bench_gather --benchmark_filter='MaskSelect|CopyReference' --benchmark_repetitions=3 \
  --benchmark_report_aggregates_only=true > $W/logs/bench_gather.txt 2>&1
LOG_DIR=$W/logs/compare BENCH_COMPARE_HEAD=$1 BENCH_ONLY="bench_scan bench_gather" \
  BENCH_FILTER='Bincount|Unique|Sort|Argsort|MaskSelect|CopyReference' ROUNDS=3 \
  timeout $((470 - SECONDS + T0)) scripts/gpu-bench-compare.sh > $W/logs/compare.txt 2>&1
echo "compare rc $? $((SECONDS - T0)) s" >> $W/logs/times.txt; pack
cat $W/logs/gpu.txt $W/logs/times.txt; grep -E "tests passed|tests failed" $W/logs/tests.txt
cat $W/logs/compare/compare.md 2>/dev/null | head -20; grep median $W/logs/bench_scan.txt | cut -c1-150
cat $W/logs/sort-peers.md 2>/dev/null | head -12; grep median $W/logs/bench_gather.txt | cut -c1-150
# Then session 31's scan tile shapes (docs/results/2026-12-06d/run-next-scan.sh, about 40 s), if time is left.
OUT=$W/logs timeout $((585 - SECONDS + T0)) docs/results/2026-12-06d/run-next-scan.sh > /dev/null 2>&1
echo "scan shapes rc $? $((SECONDS - T0)) s" >> $W/logs/times.txt; pack
tail -n 3 $W/logs/times.txt; cat $W/logs/scan_shapes.txt 2>/dev/null | head -40
