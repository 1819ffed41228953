#!/usr/bin/env bash
# Session 25, call 2 (on the machine call 1 left warm, with its build/gpu): the rest of the suite with
# LAZYFUSE_TEST_REQUIRE_GPU=1, everything run1.sh's ctest did not run (the whole suite last ran on a GPU at 724628d).
#   run2.sh   (OUT: the device tool's folder)
cd "$(dirname "$0")/../../.."
export PATH=/usr/local/cuda/bin:$PATH
O=${OUT:-/tmp/out}; mkdir -p $O/logs
T0=$SECONDS
LAZYFUSE_TEST_REQUIRE_GPU=1 LAZYFUSE_TEST_PYTHON=$(command -v python3) timeout 560 ctest --test-dir build/gpu -j12 \
  --output-on-failure -E "test_value_divisors|test_cuda_numerics|test_reductions|test_fusion|test_schedule|test_cuda_schedule|test_codegen|test_compositions|test_cpu_reductions" \
  > $O/logs/ctest-rest.txt 2>&1
echo "ctest rc $? $((SECONDS-T0)) s" >> $O/logs/times.txt
tar czf $O/logs.tar.gz -C $O logs
cat $O/logs/times.txt; grep -E "tests passed|\(Failed\)|Timeout|Not Run" $O/logs/ctest-rest.txt | head -30
