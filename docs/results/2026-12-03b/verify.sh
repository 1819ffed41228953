#!/usr/bin/env bash
# Build, targeted GPU tests, memcheck of the gather tests, bench_gather and its peers (one device call).
set -uo pipefail
cd "$(dirname "$0")/.."
export PATH=/usr/local/cuda/bin:$PATH
export LAZYFUSE_TEST_PYTHON=$(command -v python3)
L=$OUT/v; mkdir -p $L
( [ -d build/gpu ] || cmake --preset gpu ) > $L/configure.txt 2>&1
ninja -C build/gpu > $L/build.txt 2>&1 || { tail -40 $L/build.txt; }
tail -1 $L/build.txt
LAZYFUSE_TEST_REQUIRE_GPU=1 timeout 240 ctest --test-dir build/gpu -j14 -R 'gather|Gather|plan_cache|random_graphs|errors|PlanCache' > $L/ctest.txt 2>&1
grep -E "tests passed|Failed|\(Failed|Timeout" $L/ctest.txt | head -20
for t in test_cuda_gather test_plan_cache; do
  timeout 120 compute-sanitizer --tool memcheck build/gpu/tests/$t > $L/memcheck-$t.txt 2>&1
  grep -E "ERROR SUMMARY|PASSED|FAILED" $L/memcheck-$t.txt | sed "s/^/$t /"
done
build/gpu/bench/bench_gather --benchmark_repetitions=5 --benchmark_report_aggregates_only=true \
  --benchmark_out=$L/bench_gather.json --benchmark_out_format=json > $L/bench_gather.txt 2>&1
grep median $L/bench_gather.txt
timeout 200 python3 bench/peers/run_gather_peers.py --lazyfuse-json $L/bench_gather.json --out-md $L/gather-peers.md --out-json $L/gather-peers.json > $L/peers.txt 2>&1
cat $L/gather-peers.md
(cd $OUT && tar czf v.tar.gz v && rm -rf v)
