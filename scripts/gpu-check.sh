#!/usr/bin/env bash
# Build, test, memcheck and benchmark lazyfuse on the GPU machine (H200: 16 cores, cmake 4, ninja, g++ 13,
# CUDA 13 at /usr/local/cuda, gtest, benchmark, no internet, root).
#
#   LOG_DIR=$OUT scripts/gpu-check.sh [build] [test] [memcheck] [bench] [examples] [peers]
#                                                       (no stage named: build test memcheck bench examples)
#
#   build     cmake --preset gpu (Ninja, Release, build/gpu) and build with all cores
#   test      LAZYFUSE_TEST_REQUIRE_GPU=1 ctest --test-dir build/gpu --output-on-failure -j$CTEST_JOBS (a skipped gpu
#             test fails)
#   memcheck  compute-sanitizer --tool memcheck on the gpu-labelled test programs (tests/test_*{cuda,gpu}*) but
#             test_cuda_context_lost (faults on purpose), LAZYFUSE_POOL=none, LAZYFUSE_TEST_RANDOM_GRAPHS=50
#   examples  every program in build/gpu/examples at full size (each checks its own result), one log
#   peers     the peers' table and figure (bench/peers/run_peers.py) with this run's lazyfuse JSON: measures CuPy,
#             PyTorch and JAX, or with PEERS_FROM_JSON=<peers.json of an earlier run> only re-renders (peers.md,
#             peers.png next to the archive); then the element types' table (--workloads types: peers-types.md next
#             to the archive, its figure and JSON inside), or with PEERS_TYPES_FROM_JSON only re-renders it.
#             PEERS_TABLES=f32 or types runs one of the two. Not part of "all": name it.
#   bench     every program in build/gpu/bench, JSON results (5 repetitions, aggregates only): the lazyfuse
#             workloads (bench_workloads, bench_reductions), the element types (bench_types: float16, bfloat16,
#             complex), the compile times (bench_compile, which re-runs itself through /proc/self/exe) and the
#             hand-written CUDA limits (bench_limits, when nvcc was found)
#
# Every log goes to a folder (build/gpu-check-logs) that is packed, after each stage, into ONE archive
# $LOG_DIR/gpu-check.tar.gz. Next to it: summary.txt and at most 6 bench-<name>.json (8 files at most, all the
# device tool returns). The stage table is printed last; the exit status is non-zero if any stage failed.
#
# Knobs (environment):
#   GPU_CHECK_BUDGET_S  seconds for the whole run, default 570 (the device tool stops a command at 600 s);
#                       0 = no limit. Stages still running at the end are killed and marked "timed out".
#   CTEST_ARGS          extra ctest arguments for `test` (e.g. "-L gpu" or "-R fusion")
#   CTEST_JOBS          tests at once (default: 3/4 of the cores; at -j8 on the 16-core GPU host the suite took 510 s)
#   MEMCHECK_TIMEOUT_S  per test program under compute-sanitizer (default 300)
#   MEMCHECK_ONLY       the test programs to run under memcheck, by name (e.g. "test_cuda_gather test_cuda_sort")
#   BENCH_TIMEOUT_S     per benchmark program (default 240)
#   BENCH_ARGS          extra benchmark arguments (e.g. --benchmark_filter=Fused)
#   BENCH_ONLY          the benchmark programs to run, by name (e.g. "bench_reductions bench_workloads")
#   GPU_CHECK_COMMIT    the commit to name in summary.txt (default: git's HEAD here). The device tool copies the
#                       working tree onto its own checkout, whose HEAD is not the tree's: pass
#                       GPU_CHECK_COMMIT=$(git rev-parse --short HEAD) from the machine that sends the command.
# Since build/ is git-ignored, build/gpu survives between device calls on a warm machine, so a long check can
# be split: `scripts/gpu-check.sh build test`, then `scripts/gpu-check.sh memcheck bench`.
set -uo pipefail
exec </dev/null

cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 2
ROOT=$PWD
T0=$SECONDS
BUDGET_S=${GPU_CHECK_BUDGET_S:-570}
export CUDA_PATH=${CUDA_PATH:-/usr/local/cuda}
export PATH="$CUDA_PATH/bin:$PATH"
export GTEST_COLOR=no
# The machine's python3 has NumPy 2: the tests that compare with NumPy (random graphs, types) run here too.
export LAZYFUSE_TEST_PYTHON=${LAZYFUSE_TEST_PYTHON:-$(command -v python3)}
JOBS=$(nproc 2>/dev/null || echo 8)
CTEST_JOBS=${CTEST_JOBS:-$(((JOBS * 3 + 3) / 4))}
BUILD_DIR=$ROOT/build/gpu
WORK=$ROOT/build/gpu-check-logs
LOG_DIR=${LOG_DIR:-$ROOT/build/gpu-check-out}
mkdir -p "$LOG_DIR" && LOG_DIR=$(cd "$LOG_DIR" && pwd)
MAX_BENCH_JSON=6 # + summary.txt + gpu-check.tar.gz = the device tool's 8 files

ALL_STAGES=(build test memcheck bench examples)
declare -A WANT=()
if (($# == 0)); then
  for s in "${ALL_STAGES[@]}"; do WANT[$s]=1; done
else
  for s in "$@"; do
    case $s in
      build | test | memcheck | bench | examples | peers) WANT[$s]=1 ;;
      all) for t in "${ALL_STAGES[@]}"; do WANT[$t]=1; done ;;
      -h | --help) awk 'NR > 1 && /^#/ { print; next } NR > 1 { exit }' "$0"; exit 0 ;;
      *) echo "gpu-check: unknown stage '$s' (stages: ${ALL_STAGES[*]})" >&2; exit 2 ;;
    esac
  done
fi

rm -rf "$WORK" && mkdir -p "$WORK"
rm -f "$LOG_DIR"/gpu-check.tar.gz "$LOG_DIR"/summary.txt "$LOG_DIR"/bench-*.json "$LOG_DIR"/peers.* "$LOG_DIR"/peers-types.*

declare -a S_NAME=() S_STATUS=() S_SECS=() S_NOTE=()
FAILED=0
record() { # stage status seconds note
  S_NAME+=("$1"); S_STATUS+=("$2"); S_SECS+=("$3"); S_NOTE+=("${4:-}")
  [[ $2 == FAIL ]] && FAILED=1
  return 0
}

# Seconds left of the budget (a large number when there is none).
left() {
  if ((BUDGET_S <= 0)); then echo 999999; else echo $((BUDGET_S - (SECONDS - T0))); fi
}
# run_limited SECONDS LOG COMMAND...: runs COMMAND with its output in LOG, under min(SECONDS, budget left).
run_limited() {
  local limit=$1 log=$2; shift 2
  local l; l=$(left)
  ((l < limit)) && limit=$l
  if ((limit < 5)); then echo "gpu-check: budget spent, not started: $*" >>"$log"; return 124; fi
  timeout --kill-after=20 "$limit" "$@" >>"$log" 2>&1
}
show_tail() { # log: the end of a failed stage's log, for the device tool's output tail
  echo "----- last 40 lines of ${1#"$ROOT"/} -----"
  tail -n 40 "$1"
  echo "-----"
}

table() {
  printf '%-9s | %-6s | %7s | %s\n' stage status seconds notes
  printf '%-9s-+-%-6s-+-%7s-+-%s\n' --------- ------ ------- -----
  local i
  for i in "${!S_NAME[@]}"; do
    printf '%-9s | %-6s | %7s | %s\n' "${S_NAME[$i]}" "${S_STATUS[$i]}" "${S_SECS[$i]}" "${S_NOTE[$i]}"
  done
}

