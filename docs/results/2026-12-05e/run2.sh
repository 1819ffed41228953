#!/usr/bin/env bash
# Session 24, run 2 (one device call, after run1.sh on the same machine, whose build/gpu it uses): the host costs of
# recording, of a plan-cache hit and of a first call before (c833f2c, .base-src carried; docs/results/2026-12-05d/
# run3.sh says how it is prepared) and after sessions 22-24, alternately, two rounds of bench_host (5 repetitions,
# medians) and of bench_compile's time loop (kind 2: a first call from the disk cache in a fresh process, and the
# render path with NVRTC, the host calibration); one more bench_host of head with glibc's malloc told never to trim
# nor to map (does the allocator's traffic with the system explain the host's slowness?); then bench_gather (the
# gathers, x[x > 0] and at().add with the fixed-point count in shared memory), bench_loops and bench_layout.
#   run2.sh   (OUT: the device tool's folder)
cd "$(dirname "$0")/../../.."
export PATH=/usr/local/cuda/bin:$PATH
O=${OUT:-/tmp/out}; mkdir -p $O/logs
T0=$SECONDS
(cd .base-src && cmake --preset gpu -DLAZYFUSE_BUILD_TESTS=OFF > /dev/null &&
  cmake --build build/gpu -j 8 --target bench_host bench_compile) > $O/logs/build-base.txt 2>&1 &
BASE=$!
cmake --build build/gpu -j 8 --target bench_host bench_compile bench_gather bench_loops bench_layout \
  > $O/logs/build-head.txt 2>&1
wait $BASE; echo "base build rc $? $((SECONDS-T0)) s" >> $O/logs/times.txt
B="--benchmark_repetitions=5 --benchmark_report_aggregates_only=true"
H="--benchmark_filter=Record|Signature|EvalTimeLoop|Lower|Host $B"
C="--benchmark_filter=(CompileDiskHit|NvrtcCold)/kind:2 $B"
for i in 1 2; do
  for d in .base-src/build/gpu build/gpu; do
    echo "== $d run $i" | tee -a $O/logs/bench_host.txt >> $O/logs/bench_compile.txt
    timeout 80 $d/bench/bench_host $H >> $O/logs/bench_host.txt 2>&1
    timeout 80 $d/bench/bench_compile $C >> $O/logs/bench_compile.txt 2>&1
  done
  echo "round $i $((SECONDS-T0)) s" >> $O/logs/times.txt
done
echo "== build/gpu, GLIBC_TUNABLES no trim, no mmap" >> $O/logs/bench_host.txt
GLIBC_TUNABLES=glibc.malloc.trim_threshold=4294967295:glibc.malloc.mmap_threshold=4294967295:glibc.malloc.top_pad=268435456 \
  timeout 80 build/gpu/bench/bench_host $H >> $O/logs/bench_host.txt 2>&1
echo "tunables $((SECONDS-T0)) s" >> $O/logs/times.txt
for b in bench_gather bench_loops bench_layout; do
  timeout 90 build/gpu/bench/$b $B --benchmark_out=$O/$b.json --benchmark_out_format=json > $O/logs/$b.txt 2>&1
  echo "$b rc $? $((SECONDS-T0)) s" >> $O/logs/times.txt
done
tar czf $O/logs.tar.gz -C $O logs
cat $O/logs/times.txt; grep -E "^==|median" $O/logs/bench_host.txt | cut -c1-100,120-200
grep -E "^==|median" $O/logs/bench_compile.txt | cut -c1-60,100-400
grep -h median $O/logs/bench_gather.txt $O/logs/bench_loops.txt $O/logs/bench_layout.txt | cut -c1-200
