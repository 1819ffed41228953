#!/usr/bin/env bash
# The wide tiles on the GPU: the replica's variants on this machine (the square tiles' baseline, permute_experiment.cu),
# the library's layout benchmarks, then the tiles' tests with LAZYFUSE_TEST_REQUIRE_GPU=1 and the random graphs.
#   device: docs/results/2026-12-06c/run-wide.sh <commit>        (OUT: the device tool's folder)
cd "$(dirname "$0")/../../.."
export PATH=/usr/local/cuda/bin:$PATH
O=${OUT:-/tmp/out}; mkdir -p $O/logs; T0=$SECONDS
pack() { tar czf $O/logs.tar.gz -C $O logs; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/logs/gpu.txt
(nvcc -O3 -std=c++17 -arch=sm_90 docs/results/2026-12-06c/permute_experiment.cu -o /tmp/pe > $O/logs/pe-build.txt 2>&1) &
cmake --preset gpu -DLAZYFUSE_BUILD_BENCH=ON > $O/logs/build.txt 2>&1 && cmake --build build/gpu -j16 --target \
  bench_layout test_cuda_schedule test_schedule test_codegen_golden test_random_graphs >> $O/logs/build.txt 2>&1
echo "build rc $? $((SECONDS - T0)) s" >> $O/logs/times.txt; wait; pack
timeout 40 /tmp/pe > $O/logs/replica.txt 2>&1; pack
timeout 60 build/gpu/bench/bench_layout --benchmark_filter='Permute|CopyReference|AddTransposed|AddOwn' \
  --benchmark_repetitions=3 --benchmark_report_aggregates_only=true > $O/logs/bench_layout.txt 2>&1
echo "bench rc $? $((SECONDS - T0)) s" >> $O/logs/times.txt; pack
export LAZYFUSE_TEST_REQUIRE_GPU=1 LAZYFUSE_TEST_PYTHON=$(command -v python3)
for t in test_cuda_schedule test_schedule test_codegen_golden; do
  timeout 60 build/gpu/tests/$t > $O/logs/$t.txt 2>&1; echo "$t rc $? $((SECONDS - T0)) s" >> $O/logs/times.txt
done; pack
timeout $((300 - SECONDS + T0)) build/gpu/tests/test_random_graphs --gtest_filter='*Differential*' \
  > $O/logs/random_graphs.txt 2>&1; echo "random graphs rc $? $((SECONDS - T0)) s" >> $O/logs/times.txt; pack
cat $O/logs/times.txt; cat $O/logs/replica.txt; grep -E "median" $O/logs/bench_layout.txt | cut -c1-190
grep -hE "PASSED|FAILED|SKIPPED" $O/logs/test_*.txt $O/logs/random_graphs.txt | head -20
