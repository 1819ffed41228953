#!/usr/bin/env bash
# Session 27's second call, on the machine run1.sh warmed (its build/gpu): the whole suite with
# LAZYFUSE_TEST_REQUIRE_GPU=1 (scripts/gpu-check.sh test, 14 at once), then bench_host (the host costs of
# recording and of a plan-cache hit on the GPU machine's host, with its calibration rows), bench_compile's
# first calls of the 1,000-step loop (from the disk cache; cold, with the render path) and bench_layout.
#   device: docs/results/2026-12-05h/run2.sh <commit>                (OUT: the device tool's folder)
cd "$(dirname "$0")/../../.."
export PATH=/usr/local/cuda/bin:$PATH
O=${OUT:-/tmp/out}; mkdir -p $O/logs
T0=$SECONDS
cmake --build build/gpu -j 16 --target bench_host bench_layout bench_compile > $O/logs/build-bench.txt 2>&1
B="--benchmark_repetitions=5 --benchmark_report_aggregates_only=true"
timeout 60 build/gpu/bench/bench_host --benchmark_filter='Record|Signature|EvalTimeLoop|Lower|Host' $B \
  > $O/logs/bench_host.txt 2>&1
timeout 60 build/gpu/bench/bench_compile --benchmark_filter='(CompileDiskHit|NvrtcCold)/kind:2' $B \
  > $O/logs/bench_compile.txt 2>&1
timeout 60 build/gpu/bench/bench_layout $B > $O/logs/bench_layout.txt 2>&1
echo "bench rc $? $((SECONDS-T0)) s" >> $O/logs/times.txt
GPU_CHECK_BUDGET_S=$((585 - SECONDS + T0)) CTEST_JOBS=14 LOG_DIR=$O/check GPU_CHECK_COMMIT=$1 \
  scripts/gpu-check.sh test > $O/logs/check.txt 2>&1
echo "check rc $? $((SECONDS-T0)) s" >> $O/logs/times.txt
mv $O/check/* $O/logs/ 2>/dev/null; rm -rf $O/check
tar czf $O/logs.tar.gz -C $O logs
cat $O/logs/times.txt; tail -25 $O/logs/check.txt
grep -h median $O/logs/bench_host.txt $O/logs/bench_compile.txt $O/logs/bench_layout.txt | cut -c1-200; rm -rf $O/logs
