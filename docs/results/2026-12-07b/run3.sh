#!/usr/bin/env bash
# Call 3 (session 37, issue 15): epilogue_rounds.cu (each cuBLASLt epilogue against the bare product in rotated
# rounds on random operands, the SM clock and power sampled beside; then each configuration once under ncu, for the
# kernels' names and isolated durations); the gpu build; the batched FP32 product (lazyfuse, cuBLASLt and cuBLAS
# called directly) timed with 5 repetitions, and lazyfuse's and cuBLAS's calls under ncu.
#   device: docs/results/2026-12-07b/run3.sh <commit>        (OUT: the device tool's folder)
cd "$(dirname "$0")/../../.."
export PATH=/usr/local/cuda/bin:$PATH
O=${OUT:-/tmp/out}; W=/tmp/run3; rm -rf $W; mkdir -p $O $W/logs; T0=$SECONDS
pack() { tar czf $O/logs.tar.gz -C $W logs; }
stage() { echo "$1 rc $2 $((SECONDS - T0)) s" >> $W/logs/times.txt; pack; }
sample() { nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_throttle_reasons.active \
  --format=csv -lms 100 > $W/logs/smi-$1.csv 2>&1 & SMI=$!; }
M='gpu__time_duration.sum,dram__bytes.sum,sm__inst_executed.sum,launch__registers_per_thread,launch__grid_size,launch__block_size,sm__throughput.avg.pct_of_peak_sustained_elapsed,dram__throughput.avg.pct_of_peak_sustained_elapsed'
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader > $W/logs/gpu.txt
nvcc -O2 -arch=sm_90 docs/results/2026-12-07b/epilogue_rounds.cu -lcublasLt -o /tmp/epilogue_rounds > $W/logs/nvcc.txt 2>&1
sample rounds; timeout 90 /tmp/epilogue_rounds > $W/logs/epilogue_rounds.txt 2>&1; r=$?; kill $SMI
stage epilogue_rounds $r
timeout 60 ncu --clock-control none --csv --metrics $M /tmp/epilogue_rounds once > $W/logs/ncu-epilogue_rounds.csv 2>&1
stage ncu-epilogue_rounds $?
GPU_CHECK_BUDGET_S=200 LOG_DIR=$W/logs/build GPU_CHECK_COMMIT=$1 scripts/gpu-check.sh build > $W/logs/build.txt 2>&1
stage build $?
sample batched; timeout 120 build/gpu/bench/bench_matmul --benchmark_filter='Batched' --benchmark_repetitions=5 \
  --benchmark_report_aggregates_only=true > $W/logs/bench-batched.txt 2>&1; r=$?; kill $SMI
stage bench-batched $r
for f in 'BM_Batched128x2048/tf32:0/' 'BM_Batched128x2048_cuBLAS/tf32:0/' 'BM_Batched128x2048_cuBLASLt/tf32:0/'; do
  timeout 60 ncu --clock-control none --csv -c 12 --metrics $M build/gpu/bench/bench_matmul --benchmark_filter="$f" \
    > $W/logs/ncu-$(echo $f | tr '/:' '__').csv 2>&1
  stage "ncu $f" $?
done
cat $W/logs/gpu.txt $W/logs/times.txt $W/logs/epilogue_rounds.txt; grep median $W/logs/bench-batched.txt | cut -c1-120
for f in $W/logs/ncu-*.csv; do echo "== $f"; python3 scripts/ncu_kernels.py $f 2>&1 | cut -c1-220; done
