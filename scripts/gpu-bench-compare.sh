#!/usr/bin/env bash
# Before/after benchmarks in ONE run on the GPU machine: a refactor must keep every row within a tolerance.
#
#   here:        scripts/gpu-bench-compare.sh --prepare <base-commit>      (writes .bench-base/, git-ignored locally)
#   GPU machine: LOG_DIR=$OUT BENCH_COMPARE_HEAD=<head> scripts/gpu-bench-compare.sh   (device tool: carry .bench-base)
#
# The device tool copies the working tree without .git, so the "before" tree travels as a source snapshot in
# .bench-base/ (git archive of the base commit, with BASE_COMMIT inside). On the GPU machine both trees are
# configured with the gpu preset (Release) and only the benchmark programs are built (the head tree reuses
# build/gpu when gpu-check built it on a warm machine). Then ROUNDS rounds (default 5) run every program of
# BENCH_ONLY (default "bench_workloads bench_reductions bench_compile") once per tree with one repetition each
# (only the benchmarks matching BENCH_FILTER, a --benchmark_filter regex, where it is set),
# alternating which tree goes first, so drift of the machine falls on both sides alike. Each row's median over the
# rounds is compared; compare.md lists base, head, head/base and flags rows outside +-TOLERANCE_PCT (default 3),
# counting the kernels' run times only (compile times and the copy reference are listed, not counted). The figure
# is each benchmark's own time (real_time: the peers' method of bench/timing.h); event_ms beside it. Every program
# runs pinned to BENCH_CPUS (taskset), and rows outside the tolerance list each round's times.
#
# Out: $LOG_DIR/compare.md and $LOG_DIR/bench-compare.tar.gz (every round's JSON and the build logs).
# Exit status: 0 when every row is within the tolerance, 1 when some row is outside it, 2 on a build failure.
set -uo pipefail
exec </dev/null
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 2
ROOT=$PWD

if [[ ${1:-} == --prepare ]]; then
  base=${2:?usage: scripts/gpu-bench-compare.sh --prepare <base-commit>}
  grep -qxF '/.bench-base/' .git/info/exclude 2>/dev/null || echo '/.bench-base/' >>.git/info/exclude
  rm -rf .bench-base && mkdir -p .bench-base
  git archive "$base" | tar -x -C .bench-base || exit 2
  git rev-parse --short "$base" >.bench-base/BASE_COMMIT
  echo "prepared .bench-base at $(cat .bench-base/BASE_COMMIT) ($(du -sh .bench-base | cut -f1)); carry .bench-base"
  exit 0
fi

export CUDA_PATH=${CUDA_PATH:-/usr/local/cuda}
export PATH="$CUDA_PATH/bin:$PATH"
BASE_SRC=${BASE_SRC:-$ROOT/.bench-base}
ROUNDS=${ROUNDS:-5}
TOLERANCE_PCT=${TOLERANCE_PCT:-3}
BENCH_ONLY=${BENCH_ONLY:-"bench_workloads bench_reductions bench_compile"}
FILTER=()
[[ -n ${BENCH_FILTER:-} ]] && FILTER=(--benchmark_filter="$BENCH_FILTER")
LOG_DIR=${LOG_DIR:-$ROOT/build/bench-compare-out}
WORK=$ROOT/build/bench-compare
mkdir -p "$LOG_DIR" && LOG_DIR=$(cd "$LOG_DIR" && pwd)
rm -rf "$WORK" && mkdir -p "$WORK"
[[ -f $BASE_SRC/CMakeLists.txt ]] || { echo "no base tree at $BASE_SRC: run --prepare <commit> here first" >&2; exit 2; }
BASE_COMMIT=$(cat "$BASE_SRC/BASE_COMMIT" 2>/dev/null || echo unknown)
HEAD_COMMIT=${BENCH_COMPARE_HEAD:-unknown}

build() { # source-dir name
  local src=$1 name=$2 t=$SECONDS
  # shellcheck disable=SC2086 # BENCH_ONLY is a list of targets
  if ! { cmake --preset gpu -S "$src" -DLAZYFUSE_BUILD_BENCH=ON >"$WORK/build-$name.log" 2>&1 &&
    cmake --build "$src/build/gpu" -j"$(nproc)" --target $BENCH_ONLY >>"$WORK/build-$name.log" 2>&1; }; then
    echo "build of $name failed:" && tail -n 40 "$WORK/build-$name.log"
    tar -czf "$LOG_DIR/bench-compare.tar.gz" -C "$WORK" . && exit 2
  fi
  echo "built $name in $((SECONDS - t)) s"
}
build "$BASE_SRC" base
build "$ROOT" head

