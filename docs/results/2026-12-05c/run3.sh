#!/usr/bin/env bash
# Session 22, run 3 (one device call, after docs/results/2026-12-05/run1.sh and run2.sh on the same machine): the
# host costs of recording and of a plan-cache hit before and after session 22 on the H200's host. bench_host is
# built from .base-src (the source at c833f2c: before the reference count inside the node, the node's signature
# header and the temporary operands taken over; .git does not travel, so it is prepared here and carried:
#   echo /.base-src/ >> .git/info/exclude; rm -rf .base-src; mkdir .base-src; git archive c833f2c | tar -x -C .base-src
# and the call names .base-src in carry), then the two programs run alternately, three times each, 5 repetitions and
# medians per run; the NVRTC calibration of the same host is bench_compile's.
#   run3.sh   (OUT: the device tool's folder)
cd "$(dirname "$0")/../../.."
export PATH=/usr/local/cuda/bin:$PATH
O=${OUT:-/tmp/out}; mkdir -p $O/logs
T0=$SECONDS
(cd .base-src && cmake --preset gpu -DLAZYFUSE_BUILD_TESTS=OFF && cmake --build build/gpu -j 16 --target bench_host) \
  > $O/logs/build-base.txt 2>&1
echo "base build rc $? $((SECONDS-T0)) s" >> $O/logs/times.txt
B="--benchmark_repetitions=5 --benchmark_report_aggregates_only=true"
for i in 1 2 3; do
  for d in .base-src/build/gpu build/gpu; do
    echo "== $d run $i" >> $O/logs/bench_host.txt
    timeout 90 $d/bench/bench_host $B >> $O/logs/bench_host.txt 2>&1
  done
done
echo "bench_host rc $? $((SECONDS-T0)) s" >> $O/logs/times.txt
timeout 120 build/gpu/bench/bench_compile --benchmark_filter=NvrtcCold $B > $O/logs/bench_compile.txt 2>&1
echo "bench_compile rc $? $((SECONDS-T0)) s" >> $O/logs/times.txt
tar czf $O/logs.tar.gz -C $O logs
cat $O/logs/times.txt; grep -E "^==|median" $O/logs/bench_host.txt | cut -c1-100,120-200; grep median $O/logs/bench_compile.txt
