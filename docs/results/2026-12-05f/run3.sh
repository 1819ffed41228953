#!/usr/bin/env bash
# Session 25, call 3: where the generated layer norm's time goes. layernorm/main.cu built four times: against the
# generated kernel before (session 24's ../../2026-12-05e/layernorm/ln_generated.cu, unchanged to 116f57d) and after (ln_generated_new.cu, 3da5547) this session's
# change, each with --fmad=false (lazyfuse's NVRTC options) and --fmad=true; each binary also runs the hand-written
# rows-in-registers kernels (true division, reciprocal multiply, the exact reciprocal division). Then Nsight Compute
# (when installed) on the new generated kernel at a block per row, and on the registers kernel with the exact division.
# (Run as committed before ln_generated_old.cu, a copy of that file, was dropped.)
#   run3.sh   (OUT: the device tool's folder)
cd "$(dirname "$0")/layernorm" || exit 2
export PATH=/usr/local/cuda/bin:$PATH
O=${OUT:-/tmp/out}; mkdir -p $O/logs
T0=$SECONDS
for v in old new; do for f in false true; do
  nvcc -O3 -arch=sm_90 -std=c++17 -w --fmad=$f -o /tmp/ln_${v}_$f main.cu $([ $v = old ] && echo ../../2026-12-05e/layernorm/ln_generated.cu || echo ln_generated_new.cu) ln_registers.cu &
done; done; wait
echo "build $((SECONDS-T0)) s" >> $O/logs/times.txt
for v in old new; do for f in false true; do
  echo "== generated $v, --fmad=$f" >> $O/logs/layernorm.txt
  timeout 60 /tmp/ln_${v}_$f >> $O/logs/layernorm.txt 2>&1
done; done
echo "runs $((SECONDS-T0)) s" >> $O/logs/times.txt
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
echo "ncu: ${NCU:-none}" >> $O/logs/times.txt
if [ -n "$NCU" ]; then
  S="--section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats --section WarpStateStats --section SchedulerStats"
  # Launch order in main.cu: each variant runs 101 times (a warm-up and 5 x 20); the generated kernel at the resident
  # grid, then at a block per row; the registers kernel: modes 0, 1, 2, each at 256 (resident, rows), 512 (...).
  timeout 120 $NCU $S -k regex:lf_k --launch-skip 101 --launch-count 1 /tmp/ln_new_false > $O/logs/ncu-generated.txt 2>&1
  timeout 120 $NCU $S -k regex:ln_registers --launch-skip 909 --launch-count 1 /tmp/ln_new_false > $O/logs/ncu-registers.txt 2>&1
  echo "ncu $((SECONDS-T0)) s" >> $O/logs/times.txt
fi
tar czf $O/logs.tar.gz -C $O logs
cat $O/logs/times.txt; grep -E "^==|ms" $O/logs/layernorm.txt
