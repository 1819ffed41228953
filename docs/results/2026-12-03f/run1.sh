#!/usr/bin/env bash
# Session 14, run 1 (one device call, under 600 s): build the gpu preset; the broadcast and transpose benchmarks of
# bench_layout; the x + row kernel variants (variants/main.cu); then the whole test suite with what is left.
#   run1.sh <commit>   (OUT: the device tool's folder)
cd "$(dirname "$0")/../../.."
export PATH=/usr/local/cuda/bin:$PATH
O=${OUT:-/tmp/out}; X=$O/extra; mkdir -p $X
T0=$SECONDS
GPU_CHECK_BUDGET_S=150 LOG_DIR=$O/build GPU_CHECK_COMMIT=$1 scripts/gpu-check.sh build > $X/build.txt 2>&1
echo "build $((SECONDS-T0)) s" >> $X/times.txt
B="--benchmark_repetitions=5 --benchmark_report_aggregates_only=true"
timeout 100 build/gpu/bench/bench_layout $B \
  --benchmark_filter='BM_(CopyReference|ScaleContiguous|AddRow|MulColumn|LayerNorm|AddOwnTranspose|AddTransposed)/' \
  --benchmark_out=$X/bench_layout.json > $X/bench_layout.txt 2>&1
echo "bench $((SECONDS-T0)) s" >> $X/times.txt
timeout 60 bash docs/results/2026-12-03f/run-variants.sh > $X/variants.txt 2>&1
echo "variants $((SECONDS-T0)) s" >> $X/times.txt
GPU_CHECK_BUDGET_S=$((575 - SECONDS + T0)) LOG_DIR=$O CTEST_JOBS=14 GPU_CHECK_COMMIT=$1 scripts/gpu-check.sh test \
  > $X/test.txt 2>&1
echo "test $((SECONDS-T0)) s" >> $X/times.txt
rm -rf $O/build
tar czf $O/extra.tgz -C $O extra
rm -f $X/build.txt $X/bench_layout.json  # at most 8 files come back: the rest is in extra.tgz
cat $X/times.txt; grep -E "BM_.*median" $X/bench_layout.txt | cut -c1-60,100-250; cat $X/variants.txt; tail -6 $X/test.txt
