#!/usr/bin/env bash
# Session 11, call 3: why lazyfuse's batched float32 product is slower than the same cuBLAS call made directly.
cd "$(dirname "$0")/.."
export PATH=/usr/local/cuda/bin:$PATH
O=${OUT:-/tmp/out}/r3; mkdir -p $O
T0=$SECONDS
{ cmake --preset gpu > /dev/null && cmake --build build/gpu -j16 --target bench_matmul 2>&1 | tail -2; } > $O/build.txt 2>&1
echo "build $((SECONDS-T0))" >> $O/build.txt
which nsys ncu >> $O/build.txt 2>&1
F='Batched128x2048(_cuBLAS)?/tf32:0/'
LAZYFUSE_LOG=launch,pool timeout 60 build/gpu/bench/bench_matmul --benchmark_filter='Batched128x2048/tf32:0/' > $O/log-launch.txt 2>&1
if command -v nsys > /dev/null; then
  timeout 120 nsys profile -o /tmp/prof --force-overwrite true build/gpu/bench/bench_matmul --benchmark_filter="$F" > $O/nsys.txt 2>&1
  timeout 90 nsys stats --report cuda_gpu_trace --format csv -o /tmp/trace /tmp/prof.nsys-rep >> $O/nsys.txt 2>&1
  cp /tmp/trace*.csv $O/ 2>/dev/null
  timeout 60 nsys stats --report cuda_gpu_kern_sum /tmp/prof.nsys-rep > $O/kern-sum.txt 2>&1
fi
timeout 90 ncu --clock-control none --metrics gpu__time_duration.sum -c 14 build/gpu/bench/bench_matmul --benchmark_filter='Batched128x2048/tf32:0/' > $O/ncu-lf.txt 2>&1
timeout 90 ncu --clock-control none --metrics gpu__time_duration.sum -c 14 build/gpu/bench/bench_matmul --benchmark_filter='Batched128x2048_cuBLAS/tf32:0/' > $O/ncu-cublas.txt 2>&1
echo "total $((SECONDS-T0))" >> $O/build.txt
tar czf ${OUT:-/tmp/out}/r3.tgz -C $O .
cat $O/build.txt
