#!/usr/bin/env bash
# Session 12, run 2: variants of the tiled path (LF_EXP_TILE=64: 64 x 64 tiles; LF_EXP_PREFETCH=1: the in-place
# loads read before the barrier; LF_EXP_ORDER=1: the planes of a 3-d output innermost in the block order), each
# checked by the transposed-operand GPU test, then timed on bench_layout (median of 3).
cd "$(dirname "$0")/../../.."
export PATH=/usr/local/cuda/bin:$PATH
O=${OUT:-/tmp/out}/logs; mkdir -p $O
T0=$SECONDS
{ cmake --preset gpu > /dev/null && cmake --build build/gpu -j16 2>&1 | tail -3; } > $O/build.txt 2>&1
echo "build $((SECONDS-T0)) s" >> $O/build.txt
B="--benchmark_repetitions=3 --benchmark_report_aggregates_only=true"
F='--benchmark_filter=CopyRef|AddTransposed|AddOwn|Permute/d0:256/d1:1024/d2:1024/axes:21/|axes:210/'
for v in "" "LF_EXP_PREFETCH=1" "LF_EXP_TILE=64" "LF_EXP_TILE=64 LF_EXP_PREFETCH=1" "LF_EXP_ORDER=1" "LF_EXP_ORDER=1 LF_EXP_PREFETCH=1"; do
  echo "== [$v]" >> $O/tests.txt
  env $v LAZYFUSE_TEST_REQUIRE_GPU=1 timeout 60 build/gpu/tests/test_cuda_schedule --gtest_filter='*Transposed*' 2>&1 | tail -3 >> $O/tests.txt
  echo "== [$v]" >> $O/bench.txt
  env $v timeout 150 build/gpu/bench/bench_layout $B "$F" 2>&1 | grep -E "median|ERROR|error" >> $O/bench.txt
  echo "[$v] $((SECONDS-T0)) s" >> $O/build.txt
done
tar czf ${OUT:-/tmp/out}/run2.tgz -C $O .
cat $O/build.txt $O/tests.txt $O/bench.txt
