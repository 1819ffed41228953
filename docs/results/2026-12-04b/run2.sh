#!/usr/bin/env bash
# Session 17, run 2 (one device call): where the 1,000-step update loop's time goes. Build the gpu preset; run a
# scratch program (examples/zz_phases.cpp, not committed: recording, eval's host part, the wait for the kernel, for
# 1 and 1,000 steps of 8 and 2^20 elements), then Nsight Compute's kernel duration of the loop's kernel and of
# bench_limits' hand-written one, then test_repeated_steps and test_fusion with LAZYFUSE_TEST_REQUIRE_GPU=1.
#   run2.sh <commit>   (OUT: the device tool's folder)
cd "$(dirname "$0")/../../.."
export PATH=/usr/local/cuda/bin:$PATH
O=${OUT:-/tmp/out}; mkdir -p $O/logs
T0=$SECONDS
GPU_CHECK_BUDGET_S=170 LOG_DIR=$O/build GPU_CHECK_COMMIT=$1 scripts/gpu-check.sh build > $O/logs/build.txt 2>&1
echo "build $((SECONDS-T0)) s" >> $O/logs/times.txt
timeout 60 build/gpu/examples/zz_phases > $O/logs/phases.txt 2>&1
echo "phases $((SECONDS-T0)) s" >> $O/logs/times.txt
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
echo "ncu: $NCU" >> $O/logs/times.txt
if [[ -n $NCU ]]; then
  timeout 120 $NCU --metrics gpu__time_duration.sum -k regex:lf_k --launch-skip 40 --launch-count 6 \
    build/gpu/examples/zz_phases > $O/logs/ncu-loop.txt 2>&1
  timeout 60 $NCU --metrics gpu__time_duration.sum -k regex:elementwise --launch-skip 5 --launch-count 3 \
    build/gpu/bench/bench_limits --benchmark_filter='BM_LimitUpdateLoop/grid:0/ept:4/cs:0' > $O/logs/ncu-limit.txt 2>&1
fi
echo "ncu $((SECONDS-T0)) s" >> $O/logs/times.txt
LAZYFUSE_TEST_REQUIRE_GPU=1 timeout 100 ctest --test-dir build/gpu -j14 --output-on-failure \
  -R "test_repeated_steps|test_fusion" > $O/logs/ctest.txt 2>&1
echo "ctest rc $? $((SECONDS-T0)) s" >> $O/logs/times.txt
rm -rf $O/build
tar czf $O/logs.tar.gz -C $O logs
cat $O/logs/times.txt $O/logs/phases.txt; grep -E "lf_k|elementwise|gpu__time_duration" $O/logs/ncu-*.txt | head -30
tail -4 $O/logs/ctest.txt
