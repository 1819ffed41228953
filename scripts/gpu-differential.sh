#!/usr/bin/env bash
# The randomized differential test (tests/test_random_graphs.cpp) on the GPU machine, for every change to fusion or
# codegen: builds only the test_random_graphs target (cmake --preset gpu into build/gpu, reused when there), then runs
# PROCS processes of RandomGraphs.Differential at once, each with its own seed and CASES programs, checked against
# the float64 reference and against NumPy (the machine's python3 has NumPy 2).
#
#   LOG_DIR=$OUT scripts/gpu-differential.sh          (its own device command: not part of gpu-check.sh)
#
# Knobs (environment):
#   GPU_DIFF_PROCS      processes, default 8 (the machine has 16 cores; each process also runs one Python at a time)
#   GPU_DIFF_CASES      programs per process, default 250 (8 x 250 = 2,000)
#   GPU_DIFF_SEED       base seed (process i uses GPU_DIFF_SEED + i), default: random, printed
#   GPU_DIFF_BUDGET_S   seconds for the whole run, build included, default 540 (the device tool stops a command at
#                       600 s); processes still running at the end are killed and the run fails
#   LAZYFUSE_TEST_PYTHON  the Python with NumPy >= 2, default python3
#   GPU_DIFF_COMMIT     the commit to name in the summary (default: git's HEAD here; the device tool's checkout has
#                       its own HEAD, so pass GPU_DIFF_COMMIT=$(git rev-parse --short HEAD) from the sending machine)
#
# Output in $LOG_DIR (default build/gpu-differential-out): gpu-differential.tar.gz (the build log and every process's
# log, with the batch files of any disagreement) and summary.txt, which ends with the summary line
#   gpu-differential: PASS|FAIL programs=N numpy_programs=N disagree=N failed_cases=N crashes=N processes_failed=N
# after the per-category table summed over the processes. The exit status is non-zero on any failure, any NumPy
# disagreement, any crash, a process that did not finish, a backend other than CUDA, or fewer programs than asked.
set -uo pipefail
exec </dev/null

cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 2
ROOT=$PWD
T0=$SECONDS
BUDGET_S=${GPU_DIFF_BUDGET_S:-540}
PROCS=${GPU_DIFF_PROCS:-8}
CASES=${GPU_DIFF_CASES:-250}
SEED=${GPU_DIFF_SEED:-$((RANDOM * 32768 + RANDOM))}
PY=${LAZYFUSE_TEST_PYTHON:-python3}
export CUDA_PATH=${CUDA_PATH:-/usr/local/cuda}
export PATH="$CUDA_PATH/bin:$PATH"
export GTEST_COLOR=no
BUILD_DIR=$ROOT/build/gpu
WORK=$ROOT/build/gpu-differential-logs
LOG_DIR=${LOG_DIR:-$ROOT/build/gpu-differential-out}
mkdir -p "$LOG_DIR" && LOG_DIR=$(cd "$LOG_DIR" && pwd)
rm -rf "$WORK" && mkdir -p "$WORK"
rm -f "$LOG_DIR"/gpu-differential.tar.gz "$LOG_DIR"/summary.txt

