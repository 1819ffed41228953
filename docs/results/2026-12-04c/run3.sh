#!/usr/bin/env bash
# Session 18, run 3 (one device call): build the gpu preset at <commit>; bench_compute's generated sum (5 repetitions,
# medians) with integer division by a scalar through multiply-shift constants, and its peers in the same call
# (bench/peers/run_compute_peers.py: torch.compile, jax.jit, CuPy, torch eager). The build stays for run 4.
#   run3.sh <commit>   (OUT: the device tool's folder)
cd "$(dirname "$0")/../../.."
export PATH=/usr/local/cuda/bin:$PATH
O=${OUT:-/tmp/out}; mkdir -p $O/logs
T0=$SECONDS
GPU_CHECK_BUDGET_S=170 LOG_DIR=$O/build GPU_CHECK_COMMIT=$1 scripts/gpu-check.sh build > $O/logs/build.txt 2>&1
echo "build $((SECONDS-T0)) s" >> $O/logs/times.txt
B="--benchmark_repetitions=5 --benchmark_report_aggregates_only=true"
timeout 90 build/gpu/bench/bench_compute $B --benchmark_out=$O/bench_compute.json --benchmark_out_format=json \
  > $O/logs/bench_compute.txt 2>&1
echo "bench_compute $((SECONDS-T0)) s" >> $O/logs/times.txt
left=$((500 - (SECONDS - T0)))
(cd $O/logs && timeout $left python3 "$OLDPWD/bench/peers/run_compute_peers.py" --lazyfuse-json $O/bench_compute.json \
  --timeout $((left / 4)) --out-md compute-peers.md --out-json compute-peers.json) > $O/logs/peers.txt 2>&1
echo "peers $((SECONDS-T0)) s" >> $O/logs/times.txt
rm -rf $O/build
tar czf $O/logs.tar.gz -C $O logs
cat $O/logs/times.txt; grep -h -E "median|ERROR" $O/logs/bench_*.txt | cut -c1-100,120-330
cat $O/logs/compute-peers.md 2>/dev/null | head -12
