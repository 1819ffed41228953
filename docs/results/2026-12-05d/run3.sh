#!/usr/bin/env bash
# Session 23, run 3 (one device call, after docs/results/2026-12-05/run1.sh on the same machine, whose build/gpu it
# uses): the host costs of recording, of a plan-cache hit and of a first call before and after sessions 22-23 on the
# device's host. bench_host and bench_compile are built from .base-src (the source at c833f2c, before session 22;
# .git does not travel, so it is prepared here and carried:
#   echo /.base-src/ >> .git/info/exclude; rm -rf .base-src; mkdir .base-src; git archive c833f2c | tar -x -C .base-src
# and the call names .base-src in carry). Then, alternately, three times each: bench_host (5 repetitions, medians),
# and bench_compile's time loop (kind 2): a first call from the disk cache (each a fresh process) and the render
# path with NVRTC (BM_NvrtcCold: partition, lower, print, then NVRTC, the host calibration).
# Last, bench_gather's at().add figures of head.
#   run3.sh   (OUT: the device tool's folder)
cd "$(dirname "$0")/../../.."
export PATH=/usr/local/cuda/bin:$PATH
O=${OUT:-/tmp/out}; mkdir -p $O/logs
T0=$SECONDS
(cd .base-src && cmake --preset gpu -DLAZYFUSE_BUILD_TESTS=OFF &&
  cmake --build build/gpu -j 16 --target bench_host bench_compile) > $O/logs/build-base.txt 2>&1
echo "base build rc $? $((SECONDS-T0)) s" >> $O/logs/times.txt
cmake --build build/gpu -j 16 --target bench_host bench_compile > $O/logs/build-head.txt 2>&1
echo "head build rc $? $((SECONDS-T0)) s" >> $O/logs/times.txt
B="--benchmark_repetitions=5 --benchmark_report_aggregates_only=true"
H="--benchmark_filter=Record|Signature|EvalTimeLoop|Host $B"
C="--benchmark_filter=(CompileDiskHit|NvrtcCold)/kind:2 --benchmark_repetitions=5 --benchmark_report_aggregates_only=true"
for i in 1 2 3; do
  for d in .base-src/build/gpu build/gpu; do
    echo "== $d run $i" | tee -a $O/logs/bench_host.txt >> $O/logs/bench_compile.txt
    timeout 90 $d/bench/bench_host $H >> $O/logs/bench_host.txt 2>&1
    timeout 90 $d/bench/bench_compile $C >> $O/logs/bench_compile.txt 2>&1
  done
  echo "round $i $((SECONDS-T0)) s" >> $O/logs/times.txt
done
# at().add on the device (issue 17), head only.
timeout 120 build/gpu/bench/bench_gather --benchmark_filter=ScatterAdd $B > $O/logs/bench_gather.txt 2>&1
echo "bench_gather rc $? $((SECONDS-T0)) s" >> $O/logs/times.txt
tar czf $O/logs.tar.gz -C $O logs
cat $O/logs/times.txt; grep -E "^==|median" $O/logs/bench_host.txt | cut -c1-100,120-200
grep -E "^==|median" $O/logs/bench_compile.txt | cut -c1-60,100-400; grep median $O/logs/bench_gather.txt | cut -c1-200
