#!/usr/bin/env bash
# Session 11, call 2 (after gpu-check build test on the same warm machine): benchmarks and peers of this session's
# changes, Nsight Compute on the batched product.
cd "$(dirname "$0")/.."
export PATH=/usr/local/cuda/bin:$PATH
O=${OUT:-/tmp/out}/r2; mkdir -p $O
T0=$SECONDS
B="--benchmark_repetitions=3 --benchmark_report_aggregates_only=true"
timeout 150 build/gpu/bench/bench_matmul $B --benchmark_out=$O/bench_matmul.json --benchmark_out_format=json > $O/bench_matmul.txt 2>&1
echo "matmul done $((SECONDS-T0))" >> $O/times.txt
timeout 220 python3 bench/peers/run_matmul_peers.py --lazyfuse-json $O/bench_matmul.json --out-md $O/matmul-peers.md --out-json $O/matmul-peers.json --timeout 200 > $O/matmul-peers.log 2>&1
echo "matmul peers done $((SECONDS-T0))" >> $O/times.txt
timeout 100 build/gpu/bench/bench_scan $B --benchmark_out=$O/bench_scan.json --benchmark_out_format=json > $O/bench_scan.txt 2>&1
echo "scan done $((SECONDS-T0))" >> $O/times.txt
timeout 60 build/gpu/bench/bench_types --benchmark_filter='Gelu|Copy' $B > $O/bench_types_gelu.txt 2>&1
echo "types done $((SECONDS-T0))" >> $O/times.txt
for f in 'Batched128x2048/tf32:0' 'Batched128x2048_cuBLAS/tf32:0' 'Batched128x2048_cuBLASLt/tf32:0'; do
  echo "== $f" >> $O/ncu-batched.txt
  timeout 60 ncu --clock-control none --metrics gpu__time_duration.sum -c 12 build/gpu/bench/bench_matmul --benchmark_filter="$f\$" 2>&1 | grep -E "^  [a-zA-Z_].*\(|gpu__time_duration" | tail -8 >> $O/ncu-batched.txt
done
echo "ncu done $((SECONDS-T0))" >> $O/times.txt
left=$((560 - (SECONDS-T0)))
[ $left -gt 60 ] && timeout $((left-20)) python3 bench/peers/run_sort_peers.py --lazyfuse-json $O/bench_scan.json --out-md $O/sort-peers.md --out-json $O/sort-peers.json > $O/sort-peers.log 2>&1
echo "sort peers done $((SECONDS-T0))" >> $O/times.txt
tar czf ${OUT:-/tmp/out}/r2.tgz -C $O .
cat $O/times.txt
