#!/usr/bin/env bash
# Call 3 (session 40, issue 18), a short form of run2.sh for the device time left: one tree built twice. bench_scan and
# test_bincount at main (bincount's range after its counters), then again with range-first.diff applied (8aaa533 on
# branch next/bincount-range-first: the range published before the counters are added); test_bincount with
# LAZYFUSE_TEST_REQUIRE_GPU=1 and under memcheck with the diff; the two bench_scan binaries alternately, 5 rounds,
# pinned as scripts/gpu-bench-compare.sh pins them (no round starts after 165 s).
#   device: docs/results/2026-12-07e/run3.sh        (OUT: the device tool's folder)
cd "$(dirname "$0")/../../.."
export PATH=/usr/local/cuda/bin:$PATH
O=${OUT:-/tmp/out}; W=/tmp/run3; rm -rf $W; mkdir -p $O $W/logs/json; T0=$SECONDS
pack() { tar czf $O/logs.tar.gz -C $W logs; }
stage() { echo "$1 rc $2 $((SECONDS - T0)) s" >> $W/logs/times.txt; pack; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader > $W/logs/gpu.txt
build() { cmake --build build/gpu -j"$(nproc)" --target bench_scan test_bincount >> $W/logs/build.txt 2>&1; }
cmake --preset gpu -DLAZYFUSE_BUILD_BENCH=ON > $W/logs/build.txt 2>&1 && build && cp build/gpu/bench/bench_scan $W/base
stage build-base $?
{ patch -p1 < docs/results/2026-12-07e/range-first.diff || git apply docs/results/2026-12-07e/range-first.diff; } >> $W/logs/build.txt 2>&1 && build && cp build/gpu/bench/bench_scan $W/head
stage build-head $?
LAZYFUSE_TEST_REQUIRE_GPU=1 timeout 30 build/gpu/tests/test_bincount > $W/logs/test_bincount.txt 2>&1
stage test_bincount $?
LAZYFUSE_POOL=none timeout 30 compute-sanitizer --tool memcheck --error-exitcode 1 build/gpu/tests/test_bincount \
  > $W/logs/memcheck-test_bincount.txt 2>&1
stage memcheck $?
for r in 1 2 3 4 5; do
  order="base head"; ((r % 2 == 0)) && order="head base"
  for side in $order; do
    ((SECONDS - T0 > 165)) && break 2
    timeout 20 taskset -c 2,3 $W/$side --benchmark_filter='Bincount|CopyReference' --benchmark_repetitions=1 \
      --benchmark_out_format=json --benchmark_out=$W/logs/json/$side-r$r.json > $W/logs/$side-r$r.txt 2>&1
    pack
  done
done
python3 - $W/logs/json > $W/logs/compare.md <<'PY'
import glob, json, os, statistics, sys
rows = {}
for path in sorted(glob.glob(os.path.join(sys.argv[1], "*.json"))):
    side = os.path.basename(path).split("-")[0]
    for b in json.load(open(path)).get("benchmarks", []):
        if b.get("run_type") == "iteration" and not b.get("error_occurred"):
            rows.setdefault(b["name"], {}).setdefault(side, []).append(b["real_time"])
print("| benchmark | rounds | base ms (each) | head ms (each) | head/base |\n|---|---|---|---|---|")
for name, sides in sorted(rows.items()):
    b, h = sides.get("base", []), sides.get("head", [])
    if b and h:
        print(f"| {name} | {len(b)}/{len(h)} | {statistics.median(b):.4f} ({' '.join(f'{t:.4f}' for t in b)}) | "
              f"{statistics.median(h):.4f} ({' '.join(f'{t:.4f}' for t in h)}) | {statistics.median(h)/statistics.median(b):.3f} |")
PY
stage compare 0
cat $W/logs/gpu.txt $W/logs/times.txt; grep -E "PASSED|FAILED|SKIPPED" $W/logs/test_bincount.txt | head -5
grep "ERROR SUMMARY" $W/logs/memcheck-test_bincount.txt; cat $W/logs/compare.md
