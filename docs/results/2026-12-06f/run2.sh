#!/usr/bin/env bash
# Call 2 (session 33): the bucketed fixed-point scatter-add (runtime/DeviceCount.cu, run_bucketed). The gpu build; the
# touched test programs with LAZYFUSE_TEST_REQUIRE_GPU=1; memcheck of the scatter-add tests; bench_gather whole (5
# repetitions) and the gather peers (CuPy, torch eager, torch deterministic) in the same call; then before
# (.bench-base at f7715a5: the global atomics) and after, alternately (3 rounds): the scatter-adds.
#   device: docs/results/2026-12-06f/run2.sh <commit>        (carry .bench-base; OUT: the device tool's folder)
cd "$(dirname "$0")/../../.."
export PATH=/usr/local/cuda/bin:$PATH
O=${OUT:-/tmp/out}; W=/tmp/run2; rm -rf $W; mkdir -p $O $W/logs; T0=$SECONDS
pack() { tar czf $O/logs.tar.gz -C $W logs; }
stage() { echo "$1 rc $2 $((SECONDS - T0)) s" >> $W/logs/times.txt; pack; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $W/logs/gpu.txt
GPU_CHECK_BUDGET_S=200 LOG_DIR=$W/logs/build GPU_CHECK_COMMIT=$1 scripts/gpu-check.sh build > $W/logs/build.txt 2>&1
stage build $?
LAZYFUSE_TEST_REQUIRE_GPU=1 timeout 150 ctest --test-dir build/gpu -j 14 --output-on-failure -R \
  'test_gather|test_cuda_gather|test_bincount' > $W/logs/tests.txt 2>&1
stage tests $?
LAZYFUSE_POOL=none timeout 90 compute-sanitizer --tool memcheck --error-exitcode 1 build/gpu/tests/test_cuda_gather \
  --gtest_filter='*ScatterAdd*' > $W/logs/memcheck.txt 2>&1
stage memcheck $?
timeout 60 build/gpu/bench/bench_gather --benchmark_repetitions=5 --benchmark_report_aggregates_only=true \
  --benchmark_out=$W/logs/bench_gather.json > $W/logs/bench_gather.txt 2>&1
stage bench_gather $?
PYTHONUNBUFFERED=1 timeout 130 python3 bench/peers/run_gather_peers.py --systems cupy,torch,torch_deterministic \
  --out-md $W/logs/gather-peers.md --out-json $W/logs/gather-peers.json \
  --lazyfuse-json $W/logs/bench_gather.json > $W/logs/peers.txt 2>&1
stage peers $?
LOG_DIR=$W/logs/compare BENCH_COMPARE_HEAD=$1 BENCH_ONLY="bench_gather" BENCH_FILTER='ScatterAdd|CopyReference' \
  ROUNDS=3 timeout $((585 - SECONDS + T0)) scripts/gpu-bench-compare.sh > $W/logs/compare.txt 2>&1
stage compare $?
cat $W/logs/gpu.txt $W/logs/times.txt; grep -E "tests passed|tests failed|\(Failed\)" $W/logs/tests.txt
tail -n 3 $W/logs/memcheck.txt; grep median $W/logs/bench_gather.txt | cut -c1-150
cat $W/logs/gather-peers.md 2>/dev/null | head -14; cat $W/logs/compare/compare.md 2>/dev/null | head -12
