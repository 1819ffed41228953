#!/usr/bin/env bash
# Session 17, run 5 (one device call): issue 19's host costs on the H200's host, beside its NVRTC calibration.
# Configure the gpu preset, build bench_host and bench_compile only, then bench_host (5 repetitions) and
# bench_compile's NVRTC-alone rows (BM_NvrtcCold, 5 repetitions).
#   run5.sh   (OUT: the device tool's folder)
cd "$(dirname "$0")/../../.."
export PATH=/usr/local/cuda/bin:$PATH
O=${OUT:-/tmp/out}; mkdir -p $O/logs
T0=$SECONDS
(cmake --preset gpu && cmake --build build/gpu --target bench_host bench_compile) > $O/logs/build.txt 2>&1
echo "build rc $? $((SECONDS-T0)) s" >> $O/logs/times.txt
B="--benchmark_repetitions=5 --benchmark_report_aggregates_only=true"
timeout 90 build/gpu/bench/bench_host $B > $O/logs/bench_host.txt 2>&1
timeout 90 build/gpu/bench/bench_compile $B --benchmark_filter=NvrtcCold > $O/logs/bench_compile.txt 2>&1
echo "bench $((SECONDS-T0)) s" >> $O/logs/times.txt
cat $O/logs/times.txt; grep -h median $O/logs/bench_*.txt | cut -c1-200; tail -3 $O/logs/build.txt
