#!/usr/bin/env bash
# Session 17, run 1 (one device call): repeated steps printed as a loop (issue 19). Build the gpu preset; run, with
# LAZYFUSE_TEST_REQUIRE_GPU=1, the tests of the change (test_repeated_steps, test_fusion, test_partition_steps,
# test_codegen, test_graph); then bench_loops (5 repetitions, JSON), bench_limits' hand-written 1,000-step update loop
# and the copy reference, bench_compile's time loop (cold, disk hit, memory hit, NVRTC alone; 5 repetitions), and
# torch.compile on the loops (bench/peers/run_loops_peers.py) while time is left. Logs in one archive.
#   run1.sh <commit>   (OUT: the device tool's folder)
cd "$(dirname "$0")/../../.."
export PATH=/usr/local/cuda/bin:$PATH
O=${OUT:-/tmp/out}; mkdir -p $O/logs
T0=$SECONDS
GPU_CHECK_BUDGET_S=170 LOG_DIR=$O/build GPU_CHECK_COMMIT=$1 scripts/gpu-check.sh build > $O/logs/build.txt 2>&1
echo "build $((SECONDS-T0)) s" >> $O/logs/times.txt
LAZYFUSE_TEST_REQUIRE_GPU=1 LAZYFUSE_TEST_PYTHON=$(command -v python3) LAZYFUSE_TEST_RANDOM_GRAPHS=100 timeout 120 \
  ctest --test-dir build/gpu -j14 --output-on-failure \
  -R "test_repeated_steps|test_fusion|test_partition_steps|test_codegen|test_graph" > $O/logs/ctest.txt 2>&1
echo "ctest rc $? $((SECONDS-T0)) s" >> $O/logs/times.txt
B="--benchmark_repetitions=5 --benchmark_report_aggregates_only=true"
timeout 150 build/gpu/bench/bench_loops $B --benchmark_out=$O/bench_loops.json --benchmark_out_format=json \
  > $O/logs/bench_loops.txt 2>&1
echo "bench_loops $((SECONDS-T0)) s" >> $O/logs/times.txt
timeout 60 build/gpu/bench/bench_limits $B --benchmark_filter='BM_(CopyReference|LimitUpdateLoop)' \
  > $O/logs/bench_limits.txt 2>&1
echo "bench_limits $((SECONDS-T0)) s" >> $O/logs/times.txt
timeout 90 build/gpu/bench/bench_compile $B --benchmark_filter='kind:2' > $O/logs/bench_compile.txt 2>&1
echo "bench_compile $((SECONDS-T0)) s" >> $O/logs/times.txt
left=$((560 - (SECONDS - T0)))
if ((left > 60)); then
  (cd $O/logs && timeout $left python3 "$OLDPWD/bench/peers/run_loops_peers.py" --systems torch_compile \
    --lazyfuse-json $O/bench_loops.json --timeout $((left - 5)) --out-md peers-torch_compile.md \
    --out-json peers-torch_compile.json) > $O/logs/peers-torch_compile.txt 2>&1
  echo "peers torch_compile $((SECONDS-T0)) s" >> $O/logs/times.txt
fi
rm -rf $O/build
tar czf $O/logs.tar.gz -C $O logs
cat $O/logs/times.txt; tail -5 $O/logs/ctest.txt; grep -h -E "median|ERROR" $O/logs/bench_*.txt | cut -c1-80,100-300
head -12 $O/logs/peers-*.md 2>/dev/null