# Packs the logs into $LOG_DIR (run after each stage, so a run stopped from outside still leaves its logs).
pack() {
  {
    echo "lazyfuse gpu-check $(date -u +%FT%TZ), commit ${GPU_CHECK_COMMIT:-$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?')}, $((SECONDS - T0)) s"
    echo "gpu: $(cat "$WORK/gpu.csv" 2>/dev/null | tail -n +2 | tr '\n' ';')"
    table
  } >"$WORK/summary.txt"
  cp "$WORK/summary.txt" "$LOG_DIR/summary.txt"
  tar -czf "$LOG_DIR/gpu-check.tar.gz.tmp" -C "$(dirname "$WORK")" "$(basename "$WORK")" &&
    mv "$LOG_DIR/gpu-check.tar.gz.tmp" "$LOG_DIR/gpu-check.tar.gz"
  local n=0 f
  for f in "$WORK"/bench-*.json; do
    [[ -f $f ]] || continue
    ((n < MAX_BENCH_JSON)) && cp "$f" "$LOG_DIR/"
    n=$((n + 1))
  done
  return 0
}

echo "lazyfuse gpu-check: stages ${!WANT[*]}; $JOBS cores; budget ${BUDGET_S} s; logs -> $LOG_DIR/gpu-check.tar.gz"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv 2>&1 | tee "$WORK/gpu.csv" || true
{ nvidia-smi 2>&1; echo; cmake --version 2>&1 | head -1; ninja --version 2>&1; g++ --version 2>&1 | head -1;
  nvcc --version 2>&1 | tail -2; uname -a; } >"$WORK/environment.txt" || true

# ---------------------------------------------------------------------------------------------------- build
BUILD_OK=1
if [[ -n ${WANT[build]:-} ]]; then
  echo "== build"
  t=$SECONDS log=$WORK/build.log
  rc=0
  run_limited 999999 "$log" cmake --preset gpu || rc=$?
  ((rc == 0)) && { run_limited 999999 "$log" cmake --build --preset gpu -j "$JOBS" || rc=$?; }
  warnings=$(grep -c 'warning:' "$log" || true)
  if ((rc == 0)); then
    record build OK $((SECONDS - t)) "$warnings warnings"
  else
    BUILD_OK=0
    show_tail "$log"
    note="exit $rc"; ((rc == 124 || rc == 137)) && note="timed out"
    record build FAIL $((SECONDS - t)) "$note; $(grep -c 'error:' "$log" || true) errors (build.log)"
  fi
  pack
fi
if ((BUILD_OK)) && [[ ! -f $BUILD_DIR/CTestTestfile.cmake ]]; then
  BUILD_OK=0
  NO_BUILD_REASON="no build in build/gpu (run the build stage)"
else
  NO_BUILD_REASON="build failed"
fi

