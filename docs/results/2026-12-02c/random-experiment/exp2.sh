#!/usr/bin/env bash
# Session experiment (not committed): random kernels with streaming stores (S) / 4 vectors per thread (U); split
# sums with the resident-grid cap removed (D).
set -u
OUTD=${OUT:-/tmp/out}; mkdir -p $OUTD/exp
cmake --preset gpu > $OUTD/exp/configure.log 2>&1 || { tail -20 $OUTD/exp/configure.log; exit 2; }
ninja -C build/gpu bench_limits > $OUTD/exp/build-limits.log 2>&1
build/gpu/bench/bench_limits --benchmark_filter='WriteOnly|CopyReference' --benchmark_repetitions=5 --benchmark_report_aggregates_only=true --benchmark_format=json --benchmark_out=$OUTD/exp/limits.json > /dev/null 2>&1
run() {
  local v=$1
  ninja -C build/gpu bench_random bench_types bench_reductions > $OUTD/exp/build-$v.log 2>&1 || { tail -30 $OUTD/exp/build-$v.log; return 2; }
  build/gpu/bench/bench_random --benchmark_repetitions=5 --benchmark_report_aggregates_only=true --benchmark_format=json --benchmark_out=$OUTD/exp/random-$v.json > /dev/null 2>&1
  echo "variant $v done"
}
runsum() {
  local v=$1
  ninja -C build/gpu bench_types bench_reductions > $OUTD/exp/build-$v.log 2>&1 || { tail -30 $OUTD/exp/build-$v.log; return 2; }
  build/gpu/bench/bench_types --benchmark_filter='Sum(F16|BF16)/eager:0|Copy' --benchmark_repetitions=5 --benchmark_report_aggregates_only=true --benchmark_format=json --benchmark_out=$OUTD/exp/types-$v.json > /dev/null 2>&1
  build/gpu/bench/bench_reductions --benchmark_filter='SumSq/eager:0|PlainSum/cub:0|Copy' --benchmark_repetitions=5 --benchmark_report_aggregates_only=true --benchmark_format=json --benchmark_out=$OUTD/exp/red-$v.json > /dev/null 2>&1
  echo "sum variant $v done"
}
run R1
git apply xpatch/S.patch && run S1 && git apply -R xpatch/S.patch
git apply xpatch/U.patch && run U1 && git apply -R xpatch/U.patch
git apply xpatch/S.patch && git apply xpatch/U.patch && run SU1 && git apply -R xpatch/U.patch && git apply -R xpatch/S.patch
run R2
runsum C1
git apply xpatch/D.patch && runsum D1 && git apply -R xpatch/D.patch
runsum C2
git apply xpatch/D.patch && runsum D2 && git apply -R xpatch/D.patch
cd $OUTD && tar czf exp2.tar.gz exp && rm -rf exp
