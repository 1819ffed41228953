#!/usr/bin/env bash
# Session 20, run 2 (one device call, right after run 1 on the same machine, whose build it uses; not run in session
# 20): bench_host (recording, the signature, BM_EvalTimeLoop), bench_loops (the update loop's record_us/eval_us, the
# Jacobi solver), bench_gather (BM_ScatterAdd's first figure beside the gathers) and bench_workloads (the table, for
# the +-3% check against earlier runs), 5 repetitions, medians; then the gather peers (torch.index_add,
# cupyx.scatter_add, jax's x.at[i].add beside the gathers) with this run's bench_gather JSON.
#   run2.sh   (OUT: the device tool's folder)
cd "$(dirname "$0")/../../.."
export PATH=/usr/local/cuda/bin:$PATH
O=${OUT:-/tmp/out}; mkdir -p $O/logs
T0=$SECONDS
B="--benchmark_repetitions=5 --benchmark_report_aggregates_only=true"
for b in bench_host bench_loops bench_gather bench_workloads; do
  timeout 120 build/gpu/bench/$b $B --benchmark_out=$O/$b.json --benchmark_out_format=json > $O/logs/$b.txt 2>&1
  echo "$b rc $? $((SECONDS-T0)) s" >> $O/logs/times.txt
done
timeout $((560 - (SECONDS - T0))) python3 bench/peers/run_gather_peers.py --out-md $O/logs/gather-peers.md \
  --out-json $O/logs/gather-peers.json --lazyfuse-json $O/bench_gather.json > $O/logs/gather-peers.txt 2>&1
echo "gather peers rc $? $((SECONDS-T0)) s" >> $O/logs/times.txt
tar czf $O/logs.tar.gz -C $O logs
cat $O/logs/times.txt; grep -h -E "median|ERROR" $O/logs/bench_*.txt | cut -c1-100,120-330; cat $O/logs/gather-peers.md
