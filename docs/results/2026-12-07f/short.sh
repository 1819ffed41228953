#!/usr/bin/env bash
# docs/results/2026-12-07e/next-call.sh shortened to fit what device time session 41 had left after eight failed
# starts: main, then main with both of branch next/bincount-range-first's changes (range-first.diff, then
# cached-facts.diff), two builds instead of three. test_bincount with LAZYFUSE_TEST_REQUIRE_GPU=1 and under memcheck
# on the second; the two bench_scan binaries alternately (up to 7 rounds, which goes first alternating), pinned as
# scripts/gpu-bench-compare.sh pins them; no round starts after 200 s.
#   device: docs/results/2026-12-07f/short.sh        (OUT: the device tool's folder)
cd "$(dirname "$0")/../../.."
export PATH=/usr/local/cuda/bin:$PATH
D=docs/results/2026-12-07e
O=${OUT:-/tmp/out}; W=/tmp/short; rm -rf $W; mkdir -p $O $W/logs/json; T0=$SECONDS
pack() { tar czf $O/logs.tar.gz -C $W logs; }
stage() { echo "$1 rc $2 $((SECONDS - T0)) s" >> $W/logs/times.txt; pack; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader > $W/logs/gpu.txt
build() { cmake --build build/gpu -j"$(nproc)" --target bench_scan test_bincount >> $W/logs/build.txt 2>&1; }
apply() { { patch -p1 < $D/$1 || git apply $D/$1; } >> $W/logs/build.txt 2>&1; }
cmake --preset gpu -DLAZYFUSE_BUILD_BENCH=ON > $W/logs/build.txt 2>&1 && build && cp build/gpu/bench/bench_scan $W/main
stage build-main $?
apply range-first.diff && apply cached-facts.diff && build && cp build/gpu/bench/bench_scan $W/branch
stage build-branch $?
LAZYFUSE_TEST_REQUIRE_GPU=1 timeout 30 build/gpu/tests/test_bincount > $W/logs/test_bincount.txt 2>&1
stage test_bincount $?
LAZYFUSE_POOL=none timeout 30 compute-sanitizer --tool memcheck --error-exitcode 1 build/gpu/tests/test_bincount \
  > $W/logs/memcheck-test_bincount.txt 2>&1
stage memcheck $?
sides=(main branch)
for r in 1 2 3 4 5 6 7; do
  for k in 0 1; do
    side=${sides[$(((r + k) % 2))]}
    ((SECONDS - T0 > 200)) && break 2
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
sides = ["main", "branch"]
print("| benchmark | " + " | ".join(f"{s} ms (each)" for s in sides) + " | branch/main |")
print("|---" * (len(sides) + 2) + "|")
for name, got in sorted(rows.items()):
    med = {s: statistics.median(got[s]) for s in sides if got.get(s)}
    cells = [f"{med[s]:.4f} ({' '.join(f'{t:.4f}' for t in got[s])})" if s in med else "-" for s in sides]
    ratio = lambda s: f"{med[s] / med['main']:.3f}" if s in med and "main" in med else "-"
    print(f"| {name} | " + " | ".join(cells) + f" | {ratio('branch')} |")
PY
stage compare 0
cat $W/logs/gpu.txt $W/logs/times.txt; grep -E "PASSED|FAILED|SKIPPED" $W/logs/test_bincount.txt | head -5
grep "ERROR SUMMARY" $W/logs/memcheck-test_bincount.txt; cat $W/logs/compare.md
