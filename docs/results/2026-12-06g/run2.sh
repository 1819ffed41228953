#!/usr/bin/env bash
# Call 2 (session 34): the scatter-add's partition by bucket (two kernels of lazyfuse's own in place of CUB's radix
# pass), with 9 digit bits (buckets of 2,048 elements) or, through the experiment's LAZYFUSE_EXPERIMENT_BUCKET_DIGIT_BITS=8,
# 8 (buckets of 4,096, as CUB's one pass had). The gpu build; the touched test programs with LAZYFUSE_TEST_REQUIRE_GPU=1
# (the scatter-add tests again with 8 bits); ncu's duration and DRAM bytes of each kernel of the first calls of
# BM_ScatterAdd and BM_ScatterAddSkewed with 9 and 8 bits; the shared atomics of the buckets' kernel (cuobjdump);
# memcheck of the scatter-add tests; bench_gather's scatter-adds (5 repetitions); before (.bench-base at c6cca2a: CUB's
# pass) and after, alternately (3 rounds); the gather peers' scatter-add (CuPy, torch) in the time left.
#   device: docs/results/2026-12-06g/run2.sh <commit>        (carry .bench-base; OUT: the device tool's folder)
cd "$(dirname "$0")/../../.."
export PATH=/usr/local/cuda/bin:$PATH
O=${OUT:-/tmp/out}; W=/tmp/run2; rm -rf $W; mkdir -p $O $W/logs; T0=$SECONDS
pack() { tar czf $O/logs.tar.gz -C $W logs; }
stage() { echo "$1 rc $2 $((SECONDS - T0)) s" >> $W/logs/times.txt; pack; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $W/logs/gpu.txt
GPU_CHECK_BUDGET_S=200 LOG_DIR=$W/logs/build GPU_CHECK_COMMIT=$1 scripts/gpu-check.sh build > $W/logs/build.txt 2>&1
stage build $?
LAZYFUSE_TEST_REQUIRE_GPU=1 timeout 100 ctest --test-dir build/gpu -j 14 --output-on-failure -R \
  'test_gather|test_cuda_gather|test_bincount' > $W/logs/tests.txt 2>&1
stage tests $?
LAZYFUSE_EXPERIMENT_BUCKET_DIGIT_BITS=8 LAZYFUSE_TEST_REQUIRE_GPU=1 timeout 60 build/gpu/tests/test_gather \
  --gtest_filter='*Millions*:*ScatterAdd*:*AddInto*' > $W/logs/tests-8bits.txt 2>&1
stage tests-8bits $?
LAZYFUSE_EXPERIMENT_BUCKET_DIGIT_BITS=8 LAZYFUSE_TEST_REQUIRE_GPU=1 timeout 60 build/gpu/tests/test_cuda_gather \
  --gtest_filter='*ScatterAdd*' >> $W/logs/tests-8bits.txt 2>&1
stage tests-8bits-cuda $?
for bits in 9 8; do
  for f in BM_ScatterAdd/ BM_ScatterAddSkewed/; do
    LAZYFUSE_EXPERIMENT_BUCKET_DIGIT_BITS=$bits timeout 60 ncu --clock-control none --csv \
      --metrics gpu__time_duration.sum,dram__bytes.sum -c 26 build/gpu/bench/bench_gather --benchmark_filter="$f" \
      > $W/logs/ncu-$bits-${f%/}.csv 2> $W/logs/ncu-$bits-${f%/}.err
    stage "ncu $bits $f" $?
  done
done
cuobjdump -sass build/gpu/runtime/CMakeFiles/lazyfuse_cub.dir/DeviceCount.cu.o 2>&1 | awk '/Function : .*lf_fixed_buckets.*IifE/{p=1} /Function : /&&!/lf_fixed_buckets.*IifE/{p=0} p' > $W/logs/sass-buckets.txt
grep -cE "ATOMS" $W/logs/sass-buckets.txt > $W/logs/sass-atoms.txt; grep -E "ATOMS|Function" $W/logs/sass-buckets.txt | sed -E 's/ +/ /g' | cut -c1-90 >> $W/logs/sass-atoms.txt
stage sass 0
LAZYFUSE_POOL=none timeout 60 compute-sanitizer --tool memcheck --error-exitcode 1 build/gpu/tests/test_cuda_gather \
  --gtest_filter='*ScatterAdd*' > $W/logs/memcheck.txt 2>&1
stage memcheck-cuda-gather $?
LAZYFUSE_POOL=none timeout 90 compute-sanitizer --tool memcheck --error-exitcode 1 build/gpu/tests/test_gather \
  --gtest_filter='*Millions*' > $W/logs/memcheck-millions.txt 2>&1
stage memcheck-millions $?
timeout 30 build/gpu/bench/bench_gather --benchmark_filter='ScatterAdd|CopyReference' --benchmark_repetitions=5 \
  --benchmark_report_aggregates_only=true --benchmark_out=$W/logs/bench_gather.json > $W/logs/bench_gather.txt 2>&1
stage bench_gather $?
LOG_DIR=$W/logs/compare BENCH_COMPARE_HEAD=$1 BENCH_ONLY="bench_gather" BENCH_FILTER='ScatterAdd|CopyReference' \
  ROUNDS=3 timeout $((430 - SECONDS + T0)) scripts/gpu-bench-compare.sh > $W/logs/compare.txt 2>&1
stage compare $?
PYTHONUNBUFFERED=1 timeout $((530 - SECONDS + T0)) python3 bench/peers/run_gather_peers.py --systems cupy,torch \
  --out-md $W/logs/gather-peers.md --out-json $W/logs/gather-peers.json --lazyfuse-json $W/logs/bench_gather.json \
  > $W/logs/peers.txt 2>&1
stage peers $?
cat $W/logs/gpu.txt $W/logs/times.txt; grep -E "tests passed|\(Failed\)" $W/logs/tests.txt; grep -E "PASSED|FAILED" $W/logs/tests-8bits.txt
for f in $W/logs/ncu-*.csv; do echo "== $(basename $f)"; python3 - "$f" <<'PY'
import csv, sys
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 10]
head = rows[0]; k = head.index("Kernel Name"); m = head.index("Metric Name"); v = head.index("Metric Value"); i = head.index("ID")
out = {}
for r in rows[1:]:
    out.setdefault(int(r[i]), [r[k].split("(")[0].replace("void ", "")[-60:], {}])[1][r[m]] = r[v]
for key in sorted(out)[-9:]:
    name, ms = out[key]
    print(f"{name:60s} {ms.get('gpu__time_duration.sum','')[:8]:>9s} ns-or-us {ms.get('dram__bytes.sum','')[:12]:>12s}")
PY
done
head -20 $W/logs/sass-atoms.txt; grep median $W/logs/bench_gather.txt | cut -c1-150; tail -n 2 $W/logs/memcheck.txt $W/logs/memcheck-millions.txt
cat $W/logs/compare/compare.md 2>/dev/null | head -12; grep -iE "scatter" $W/logs/gather-peers.md | head -5
