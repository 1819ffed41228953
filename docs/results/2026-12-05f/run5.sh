#!/usr/bin/env bash
# Session 25, call 5: value divisions with a non-negative dividend over a positive divisor first (codegen/
# CudaPrinter.cpp's lf_floor_divide_by and lf_remainder_by). The gpu build; the tests of value divisions and of the
# numerics policy with LAZYFUSE_TEST_REQUIRE_GPU=1; gensum/ (session 24's generated-sum variants and v6, v7: the new
# helpers, plain and marked likely); bench_compute's BM_GeneratedSum before (.base-src: 116f57d) and after,
# alternately, two rounds.
#   run5.sh <commit>   (OUT: the device tool's folder; .base-src carried)
cd "$(dirname "$0")/../../.."
export PATH=/usr/local/cuda/bin:$PATH
O=${OUT:-/tmp/out}; mkdir -p $O/logs
T0=$SECONDS
(cd .base-src && cmake --preset gpu -DLAZYFUSE_BUILD_TESTS=OFF -DLAZYFUSE_BUILD_EXAMPLES=OFF > /dev/null &&
  cmake --build build/gpu -j 6 --target bench_compute) > $O/logs/build-base.txt 2>&1 &
BASE=$!
(cd docs/results/2026-12-05f/gensum && mkdir -p /tmp/gs && python3 variants.py ../../2026-12-05e/gensum/generated.cu /tmp/gs &&
  nvcc -O3 -arch=sm_90 -std=c++17 -w -I. -o /tmp/gensum main.cu /tmp/gs/gen_v*.cu) > $O/logs/gensum-build.txt 2>&1 &
GPU_CHECK_BUDGET_S=200 LOG_DIR=$O/build GPU_CHECK_COMMIT=$1 scripts/gpu-check.sh build > $O/logs/build.txt 2>&1
echo "build rc $? $((SECONDS-T0)) s" >> $O/logs/times.txt
LAZYFUSE_TEST_REQUIRE_GPU=1 LAZYFUSE_TEST_PYTHON=$(command -v python3) timeout 200 ctest --test-dir build/gpu -j12 \
  --output-on-failure -R "test_value_divisors|test_cuda_numerics|test_repeated_steps" > $O/logs/ctest.txt 2>&1
echo "ctest rc $? $((SECONDS-T0)) s" >> $O/logs/times.txt
wait
echo "base build and gensum $((SECONDS-T0)) s" >> $O/logs/times.txt
timeout 60 /tmp/gensum > $O/logs/gensum.txt 2>&1
B="--benchmark_filter=GeneratedSum --benchmark_repetitions=5 --benchmark_report_aggregates_only=true"
for i in 1 2; do
  for d in .base-src/build/gpu build/gpu; do
    echo "== $d run $i" >> $O/logs/bench_compute.txt
    timeout 60 $d/bench/bench_compute $B >> $O/logs/bench_compute.txt 2>&1
  done
done
echo "bench $((SECONDS-T0)) s" >> $O/logs/times.txt
rm -rf $O/build
tar czf $O/logs.tar.gz -C $O logs
cat $O/logs/times.txt; grep -E "tests passed|\(Failed\)|Timeout|Not Run" $O/logs/ctest.txt | head
cat $O/logs/gensum.txt | tail -12; grep -E "^==|median" $O/logs/bench_compute.txt | cut -c1-150
