#!/usr/bin/env bash
# Session 19, run 3 (one device call, right after run 2 on the same machine, whose build it uses): bench_host
# (recording, signature, a Jacobi step recorded), bench_loops (the update loop with its host share, the Jacobi
# solver, the replay chain) and bench_workloads (the existing table, against run 1 of the previous sessions), 5
# repetitions, medians. Not run in session 19 (no device lent).
#   run3.sh   (OUT: the device tool's folder)
cd "$(dirname "$0")/../../.."
export PATH=/usr/local/cuda/bin:$PATH
O=${OUT:-/tmp/out}; mkdir -p $O/logs
T0=$SECONDS
B="--benchmark_repetitions=5 --benchmark_report_aggregates_only=true"
for b in bench_host bench_loops bench_workloads; do
  timeout 150 build/gpu/bench/$b $B --benchmark_out=$O/$b.json --benchmark_out_format=json > $O/logs/$b.txt 2>&1
  echo "$b rc $? $((SECONDS-T0)) s" >> $O/logs/times.txt
done
tar czf $O/logs.tar.gz -C $O logs
cat $O/logs/times.txt; grep -h -E "median|ERROR" $O/logs/bench_*.txt | cut -c1-100,120-330
