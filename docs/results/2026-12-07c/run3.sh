#!/usr/bin/env bash
# Call 3 (session 38, issue 17): the one-pass selection in the experiment's fastest form (256 x 8 vectors, tiles by
# blockIdx.x, status words tagged with the launch's epoch: Executor::tagged_tickets). The gpu build; the touched test
# programs with LAZYFUSE_TEST_REQUIRE_GPU=1; memcheck and racecheck of the mask selections; before (.bench-base:
# CUB's select) and after, alternately (5 rounds): x[x > 0] and the copy reference, with the split sums and scans
# (whose tickets moved into the same class); ncu of one call on each side; bench_gather whole with the gather peers.
#   device: docs/results/2026-12-07c/run3.sh <commit>        (carry .bench-base; OUT: the device tool's folder)
cd "$(dirname "$0")/../../.."
export PATH=/usr/local/cuda/bin:$PATH
O=${OUT:-/tmp/out}; W=/tmp/run3; rm -rf $W; mkdir -p $O $W/logs; T0=$SECONDS
pack() { tar czf $O/logs.tar.gz -C $W logs; }
stage() { echo "$1 rc $2 $((SECONDS - T0)) s" >> $W/logs/times.txt; pack; }
left() { echo $(($1 - SECONDS + T0)); } # seconds until the call's own deadline $1
M='gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,launch__registers_per_thread,launch__grid_size,launch__block_size,dram__throughput.avg.pct_of_peak_sustained_elapsed'
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader > $W/logs/gpu.txt
GPU_CHECK_BUDGET_S=200 LOG_DIR=$W/logs/build GPU_CHECK_COMMIT=$1 scripts/gpu-check.sh build > $W/logs/build.txt 2>&1
stage build $?
LAZYFUSE_TEST_REQUIRE_GPU=1 timeout 150 ctest --test-dir build/gpu -j 14 --output-on-failure -R \
  'test_cuda_gather|test_gather|test_bincount|test_cuda_sort|test_cuda_runtime|test_cuda_streams|test_cuda_graphs|test_scan|test_cuda_scan' \
  > $W/logs/tests.txt 2>&1
stage tests $?
LAZYFUSE_POOL=none timeout 90 compute-sanitizer --tool memcheck --error-exitcode 1 build/gpu/tests/test_cuda_gather \
  --gtest_filter='CudaMaskSelection.*:CudaTaggedTickets.*-*MoreThanTwo*' > $W/logs/memcheck-select.txt 2>&1
stage memcheck-select $?
timeout 60 compute-sanitizer --tool racecheck --error-exitcode 1 build/gpu/tests/test_cuda_gather \
  --gtest_filter='CudaMaskSelection.KernelCounts' > $W/logs/racecheck-select.txt 2>&1
stage racecheck-select $?
LOG_DIR=$W/logs/compare BENCH_COMPARE_HEAD=$1 BENCH_ONLY="bench_gather bench_scan bench_reductions" \
  BENCH_FILTER='MaskSelect|CopyReference|Cumsum|SumSq|PlainSum|ColumnSum|Bincount' \
  ROUNDS=5 timeout $(left 400) scripts/gpu-bench-compare.sh > $W/logs/compare.txt 2>&1
stage compare $?
rm -f $W/logs/compare/bench-compare.tar.gz
for side in build .bench-base/build; do
  timeout 25 ncu --clock-control none --csv -c 20 --metrics $M $side/gpu/bench/bench_gather \
    --benchmark_filter='BM_MaskSelect/' > $W/logs/ncu-$(echo $side | tr '/.' '__').csv 2>&1
  stage "ncu $side" $?
done
if ((SECONDS - T0 < 440)); then
  timeout 40 build/gpu/bench/bench_gather --benchmark_repetitions=5 --benchmark_report_aggregates_only=true \
    --benchmark_out=$W/logs/bench_gather.json > $W/logs/bench_gather.txt 2>&1
  stage bench_gather $?
  PYTHONUNBUFFERED=1 timeout $(left 560) python3 bench/peers/run_gather_peers.py --systems cupy,torch,torch_deterministic \
    --out-md $W/logs/gather-peers.md --out-json $W/logs/gather-peers.json --lazyfuse-json $W/logs/bench_gather.json \
    > $W/logs/gather-peers.txt 2>&1
  stage peers $?
fi
cat $W/logs/gpu.txt $W/logs/times.txt; grep -E "tests passed|tests failed|ERROR SUMMARY|RACECHECK SUMMARY" \
  $W/logs/tests.txt $W/logs/memcheck-select.txt $W/logs/racecheck-select.txt
grep -E "\*\*\*Failed|\*\*\*Timeout" $W/logs/tests.txt | head
cat $W/logs/compare/compare.md 2>/dev/null | tail -14; grep median $W/logs/bench_gather.txt 2>/dev/null | cut -c1-120
cat $W/logs/gather-peers.md 2>/dev/null | head -14
for f in $W/logs/ncu-*.csv; do echo "== $f"; python3 scripts/ncu_kernels.py $f 2>&1 | tail -3 | cut -c1-200; done
