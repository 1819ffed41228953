#!/usr/bin/env bash
# Thirtieth session's first call: docs/results/2026-12-06/run-next.sh (the partial last trip before and after, row
# tests and random graphs on the GPU), then, only when the card is an H200, issue 19's layer norm against
# torch.compile: bench_layout's LayerNorm rows (5 repetitions) and bench/peers/run_layout_peers.py in the same call.
#   device: docs/results/2026-12-06c/run1.sh <commit>        (carry .bench-base; OUT: the device tool's folder)
cd "$(dirname "$0")/../../.."
export PATH=/usr/local/cuda/bin:$PATH
O=${OUT:-/tmp/out}; mkdir -p $O; T0=$SECONDS
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv > $O/gpu.txt 2>&1; cat $O/gpu.txt
timeout 420 docs/results/2026-12-06/run-next.sh "$1"
if grep -q H200 $O/gpu.txt; then
  mkdir -p /tmp/peers && cd /tmp/peers || exit
  timeout 60 /$OLDPWD/build/gpu/bench/bench_layout --benchmark_filter=LayerNorm --benchmark_repetitions=5 \
    --benchmark_report_aggregates_only=true > layernorm.txt 2>&1
  PYTHONUNBUFFERED=1 timeout $((560 - SECONDS + T0)) python3 $OLDPWD/bench/peers/run_layout_peers.py \
    --systems torch_compile --out-md layout-peers.md --out-json layout-peers.json > peers.txt 2>&1
  tar czf $O/peers.tar.gz layernorm.txt layout-peers.md layout-peers.json peers.txt 2>/dev/null
  grep median layernorm.txt | cut -c1-160; cat layout-peers.md 2>/dev/null | head -30
fi
echo "total $((SECONDS - T0)) s"
