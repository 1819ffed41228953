#!/usr/bin/env bash
# Session 13, run 2: the shared-library build (preset default, LAZYFUSE_SHARED_LIBS=ON: the shared CUDA runtime) on
# the H200: its GPU-labelled tests with a skip counted as a failure, then the README's main job (the demo).
cd "$(dirname "$0")/../../.."
export PATH=/usr/local/cuda/bin:$PATH
O=${OUT:-/tmp/out}/logs; mkdir -p $O
T0=$SECONDS
{ cmake --preset default > /dev/null && cmake --build build/default -j16 2>&1 | tail -3; } > $O/build.txt 2>&1
echo "build $((SECONDS-T0)) s" >> $O/build.txt
ldd build/default/tests/test_cuda_runtime > $O/ldd.txt 2>&1
LAZYFUSE_TEST_REQUIRE_GPU=1 timeout 330 ctest --test-dir build/default -L gpu -j12 --output-on-failure > $O/ctest-gpu.txt 2>&1
echo "tests $((SECONDS-T0)) s" >> $O/build.txt
timeout 60 build/default/examples/demo > $O/demo.txt 2>&1
echo "total $((SECONDS-T0)) s" >> $O/build.txt
tar czf ${OUT:-/tmp/out}/run2.tgz -C $O .
cat $O/build.txt; grep -E "cudart|lazyfuse|libcuda" $O/ldd.txt; tail -8 $O/ctest-gpu.txt; tail -12 $O/demo.txt
