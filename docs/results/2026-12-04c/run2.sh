#!/usr/bin/env bash
# Session 18, run 2 (one device call): the build, and with LAZYFUSE_TEST_REQUIRE_GPU=1 the tests run 1 failed or that
# replay through the plan cache (test_cuda_graphs, test_fusion, test_random_graphs, test_plan_cache, test_gather,
# test_cuda_gather, test_cuda_streams, test_cuda_runtime, test_repeated_steps); then bench_loops' replay
# chains (kernel by kernel against one CUDA graph, 2, 4 and 10 kernels), bench_compute's generated sum, and the
# compute peers (bench/peers/run_compute_peers.py: CuPy, torch eager, torch.compile, jax.jit). 5 repetitions, medians.
#   run2.sh <commit>   (OUT: the device tool's folder)
cd "$(dirname "$0")/../../.."
export PATH=/usr/local/cuda/bin:$PATH
O=${OUT:-/tmp/out}; mkdir -p $O/logs
T0=$SECONDS
GPU_CHECK_BUDGET_S=170 LOG_DIR=$O/build GPU_CHECK_COMMIT=$1 scripts/gpu-check.sh build > $O/logs/build.txt 2>&1
echo "build $((SECONDS-T0)) s" >> $O/logs/times.txt
LAZYFUSE_TEST_REQUIRE_GPU=1 LAZYFUSE_TEST_PYTHON=$(command -v python3) timeout 200 ctest --test-dir build/gpu -j14 \
  --output-on-failure -R "test_cuda_graphs|test_fusion|test_random_graphs|test_plan_cache|test_gather|test_cuda_gather|\
test_cuda_streams|test_cuda_runtime|test_repeated_steps" > $O/logs/ctest.txt 2>&1
echo "ctest rc $? $((SECONDS-T0)) s" >> $O/logs/times.txt
B="--benchmark_repetitions=5 --benchmark_report_aggregates_only=true"
timeout 120 build/gpu/bench/bench_loops $B --benchmark_filter='BM_(CopyReference|ReplayChain)' \
  --benchmark_out=$O/bench_loops.json --benchmark_out_format=json > $O/logs/bench_loops.txt 2>&1
echo "bench_loops $((SECONDS-T0)) s" >> $O/logs/times.txt
timeout 90 build/gpu/bench/bench_compute $B --benchmark_out=$O/bench_compute.json --benchmark_out_format=json \
  > $O/logs/bench_compute.txt 2>&1
echo "bench_compute $((SECONDS-T0)) s" >> $O/logs/times.txt
left=$((560 - (SECONDS - T0)))
(cd $O/logs && timeout $left python3 "$OLDPWD/bench/peers/run_compute_peers.py" --lazyfuse-json $O/bench_compute.json \
  --systems torch_compile,jax,cupy --timeout $((left / 3)) --out-md compute-peers.md --out-json compute-peers.json) > $O/logs/peers.txt 2>&1
echo "peers $((SECONDS-T0)) s" >> $O/logs/times.txt
rm -rf $O/build
tar czf $O/logs.tar.gz -C $O logs
cat $O/logs/times.txt; grep -E "tests passed|\(Failed\)|Timeout" $O/logs/ctest.txt | head -20; grep -h -E "median|ERROR" $O/logs/bench_*.txt | cut -c1-100,120-330
cat $O/logs/compute-peers.md 2>/dev/null | head -12
