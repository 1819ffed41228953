#!/usr/bin/env bash
# Call 3 (session 37, issue 15): the half types' GELU in fewer instructions. The gpu build; the test programs of the
# ops, their accuracy, the half types and the products with LAZYFUSE_TEST_REQUIRE_GPU=1; memcheck of the GELU tests;
# before (.bench-base) and after, alternately (3 rounds): the GELU by type and the MLP rows; then, as time allows,
# epilogue_rounds.cu (each cuBLASLt epilogue against the bare product in rotated rounds on random operands, the SM
# clock and power sampled beside, then each configuration once under ncu), the batched FP32 product (5 repetitions
# and ncu of lazyfuse's and cuBLAS's calls), and torch.compile and jax.jit on the MLP workloads. The device time
# left (682 s) bounds the call at about 400 s.
#   device: docs/results/2026-12-07b/run3.sh <commit>        (carry .bench-base; OUT: the device tool's folder)
cd "$(dirname "$0")/../../.."
export PATH=/usr/local/cuda/bin:$PATH
O=${OUT:-/tmp/out}; W=/tmp/run3; rm -rf $W; mkdir -p $O $W/logs; T0=$SECONDS
pack() { tar czf $O/logs.tar.gz -C $W logs; }
stage() { echo "$1 rc $2 $((SECONDS - T0)) s" >> $W/logs/times.txt; pack; }
left() { echo $(($1 - SECONDS + T0)); } # seconds until the call's own deadline $1
sample() { nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_throttle_reasons.active \
  --format=csv -lms 100 > $W/logs/smi-$1.csv 2>&1 & SMI=$!; }
M='gpu__time_duration.sum,dram__bytes.sum,sm__inst_executed.sum,launch__registers_per_thread,launch__grid_size,launch__block_size,sm__throughput.avg.pct_of_peak_sustained_elapsed,dram__throughput.avg.pct_of_peak_sustained_elapsed'
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader > $W/logs/gpu.txt
GPU_CHECK_BUDGET_S=200 LOG_DIR=$W/logs/build GPU_CHECK_COMMIT=$1 scripts/gpu-check.sh build > $W/logs/build.txt 2>&1
stage build $?
LAZYFUSE_TEST_REQUIRE_GPU=1 timeout 150 ctest --test-dir build/gpu -j 14 --output-on-failure -R \
  'test_matmul_epilogue|test_ops|test_accuracy|test_cuda_numerics|test_cuda_half_rounding|test_numpy_types' \
  > $W/logs/tests.txt 2>&1
stage tests $?
LAZYFUSE_POOL=none timeout 60 compute-sanitizer --tool memcheck --error-exitcode 1 build/gpu/tests/test_matmul_epilogue \
  --gtest_filter='Gelu.*' > $W/logs/memcheck-gelu.txt 2>&1
stage memcheck-gelu $?
sample compare
LOG_DIR=$W/logs/compare BENCH_COMPARE_HEAD=$1 BENCH_ONLY="bench_types bench_matmul" \
  BENCH_FILTER='GeluByType|Mlp|CopyReference' ROUNDS=3 timeout $(left 340) scripts/gpu-bench-compare.sh \
  > $W/logs/compare.txt 2>&1
r=$?; kill $SMI; stage compare $r
rm -f $W/logs/compare/bench-compare.tar.gz
cp build/bench-compare/head-bench_matmul-r1.json $W/logs/ 2>/dev/null
if ((SECONDS - T0 < 350)); then
  nvcc -O2 -arch=sm_90 docs/results/2026-12-07b/epilogue_rounds.cu -lcublasLt -o /tmp/epilogue_rounds > $W/logs/nvcc.txt 2>&1
  sample rounds; timeout 60 /tmp/epilogue_rounds > $W/logs/epilogue_rounds.txt 2>&1; r=$?; kill $SMI
  stage epilogue_rounds $r
  timeout 40 ncu --clock-control none --csv --metrics $M /tmp/epilogue_rounds once > $W/logs/ncu-epilogue_rounds.csv 2>&1
  stage ncu-epilogue_rounds $?
fi
if ((SECONDS - T0 < 380)); then
  timeout 40 build/gpu/bench/bench_matmul --benchmark_filter='Batched' --benchmark_repetitions=5 \
    --benchmark_report_aggregates_only=true > $W/logs/bench-batched.txt 2>&1
  stage bench-batched $?
  for f in 'BM_Batched128x2048/tf32:0/' 'BM_Batched128x2048_cuBLAS/tf32:0/'; do
    timeout 20 ncu --clock-control none --csv -c 12 --metrics $M build/gpu/bench/bench_matmul --benchmark_filter="$f" \
      > $W/logs/ncu-$(echo $f | tr '/:' '__').csv 2>&1
    stage "ncu $f" $?
  done
fi
if ((SECONDS - T0 < 300)); then
  timeout $(left 400) python3 bench/peers/run_matmul_peers.py --systems torch_compile,jax --timeout 35 \
    --workloads mlp-gelu-bf16,mlp-gelu-tf32 --lazyfuse-json build/bench-compare/head-bench_matmul-r1.json \
    --out-md $W/logs/matmul-peers.md --out-json $W/logs/matmul-peers.json > $W/logs/peers.txt 2>&1
  stage peers $?
fi
cat $W/logs/gpu.txt $W/logs/times.txt; grep -E "tests passed|tests failed|ERROR SUMMARY" $W/logs/tests.txt $W/logs/memcheck-gelu.txt
cat $W/logs/compare/compare.md 2>/dev/null | tail -16; cat $W/logs/epilogue_rounds.txt 2>/dev/null
grep median $W/logs/bench-batched.txt 2>/dev/null | cut -c1-110; cat $W/logs/matmul-peers.md 2>/dev/null
for f in $W/logs/ncu-*.csv; do echo "== $f"; python3 scripts/ncu_kernels.py $f 2>&1 | cut -c1-200; done
