#!/usr/bin/env bash
# Session 16, run 4 (one device call): after 9ee10f3 (stale depths recomputed: the solver's 116 kernels become 110),
# build the gpu preset, run bench_loops (5 repetitions) and, with LAZYFUSE_TEST_REQUIRE_GPU=1, the test programs
# that exercise the graph and the plans on the GPU: test_fusion, test_graph, test_views, test_random_graphs,
# test_cuda_runtime and test_cuda_schedule.
#   run4.sh <commit>   (OUT: the device tool's folder)
cd "$(dirname "$0")/../../.."
export PATH=/usr/local/cuda/bin:$PATH
O=${OUT:-/tmp/out}; mkdir -p $O/logs
T0=$SECONDS
GPU_CHECK_BUDGET_S=150 LOG_DIR=$O/build GPU_CHECK_COMMIT=$1 scripts/gpu-check.sh build > $O/logs/build.txt 2>&1
echo "build $((SECONDS-T0)) s" >> $O/logs/times.txt
B="--benchmark_repetitions=5 --benchmark_report_aggregates_only=true"
timeout 150 build/gpu/bench/bench_loops $B --benchmark_out=$O/bench_loops.json --benchmark_out_format=json \
  > $O/logs/bench_loops.txt 2>&1
echo "bench_loops $((SECONDS-T0)) s" >> $O/logs/times.txt
LAZYFUSE_TEST_REQUIRE_GPU=1 LAZYFUSE_TEST_PYTHON=$(command -v python3) timeout 200 ctest --test-dir build/gpu -j14 \
  -R "test_fusion|test_graph|test_views|test_random_graphs|test_cuda_runtime|test_cuda_schedule" > $O/logs/ctest.txt 2>&1
echo "ctest $((SECONDS-T0)) s rc $?" >> $O/logs/times.txt
rm -rf $O/build
tar czf $O/logs.tar.gz -C $O logs
cat $O/logs/times.txt; grep -h -E "median|ERROR" $O/logs/bench_loops.txt | cut -c1-70,100-260; tail -4 $O/logs/ctest.txt
