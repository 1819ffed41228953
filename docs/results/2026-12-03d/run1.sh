#!/usr/bin/env bash
# Session 12, run 1: tiled transposes (issue 19) on the H200: their GPU test, bench_layout, the layout peers.
cd "$(dirname "$0")/../../.."
export PATH=/usr/local/cuda/bin:$PATH
O=${OUT:-/tmp/out}/logs; mkdir -p $O
T0=$SECONDS
{ cmake --preset gpu > /dev/null && cmake --build build/gpu -j16 2>&1 | tail -3; } > $O/build.txt 2>&1
echo "build $((SECONDS-T0)) s" >> $O/build.txt
LAZYFUSE_TEST_REQUIRE_GPU=1 timeout 200 build/gpu/tests/test_cuda_schedule > $O/test_cuda_schedule.txt 2>&1
echo "tests $((SECONDS-T0)) s" >> $O/build.txt
B="--benchmark_repetitions=5 --benchmark_report_aggregates_only=true"
timeout 200 build/gpu/bench/bench_layout $B --benchmark_out=$O/bench_layout.json > $O/bench_layout.txt 2>&1
echo "bench $((SECONDS-T0)) s" >> $O/build.txt
timeout 300 python3 bench/peers/run_layout_peers.py --out-md $O/layout-peers.md --out-json $O/layout-peers.json \
  --lazyfuse-json $O/bench_layout.json --timeout 140 > $O/peers.txt 2>&1
echo "total $((SECONDS-T0)) s" >> $O/build.txt
tar czf ${OUT:-/tmp/out}/run1.tgz -C $O .
cat $O/build.txt; tail -5 $O/test_cuda_schedule.txt; grep -E "BM_.*median|ERROR" $O/bench_layout.txt; cat $O/layout-peers.md
