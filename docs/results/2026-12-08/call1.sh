#!/usr/bin/env bash
# Session 43's device call 1: build (gpu-check), the count and gather tests with LAZYFUSE_TEST_REQUIRE_GPU=1 and
# under memcheck (the bucketed scatter-add's launch setup from the per-device caches, 2d29aa7), bench_gather's
# scatter-add rows, then the ziggurat experiment for issue 16's normal (docs/results/2026-12-07g/ziggurat/).
# On an H200 the sweep left for one (docs/results/2026-12-07f/sweep.sh, issues 17-19) runs instead; the rest in a
# second call with SKIP_SWEEP=1.
#   device: docs/results/2026-12-08/call1.sh <commit>        (OUT: the device tool's folder)
cd "$(dirname "$0")/../../.."
export PATH=/usr/local/cuda/bin:$PATH
O=${OUT:-/tmp/out}; W=/tmp/call1; rm -rf $W; mkdir -p $O $W/logs; T0=$SECONDS
pack() { tar czf $O/call1.tar.gz -C $W logs; }
stage() { echo "$1 rc $2 $((SECONDS - T0)) s" >> $W/logs/times.txt; pack; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader | tee $W/logs/gpu.txt
if grep -q H200 $W/logs/gpu.txt && [ -z "${SKIP_SWEEP:-}" ]; then
  OUT=$W/logs/sweep timeout 590 docs/results/2026-12-07f/sweep.sh "$1" > $W/logs/sweep.txt 2>&1
  stage sweep $?
  cp $W/logs/sweep/logs.tar.gz $O/sweep.tar.gz 2>/dev/null
  exit 0
fi
GPU_CHECK_BUDGET_S=200 LOG_DIR=$W/logs/build GPU_CHECK_COMMIT=$1 scripts/gpu-check.sh build > $W/logs/build.txt 2>&1
stage build $?
export LAZYFUSE_TEST_PYTHON=$(command -v python3)
LAZYFUSE_TEST_REQUIRE_GPU=1 timeout 150 ctest --test-dir build/gpu -j 8 --output-on-failure \
  -R 'bincount|gather' > $W/logs/ctest.txt 2>&1
stage ctest $?
for t in test_bincount test_cuda_gather; do
  LAZYFUSE_POOL=none timeout 120 compute-sanitizer --tool memcheck --error-exitcode 1 build/gpu/tests/$t \
    > $W/logs/memcheck-$t.txt 2>&1
  stage memcheck-$t $?
done
timeout 90 build/gpu/bench/bench_gather --benchmark_filter='Copy|ScatterAdd' --benchmark_repetitions=5 \
  --benchmark_report_aggregates_only=true > $W/logs/bench_gather.txt 2>&1
stage bench_gather $?
timeout 200 docs/results/2026-12-07g/ziggurat/run.sh $W/logs/ziggurat > $W/logs/ziggurat.txt 2>&1
stage ziggurat $?
cat $W/logs/gpu.txt $W/logs/times.txt
tail -n 4 $W/logs/ctest.txt; grep -h "ERROR SUMMARY" $W/logs/memcheck-*.txt
grep -hE "_median" $W/logs/bench_gather.txt | cut -c1-150
cat $W/logs/ziggurat/exp.txt
