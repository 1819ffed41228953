#!/usr/bin/env bash
# Call 1 (session 38, issue 17): x[x op s] by lazyfuse's own one-pass kernel (runtime/DeviceSelect.cu) instead of
# cub::DeviceSelect::If. The gpu build; the touched test programs with LAZYFUSE_TEST_REQUIRE_GPU=1; memcheck of the
# mask selections; before (.bench-base: CUB's select) and after, alternately (5 rounds): x[x > 0] and the copy
# reference; ncu of one call on each side; bench_gather whole with the gather peers.
#   device: docs/results/2026-12-07c/run1.sh <commit>        (carry .bench-base; OUT: the device tool's folder)
cd "$(dirname "$0")/../../.."
export PATH=/usr/local/cuda/bin:$PATH
O=${OUT:-/tmp/out}; W=/tmp/run1; rm -rf $W; mkdir -p $O $W/logs; T0=$SECONDS
pack() { tar czf $O/logs.tar.gz -C $W logs; }
stage() { echo "$1 rc $2 $((SECONDS - T0)) s" >> $W/logs/times.txt; pack; }
left() { echo $(($1 - SECONDS + T0)); } # seconds until the call's own deadline $1
M='gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,launch__registers_per_thread,launch__grid_size,launch__block_size,dram__throughput.avg.pct_of_peak_sustained_elapsed'
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader > $W/logs/gpu.txt
GPU_CHECK_BUDGET_S=200 LOG_DIR=$W/logs/build GPU_CHECK_COMMIT=$1 scripts/gpu-check.sh build > $W/logs/build.txt 2>&1
stage build $?
LAZYFUSE_TEST_REQUIRE_GPU=1 timeout 150 ctest --test-dir build/gpu -j 14 --output-on-failure -R \
  'test_cuda_gather|test_gather|test_bincount|test_cuda_sort|test_cuda_runtime|test_cuda_streams|test_cuda_graphs|test_reductions' \
  > $W/logs/tests.txt 2>&1
stage tests $?
LAZYFUSE_POOL=none timeout 90 compute-sanitizer --tool memcheck --error-exitcode 1 build/gpu/tests/test_cuda_gather \
  --gtest_filter='CudaMaskSelection.*-*MoreThanTwo*' > $W/logs/memcheck-select.txt 2>&1
stage memcheck-select $?
timeout 60 compute-sanitizer --tool racecheck --error-exitcode 1 build/gpu/tests/test_cuda_gather \
  --gtest_filter='CudaMaskSelection.KernelCounts' > $W/logs/racecheck-select.txt 2>&1
stage racecheck-select $?
LOG_DIR=$W/logs/compare BENCH_COMPARE_HEAD=$1 BENCH_ONLY="bench_gather" BENCH_FILTER='MaskSelect|CopyReference' \
  ROUNDS=5 timeout $(left 420) scripts/gpu-bench-compare.sh > $W/logs/compare.txt 2>&1
stage compare $?
rm -f $W/logs/compare/bench-compare.tar.gz
for side in build .bench-base/build; do
  timeout 25 ncu --clock-control none --csv -c 20 --metrics $M $side/gpu/bench/bench_gather \
    --benchmark_filter='BM_MaskSelect/' > $W/logs/ncu-$(echo $side | tr '/.' '__').csv 2>&1
  stage "ncu $side" $?
done
if ((SECONDS - T0 < 470)); then
  timeout 40 build/gpu/bench/bench_gather --benchmark_repetitions=5 --benchmark_report_aggregates_only=true \
    --benchmark_out=$W/logs/bench_gather.json > $W/logs/bench_gather.txt 2>&1
  stage bench_gather $?
fi
cat $W/logs/gpu.txt $W/logs/times.txt; grep -E "tests passed|tests failed|ERROR SUMMARY|RACECHECK SUMMARY" \
  $W/logs/tests.txt $W/logs/memcheck-select.txt $W/logs/racecheck-select.txt
cat $W/logs/compare/compare.md 2>/dev/null | tail -8; grep median $W/logs/bench_gather.txt 2>/dev/null | cut -c1-120
for f in $W/logs/ncu-*.csv; do echo "== $f"; python3 scripts/ncu_kernels.py $f 2>&1 | cut -c1-200; done
