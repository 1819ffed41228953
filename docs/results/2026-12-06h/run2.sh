#!/usr/bin/env bash
# Call 2 (session 35): jacobi_rounds.cpp against the head's libraries (a graph replay's first kernel ahead of the
# graph on an idle stream) and the base's (77b6d48), alternately, 5 rounds; then bench_loops' solver and its step,
# 5 repetitions a side, alternately twice. Call 1's link of the experiment failed (the gpu preset's libraries are
# static): it is linked as bench_loops is here.
#   device: docs/results/2026-12-06h/run2.sh <commit>        (carry .bench-base; OUT: the device tool's folder)
cd "$(dirname "$0")/../../.."
export PATH=/usr/local/cuda/bin:$PATH
O=${OUT:-/tmp/out}; W=/tmp/run2; rm -rf $W; mkdir -p $O $W/logs; T0=$SECONDS
pack() { tar czf $O/logs.tar.gz -C $W logs; }
stage() { echo "$1 rc $2 $((SECONDS - T0)) s" >> $W/logs/times.txt; pack; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $W/logs/gpu.txt
build() { # source-root name
  { cmake --preset gpu -S $1 -DLAZYFUSE_BUILD_BENCH=ON && cmake --build $1/build/gpu -j"$(nproc)" --target bench_loops; } \
    > $W/logs/build-$2.txt 2>&1
}
exp() { # source-root out: the experiment linked as bench_loops is (the gpu preset's static libraries and their deps)
  local B=$1/build/gpu cmd
  g++ -std=c++20 -O2 -I $1/include -c docs/results/2026-12-06h/jacobi_rounds.cpp -o $2.o || return 1
  cmd=$(cd $B && ninja -t commands bench/bench_loops | tail -n 1) || return 1
  cmd=${cmd//bench\/CMakeFiles\/bench_loops.dir\/bench_loops.cpp.o/$2.o}
  cmd=${cmd/-o bench\/bench_loops/-o $2}
  (cd $B && eval "$cmd")
}
build . head; stage build-head $?
build .bench-base base; stage build-base $?
exp . $W/jr-head > $W/logs/exp-build.txt 2>&1; stage exp-head $?
exp .bench-base $W/jr-base >> $W/logs/exp-build.txt 2>&1; stage exp-base $?
for r in 1 2 3 4 5; do
  if ((r % 2)); then order="base head"; else order="head base"; fi
  for t in $order; do timeout 40 $W/jr-$t 2048 > $W/logs/jacobi-$t-$r.txt 2>&1; done
  stage "jacobi round $r" $?
done
for r in 1 2; do
  for t in head base; do
    root=.; [[ $t == base ]] && root=.bench-base
    timeout 60 $root/build/gpu/bench/bench_loops --benchmark_filter='Jacobi|StencilStep|CopyReference' \
      --benchmark_repetitions=5 --benchmark_report_aggregates_only=true > $W/logs/bench-$t-$r.txt 2>&1
  done
  stage "bench round $r" $?
done
cat $W/logs/gpu.txt $W/logs/times.txt
for f in $W/logs/jacobi-*.txt; do echo "== $(basename $f)"; grep graphs $f | cut -c1-125; done
grep -H median $W/logs/bench-*.txt | sed -E 's/ +/ /g' | cut -c1-140
