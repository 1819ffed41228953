#!/usr/bin/env bash
# Call 1 (session 37, issue 15): a bias followed by other elementwise work is added by that work's kernel instead of
# cuBLASLt's BIAS epilogue. The gpu build; the product test programs with LAZYFUSE_TEST_REQUIRE_GPU=1;
# epilogue_algo.cu (does an epilogue cost through itself or through the heuristic's other algorithm?); before
# (.bench-base) and after, alternately (3 rounds): bench_matmul's MLP and bias+ReLU rows; all of bench_matmul at the
# head (3 repetitions); torch eager, torch.compile and jax.jit on every workload of issue 15 beside it.
#   device: docs/results/2026-12-07b/run1.sh <commit>        (carry .bench-base; OUT: the device tool's folder)
cd "$(dirname "$0")/../../.."
export PATH=/usr/local/cuda/bin:$PATH
O=${OUT:-/tmp/out}; W=/tmp/run1; rm -rf $W; mkdir -p $O $W/logs; T0=$SECONDS
pack() { tar czf $O/logs.tar.gz -C $W logs; }
stage() { echo "$1 rc $2 $((SECONDS - T0)) s" >> $W/logs/times.txt; pack; }
left() { echo $(($1 - SECONDS + T0)); } # seconds until the call's own deadline $1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $W/logs/gpu.txt
GPU_CHECK_BUDGET_S=200 LOG_DIR=$W/logs/build GPU_CHECK_COMMIT=$1 scripts/gpu-check.sh build > $W/logs/build.txt 2>&1
stage build $?
LAZYFUSE_TEST_REQUIRE_GPU=1 timeout 100 ctest --test-dir build/gpu -j 14 --output-on-failure -R \
  'test_matmul_epilogue|test_cuda_matmul|test_matmul\.' > $W/logs/tests.txt 2>&1
stage tests $?
{ nvcc -O2 -arch=sm_90 docs/results/2026-12-07b/epilogue_algo.cu -lcublasLt -o /tmp/epilogue_algo &&
  timeout 60 /tmp/epilogue_algo; } > $W/logs/epilogue_algo.txt 2>&1
stage epilogue_algo $?
LOG_DIR=$W/logs/compare BENCH_COMPARE_HEAD=$1 BENCH_ONLY=bench_matmul BENCH_FILTER='Mlp|BiasRelu' ROUNDS=3 \
  timeout $(left 470) scripts/gpu-bench-compare.sh > $W/logs/compare.txt 2>&1
stage compare $?
rm -f $W/logs/compare/bench-compare.tar.gz
timeout $(left 400) build/gpu/bench/bench_matmul --benchmark_repetitions=3 --benchmark_report_aggregates_only=true \
  --benchmark_out=$W/logs/bench_matmul.json --benchmark_out_format=json > $W/logs/bench_matmul.txt 2>&1
stage bench_matmul $?
timeout $(left 575) python3 bench/peers/run_matmul_peers.py --systems torch,torch_compile,jax --timeout 60 \
  --lazyfuse-json $W/logs/bench_matmul.json --out-md $W/logs/matmul-peers.md \
  --out-json $W/logs/matmul-peers.json > $W/logs/peers.txt 2>&1
stage peers $?
cat $W/logs/gpu.txt $W/logs/times.txt; tail -5 $W/logs/tests.txt; cat $W/logs/epilogue_algo.txt
cat $W/logs/compare/compare.md 2>/dev/null | tail -25; cat $W/logs/matmul-peers.md 2>/dev/null
