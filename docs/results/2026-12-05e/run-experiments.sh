#!/usr/bin/env bash
# Session 24's kernel experiments on the GPU machine: the layer-norm variants (layernorm/main.cu says what each is)
# and bench_layout's BM_LayerNorm with LAZYFUSE_LOG=launch (the grid, block and shared memory lazyfuse launches, when
# build/gpu exists); then CUB's selection against x[x > 0] (select/main.cu), and the generated sum's variants
# (gensum/main.cu).
#   run-experiments.sh [build|run|both] [folder for the binaries]
cd "$(dirname "$0")" || exit 2
export PATH=/usr/local/cuda/bin:$PATH
MODE=${1:-both}
B=${2:-/tmp/experiments}; mkdir -p $B
if [ $MODE != run ]; then
  (cd layernorm && nvcc -O3 -arch=sm_90 -std=c++17 -w -o $B/layernorm main.cu ln_generated.cu ln_registers.cu) &
  (cd select && nvcc -O3 -arch=sm_90 -std=c++17 -w -o $B/select main.cu) &
  (cd gensum && python3 variants.py generated.cu $B && nvcc -O3 -arch=sm_90 -std=c++17 -w -I. -o $B/gensum main.cu \
    $B/gen_v*.cu) &
  wait
fi
[ $MODE = build ] && exit 0
$B/layernorm
L=../../../build/gpu/bench/bench_layout
[ -x $L ] && LAZYFUSE_LOG=launch $L --benchmark_filter=LayerNorm 2>&1 | grep -v "lazyfuse:launch" | tail -4 &&
  LAZYFUSE_LOG=launch $L --benchmark_filter=LayerNorm 2>&1 | grep "lazyfuse:launch" | sort | uniq -c | sort -rn | head -5
$B/select
$B/gensum
