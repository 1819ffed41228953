#!/usr/bin/env bash
# Session experiment (not committed): half sums with variants A (main), B (splits = resident grid), C (B + streaming loads).
set -u
OUTD=${OUT:-/tmp/out}; mkdir -p $OUTD/exp
cmake --preset gpu > $OUTD/exp/configure.log 2>&1 || { tail -20 $OUTD/exp/configure.log; exit 2; }
run() {
  local v=$1
  ninja -C build/gpu bench_types bench_reductions > $OUTD/exp/build-$v.log 2>&1 || { tail -30 $OUTD/exp/build-$v.log; return 2; }
  build/gpu/bench/bench_types --benchmark_filter='Sum(F16|BF16)/eager:0|Copy' --benchmark_repetitions=5 --benchmark_report_aggregates_only=true --benchmark_format=json --benchmark_out=$OUTD/exp/types-$v.json > /dev/null 2>&1
  build/gpu/bench/bench_reductions --benchmark_filter='SumSq/eager:0|PlainSum/cub:0|Copy' --benchmark_repetitions=5 --benchmark_report_aggregates_only=true --benchmark_format=json --benchmark_out=$OUTD/exp/red-$v.json > /dev/null 2>&1
  echo "variant $v done"
}
run A1
git apply xpatch/B.patch && run B1 && git apply -R xpatch/B.patch
git apply xpatch/C.patch && run C1 && git apply -R xpatch/C.patch
run A2
git apply xpatch/C.patch && run C2 && git apply -R xpatch/C.patch
git apply xpatch/B.patch && run B2 && git apply -R xpatch/B.patch
cd $OUTD && tar czf exp.tar.gz exp && rm -rf exp
