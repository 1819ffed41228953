#!/usr/bin/env bash
# Session 24: builds and runs the layer-norm variants (layernorm/main.cu says what each is), then bench_layout's
# BM_LayerNorm with LAZYFUSE_LOG=launch (the grid, block and shared memory lazyfuse launches) when build/gpu exists.
cd "$(dirname "$0")/layernorm" || exit 2
export PATH=/usr/local/cuda/bin:$PATH
B=${1:-/tmp/layernorm}; mkdir -p $B
nvcc -O3 -arch=sm_90 -std=c++17 -w -o $B/layernorm main.cu ln_generated.cu ln_registers.cu && $B/layernorm
L=../../../../build/gpu/bench/bench_layout
[ -x $L ] && LAZYFUSE_LOG=launch $L --benchmark_filter=LayerNorm 2>&1 | grep -v "^\[lazyfuse:launch\].*lf_k.*" | tail -5 &&
  LAZYFUSE_LOG=launch $L --benchmark_filter=LayerNorm 2>&1 | grep "lazyfuse:launch" | sort | uniq -c | sort -rn | head -5
