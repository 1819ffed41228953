#!/usr/bin/env bash
# Call 1 (session 35): the long buckets' rounding a block a bucket again (3abdf8e) and a graph replay's first kernel
# ahead of the graph on an idle stream (b6feb48). The gpu build; the touched test programs with
# LAZYFUSE_TEST_REQUIRE_GPU=1; memcheck of the graph tests and the scatter-adds; ncu's kernels of one BM_ScatterAdd
# and one BM_ScatterAddSkewed call; jacobi_rounds.cpp (where the Jacobi solver's time goes) against the head and
# the base libraries, alternately; nsys of the solver where nsys exists; before (.bench-base at 77b6d48) and
# after, alternately (3 rounds): scatter-adds, the solver, its step, the replays.
#   device: docs/results/2026-12-06h/run1.sh <commit>        (carry .bench-base; OUT: the device tool's folder)
cd "$(dirname "$0")/../../.."
export PATH=/usr/local/cuda/bin:$PATH
O=${OUT:-/tmp/out}; W=/tmp/run1; rm -rf $W; mkdir -p $O $W/logs; T0=$SECONDS
pack() { tar czf $O/logs.tar.gz -C $W logs; }
stage() { echo "$1 rc $2 $((SECONDS - T0)) s" >> $W/logs/times.txt; pack; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $W/logs/gpu.txt
{ command -v nsys; ls -d /opt/nvidia/nsight-systems*/bin /usr/local/cuda/nsight-systems* 2>/dev/null; } > $W/logs/nsys-where.txt
GPU_CHECK_BUDGET_S=200 LOG_DIR=$W/logs/build GPU_CHECK_COMMIT=$1 scripts/gpu-check.sh build > $W/logs/build.txt 2>&1
stage build $?
LAZYFUSE_TEST_REQUIRE_GPU=1 timeout 120 ctest --test-dir build/gpu -j 14 --output-on-failure -R \
  'test_cuda_graphs|test_plan_cache|test_gather|test_cuda_gather|test_bincount' > $W/logs/tests.txt 2>&1
stage tests $?
LAZYFUSE_POOL=none timeout 60 compute-sanitizer --tool memcheck --error-exitcode 1 build/gpu/tests/test_cuda_graphs \
  > $W/logs/memcheck-graphs.txt 2>&1
stage memcheck-graphs $?
LAZYFUSE_POOL=none timeout 60 compute-sanitizer --tool memcheck --error-exitcode 1 build/gpu/tests/test_cuda_gather \
  --gtest_filter='*ScatterAdd*' > $W/logs/memcheck-scatter.txt 2>&1
stage memcheck-scatter $?
for f in BM_ScatterAdd/ BM_ScatterAddSkewed/; do
  timeout 60 ncu --clock-control none --csv --metrics gpu__time_duration.sum,dram__bytes.sum -c 26 \
    build/gpu/bench/bench_gather --benchmark_filter="$f" > $W/logs/ncu-${f%/}.csv 2> $W/logs/ncu-${f%/}.err
  stage "ncu $f" $?
done
exp() { # libs-root out
  local B=$1/build/gpu
  g++ -std=c++20 -O2 -I include docs/results/2026-12-06h/jacobi_rounds.cpp -o $2 -L$B/api -L$B/runtime -L$B/codegen \
    -L$B/fusion -L$B/graph -llazyfuse -llazyfuse_runtime -llazyfuse_codegen -llazyfuse_fusion -llazyfuse_graph \
    -Wl,-rpath,$B/api:$B/runtime:$B/codegen:$B/fusion:$B/graph
}
exp . $W/jr-head >> $W/logs/exp-build.txt 2>&1
stage exp-build-head $?
timeout 60 $W/jr-head 2048 > $W/logs/jacobi-head-0.txt 2>&1
stage jacobi-head $?
LOG_DIR=$W/logs/compare BENCH_COMPARE_HEAD=$1 BENCH_ONLY="bench_gather bench_loops" \
  BENCH_FILTER='ScatterAdd|CopyReference|Jacobi|StencilStep|ReplayChain' \
  ROUNDS=3 timeout $((470 - SECONDS + T0)) scripts/gpu-bench-compare.sh > $W/logs/compare.txt 2>&1
stage compare $?
exp .bench-base $W/jr-base >> $W/logs/exp-build.txt 2>&1
stage exp-build-base $?
for r in 1 2; do
  timeout 40 $W/jr-base 2048 > $W/logs/jacobi-base-$r.txt 2>&1
  timeout 40 $W/jr-head 2048 > $W/logs/jacobi-head-$r.txt 2>&1
  stage "jacobi round $r" $?
done
NSYS=$(head -n 1 $W/logs/nsys-where.txt)
[[ -d $NSYS ]] && NSYS=$NSYS/nsys
if [[ -n $NSYS && -x $NSYS ]] && ((SECONDS - T0 < 520)); then
  for t in head base; do
    timeout 40 $NSYS profile -t cuda --sample=none --cpuctxsw=none -o $W/jac-$t -f true $W/jr-$t 2048 trace \
      > $W/logs/nsys-$t.txt 2>&1
    timeout 30 $NSYS stats -r cuda_gpu_trace,cuda_api_trace --format csv -o $W/logs/nsys-$t $W/jac-$t.nsys-rep \
      >> $W/logs/nsys-$t.txt 2>&1
    gzip -f $W/logs/nsys-$t*.csv
    stage "nsys $t" $?
  done
fi
cat $W/logs/gpu.txt $W/logs/times.txt; grep -E "tests passed|\(Failed\)" $W/logs/tests.txt
tail -n 2 $W/logs/memcheck-*.txt
for f in $W/logs/ncu-*.csv; do echo "== $(basename $f)"; python3 scripts/ncu_kernels.py $f --first lf_k6dad --count 9 2>&1 | tail -10; done
tail -n 7 $W/logs/jacobi-*.txt
cat $W/logs/compare/compare.md 2>/dev/null | head -20