left() { echo $((BUDGET_S - (SECONDS - T0))); }
COMMIT=${GPU_DIFF_COMMIT:-$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?')}
echo "gpu-differential: commit $COMMIT, $PROCS processes x $CASES programs, base seed $SEED, budget ${BUDGET_S} s"

finish() { # status line: writes summary.txt, packs the logs, exits
  local status=$1 line=$2
  {
    echo "lazyfuse gpu-differential $(date -u +%FT%TZ), commit $COMMIT, $((SECONDS - T0)) s"
    echo "gpu: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | tr '\n' ';')"
    echo "numpy: $("$PY" -c 'import numpy; print(numpy.__version__)' 2>&1 | tail -1)"
    echo "base seed $SEED: process i ran LAZYFUSE_TEST_RANDOM_SEED=$SEED+i LAZYFUSE_TEST_RANDOM_GRAPHS=$CASES"
    [[ -f $WORK/categories.txt ]] && cat "$WORK/categories.txt"
    echo "$line"
  } >"$WORK/summary.txt"
  cp "$WORK/summary.txt" "$LOG_DIR/summary.txt"
  tar -czf "$LOG_DIR/gpu-differential.tar.gz" -C "$(dirname "$WORK")" "$(basename "$WORK")"
  cat "$WORK/summary.txt"
  exit "$status"
}

# ---- build: the one target
t=$SECONDS
if ! { cmake --preset gpu && cmake --build --preset gpu -j "$(nproc)" --target test_random_graphs; } \
  >"$WORK/build.log" 2>&1; then
  tail -n 40 "$WORK/build.log"
  finish 1 "gpu-differential: FAIL build failed (build.log)"
fi
echo "build: $((SECONDS - t)) s"
BIN=$BUILD_DIR/tests/test_random_graphs
[[ -x $BIN ]] || finish 1 "gpu-differential: FAIL no $BIN after the build"
if ! "$PY" -c 'import sys, numpy; sys.exit(int(numpy.__version__.split(".")[0]) < 2)' >/dev/null 2>&1; then
  finish 1 "gpu-differential: FAIL $PY has no NumPy >= 2 (set LAZYFUSE_TEST_PYTHON)"
fi

# ---- the processes: one folder each (batch files, kernel cache), all started at once
t=$SECONDS
pids=()
limit=$(left)
((limit < 30)) && finish 1 "gpu-differential: FAIL the build left only $limit s of the budget"
for ((i = 0; i < PROCS; i++)); do
  dir=$WORK/p$i
  mkdir -p "$dir"
  (cd "$dir" && CI=true LAZYFUSE_TEST_PYTHON=$PY LAZYFUSE_TEST_RANDOM_SEED=$((SEED + i)) \
    LAZYFUSE_TEST_RANDOM_GRAPHS=$CASES LAZYFUSE_CACHE_DIR=$dir/kernel-cache \
    timeout --kill-after=10 "$limit" "$BIN" --gtest_filter=RandomGraphs.Differential >"$dir/test.log" 2>&1
   echo $? >"$dir/exit") &
  pids+=($!)
done
wait "${pids[@]}"
echo "processes: $((SECONDS - t)) s"

# ---- what they found
programs=0 numpy_programs=0 disagree=0 failed_cases=0 crashes=0 bad=0
for ((i = 0; i < PROCS; i++)); do
  dir=$WORK/p$i log=$WORK/p$i/test.log
  rc=$(cat "$dir/exit" 2>/dev/null || echo '?')
  rm -rf "$dir/kernel-cache"
  ran=$(sed -n 's/^\[random seed\] seed [0-9]*: \([0-9]*\) cases.*/\1/p' "$log" | tail -1)
  programs=$((programs + ${ran:-0} / 2)) # each case runs twice (the second replays plans)
  np_line=$(grep -E '^\[random seed\] NumPy ' "$log" | tail -1)
  n=$(sed -n 's/.*: \([0-9]*\) programs, .*/\1/p' <<<"$np_line")
  d=$(sed -n 's/.* \([0-9]*\) programs disagree.*/\1/p' <<<"$np_line")
  numpy_programs=$((numpy_programs + ${n:-0})) disagree=$((disagree + ${d:-0}))
  f=$(sed -n 's/.* \([0-9]*\) failing cases in all.*/\1/p' "$log" | tail -1)
  [[ -z $f ]] && f=$(grep -c '^case [0-9]* program:' "$log" || true)
  failed_cases=$((failed_cases + ${f:-0}))
  c=$(grep -c 'test_random_graphs: crashed in' "$log" || true)
  crashes=$((crashes + c))
  backend=$(sed -n 's/.*, backend \([a-z]*\)$/\1/p' "$log" | head -1)
  note=""
  [[ $rc != 0 ]] && note="exit $rc"
  [[ $backend != cuda ]] && note="$note backend '${backend:-?}', not cuda"
  [[ -z $np_line ]] && note="$note no NumPy summary"
  [[ ${ran:-0} -ne $((2 * CASES)) ]] && note="$note ran $((${ran:-0} / 2)) of $CASES"
  if [[ -n $note ]]; then
    bad=$((bad + 1))
    echo "process $i (LAZYFUSE_TEST_RANDOM_SEED=$((SEED + i))):$note"
    grep -E 'crashed in|Failure|disagrees|exception' "$log" | head -5
  fi
done

# The category tables, summed: rows are "<name> <programs> <failed> <minimum>" after the header.
awk '
  /^category \(programs that ran it\)/ { on = 1; next }
  on && /^\[/ { on = 0 }
  on && NF >= 4 {
    sub(/  <-- below the minimum$/, "")
    name = $0; sub(/[ ]+[0-9]+[ ]+[0-9]+[ ]+[0-9]+$/, "", name)
    if (!(name in prog)) order[++n] = name
    prog[name] += $(NF - 2); fail[name] += $(NF - 1)
  }
  END {
    printf "%-44s %9s %9s\n", "category (programs, all processes)", "programs", "failed"
    for (i = 1; i <= n; i++) printf "%-44s %9d %9d\n", order[i], prog[order[i]], fail[order[i]]
  }' "$WORK"/p*/test.log >"$WORK/categories.txt"

status=PASS
((disagree + failed_cases + crashes + bad > 0 || programs < PROCS * CASES)) && status=FAIL
line="gpu-differential: $status programs=$programs numpy_programs=$numpy_programs disagree=$disagree"
line="$line failed_cases=$failed_cases crashes=$crashes processes_failed=$bad seconds=$((SECONDS - T0))"
[[ $status == PASS ]] && finish 0 "$line"
finish 1 "$line"
