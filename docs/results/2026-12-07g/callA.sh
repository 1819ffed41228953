#!/usr/bin/env bash
# Session 42's device call A: build (gpu-check), the normal-tables experiment (issue 16), bench_random and
# bench_limits' write-only kernel with the random peers (cupy, torch, torch_compile, jax) in the same call: issue 16's
# rows on this card. On an H200 the sweep that session 41 left for one (issue 18) runs first.
#   device: docs/results/2026-12-07g/callA.sh <commit>        (OUT: the device tool's folder)
cd "$(dirname "$0")/../../.."
export PATH=/usr/local/cuda/bin:$PATH
O=${OUT:-/tmp/out}; W=/tmp/callA; rm -rf $W; mkdir -p $O $W/logs; T0=$SECONDS
pack() { tar czf $O/callA.tar.gz -C $W logs; }
stage() { echo "$1 rc $2 $((SECONDS - T0)) s" >> $W/logs/times.txt; pack; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader | tee $W/logs/gpu.txt
if grep -q H200 $W/logs/gpu.txt && [ -z "${SKIP_SWEEP:-}" ]; then
  OUT=$W/logs/sweep timeout 590 docs/results/2026-12-07f/sweep.sh "$1" > $W/logs/sweep.txt 2>&1
  stage sweep $?
  cp $W/logs/sweep/logs.tar.gz $O/sweep.tar.gz 2>/dev/null
  exit 0 # the rest in a second call (SKIP_SWEEP=1)
fi
GPU_CHECK_BUDGET_S=200 LOG_DIR=$W/logs/build GPU_CHECK_COMMIT=$1 scripts/gpu-check.sh build > $W/logs/build.txt 2>&1
stage build $?
timeout 200 docs/results/2026-12-07g/normal-tables/run.sh $W/logs/normal-tables > $W/logs/normal-tables.txt 2>&1
stage normal-tables $?
timeout 60 build/gpu/bench/bench_limits --benchmark_filter=WriteOnly --benchmark_repetitions=5 \
  --benchmark_report_aggregates_only=true --benchmark_out=$W/logs/bench_limits.json > $W/logs/bench_limits.txt 2>&1
stage bench_limits $?
timeout 60 build/gpu/bench/bench_random --benchmark_repetitions=5 --benchmark_report_aggregates_only=true \
  --benchmark_out=$W/logs/bench_random.json > $W/logs/bench_random.txt 2>&1
stage bench_random $?
PYTHONUNBUFFERED=1 timeout $((560 - SECONDS + T0)) python3 bench/peers/run_random_peers.py \
  --out-md $W/logs/random-peers.md --out-json $W/logs/random-peers.json --lazyfuse-json $W/logs/bench_random.json \
  --limits-json $W/logs/bench_limits.json --systems cupy,torch,torch_compile,jax > $W/logs/random-peers.txt 2>&1
stage random-peers $?
cat $W/logs/gpu.txt $W/logs/times.txt $W/logs/normal-tables/exp.txt $W/logs/normal-tables/sass-counts.txt
grep -hE "_median" $W/logs/bench_limits.txt $W/logs/bench_random.txt | cut -c1-150
tail -n 12 $W/logs/random-peers.md
