#!/usr/bin/env bash
# Builds and runs the x + row kernel variants (variants/main.cu says what each is) on the GPU machine.
cd "$(dirname "$0")/variants" || exit 2
export PATH=/usr/local/cuda/bin:$PATH
B=${1:-/tmp/variants}; mkdir -p $B
nvcc -O3 -arch=sm_90 -std=c++17 -w -o $B/variants main.cu addrow_v1.cu addrow_v2.cu addrow_v3.cu scale_v0.cu && $B/variants