# Host-bound rows (graph building, launches) ran at one of two speeds from one process to the next on the shared
# host (4.3 or 6.2-6.9 us for the same binary): every program runs on the same cores, BENCH_CPUS (default 2,3).
PIN=()
command -v taskset >/dev/null && PIN=(taskset -c "${BENCH_CPUS:-2,3}")
for ((r = 1; r <= ROUNDS; ++r)); do
  order=(base head)
  ((r % 2 == 0)) && order=(head base)
  for side in "${order[@]}"; do
    src=$ROOT && [[ $side == base ]] && src=$BASE_SRC
    for prog in $BENCH_ONLY; do
      (cd "$src/build/gpu" && "${PIN[@]}" "./bench/$prog" "${FILTER[@]}" --benchmark_repetitions=1 --benchmark_out_format=json \
        --benchmark_out="$WORK/$side-$prog-r$r.json" >"$WORK/$side-$prog-r$r.log" 2>&1) ||
        echo "round $r: $side $prog exited non-zero (see its log)"
    done
  done
  echo "round $r done at $SECONDS s"
done

python3 - "$WORK" "$LOG_DIR/compare.md" "$TOLERANCE_PCT" "$BASE_COMMIT" "$HEAD_COMMIT" <<'EOF'
import glob, json, os, statistics, sys
work, out, tol, base_commit, head_commit = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4], sys.argv[5]
rows = {}  # (prog, name) -> side -> [(real, event)]
for path in sorted(glob.glob(os.path.join(work, "*-r*.json"))):
    side, rest = os.path.basename(path).split("-", 1)
    prog = rest.rsplit("-r", 1)[0]
    with open(path) as f:
        data = json.load(f)
    for b in data.get("benchmarks", []):
        if b.get("run_type") != "iteration" or b.get("error_occurred"):
            continue
        unit = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}[b.get("time_unit", "ns")]
        rows.setdefault((prog, b["name"]), {}).setdefault(side, []).append(
            (b["real_time"] * unit, b.get("event_ms", float("nan"))))
lines = [f"Before/after in one run: base {base_commit}, head {head_commit}; median of each side's rounds "
         f"(real time per call, ms; CUDA events beside); tolerance +-{tol:g}%.", "",
         "| program | benchmark | rounds | base ms | head ms | head/base | base event ms | head event ms | |",
         "|---|---|---:|---:|---:|---:|---:|---:|---|"]
outside = 0
for (prog, name), sides in sorted(rows.items()):
    if "base" not in sides or "head" not in sides:
        lines.append(f"| {prog} | {name} | | | | | | | only in {'head' if 'head' in sides else 'base'} |")
        continue
    b = statistics.median(t for t, _ in sides["base"]); h = statistics.median(t for t, _ in sides["head"])
    be = statistics.median(e for _, e in sides["base"]); he = statistics.median(e for _, e in sides["head"])
    ratio = h / b if b > 0 else float("nan")
    flag = "" if abs(ratio - 1) * 100 <= tol else "OUTSIDE"
    # The copy reference is the machine's, and compile times (fresh processes, NVRTC on the host) are listed for
    # the record: the tolerance applies to the kernels' run times.
    counted = "CopyReference" not in name and prog != "bench_compile"
    if flag and counted:
        outside += 1
    note = flag if counted else flag and "not counted"
    if flag:  # each round's times, to tell a shift from a bimodal machine
        note += " (base " + " ".join(f"{t:.4f}" for t, _ in sides["base"]) + "; head " + \
            " ".join(f"{t:.4f}" for t, _ in sides["head"]) + ")"
    lines.append(f"| {prog} | {name} | {min(len(sides['base']), len(sides['head']))} | {b:.4f} | {h:.4f} | "
                 f"{ratio:.3f} | {be:.4f} | {he:.4f} | {note} |")
lines += ["", f"{outside} row(s) outside +-{tol:g}%."]
with open(out, "w") as f:
    f.write("\n".join(lines) + "\n")
print("\n".join(lines))
sys.exit(1 if outside else 0)
EOF
rc=$?
tar -czf "$LOG_DIR/bench-compare.tar.gz" -C "$WORK" .
exit $rc
