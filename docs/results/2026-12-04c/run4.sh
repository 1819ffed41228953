#!/usr/bin/env bash
# Session 18, run 4 (one device call, right after run 3 on the same machine, whose build it uses): the whole test
# suite with LAZYFUSE_TEST_REQUIRE_GPU=1.
#   run4.sh   (OUT: the device tool's folder)
cd "$(dirname "$0")/../../.."
export PATH=/usr/local/cuda/bin:$PATH
O=${OUT:-/tmp/out}; mkdir -p $O/logs
T0=$SECONDS
LAZYFUSE_TEST_REQUIRE_GPU=1 LAZYFUSE_TEST_PYTHON=$(command -v python3) timeout 580 \
  ctest --test-dir build/gpu -j14 --output-on-failure > $O/logs/ctest.txt 2>&1
echo "ctest rc $? $((SECONDS-T0)) s" >> $O/logs/times.txt
tar czf $O/logs.tar.gz -C $O logs
cat $O/logs/times.txt; grep -E "tests passed|\(Failed\)|Timeout|Not Run" $O/logs/ctest.txt | head -30
