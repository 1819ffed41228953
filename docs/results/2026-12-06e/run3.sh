#!/usr/bin/env bash
# Call 3 (one call for all of it, the device being scarce): the read-back experiment (sync_experiment.cu); the gpu
# build; the test programs the change touches with LAZYFUSE_TEST_REQUIRE_GPU=1; before (.bench-base) and after,
# alternately (scripts/gpu-bench-compare.sh, 3 rounds): bincount, unique, the sorts, x[x > 0], the Jacobi solver.
#   device: docs/results/2026-12-06e/run3.sh <commit>        (carry .bench-base; OUT: the device tool's folder)
cd "$(dirname "$0")/../../.."
export PATH=/usr/local/cuda/bin:$PATH
O=${OUT:-/tmp/out}; W=/tmp/run3; rm -rf $W; mkdir -p $O $W/logs; T0=$SECONDS
pack() { tar czf $O/logs.tar.gz -C $W logs; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $W/logs/gpu.txt
nvcc -O3 -std=c++17 -arch=sm_90 docs/results/2026-12-06e/sync_experiment.cu -o /tmp/sync_experiment \
  && timeout 60 /tmp/sync_experiment > $W/logs/sync_experiment.txt 2>&1
echo "experiment rc $? $((SECONDS - T0)) s" >> $W/logs/times.txt; pack
GPU_CHECK_BUDGET_S=200 LOG_DIR=$W/logs/build GPU_CHECK_COMMIT=$1 scripts/gpu-check.sh build > $W/logs/build.txt 2>&1
echo "build rc $? $((SECONDS - T0)) s" >> $W/logs/times.txt; pack
LAZYFUSE_TEST_REQUIRE_GPU=1 timeout 150 ctest --test-dir build/gpu -j 14 --output-on-failure -R \
  'test_bincount|test_cuda_sort|test_sort|test_cuda_gather|test_gather|test_cuda_scan|test_scan|test_cuda_runtime|test_cuda_accelerators|test_codegen_golden|test_cuda_streams' \
  > $W/logs/tests.txt 2>&1
echo "tests rc $? $((SECONDS - T0)) s" >> $W/logs/times.txt; pack
LOG_DIR=$W/logs/compare BENCH_COMPARE_HEAD=$1 BENCH_ONLY="bench_scan bench_gather bench_loops" \
  BENCH_FILTER='Bincount|Unique|Sort|Argsort|MaskSelect|JacobiSolver|StencilStep|CopyReference' ROUNDS=3 \
  timeout $((575 - SECONDS + T0)) scripts/gpu-bench-compare.sh > $W/logs/compare.txt 2>&1
echo "compare rc $? $((SECONDS - T0)) s" >> $W/logs/times.txt; pack
cat $W/logs/gpu.txt $W/logs/times.txt $W/logs/sync_experiment.txt; grep -E "tests passed|tests failed|Failed|\*\*\*" $W/logs/tests.txt | head
cat $W/logs/compare/compare.md 2>/dev/null | head -40; tail -5 $W/logs/compare.txt
