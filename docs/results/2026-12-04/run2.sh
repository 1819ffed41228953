#!/usr/bin/env bash
# Session 16, run 2 (one device call): build the gpu preset, then bench_loops (issue 19's time loops and solver,
# 5 repetitions, JSON), bench_limits' hand-written 1,000-step update loop, and bench/peers/run_loops_peers.py (torch.compile,
# jax.jit, torch eager, CuPy: one process each while time is left) with bench_loops' JSON as the lazyfuse column.
# Logs in one archive.
#   run2.sh <commit>   (OUT: the device tool's folder)
cd "$(dirname "$0")/../../.."
export PATH=/usr/local/cuda/bin:$PATH
O=${OUT:-/tmp/out}; mkdir -p $O/logs
T0=$SECONDS
GPU_CHECK_BUDGET_S=150 LOG_DIR=$O/build GPU_CHECK_COMMIT=$1 scripts/gpu-check.sh build > $O/logs/build.txt 2>&1
echo "build $((SECONDS-T0)) s" >> $O/logs/times.txt
B="--benchmark_repetitions=5 --benchmark_report_aggregates_only=true"
timeout 150 build/gpu/bench/bench_loops $B --benchmark_out=$O/bench_loops.json --benchmark_out_format=json \
  > $O/logs/bench_loops.txt 2>&1
echo "bench_loops $((SECONDS-T0)) s" >> $O/logs/times.txt
timeout 60 build/gpu/bench/bench_limits $B --benchmark_filter='BM_(CopyReference|LimitUpdateLoop)' \
  > $O/logs/bench_limits.txt 2>&1
echo "bench_limits $((SECONDS-T0)) s" >> $O/logs/times.txt
# One process per system, the most wanted first, so that a system cut by the call's time limit keeps the others.
for sys in torch_compile jax torch cupy; do
  left=$((565 - (SECONDS - T0)))
  ((left > 40)) || break
  (cd $O/logs && timeout $left python3 "$OLDPWD/bench/peers/run_loops_peers.py" --systems $sys \
    --lazyfuse-json $O/bench_loops.json --timeout $((left - 5)) --out-md peers-$sys.md --out-json peers-$sys.json) \
    > $O/logs/peers-$sys.txt 2>&1
  echo "peers $sys $((SECONDS-T0)) s" >> $O/logs/times.txt
done
rm -rf $O/build
tar czf $O/logs.tar.gz -C $O logs
cat $O/logs/times.txt; grep -h -E "median|ERROR" $O/logs/bench_*.txt | cut -c1-70,100-260; for f in $O/logs/peers-*.md; do head -12 $f; done
