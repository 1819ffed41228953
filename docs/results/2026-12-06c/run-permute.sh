#!/usr/bin/env bash
# The permute experiment (permute_experiment.cu): timings and checks, then Nsight Compute's DRAM and L2 counts of one
# launch of each variant.     device: docs/results/2026-12-06c/run-permute.sh      (OUT: the device tool's folder)
cd "$(dirname "$0")"
export PATH=/usr/local/cuda/bin:$PATH
O=${OUT:-/tmp/out}; mkdir -p $O; T0=$SECONDS
nvcc -O3 -std=c++17 -arch=sm_90 permute_experiment.cu -o /tmp/pe || exit 1
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader | tee $O/permute.txt
timeout 60 /tmp/pe | tee -a $O/permute.txt
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_op_read.sum,lts__t_sectors_op_write.sum
timeout 150 ncu --clock-control none --kernel-name regex:tiled --metrics $M --csv /tmp/pe --ncu > $O/ncu.csv 2> $O/ncu-err.txt
echo "ncu rc $? $((SECONDS - T0)) s"
M2=lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum,lts__t_sectors_srcunit_tex_op_write_lookup_miss.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_write.sum
timeout $((250 - SECONDS + T0)) ncu --clock-control none --kernel-name regex:tiled --metrics $M2 --csv /tmp/pe --ncu > $O/ncu2.csv 2>> $O/ncu-err.txt
echo "ncu2 rc $? $((SECONDS - T0)) s"
python3 - $O/ncu.csv $O/ncu2.csv <<'PY'
import csv, sys, collections
for f in sys.argv[1:]:
    rows = collections.OrderedDict()
    try:
        lines = [l for l in open(f) if l.startswith('"')]
    except OSError: continue
    for r in csv.DictReader(lines):
        rows.setdefault(r["ID"], []).append((r["Metric Name"], r["Metric Unit"], r["Metric Value"]))
    for i, ms in rows.items(): print(i, "; ".join(f"{m}={v} {u}" for m, u, v in ms))
PY
