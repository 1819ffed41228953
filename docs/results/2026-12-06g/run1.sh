#!/usr/bin/env bash
# Call 1 (session 34): where the bucketed scatter-add's time goes. The gpu build of bench_gather; ncu (or nsys, where
# found: neither was on the H100's PATH in session 33) of the first calls of BM_ScatterAdd and BM_ScatterAddSkewed,
# each kernel's duration and DRAM bytes; bench_gather's scatter-adds (5 repetitions).
#   device: docs/results/2026-12-06g/run1.sh <commit>        (OUT: the device tool's folder)
cd "$(dirname "$0")/../../.."
export PATH=/usr/local/cuda/bin:$PATH
O=${OUT:-/tmp/out}; W=/tmp/run1; rm -rf $W; mkdir -p $O $W/logs; T0=$SECONDS
pack() { tar czf $O/logs.tar.gz -C $W logs; }
stage() { echo "$1 rc $2 $((SECONDS - T0)) s" >> $W/logs/times.txt; pack; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $W/logs/gpu.txt
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu /usr/local/cuda*/nsight-compute*/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
NSYS=$(command -v nsys || ls /usr/local/cuda*/bin/nsys /usr/local/cuda*/nsight-systems*/bin/nsys /opt/nvidia/nsight-systems/*/bin/nsys 2>/dev/null | head -1)
{ echo "ncu: $NCU"; echo "nsys: $NSYS"; ls /usr/local/cuda/ /opt/nvidia 2>&1; } > $W/logs/tools.txt
timeout 20 find / -xdev \( -name 'ncu' -o -name 'nsys' -o -name 'libcupti.so*' \) 2>/dev/null | head -20 >> $W/logs/tools.txt
stage tools 0
cmake --preset gpu > $W/logs/build.txt 2>&1 && ninja -C build/gpu bench_gather >> $W/logs/build.txt 2>&1
stage build $?
for f in BM_ScatterAdd BM_ScatterAddSkewed; do
  if [ -n "$NCU" ]; then
    timeout 60 $NCU --clock-control none --metrics gpu__time_duration.sum,dram__bytes.sum -c 24 \
      build/gpu/bench/bench_gather --benchmark_filter="$f\$" > $W/logs/ncu-$f.txt 2>&1
    stage "ncu $f" $?
  fi
  if [ -n "$NSYS" ]; then
    timeout 90 $NSYS profile -o $W/nsys-$f --force-overwrite true build/gpu/bench/bench_gather \
      --benchmark_filter="$f\$" > $W/logs/nsys-run-$f.txt 2>&1
    timeout 60 $NSYS stats -r cuda_gpu_kern_sum,cuda_gpu_trace -f csv -o $W/logs/nsys-$f $W/nsys-$f.nsys-rep \
      > $W/logs/nsys-stats-$f.txt 2>&1
    stage "nsys $f" $?
  fi
done
timeout 30 build/gpu/bench/bench_gather --benchmark_filter='ScatterAdd|CopyReference' --benchmark_repetitions=5 \
  --benchmark_report_aggregates_only=true > $W/logs/bench_gather.txt 2>&1
stage bench_gather $?
cat $W/logs/gpu.txt $W/logs/times.txt $W/logs/tools.txt
for f in BM_ScatterAdd BM_ScatterAddSkewed; do
  echo "== $f"
  [ -f $W/logs/ncu-$f.txt ] && grep -E "^  [a-zA-Z_].*\(|gpu__time_duration|dram__bytes" $W/logs/ncu-$f.txt | paste - - - | sed -E 's/ +/ /g' | cut -c1-220 | head -24
  ls $W/logs/nsys-$f*kern_sum*.csv 2>/dev/null && head -20 $W/logs/nsys-$f*kern_sum*.csv | cut -c1-200
done
grep median $W/logs/bench_gather.txt | cut -c1-150