# ----------------------------------------------------------------------------------------------------- test
if [[ -n ${WANT[test]:-} ]]; then
  echo "== test"
  t=$SECONDS log=$WORK/test.log
  if ((!BUILD_OK)); then
    record test FAIL 0 "not run: $NO_BUILD_REASON"
  else
    rc=0
    # shellcheck disable=SC2086
    LAZYFUSE_TEST_REQUIRE_GPU=1 run_limited 999999 "$log" ctest --test-dir "$BUILD_DIR" --output-on-failure -j"$CTEST_JOBS" \
      --output-junit "$WORK/ctest-junit.xml" --test-output-size-passed 262144 --test-output-size-failed 262144 \
      ${CTEST_ARGS:-} || rc=$?
    # ctest ends with "N% tests passed, F tests failed out of T" (or "100% tests passed out of T"). Each test
    # program fails (not skips) a GPU test without a device under LAZYFUSE_TEST_REQUIRE_GPU=1, so the skips left are the
    # ones that describe other machines (no driver, CPU backend) and child-process entry points; they are listed.
    total=$(sed -n 's/.*tests passed.* out of \([0-9]*\).*/\1/p' "$log" | tail -1)
    failed=$(sed -n 's/.*tests passed, \([0-9]*\) tests\{0,1\} failed out of.*/\1/p' "$log" | tail -1)
    skipped=$(grep -E '^ *[0-9]+/[0-9]+ Test +#[0-9]+: .*\*\*\*Skipped' "$log" | grep -c . || true)
    disabled=$(grep -c 'Not Run (Disabled)' "$log" || true) # not in ctest's total
    total=${total:-0} failed=${failed:-0}
    passed=$((total - failed - skipped))
    note="passed $passed, failed $failed, skipped $skipped of $total ($disabled disabled)"
    if [[ -z $(sed -n '/tests passed/p' "$log") ]]; then
      # Cut off before ctest's summary (the budget): count the finished tests' lines instead, and name the
      # tests still running.
      finished=$(grep -cE '^ *[0-9]+/[0-9]+ Test +#[0-9]+: ' "$log" || true)
      passed=$(grep -cE '^ *[0-9]+/[0-9]+ Test +#[0-9]+: .* Passed ' "$log" || true)
      failed=$(grep -cE '^ *[0-9]+/[0-9]+ Test +#[0-9]+: .*\*\*\*(Failed|Timeout|Exception)' "$log" || true)
      unfinished=$(sed -nE 's/^ *Start +[0-9]+: (.*)$/\1/p' "$log" | sort | comm -23 - \
        <(sed -nE 's/^ *[0-9]+\/[0-9]+ Test +#[0-9]+: ([^ ]*) .*/\1/p' "$log" | sort) | tr '\n' ' ')
      note="cut off after $finished tests: passed $passed, failed $failed, skipped $skipped; still running: ${unfinished:-none}"
    fi
    if ((rc == 0 && total > 0)); then
      record test OK $((SECONDS - t)) "$note"
    else
      show_tail "$log"
      ((rc == 124 || rc == 137)) && note="timed out; $note"
      ((total == 0)) && [[ $note != cut\ off* ]] && note="no tests ran (exit $rc); $note"
      record test FAIL $((SECONDS - t)) "$note"
    fi
  fi
  pack
fi

