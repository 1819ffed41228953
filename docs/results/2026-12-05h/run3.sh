#!/usr/bin/env bash
# Session 27's third device call: rows in registers for rows of whole trips only, after run1.sh found the per-trip
# tests slow (H100: layer norm 0.317 against 0.191 ms). run1.sh's stages, shorter, for the device time left: the gpu
# build; the layer norms, softmax and row variance before (257552d) and after, 2 rounds; then the row-kernel tests
# with LAZYFUSE_TEST_REQUIRE_GPU=1 (at most 100 s) in the time left. No bench_host.
#   here:   scripts/gpu-bench-compare.sh --prepare 257552d          (then carry .bench-base)
#   device: docs/results/2026-12-05h/run3.sh <commit>                (OUT: the device tool's folder)
cd "$(dirname "$0")/../../.."
export PATH=/usr/local/cuda/bin:$PATH
O=${OUT:-/tmp/out}; W=/tmp/run3; rm -rf $W; mkdir -p $O $W/logs # logs kept outside $O: only the archive comes back
T0=$SECONDS
pack() { tar czf $O/logs.tar.gz -C $W logs; } # after each stage: a call cut short still returns its logs
GPU_CHECK_BUDGET_S=200 LOG_DIR=$W/logs/build GPU_CHECK_COMMIT=$1 scripts/gpu-check.sh build > $W/logs/build.txt 2>&1
echo "build rc $? $((SECONDS-T0)) s" >> $W/logs/times.txt; pack
ROUNDS=${ROUNDS:-2} BENCH_ONLY="bench_layout bench_reductions" BENCH_FILTER='LayerNorm|Softmax|RowVar/eager:0|CopyReference' \
  BENCH_COMPARE_HEAD=$1 LOG_DIR=$W/logs timeout 160 scripts/gpu-bench-compare.sh > $W/logs/compare.txt 2>&1
echo "compare rc $? $((SECONDS-T0)) s" >> $W/logs/times.txt; pack
cat $W/logs/compare.md 2>/dev/null || tail -20 $W/logs/compare.txt
LAZYFUSE_TEST_REQUIRE_GPU=1 LAZYFUSE_TEST_PYTHON=$(command -v python3) timeout 100 \
  ctest --test-dir build/gpu -j12 --output-on-failure -R "test_reductions|test_schedule|test_cuda_schedule|test_codegen" \
  > $W/logs/ctest.txt 2>&1
echo "ctest rc $? $((SECONDS-T0)) s" >> $W/logs/times.txt; pack
cat $W/logs/times.txt; grep -E "tests passed|\(Failed\)|Timeout|Not Run" $W/logs/ctest.txt | head -20
