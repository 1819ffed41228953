#!/usr/bin/env bash
# Session 12, run 4: the committed tiled path (64 x 64 tiles, in-place loads before the barrier) on the GPU, within the
# session's last device minutes: its GPU test, then a short randomized differential (8 x 40 programs).
cd "$(dirname "$0")/../../.."
export PATH=/usr/local/cuda/bin:$PATH
O=${OUT:-/tmp/out}; mkdir -p $O/logs
T0=$SECONDS
{ cmake --preset gpu > /dev/null && cmake --build build/gpu -j16 --target test_cuda_schedule test_random_graphs 2>&1 | tail -2; } > $O/logs/build.txt 2>&1
echo "build $((SECONDS-T0)) s" >> $O/logs/build.txt
LAZYFUSE_TEST_REQUIRE_GPU=1 timeout 40 build/gpu/tests/test_cuda_schedule > $O/logs/test_cuda_schedule.txt 2>&1
echo "test rc $? $((SECONDS-T0)) s" >> $O/logs/build.txt
tar czf $O/run4.tgz -C $O logs
GPU_DIFF_PROCS=8 GPU_DIFF_CASES=40 GPU_DIFF_BUDGET_S=100 GPU_DIFF_COMMIT=${GPU_DIFF_COMMIT:-} LOG_DIR=$O/diff scripts/gpu-differential.sh > $O/logs/diff.txt 2>&1
echo "diff rc $? $((SECONDS-T0)) s" >> $O/logs/build.txt
tar czf $O/run4.tgz -C $O logs diff
cat $O/logs/build.txt; tail -3 $O/logs/test_cuda_schedule.txt; tail -4 $O/logs/diff.txt
