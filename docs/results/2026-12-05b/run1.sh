#!/usr/bin/env bash
# Session 21, run 1 (one device call): build the gpu preset at <commit> (at().add's fixed-point sums), run the tests
# of gathers, scatters and counts with LAZYFUSE_TEST_REQUIRE_GPU=1, the scatter-add tests under compute-sanitizer's
# memcheck, bench_gather (5 repetitions) and the gather peers beside this run's bench_gather JSON.
#   run1.sh <commit>   (OUT: the device tool's folder)
cd "$(dirname "$0")/../../.."
export PATH=/usr/local/cuda/bin:$PATH
O=${OUT:-/tmp/out}; mkdir -p $O/logs
T0=$SECONDS
GPU_CHECK_BUDGET_S=170 LOG_DIR=$O/build GPU_CHECK_COMMIT=$1 scripts/gpu-check.sh build > $O/logs/build.txt 2>&1
echo "build $((SECONDS-T0)) s" >> $O/logs/times.txt
LAZYFUSE_TEST_REQUIRE_GPU=1 LAZYFUSE_TEST_PYTHON=$(command -v python3) timeout 200 ctest --test-dir build/gpu -j14 \
  --output-on-failure -R "gather|Gather|bincount|BinCount|histogram|Histogram|Scatter|scatter|random_graphs" \
  > $O/logs/ctest.txt 2>&1
echo "ctest rc $? $((SECONDS-T0)) s" >> $O/logs/times.txt
for t in "test_cuda_gather *ScatterAdd*" "test_gather *Add*"; do
  set -- $t
  LAZYFUSE_POOL=none timeout 120 compute-sanitizer --tool memcheck --error-exitcode 3 build/gpu/tests/$1 \
    --gtest_filter="$2" >> $O/logs/memcheck.txt 2>&1
  echo "memcheck $1 rc $? $((SECONDS-T0)) s" >> $O/logs/times.txt
done
timeout 120 build/gpu/bench/bench_gather --benchmark_repetitions=5 --benchmark_report_aggregates_only=true \
  --benchmark_out=$O/bench_gather.json --benchmark_out_format=json > $O/logs/bench_gather.txt 2>&1
echo "bench_gather rc $? $((SECONDS-T0)) s" >> $O/logs/times.txt
timeout 150 python3 bench/peers/run_gather_peers.py --out-md $O/logs/gather-peers.md \
  --out-json $O/logs/gather-peers.json --lazyfuse-json $O/bench_gather.json > $O/logs/gather-peers.txt 2>&1
echo "gather peers rc $? $((SECONDS-T0)) s" >> $O/logs/times.txt
rm -rf $O/build
tar czf $O/logs.tar.gz -C $O logs
cat $O/logs/times.txt; grep -E "tests passed|\(Failed\)|Timeout" $O/logs/ctest.txt | head -20
grep -E "ERROR SUMMARY|PASSED|FAILED" $O/logs/memcheck.txt | head; grep -E "median" $O/logs/bench_gather.txt | cut -c1-100,120-330
cat $O/logs/gather-peers.md
