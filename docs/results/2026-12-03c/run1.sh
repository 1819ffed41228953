#!/usr/bin/env bash
# Experiment 1 (session 11): scan fold variants, half GELU, batched GEMM.
cd "$(dirname "$0")/.."
export PATH=/usr/local/cuda/bin:$PATH
O=${OUT:-/tmp/out}/logs; mkdir -p $O
T0=$SECONDS
{ cmake --preset gpu > /dev/null && cmake --build build/gpu -j16 2>&1 | tail -3; } > $O/build.txt 2>&1
echo "build $((SECONDS-T0)) s" >> $O/build.txt
B="--benchmark_repetitions=3 --benchmark_report_aggregates_only=true"
for v in "" "LF_EXP_STASH=1" "LF_EXP_PIPE=1" "LF_EXP_PIPE=1 LF_EXP_STASH=1"; do
  echo "== [$v]" >> $O/scan.txt
  env $v timeout 120 build/gpu/bench/bench_scan --benchmark_filter='Cumsum|CopyReference' $B >> $O/scan.txt 2>&1
done
for v in "" "LF_EXP_PIPE=1 LF_EXP_STASH=1"; do
  echo "== [$v]" >> $O/scantest.txt
  env $v LAZYFUSE_TEST_REQUIRE_GPU=1 timeout 120 build/gpu/tests/test_cuda_scan 2>&1 | tail -5 >> $O/scantest.txt
  env $v timeout 120 build/gpu/tests/test_scan 2>&1 | tail -3 >> $O/scantest.txt
done
timeout 120 build/gpu/bench/bench_types --benchmark_filter='Gelu|Copy' $B > $O/gelu.txt 2>&1
timeout 180 build/gpu/bench/bench_matmul --benchmark_filter='MlpGelu|MlpGemm|Batched' $B > $O/matmul.txt 2>&1
nvcc -O2 -arch=sm_90 -std=c++17 exp/batched.cu -o /tmp/batched -lcublas -lcublasLt > $O/batched.txt 2>&1 && /tmp/batched >> $O/batched.txt 2>&1
LAZYFUSE_TEST_REQUIRE_GPU=1 timeout 120 build/gpu/tests/test_matmul_epilogue --gtest_filter='Gelu.*' 2>&1 | tail -5 > $O/gelutest.txt
echo "total $((SECONDS-T0)) s" >> $O/build.txt
tar czf ${OUT:-/tmp/out}/exp1.tgz -C $O .
cat $O/build.txt
