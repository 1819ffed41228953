#!/usr/bin/env bash
# Session 23, one device call when little device time is left (about 420 s of command time): the gpu build at HEAD
# and the tests that run the code sessions 22-23 changed on the device path (gathers, masks and at().add, counts,
# the plan cache, fusion, time loops, the random differential graphs) with LAZYFUSE_TEST_REQUIRE_GPU=1; then one
# round of bench_host and of bench_compile's time-loop first calls before (c833f2c, .base-src, carried as run3.sh says) and after, and bench_gather's at().add.
#   run-lean.sh <commit>   (OUT: the device tool's folder)
cd "$(dirname "$0")/../../.."
export PATH=/usr/local/cuda/bin:$PATH
O=${OUT:-/tmp/out}; mkdir -p $O/logs
T0=$SECONDS
GPU_CHECK_BUDGET_S=170 LOG_DIR=$O/build GPU_CHECK_COMMIT=$1 scripts/gpu-check.sh build > $O/logs/build.txt 2>&1
echo "build $((SECONDS-T0)) s" >> $O/logs/times.txt
(cd .base-src && cmake --preset gpu -DLAZYFUSE_BUILD_TESTS=OFF > /dev/null &&
  cmake --build build/gpu -j 8 --target bench_host bench_compile) > $O/logs/build-base.txt 2>&1 &
BASE=$!
LAZYFUSE_TEST_REQUIRE_GPU=1 LAZYFUSE_TEST_PYTHON=$(command -v python3) timeout 200 ctest --test-dir build/gpu -j12 \
  --output-on-failure -R "test_cuda_|test_gather|test_bincount|test_random_graphs|test_plan_cache|test_fusion|test_loops|test_graph" \
  > $O/logs/ctest.txt 2>&1
echo "ctest rc $? $((SECONDS-T0)) s" >> $O/logs/times.txt
wait $BASE; echo "base build rc $? $((SECONDS-T0)) s" >> $O/logs/times.txt
cmake --build build/gpu -j 16 --target bench_host bench_compile bench_gather > $O/logs/build-head.txt 2>&1
B="--benchmark_repetitions=5 --benchmark_report_aggregates_only=true"
H="--benchmark_filter=Record|Signature|EvalTimeLoop|Host $B"
C="--benchmark_filter=(CompileDiskHit|NvrtcCold)/kind:2 $B"
for d in .base-src/build/gpu build/gpu; do
  echo "== $d" | tee -a $O/logs/bench_host.txt >> $O/logs/bench_compile.txt
  timeout 60 $d/bench/bench_host $H >> $O/logs/bench_host.txt 2>&1
  timeout 60 $d/bench/bench_compile $C >> $O/logs/bench_compile.txt 2>&1
done
echo "benches $((SECONDS-T0)) s" >> $O/logs/times.txt
timeout 60 build/gpu/bench/bench_gather --benchmark_filter=ScatterAdd $B > $O/logs/bench_gather.txt 2>&1
echo "bench_gather rc $? $((SECONDS-T0)) s" >> $O/logs/times.txt
rm -rf $O/build
tar czf $O/logs.tar.gz -C $O logs
cat $O/logs/times.txt; grep -E "tests passed|\(Failed\)|Timeout|Not Run" $O/logs/ctest.txt | head -20
grep -E "^==|median" $O/logs/bench_host.txt | cut -c1-100,120-200
grep -E "^==|median" $O/logs/bench_compile.txt | cut -c1-60,100-400; grep median $O/logs/bench_gather.txt | cut -c1-200
