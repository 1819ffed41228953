#!/usr/bin/env bash
# Session 25, call 4: the generated layer norm (ln_generated_new.cu, --fmad=false as lazyfuse compiles it) with the
# registers capped for more resident blocks (__launch_bounds__(256, N) with -DMIN_BLOCKS=N: N = 5, 6, 8) and with the shared-memory
# carveout set (100%: the most shared memory per SM), alone and together. Each line of layernorm.txt: the variant,
# then main.cu's generated kernel at the resident grid and at a block per row; ptxas's report per variant in ptxas-<variant>.txt.
#   run4.sh   (OUT: the device tool's folder)
cd "$(dirname "$0")/layernorm" || exit 2
export PATH=/usr/local/cuda/bin:$PATH
O=${OUT:-/tmp/out}; mkdir -p $O/logs
T0=$SECONDS
variants=("base:" "min5:-DMIN_BLOCKS=5" "min6:-DMIN_BLOCKS=6" "min8:-DMIN_BLOCKS=8" "carve:-DCARVEOUT=100"
  "min6carve:-DMIN_BLOCKS=6 -DCARVEOUT=100" "min8carve:-DMIN_BLOCKS=8 -DCARVEOUT=100")
for v in "${variants[@]}"; do
  name=${v%%:*}; flags=${v#*:}
  nvcc -O3 -arch=sm_90 -std=c++17 -w --fmad=false $flags -Xptxas -v -o /tmp/ln_$name main.cu ln_generated_new.cu \
    ln_registers.cu > $O/logs/ptxas-$name.txt 2>&1 &
done; wait
echo "build $((SECONDS-T0)) s" >> $O/logs/times.txt
for round in 1 2; do
  for v in "${variants[@]}"; do
    name=${v%%:*}
    echo "== $name round $round" >> $O/logs/layernorm.txt
    timeout 30 /tmp/ln_$name generated-only >> $O/logs/layernorm.txt 2>&1
  done
done
echo "runs $((SECONDS-T0)) s" >> $O/logs/times.txt
tar czf $O/logs.tar.gz -C $O logs
cat $O/logs/times.txt; grep -E "^==|generated" $O/logs/layernorm.txt; for f in $O/logs/ptxas-*.txt; do echo "$f"; grep -A3 "entry function 'lf_kcd" $f | grep -E "Used|spill"; done