# ------------------------------------------------------------------------------------------------- memcheck
if [[ -n ${WANT[memcheck]:-} ]]; then
  echo "== memcheck"
  t=$SECONDS log=$WORK/memcheck.log
  CS=$CUDA_PATH/bin/compute-sanitizer
  [[ -x $CS ]] || CS=$(command -v compute-sanitizer || true)
  if ((!BUILD_OK)); then
    record memcheck FAIL 0 "not run: $NO_BUILD_REASON"
  elif [[ -z $CS || ! -x $CS ]]; then
    echo "compute-sanitizer: not available" | tee "$log"
    record memcheck N/A 0 "compute-sanitizer not available"
  else
    # Not test_cuda_context_lost: its kernels fault on purpose (in child processes), which memcheck reports as errors.
    mapfile -t bins < <(find "$BUILD_DIR/tests" -maxdepth 1 -type f -perm -u+x -name 'test_*' 2>/dev/null |
      grep -E '/test_[^/]*(cuda|gpu)[^/]*$' | grep -v '/test_cuda_context_lost$' | sort)
    if [[ -n ${MEMCHECK_ONLY:-} ]]; then
      only=()
      for bin in "${bins[@]}"; do [[ " $MEMCHECK_ONLY " == *" $(basename "$bin") "* ]] && only+=("$bin"); done
      bins=("${only[@]}")
    fi
    errors=0 bad=() ran=0
    workdir=$BUILD_DIR/tests/work
    [[ -d $workdir ]] || workdir=$BUILD_DIR/tests
    for bin in "${bins[@]}"; do
      name=$(basename "$bin") blog=$WORK/memcheck-$name.log
      echo "== $name" >>"$log"
      rc=0
      (cd "$workdir" && LAZYFUSE_POOL=none LAZYFUSE_TEST_RANDOM_GRAPHS=50 LAZYFUSE_TEST_REQUIRE_GPU=1 \
        run_limited "${MEMCHECK_TIMEOUT_S:-300}" "$blog" "$CS" --tool memcheck --report-api-errors no --error-exitcode 1 "$bin") || rc=$?
      ran=$((ran + 1))
      n=$(sed -n 's/.*ERROR SUMMARY: \([0-9]*\) error.*/\1/p' "$blog" | tail -1)
      errors=$((errors + ${n:-0}))
      echo "$name: exit $rc, ${n:-?} memcheck errors" | tee -a "$log"
      if ((rc != 0)); then
        ((rc == 124 || rc == 137)) && bad+=("$name(timeout)") || bad+=("$name")
      fi
    done
    note="$ran programs, $errors memcheck errors"
    ((${#bad[@]})) && note="$note; failed: ${bad[*]}"
    if ((ran == 0)); then
      record memcheck FAIL $((SECONDS - t)) "no gpu test programs in build/gpu/tests"
    elif ((${#bad[@]} == 0)); then
      record memcheck OK $((SECONDS - t)) "$note"
    else
      for b in "${bad[@]}"; do f=$WORK/memcheck-${b%(timeout)}.log; [[ -f $f ]] && show_tail "$f"; done
      record memcheck FAIL $((SECONDS - t)) "$note"
    fi
  fi
  pack
fi

# ---------------------------------------------------------------------------------------------------- bench
if [[ -n ${WANT[bench]:-} ]]; then
  echo "== bench"
  t=$SECONDS log=$WORK/bench.log
  if ((!BUILD_OK)); then
    record bench FAIL 0 "not run: $NO_BUILD_REASON"
  else
    mapfile -t exes < <(find "$BUILD_DIR/bench" -maxdepth 1 -type f -perm -u+x 2>/dev/null | sort)
    if [[ -n ${BENCH_ONLY:-} ]]; then
      kept=()
      for exe in "${exes[@]}"; do [[ " $BENCH_ONLY " == *" $(basename "$exe") "* ]] && kept+=("$exe"); done
      exes=("${kept[@]}")
    fi
    bad=() ok=0
    for exe in "${exes[@]}"; do
      name=$(basename "$exe") blog=$WORK/bench-$name.log
      rc=0
      # shellcheck disable=SC2086
      run_limited "${BENCH_TIMEOUT_S:-240}" "$blog" "$exe" --benchmark_out="$WORK/bench-$name.json" \
        --benchmark_out_format=json --benchmark_repetitions=5 --benchmark_report_aggregates_only=true \
        ${BENCH_ARGS:-} || rc=$?
      echo "$name: exit $rc" | tee -a "$log"
      if ((rc == 0)); then ok=$((ok + 1)); else
        ((rc == 124 || rc == 137)) && bad+=("$name(timeout)") || bad+=("$name(exit $rc)")
        show_tail "$blog"
      fi
    done
    note="$ok of ${#exes[@]} programs ok"
    ((${#exes[@]} > MAX_BENCH_JSON)) && note="$note; JSON of the first $MAX_BENCH_JSON next to the archive, all inside"
    ((${#bad[@]})) && note="$note; failed: ${bad[*]}"
    if ((${#exes[@]} == 0)); then
      record bench FAIL $((SECONDS - t)) "no programs in build/gpu/bench (google benchmark missing?)"
    elif ((${#bad[@]} == 0)); then
      record bench OK $((SECONDS - t)) "$note"
    else
      record bench FAIL $((SECONDS - t)) "$note"
    fi
  fi
  pack
fi

# ------------------------------------------------------------------------------------------------- examples
if [[ -n ${WANT[examples]:-} ]]; then
  echo "== examples"
  t=$SECONDS log=$WORK/examples.log
  if ((!BUILD_OK)); then
    record examples FAIL 0 "not run: $NO_BUILD_REASON"
  else
    # Full sizes (the defaults are for the CPU backend): name -> arguments.
    declare -A EXAMPLE_ARGS=([demo]="" [black_scholes]="33554432" [heat2d]="4096 200" [jacobi]="256 1e-4 2000"
      [softmax_layernorm]="16384 1024")
    bad=() ok=0 n=0
    for exe in "$BUILD_DIR"/examples/*; do
      [[ -f $exe && -x $exe ]] || continue
      name=$(basename "$exe") n=$((n + 1))
      rc=0
      echo "\$ $name ${EXAMPLE_ARGS[$name]:-}" >>"$log"
      # shellcheck disable=SC2086
      LAZYFUSE_TEST_REQUIRE_GPU=1 run_limited 120 "$log" "$exe" ${EXAMPLE_ARGS[$name]:-} || rc=$?
      if ((rc == 0)); then ok=$((ok + 1)); else bad+=("$name(exit $rc)"); fi
    done
    note="$ok of $n programs passed"
    ((${#bad[@]})) && note="$note; failed: ${bad[*]}"
    if ((n > 0 && ${#bad[@]} == 0)); then record examples OK $((SECONDS - t)) "$note"; else
      show_tail "$log"
      record examples FAIL $((SECONDS - t)) "$note"
    fi
  fi
  pack
fi

# ---------------------------------------------------------------------------------------------------- peers
if [[ -n ${WANT[peers]:-} ]]; then
  echo "== peers"
  t=$SECONDS log=$WORK/peers.log
  lf_json=() limits_json=() types_json=() rc=0 done_tables=()
  for f in "$WORK"/bench-bench_workloads.json "$WORK"/bench-bench_reductions.json; do [[ -f $f ]] && lf_json+=("$f"); done
  [[ -f $WORK/bench-bench_types.json ]] && types_json=("$WORK/bench-bench_types.json")
  [[ -f $WORK/bench-bench_limits.json ]] && limits_json=("$WORK/bench-bench_limits.json")
  if [[ ${PEERS_TABLES:-f32,types} == *f32* ]]; then
    args=(--out-md "$LOG_DIR/peers.md" --out-png "$LOG_DIR/peers.png" --out-json "$WORK/peers.json")
    ((${#lf_json[@]})) && args+=(--lazyfuse-json "${lf_json[@]}")
    ((${#limits_json[@]})) && args+=(--limits-json "${limits_json[@]}")
    [[ -n ${PEERS_FROM_JSON:-} ]] && args+=(--from-json "$PEERS_FROM_JSON")
    run_limited 540 "$log" python3 "$ROOT/bench/peers/run_peers.py" "${args[@]}" || rc=$?
    done_tables+=(f32)
  fi
  # The element types: a table of their own (the per-system time limit applies to each table's workloads).
  if [[ ${PEERS_TABLES:-f32,types} == *types* ]] && ((rc == 0)); then
    args=(--workloads types --out-md "$LOG_DIR/peers-types.md" --out-png "$WORK/peers-types.png"
      --out-json "$WORK/peers-types.json")
    ((${#types_json[@]})) && args+=(--lazyfuse-json "${types_json[@]}")
    ((${#limits_json[@]})) && args+=(--limits-json "${limits_json[@]}")
    [[ -n ${PEERS_TYPES_FROM_JSON:-} ]] && args+=(--from-json "$PEERS_TYPES_FROM_JSON")
    run_limited 540 "$log" python3 "$ROOT/bench/peers/run_peers.py" "${args[@]}" || rc=$?
    cp "$LOG_DIR/peers-types.md" "$WORK/" 2>/dev/null || true
    done_tables+=(types)
  fi
  cp "$LOG_DIR/peers.md" "$WORK/" 2>/dev/null || true
  if ((rc == 0)); then
    record peers OK $((SECONDS - t)) "tables: ${done_tables[*]}${PEERS_FROM_JSON:+; re-rendered from $PEERS_FROM_JSON}"
  else
    show_tail "$log"
    record peers FAIL $((SECONDS - t)) "exit $rc"
  fi
  pack
fi

pack
echo
echo "gpu-check: $((SECONDS - T0)) s; files in $LOG_DIR: $(cd "$LOG_DIR" && ls | tr '\n' ' ')"
table
exit $FAILED
