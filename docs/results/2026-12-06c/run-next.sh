#!/usr/bin/env bash
# For the next session with a device (one call, about 500 s): what this session could not run.
#   device: docs/results/2026-12-06c/run-next.sh <commit>        (OUT: the device tool's folder)
# 1. the replica's variants, occupancy ones included (permute_experiment.cu: does a sixth block a multiprocessor
#    speed up the wide tiles?); 2. the gpu build and bench_layout whole, 3 repetitions (the wide tiles against the
#    rest of the layout table); 3. on an H200 only, issue 19's layer norm and the permutes against torch.compile and
#    jax.jit (run_layout_peers.py); 4. the random-graph differential on the GPU in the time left (the wide tiles'
#    kernels among its graphs). Everything lands in logs.tar.gz, packed after each stage.
cd "$(dirname "$0")/../../.."
export PATH=/usr/local/cuda/bin:$PATH
O=${OUT:-/tmp/out}; W=/tmp/run-next; rm -rf $W; mkdir -p $O $W/logs; T0=$SECONDS
pack() { tar czf $O/logs.tar.gz -C $W logs; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $W/logs/gpu.txt; cat $W/logs/gpu.txt
nvcc -O3 -std=c++17 -arch=sm_90 docs/results/2026-12-06c/permute_experiment.cu -o /tmp/pe && timeout 60 /tmp/pe \
  > $W/logs/replica.txt 2>&1; pack
GPU_CHECK_BUDGET_S=200 LOG_DIR=$W/logs/build GPU_CHECK_COMMIT=$1 scripts/gpu-check.sh build > $W/logs/build.txt 2>&1
echo "build rc $? $((SECONDS - T0)) s" >> $W/logs/times.txt; pack
timeout 150 build/gpu/bench/bench_layout --benchmark_repetitions=3 --benchmark_report_aggregates_only=true \
  --benchmark_out=$W/logs/bench_layout.json > $W/logs/bench_layout.txt 2>&1
echo "bench_layout rc $? $((SECONDS - T0)) s" >> $W/logs/times.txt; pack
if grep -q H200 $W/logs/gpu.txt; then
  PYTHONUNBUFFERED=1 timeout 150 python3 bench/peers/run_layout_peers.py --systems torch_compile,jax \
    --out-md $W/logs/layout-peers.md --out-json $W/logs/layout-peers.json > $W/logs/peers.txt 2>&1
  echo "peers rc $? $((SECONDS - T0)) s" >> $W/logs/times.txt; pack
fi
LAZYFUSE_TEST_REQUIRE_GPU=1 timeout $((540 - SECONDS + T0)) build/gpu/tests/test_random_graphs \
  --gtest_filter='*Differential*' > $W/logs/random_graphs.txt 2>&1
echo "random graphs rc $? $((SECONDS - T0)) s" >> $W/logs/times.txt; pack
cat $W/logs/times.txt $W/logs/replica.txt; grep median $W/logs/bench_layout.txt | cut -c1-170
cat $W/logs/layout-peers.md 2>/dev/null | head -30; tail -3 $W/logs/random_graphs.txt
