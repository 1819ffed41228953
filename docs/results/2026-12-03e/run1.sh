#!/usr/bin/env bash
# Session 13, run 1: broadcast operands (issue 19) on the H200: bench_layout (x * 2, x + row, x * column, layer norm,
# beside the transposes and permutes) and the layout peers (CuPy, torch eager, torch.compile, jax.jit).
cd "$(dirname "$0")/../../.."
export PATH=/usr/local/cuda/bin:$PATH
O=${OUT:-/tmp/out}/logs; mkdir -p $O
T0=$SECONDS
{ cmake --preset gpu > /dev/null && cmake --build build/gpu -j16 2>&1 | tail -3; } > $O/build.txt 2>&1
echo "build $((SECONDS-T0)) s" >> $O/build.txt
B="--benchmark_repetitions=5 --benchmark_report_aggregates_only=true"
timeout 200 build/gpu/bench/bench_layout $B --benchmark_out=$O/bench_layout.json > $O/bench_layout.txt 2>&1
echo "bench $((SECONDS-T0)) s" >> $O/build.txt
timeout 330 python3 bench/peers/run_layout_peers.py --out-md $O/layout-peers.md --out-json $O/layout-peers.json \
  --lazyfuse-json $O/bench_layout.json --timeout 150 > $O/peers.txt 2>&1
echo "total $((SECONDS-T0)) s" >> $O/build.txt
tar czf ${OUT:-/tmp/out}/run1.tgz -C $O .
cat $O/build.txt; grep -E "BM_.*median|ERROR" $O/bench_layout.txt; cat $O/layout-peers.md; tail -5 $O/peers.txt
