#!/usr/bin/env bash
# Call 4 (session 34): the figures of issues 17 and 18 at this commit, each beside its peers in the same call. The
# gpu build of the benchmarks; bench_gather whole (5 repetitions) and bench/peers/run_gather_peers.py (CuPy, torch,
# torch deterministic); bench_scan whole (5 repetitions) and bench/peers/run_sort_peers.py.
#   device: docs/results/2026-12-06g/run4.sh <commit>        (OUT: the device tool's folder)
cd "$(dirname "$0")/../../.."
export PATH=/usr/local/cuda/bin:$PATH
O=${OUT:-/tmp/out}; W=/tmp/run4; rm -rf $W; mkdir -p $O $W/logs; T0=$SECONDS
pack() { tar czf $O/logs.tar.gz -C $W logs; }
stage() { echo "$1 rc $2 $((SECONDS - T0)) s" >> $W/logs/times.txt; pack; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $W/logs/gpu.txt
cmake --preset gpu > $W/logs/build.txt 2>&1 && ninja -C build/gpu bench_gather bench_scan >> $W/logs/build.txt 2>&1
stage build $?
timeout 40 build/gpu/bench/bench_gather --benchmark_repetitions=5 --benchmark_report_aggregates_only=true \
  --benchmark_out=$W/logs/bench_gather.json > $W/logs/bench_gather.txt 2>&1
stage bench_gather $?
PYTHONUNBUFFERED=1 timeout 90 python3 bench/peers/run_gather_peers.py --systems cupy,torch,torch_deterministic \
  --out-md $W/logs/gather-peers.md --out-json $W/logs/gather-peers.json --lazyfuse-json $W/logs/bench_gather.json \
  > $W/logs/gather-peers.txt 2>&1
stage gather-peers $?
timeout 60 build/gpu/bench/bench_scan --benchmark_repetitions=5 --benchmark_report_aggregates_only=true \
  --benchmark_out=$W/logs/bench_scan.json > $W/logs/bench_scan.txt 2>&1
stage bench_scan $?
PYTHONUNBUFFERED=1 timeout $((330 - SECONDS + T0)) python3 bench/peers/run_sort_peers.py --out-md $W/logs/sort-peers.md \
  --out-json $W/logs/sort-peers.json --lazyfuse-json $W/logs/bench_scan.json > $W/logs/sort-peers.txt 2>&1
stage sort-peers $?
cat $W/logs/gpu.txt $W/logs/times.txt; grep median $W/logs/bench_gather.txt $W/logs/bench_scan.txt | cut -c1-160
head -8 $W/logs/gather-peers.md; head -9 $W/logs/sort-peers.md
