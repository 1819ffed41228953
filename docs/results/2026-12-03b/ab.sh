#!/usr/bin/env bash
# A/B of the gather changes on the warm build (build/gpu): bench_gather at HEAD, then with p3, p2, p1 reversed in turn.
set -uo pipefail
cd "$(dirname "$0")/.."
export PATH=/usr/local/cuda/bin:$PATH
L=$OUT/ab; mkdir -p $L
run_variant() {
  local name=$1
  ( ninja -C build/gpu bench_gather > $L/build-$name.txt 2>&1 ) || { echo "build $name failed"; tail -30 $L/build-$name.txt; return 1; }
  build/gpu/bench/bench_gather --benchmark_repetitions=5 --benchmark_report_aggregates_only=true \
    --benchmark_out=$L/bench-$name.json --benchmark_out_format=json > $L/bench-$name.txt 2>&1
  grep -E "median" $L/bench-$name.txt | sed "s/^/$name /"
}
[ -d build/gpu ] || cmake --preset gpu > $L/configure.txt 2>&1
run_variant head
timeout 200 python3 bench/peers/run_gather_peers.py --lazyfuse-json $L/bench-head.json --out-md $L/gather-peers.md --out-json $L/gather-peers.json > $L/peers.txt 2>&1; tail -12 $L/peers.txt
for f in RandomGather EmbeddingGather; do
  timeout 100 ncu --clock-control none --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum -k regex:lf_k --launch-count 8 \
    build/gpu/bench/bench_gather --benchmark_filter=$f --benchmark_repetitions=1 > $L/ncu-$f.txt 2>&1
  grep -E "lf_k|gpu__time_duration|dram__bytes" $L/ncu-$f.txt | head -32 | sed "s/^/$f /"
done
patch -R -p1 < scratch_ab/p3.patch > /dev/null && run_variant no-plan-cache
patch -R -p1 < scratch_ab/p2.patch > /dev/null && run_variant no-error-words
patch -R -p1 < scratch_ab/p1.patch > /dev/null && run_variant base
patch -p1 < scratch_ab/p1.patch > /dev/null; patch -p1 < scratch_ab/p2.patch > /dev/null; patch -p1 < scratch_ab/p3.patch > /dev/null
ninja -C build/gpu bench_gather > /dev/null 2>&1
(cd $OUT && tar czf ab.tar.gz ab && rm -rf ab)
