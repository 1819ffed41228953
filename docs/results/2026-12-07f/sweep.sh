#!/usr/bin/env bash
# The call for an H200 (written in session 41, not run: no H200 came): the rows of issues 17-19 last measured on an
# H100 only, each with its peers in the same call: bench_scan (sort, argsort, cumsum, bincount, unique; issue 18's
# rows) with run_sort_peers.py; bench_gather (gathers, x[x > t], scatter-add) with run_gather_peers.py (cupy, torch);
# bench_layout (permutes, layer norm) with run_layout_peers.py (torch, torch_compile). 5 repetitions, medians. The
# call ends by 560 s.
#   device: docs/results/2026-12-07f/sweep.sh <commit>        (OUT: the device tool's folder)
cd "$(dirname "$0")/../../.."
export PATH=/usr/local/cuda/bin:$PATH
O=${OUT:-/tmp/out}; W=/tmp/sweep; rm -rf $W; mkdir -p $O $W/logs; T0=$SECONDS
pack() { tar czf $O/logs.tar.gz -C $W logs; }
stage() { echo "$1 rc $2 $((SECONDS - T0)) s" >> $W/logs/times.txt; pack; }
left() { echo $(($1 - SECONDS + T0)); }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader > $W/logs/gpu.txt
GPU_CHECK_BUDGET_S=200 LOG_DIR=$W/logs/build GPU_CHECK_COMMIT=$1 scripts/gpu-check.sh build > $W/logs/build.txt 2>&1
stage build $?
for b in bench_scan bench_gather bench_layout; do
  timeout 60 build/gpu/bench/$b --benchmark_repetitions=5 --benchmark_report_aggregates_only=true \
    --benchmark_out=$W/logs/$b.json > $W/logs/$b.txt 2>&1
  stage $b $?
done
peers() { # script, md name, json, extra arguments
  local s=$1 n=$2 j=$3; shift 3
  ((SECONDS - T0 > 520)) && return
  PYTHONUNBUFFERED=1 timeout $(left 555) python3 bench/peers/$s --out-md $W/logs/$n.md --out-json $W/logs/$n.json \
    --lazyfuse-json $W/logs/$j "$@" > $W/logs/$n.txt 2>&1
  stage $n $?
}
peers run_sort_peers.py sort-peers bench_scan.json --systems cupy,torch,jax
peers run_gather_peers.py gather-peers bench_gather.json --systems cupy,torch
peers run_layout_peers.py layout-peers bench_layout.json --systems torch,torch_compile
cat $W/logs/gpu.txt $W/logs/times.txt
grep -hE "_median" $W/logs/bench_*.txt | cut -c1-150
tail -n 14 $W/logs/*-peers.md 2>/dev/null
