#!/usr/bin/env bash
# Session 31's seventh call: after two refactors (the scan tile's warp Kogge-Stone printed through lf_scan_warp; the
# tiled transpose's axis slots found in one place), the gpu build, the scan, schedule and golden tests with
# LAZYFUSE_TEST_REQUIRE_GPU=1, and bench_scan's cumsum rows once.
#   device: docs/results/2026-12-06d/run7.sh <commit>                (OUT: the device tool's folder)
cd "$(dirname "$0")/../../.."
export PATH=/usr/local/cuda/bin:$PATH
O=${OUT:-/tmp/out}; W=/tmp/run7; rm -rf $W; mkdir -p $O $W/logs; T0=$SECONDS
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $W/logs/gpu.txt
GPU_CHECK_BUDGET_S=150 LOG_DIR=$W/logs/build GPU_CHECK_COMMIT=$1 scripts/gpu-check.sh build > $W/logs/build.txt 2>&1
echo "build rc $? $((SECONDS - T0)) s" >> $W/logs/times.txt
for t in test_cuda_scan test_scan test_cuda_schedule test_schedule test_codegen_golden; do
  LAZYFUSE_TEST_REQUIRE_GPU=1 timeout 60 build/gpu/tests/$t > $W/logs/$t.txt 2>&1
  echo "$t rc $? $((SECONDS - T0)) s $(grep -E '^\[  (PASSED|FAILED) ' $W/logs/$t.txt | tr '\n' ' ')" >> $W/logs/times.txt
done
timeout 30 build/gpu/bench/bench_scan --benchmark_filter='Cumsum|CopyReference' > $W/logs/bench_scan.txt 2>&1
echo "bench rc $? $((SECONDS - T0)) s" >> $W/logs/times.txt
tar czf $O/logs.tar.gz -C $W logs
cat $W/logs/gpu.txt $W/logs/times.txt; grep -E "^BM_" $W/logs/bench_scan.txt | cut -c1-150
