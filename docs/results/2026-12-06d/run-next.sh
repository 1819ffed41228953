#!/usr/bin/env bash
# For the next session with a device: what this session left. Session 30's run-next.sh (the permute replica's
# occupancy variants, bench_layout whole, on an H200 the layout peers, the random graphs), then, on an H200 only,
# bench_scan and the sort peers (issue 18's cumsum with the grouped order against torch and jax.jit on the card its
# targets name; this session measured it on H100s only).
#   device: docs/results/2026-12-06d/run-next.sh <commit>          (OUT: the device tool's folder)
cd "$(dirname "$0")/../../.."
export PATH=/usr/local/cuda/bin:$PATH
O=${OUT:-/tmp/out}; mkdir -p $O; T0=$SECONDS
timeout 430 docs/results/2026-12-06c/run-next.sh "$1"
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  mkdir -p /tmp/scan-next
  timeout 40 build/gpu/bench/bench_scan --benchmark_repetitions=5 --benchmark_report_aggregates_only=true \
    --benchmark_out=/tmp/scan-next/bench_scan.json > /tmp/scan-next/bench_scan.txt 2>&1
  PYTHONUNBUFFERED=1 timeout $((580 - SECONDS + T0)) python3 bench/peers/run_sort_peers.py \
    --out-md /tmp/scan-next/sort-peers.md --out-json /tmp/scan-next/sort-peers.json \
    --lazyfuse-json /tmp/scan-next/bench_scan.json > /tmp/scan-next/peers.txt 2>&1
  tar czf $O/scan-next.tar.gz -C /tmp scan-next
  grep median /tmp/scan-next/bench_scan.txt | cut -c1-150; cat /tmp/scan-next/sort-peers.md 2>/dev/null
fi
echo "total $((SECONDS - T0)) s"
