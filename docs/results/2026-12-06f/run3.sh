#!/usr/bin/env bash
# Call 3 (session 33): where the bucketed scatter-add's time goes. The gpu build; test_cuda_gather and test_gather
# with LAZYFUSE_TEST_REQUIRE_GPU=1; ncu's duration of each kernel of the first calls of BM_ScatterAdd and
# BM_ScatterAddSkewed; nsys's kernel summary and API summary of BM_ScatterAdd (the host's share).
#   device: docs/results/2026-12-06f/run3.sh <commit>        (OUT: the device tool's folder)
cd "$(dirname "$0")/../../.."
export PATH=/usr/local/cuda/bin:$PATH
O=${OUT:-/tmp/out}; W=/tmp/run3; rm -rf $W; mkdir -p $O $W/logs; T0=$SECONDS
pack() { tar czf $O/logs.tar.gz -C $W logs; }
stage() { echo "$1 rc $2 $((SECONDS - T0)) s" >> $W/logs/times.txt; pack; }
GPU_CHECK_BUDGET_S=200 LOG_DIR=$W/logs/build GPU_CHECK_COMMIT=$1 scripts/gpu-check.sh build > $W/logs/build.txt 2>&1
stage build $?
LAZYFUSE_TEST_REQUIRE_GPU=1 timeout 100 ctest --test-dir build/gpu -j 14 --output-on-failure -R \
  'test_gather|test_cuda_gather' > $W/logs/tests.txt 2>&1
stage tests $?
for f in BM_ScatterAdd BM_ScatterAddSkewed; do
  timeout 60 ncu --clock-control none --metrics gpu__time_duration.sum -c 24 build/gpu/bench/bench_gather \
    --benchmark_filter="$f\$" 2>&1 | grep -E "^  [a-zA-Z_].*\(|gpu__time_duration" > $W/logs/ncu-$f.txt
  stage "ncu $f" $?
done
timeout 90 nsys profile -o /tmp/sa --force-overwrite true build/gpu/bench/bench_gather \
  --benchmark_filter='BM_ScatterAdd$' > $W/logs/nsys.txt 2>&1
timeout 60 nsys stats --report cuda_gpu_kern_sum,cuda_api_sum /tmp/sa.nsys-rep > $W/logs/nsys-stats.txt 2>&1
stage nsys $?
cat $W/logs/times.txt; grep -E "tests passed|\(Failed\)" $W/logs/tests.txt
for f in BM_ScatterAdd BM_ScatterAddSkewed; do echo "== $f"; paste - - < $W/logs/ncu-$f.txt | sed -E 's/ +/ /g' | cut -c1-160 | head -24; done
grep -A22 "cuda_gpu_kern_sum" $W/logs/nsys-stats.txt | cut -c1-200 | head -24
grep -A16 "cuda_api_sum" $W/logs/nsys-stats.txt | cut -c1-160 | head -18
