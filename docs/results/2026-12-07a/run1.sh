#!/usr/bin/env bash
# Call 1 (session 36): the half types' GELU through a fitted erfc with the GPU's approximate reciprocal and power of
# two, and the float32 GELU's correction through the approximate reciprocal (issue 15). The gpu build; the test
# programs of the ops, their accuracy, the half types and the products with LAZYFUSE_TEST_REQUIRE_GPU=1; memcheck
# of the GELU tests; before (.bench-base) and after, alternately (3 rounds): the GELU by type and the MLP rows;
# torch eager, torch.compile and jax.jit on the MLP workloads beside the head's JSON; then, if time is left, ncu's
# kernels of one BM_Bincount and one BM_BincountFixed call (issue 18: where the 14 us between them go).
#   device: docs/results/2026-12-07a/run1.sh <commit>        (carry .bench-base; OUT: the device tool's folder)
cd "$(dirname "$0")/../../.."
export PATH=/usr/local/cuda/bin:$PATH
O=${OUT:-/tmp/out}; W=/tmp/run1; rm -rf $W; mkdir -p $O $W/logs; T0=$SECONDS
pack() { tar czf $O/logs.tar.gz -C $W logs; }
stage() { echo "$1 rc $2 $((SECONDS - T0)) s" >> $W/logs/times.txt; pack; }
left() { echo $(($1 - SECONDS + T0)); } # seconds until the call's own deadline $1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $W/logs/gpu.txt
GPU_CHECK_BUDGET_S=200 LOG_DIR=$W/logs/build GPU_CHECK_COMMIT=$1 scripts/gpu-check.sh build > $W/logs/build.txt 2>&1
stage build $?
LAZYFUSE_TEST_REQUIRE_GPU=1 timeout 150 ctest --test-dir build/gpu -j 14 --output-on-failure -R \
  'test_matmul_epilogue|test_ops|test_accuracy|test_cuda_numerics|test_cuda_matmul|test_numpy_types|test_cuda_half_rounding' \
  > $W/logs/tests.txt 2>&1
stage tests $?
LAZYFUSE_POOL=none timeout 60 compute-sanitizer --tool memcheck --error-exitcode 1 build/gpu/tests/test_matmul_epilogue \
  --gtest_filter='Gelu.*' > $W/logs/memcheck-gelu.txt 2>&1
stage memcheck-gelu $?
LOG_DIR=$W/logs/compare BENCH_COMPARE_HEAD=$1 BENCH_ONLY="bench_types bench_matmul" \
  BENCH_FILTER='GeluByType|Mlp|CopyReference' ROUNDS=3 timeout $(left 470) scripts/gpu-bench-compare.sh \
  > $W/logs/compare.txt 2>&1
stage compare $?
cp build/bench-compare/head-bench_matmul-r1.json $W/logs/ 2>/dev/null
timeout $(left 545) python3 bench/peers/run_matmul_peers.py --systems torch,torch_compile,jax \
  --workloads mlp-gemm-bf16,mlp-gelu-bf16,mlp-gemm-tf32,mlp-gelu-tf32 --timeout 80 \
  --lazyfuse-json build/bench-compare/head-bench_matmul-r1.json --out-md $W/logs/matmul-peers.md \
  --out-json $W/logs/matmul-peers.json > $W/logs/peers.txt 2>&1
stage peers $?
for f in BM_Bincount/ BM_BincountFixed/; do
  ((SECONDS - T0 < 550)) && timeout $(left 590) ncu --clock-control none --csv -c 16 \
    --metrics gpu__time_duration.sum,dram__bytes.sum build/gpu/bench/bench_scan --benchmark_filter="$f" > $W/logs/ncu-${f%/}.csv 2> $W/logs/ncu-${f%/}.err
  stage "ncu $f" $?
done
cat $W/logs/gpu.txt $W/logs/times.txt; tail -5 $W/logs/tests.txt; cat $W/logs/compare/compare.md 2>/dev/null | tail -25
cat $W/logs/matmul-peers.md 2>/dev/null
