#!/usr/bin/env bash
# Call 2 (session 37, issue 15): why do cuBLASLt's bias epilogues cost 10-14% over the bare product in bench_matmul
# when call 1's epilogue_algo.cu (constant data) found them free? epilogue_algo.cu on random and on constant data,
# with the GPU's SM clock and power sampled every 100 ms beside (nvidia-smi); then the base tree's bench_matmul
# (.bench-base: main before the bias change) under ncu: the kernels of the MLP, bias+ReLU and batched FP32 rows
# (lazyfuse's and cuBLAS's direct call), isolated; then those rows timed (3 repetitions) with the clock sampled.
#   device: docs/results/2026-12-07b/run2.sh        (carry .bench-base; OUT: the device tool's folder)
cd "$(dirname "$0")/../../.."
export PATH=/usr/local/cuda/bin:$PATH
O=${OUT:-/tmp/out}; W=/tmp/run2; rm -rf $W; mkdir -p $O $W/logs; T0=$SECONDS
pack() { tar czf $O/logs.tar.gz -C $W logs; }
stage() { echo "$1 rc $2 $((SECONDS - T0)) s" >> $W/logs/times.txt; pack; }
sample() { nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_throttle_reasons.active \
  --format=csv -lms 100 > $W/logs/smi-$1.csv 2>&1 & SMI=$!; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader > $W/logs/gpu.txt
nvcc -O2 -arch=sm_90 docs/results/2026-12-07b/epilogue_algo.cu -lcublasLt -o /tmp/epilogue_algo > $W/logs/nvcc.txt 2>&1
for data in random constant; do
  sample algo-$data; timeout 60 /tmp/epilogue_algo $data > $W/logs/epilogue_algo-$data.txt 2>&1; r=$?; kill $SMI
  stage "epilogue_algo $data" $r
done
B=.bench-base
{ cmake --preset gpu -S $B -DLAZYFUSE_BUILD_BENCH=ON && cmake --build $B/build/gpu -j16 --target bench_matmul; } \
  > $W/logs/build-base.txt 2>&1
stage build-base $?
for f in 'BM_MlpGemm/tf32:1/bf16:0' 'BM_MlpGemm/tf32:0/bf16:1' 'BM_BiasRelu/tf32:1/bf16:0' 'BM_BiasRelu/tf32:0/bf16:1' \
  'BM_MlpGelu/tf32:1/bf16:0' 'BM_MlpGelu/tf32:0/bf16:1' 'BM_BiasRelu_cuBLASLt/tf32:1/bf16:0' \
  'BM_Batched128x2048/tf32:0' 'BM_Batched128x2048_cuBLAS/tf32:0'; do
  timeout 60 ncu --clock-control none --csv -c 12 --metrics gpu__time_duration.sum,dram__bytes.sum,sm__inst_executed.sum,launch__registers_per_thread,launch__grid_size,launch__block_size,sm__throughput.avg.pct_of_peak_sustained_elapsed,dram__throughput.avg.pct_of_peak_sustained_elapsed \
    $B/build/gpu/bench/bench_matmul --benchmark_filter="$f\$" > $W/logs/ncu-$(echo $f | tr '/:' '__').csv 2>&1
  stage "ncu $f" $?
done
sample bench; timeout 120 $B/build/gpu/bench/bench_matmul --benchmark_filter='MlpGemm|BiasRelu|Batched128x2048/' \
  --benchmark_repetitions=3 > $W/logs/bench-base.txt 2>&1; r=$?; kill $SMI
stage bench-base $r
cat $W/logs/gpu.txt $W/logs/times.txt $W/logs/epilogue_algo-*.txt; grep median $W/logs/bench-base.txt | cut -c1-110
for f in $W/logs/ncu-*.csv; do echo "== $f"; python3 scripts/ncu_kernels.py $f 2>&1 | cut -c1-200; done
