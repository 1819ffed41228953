#!/usr/bin/env bash
cd "$(dirname "$0")/.."
export PATH=/usr/local/cuda/bin:$PATH
O=${OUT:-/tmp/out}/r4; mkdir -p $O
T0=$SECONDS
{ cmake --preset gpu > /dev/null && cmake --build build/gpu -j16 --target bench_matmul test_cuda_matmul test_matmul 2>&1 | tail -2; } > $O/build.txt 2>&1
echo "build $((SECONDS-T0))" >> $O/build.txt
timeout 60 build/gpu/bench/bench_matmul --benchmark_filter='Batched' --benchmark_repetitions=5 --benchmark_report_aggregates_only=true > $O/bench.txt 2>&1
LAZYFUSE_TEST_REQUIRE_GPU=1 timeout 100 build/gpu/tests/test_cuda_matmul 2>&1 | tail -4 >> $O/tests.txt
LAZYFUSE_TEST_REQUIRE_GPU=1 timeout 100 build/gpu/tests/test_matmul 2>&1 | tail -4 >> $O/tests.txt
echo "total $((SECONDS-T0))" >> $O/build.txt
grep median $O/bench.txt | awk '{print $1, $2, $3}'; cat $O/tests.txt $O/build.txt
