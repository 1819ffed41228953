#!/usr/bin/env python3
"""Peer benchmarks for the workloads of shared/PERF_TARGETS.md: CuPy (eager and fused), PyTorch (eager and
torch.compile) and jax.jit, each in its own subprocess, beside lazyfuse's Google Benchmark JSON.

Timing (PERF_TARGETS.md): 3 warm-up calls; 5 trials, each = wall clock over 20 back-to-back calls followed by one
device synchronize, divided by 20; the median of the 5 trials. A 256 MiB device-to-device copy is measured in the
same run with the same method (bytes = read + written) and every result is reported as % of it:
(minimal bytes / time) / copy bandwidth.

Usage:
  python3 bench/peers/run_peers.py --out-md peers.md --out-png peers.png --out-json peers.json \
      [--systems cupy,cupy_fused,torch,torch_compile,jax] [--workloads chain,...] [--quick] \
      [--lazyfuse-json bench_workloads.json ...] [--limits-json bench_limits.json] [--timeout 180]

The parent needs only the standard library (and matplotlib for the PNG); each worker needs numpy and its package.
"""
from __future__ import annotations

import argparse
import collections
import datetime
import json
import math
import os
import platform
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import traceback

WORKLOADS = ["chain", "blackscholes", "sumsq", "softmax", "rowvar", "heat2d", "tiny-chain"]
# Issue 14's element types (--workloads types): the chain on float16 and bfloat16, sums of halves, complex a*b + c,
# and a float16 -> float32 -> float16 round trip around one op.
TYPE_WORKLOADS = ["chain-f16", "chain-bf16", "sum-f16", "sum-bf16", "cmadd-c64", "cmadd-c128", "astype-f16"]
ALL_WORKLOADS = WORKLOADS + TYPE_WORKLOADS
WORKLOAD_GROUPS = {"f32": WORKLOADS, "types": TYPE_WORKLOADS, "all": ALL_WORKLOADS}
HALF_CHAINS = {"chain-f16": "float16", "chain-bf16": "bfloat16"}
BF16_WORKLOADS = ("chain-bf16", "sum-bf16")
SYSTEMS = ["cupy", "cupy_fused", "torch", "torch_compile", "jax"]
TEST_SYSTEMS = ["numpy"]  # CPU self-test of the pipeline; not a peer, never run by default
LABELS = {
    "lazyfuse": "lazyfuse",
    "lazyfuse_eager": "lazyfuse eager",
    "limit": "CUDA limit",
    "cupy": "CuPy eager",
    "cupy_fused": "CuPy fused",
    "torch": "torch eager",
    "torch_compile": "torch.compile",
    "jax": "jax.jit",
    "numpy": "numpy (CPU self-test)",
}
COLORS = {"lazyfuse": "#1f4e9c", "lazyfuse_eager": "#9ab8e6", "limit": "#555555", "cupy": "#ffbb78",
          "cupy_fused": "#ff7f0e", "torch": "#98df8a", "torch_compile": "#2ca02c", "jax": "#9467bd", "numpy": "#8c564b"}
# "–" in PERF_TARGETS.md: no fused CuPy variant for these.
# CuPy has no bfloat16 dtype: its eager column has no bfloat16 rows (the fused column runs them on the bits).
NOT_APPLICABLE = {("cupy_fused", "softmax"), ("cupy_fused", "rowvar"), ("cupy_fused", "heat2d"),
                  ("cupy", "chain-bf16"), ("cupy", "sum-bf16")}
FUSED_HOW = {"chain": "cupy.fuse", "blackscholes": "ElementwiseKernel", "sumsq": "cupy.fuse", "tiny-chain": "cupy.fuse",
             "chain-f16": "cupy.fuse", "chain-bf16": "ElementwiseKernel on uint16 bits",
             "sum-f16": "ReductionKernel, float32 accumulator", "sum-bf16": "ReductionKernel, float32 accumulator",
             "cmadd-c64": "cupy.fuse", "cmadd-c128": "cupy.fuse", "astype-f16": "cupy.fuse"}
TOL_HALF_CHAIN = {"chain-f16": 5e-3, "chain-bf16": 4e-2}  # against float64: every op is rounded to the type
HALF_EPS = {"sum-f16": 2.0 ** -11, "sum-bf16": 2.0 ** -8}  # half an ulp, relative: the final rounding of a sum

WARMUP, TRIALS, CALLS = 3, 5, 20
COPY_BYTES = 256 << 20
TOL_ELEMENTWISE, TOL_SUM = 1e-5, 1e-6
SUMSQ_CHECK_N = 1 << 16  # float32 accumulation error grows with n; the sum is checked on a smaller input


def log(msg: str) -> None:
    print(msg, flush=True)


def sizes(quick: bool) -> dict:
    d = 16 if quick else 1
    return {
        "chain": {"n": (1 << 26) // d},
        "blackscholes": {"n": (1 << 25) // d},
        "sumsq": {"n": (1 << 26) // d},
        "softmax": {"rows": 16384 // d, "cols": 4096},
        "rowvar": {"rows": 16384 // d, "cols": 4096},
        "heat2d": {"n": 8192 // 4 if quick else 8192},
        "tiny-chain": {"n": 1024},
        "chain-f16": {"n": (1 << 26) // d},
        "chain-bf16": {"n": (1 << 26) // d},
        "sum-f16": {"n": (1 << 26) // d},
        "sum-bf16": {"n": (1 << 26) // d},
        "cmadd-c64": {"n": (1 << 25) // d},
        "cmadd-c128": {"n": (1 << 24) // d},
        "astype-f16": {"n": (1 << 26) // d},
    }


def size_text(w: str, s: dict) -> str:
    def p2(v):
        return f"2^{int(math.log2(v))}" if v & (v - 1) == 0 else str(v)
    if w in ("softmax", "rowvar"):
        return f"{s['rows']}×{s['cols']}"
    if w == "heat2d":
        return f"{s['n']}×{s['n']}"
    return p2(s["n"])


def minimal_bytes(w: str, s: dict):
    """Minimal bytes of one call (PERF_TARGETS.md): each input read once, each output written once."""
    if w == "chain":
        return 3 * 4 * s["n"]
    if w == "blackscholes":
        return 5 * 4 * s["n"]
    if w == "sumsq":
        return 2 * 4 * s["n"]
    if w == "softmax":
        return 2 * 4 * s["rows"] * s["cols"]
    if w == "rowvar":
        return 4 * s["rows"] * s["cols"]
    if w == "heat2d":
        return 2 * 4 * s["n"] * s["n"]
    if w in HALF_CHAINS:
        return 3 * 2 * s["n"]
    if w in ("sum-f16", "sum-bf16"):
        return 2 * s["n"]
    if w == "cmadd-c64":
        return 4 * 8 * s["n"]
    if w == "cmadd-c128":
        return 4 * 16 * s["n"]
    if w == "astype-f16":
        return 2 * 2 * s["n"]
    return None  # tiny-chain: the cost of one call, not bandwidth


def run_workers(script: str, systems: list, timeout: float, quick: bool, extra_env=None) -> dict:
    """Runs `script --worker SYSTEM --worker-out FILE` for each system, each in a fresh process with compile caches
    of its own (what run_matmul_peers.py and run_random_peers.py measure in); returns {system: the worker's JSON, or
    {"error": why there is none}}. `extra_env(system)` adds variables to a worker's environment."""
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for system in systems:
            out = os.path.join(tmp, system + ".json")
            env = dict(os.environ, TORCHINDUCTOR_CACHE_DIR=os.path.join(tmp, "inductor"),
                       TRITON_CACHE_DIR=os.path.join(tmp, "triton"), CUPY_CACHE_DIR=os.path.join(tmp, "cupy"),
                       **(extra_env(system) if extra_env else {}))
            cmd = [sys.executable, os.path.abspath(script), "--worker", system, "--worker-out", out]
            if quick:
                cmd.append("--quick")
            try:
                proc = subprocess.run(cmd, env=env, timeout=timeout, check=False, capture_output=True, text=True)
                if not os.path.exists(out):
                    tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no output"]
                    raise OSError(f"the worker exited with status {proc.returncode}: {tail[0]}")
                with open(out) as f:
                    results[system] = json.load(f)
            except subprocess.TimeoutExpired:
                results[system] = {"error": f"timed out after {timeout:.0f} s"}
            except (OSError, ValueError) as e:
                results[system] = {"error": f"no result ({type(e).__name__}: {e})"}
    return results


def time_workloads(n: int, start, workloads: list, check_cell, worker_out: str) -> int:
    """The body of a worker process of run_sort_peers.py and run_random_peers.py, one system: start() gives (fns,
    copy, sync, to_host, packages); the 256 MiB copy is timed, then each workload's fns[w] with `bench`, and
    check_cell(w, its output on the host) gives the cell's checks ("wrong", "bytes"). One workload failing keeps the
    others. The result goes to worker_out as JSON."""
    result = {"n": n, "cells": {}}
    try:
        fns, copy, sync, to_host, result["packages"] = start()
        r = bench(copy, sync)
        result["copy"] = {"time_s": r["time_s"], "bandwidth_Bps": 2 * COPY_BYTES / r["time_s"]}
        for w in workloads:
            try:
                r = bench(fns[w], sync)
                r.update(check_cell(w, to_host(fns[w]())))
                result["cells"][w] = r
            except Exception as e:
                result["cells"][w] = {"error": f"{type(e).__name__}: {e}"}
    except Exception as e:
        result["error"] = f"{type(e).__name__}: {e}"
    with open(worker_out, "w") as f:
        json.dump(result, f)
    return 0


def finish_peers_report(report: dict, args, script: str, lazyfuse_cells, write_markdown) -> int:
    """The end of run_sort_peers.py's and run_random_peers.py's main: lazyfuse's column from its Google Benchmark
    JSON (lazyfuse_cells(paths) gives the cells, its "copy" cell the bandwidth), the peers measured by their workers
    (args.systems), then the JSON and the markdown table written (and printed)."""
    if args.lazyfuse_json:
        cells = lazyfuse_cells(args.lazyfuse_json)
        copy = cells.pop("copy", None)
        report["systems"]["lazyfuse"] = {"cells": cells}
        if copy:
            report["systems"]["lazyfuse"]["copy"] = {"bandwidth_Bps": copy["bytes"] / copy["time_s"]}
    systems = [s for s in args.systems.split(",") if s]
    report["systems"].update(run_workers(script, systems, args.timeout, args.quick))
    with open(args.out_json, "w") as f:
        json.dump(report, f, indent=1)
    write_markdown(report, args.out_md)
    print(open(args.out_md).read())
    return 0


def peers_arguments(doc: str, systems: list, quick_help: str, stem: str) -> argparse.ArgumentParser:
    """The command line run_sort_peers.py, run_random_peers.py and run_gather_peers.py share (the last two options run
    one system, in the worker process run_workers starts)."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--systems", default=",".join(systems))
    ap.add_argument("--quick", action="store_true", help=quick_help)
    ap.add_argument("--lazyfuse-json", action="append", default=[])
    ap.add_argument("--out-md", default=stem + ".md")
    ap.add_argument("--out-json", default=stem + ".json")
    ap.add_argument("--timeout", type=float, default=180)
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--worker-out", help=argparse.SUPPRESS)
    return ap


def share_of_copy(cell: dict, system: dict) -> str:
    """" (x% of copy)": a cell's minimal bytes per second against its system's own 256 MiB copy."""
    copy = system.get("copy", {}).get("bandwidth_Bps")
    return f" ({100 * cell['bytes'] / cell['time_s'] / copy:.1f}% of copy)" if cell.get("bytes") and copy else ""


def write_peers_markdown(report: dict, path: str, workloads: list, systems: list, labels: dict, share,
                         footnote: str) -> None:
    """run_sort_peers.py's, run_random_peers.py's and run_gather_peers.py's table: timing_table with `share` per cell,
    the footnote and timing_table's notes."""
    lines, notes = timing_table(report, workloads, systems, labels, share)
    lines += ["", footnote] + [f"- {x}" for x in notes]
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def jax_copy_and_sync(jax, jnp, state: dict):
    """jax.jit's 256 MiB copy and the synchronize of the worker's last result (state["last"]), for time_workloads."""
    a = jnp.full((COPY_BYTES // 4,), 1.5, dtype=jnp.float32)
    copy_fn = jax.jit(lambda v: v + 0.0)

    def copy():
        state["last"] = copy_fn(a)

    def sync():
        if state["last"] is not None:
            jax.block_until_ready(state["last"])

    return copy, sync


def lazyfuse_medians(paths: list, names: dict) -> dict:
    """The lazyfuse column of run_sort_peers.py, run_random_peers.py and run_gather_peers.py: {workload: (seconds,
    entry)} for the Google Benchmark entries of `paths` whose name up to "/iterations" is a key of `names` (mapped to
    the workload), the _median aggregate when present, else the plain run; entries with an error are left out."""
    found = {}
    for p in paths:
        with open(p) as f:
            data = json.load(f)
        for e in data.get("benchmarks", []):
            base = e.get("run_name", e["name"]).split("/iterations")[0].split("/manual_time")[0]
            w = names.get(base)
            if not w or e.get("error_occurred"):
                continue
            if e.get("run_type") == "aggregate" and e.get("aggregate_name") != "median":
                continue
            if w not in found or e.get("aggregate_name") == "median":
                found[w] = (entry_seconds(e), e)
    return found


def timing_table(report: dict, workloads: list, systems: list, labels: dict, extra) -> tuple:
    """A peers table of times (run_sort_peers.py, run_random_peers.py): the markdown lines (header, separator, a row
    per workload; a column per system of `systems` in the report, lazyfuse first) and the notes below it (errors,
    failed checks). A cell is the time in ms, then extra(cell, system) where it returns text (bandwidth shares),
    then WRONG where the cell's check failed."""
    cols = [c for c in ["lazyfuse"] + systems if c in report["systems"]]
    lines = ["| workload | " + " | ".join(labels[c] for c in cols) + " |", "|---" * (len(cols) + 1) + "|"]
    notes = []
    for w in workloads:
        row = [w]
        for c in cols:
            s = report["systems"][c]
            cell = s.get("cells", {}).get(w)
            if s.get("error") or not cell or "error" in cell:
                notes.append(f"{labels[c]} {w}: {(s.get('error') or (cell or {}).get('error') or 'not measured')}")
                row.append("n/a")
                continue
            text = f"{cell['time_s'] * 1e3:.3f} ms" + extra(cell, s)
            if cell.get("wrong"):
                text += " **WRONG**"
                notes.append(f"{labels[c]} {w}: {cell['wrong']}")
            row.append(text)
        lines.append("| " + " | ".join(row) + " |")
    return lines, notes


def bench(call, sync) -> dict:
    """PERF_TARGETS.md timing. Returns seconds per call (median of the trials), the trials and the first call."""
    t0 = time.perf_counter()
    call()
    sync()
    first = time.perf_counter() - t0  # includes compilation for the jitting systems
    for _ in range(WARMUP - 1):
        call()
    sync()
    trials = []
    for _ in range(TRIALS):
        t0 = time.perf_counter()
        for _ in range(CALLS):
            call()
        sync()
        trials.append((time.perf_counter() - t0) / CALLS)
    return {"time_s": statistics.median(trials), "trials_s": trials, "first_call_s": first}


# ----------------------------------------------------------------------------------------------------------------
# Worker side: inputs, float64 references, one backend per system.
# ----------------------------------------------------------------------------------------------------------------

class NotAvailable(Exception):
    pass


def round_bf16(np, a):
    """float32 values rounded to the nearest bfloat16, ties to even (no NaNs here), still as float32."""
    u = np.asarray(a, dtype=np.float32).view(np.uint32).astype(np.uint64)
    u = (u + 0x7FFF + ((u >> 16) & 1)) & 0xFFFF0000
    return u.astype(np.uint32).view(np.float32)


def round_half(np, w: str, a):
    """float32 values rounded to the half type of workload w, as float32."""
    if w in BF16_WORKLOADS:
        return round_bf16(np, a)
    return np.asarray(a, dtype=np.float32).astype(np.float16).astype(np.float32)


def half_values(np, a):
    """A half result as float64: float16, ml_dtypes' bfloat16 (jax), float32, or bfloat16 bits in uint16 (CuPy)."""
    a = np.asarray(a)
    if a.dtype == np.uint16:
        return (a.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    if a.dtype.name == "bfloat16":
        return a.astype(np.float32).astype(np.float64)
    return a.astype(np.float64)


def make_inputs(np, w: str, s: dict) -> list:
    """Host inputs. bfloat16 ones are float32 arrays holding bfloat16 values (numpy has no bfloat16); run_cell
    converts them on the device (backend.as_bf16), exactly."""
    rng = np.random.default_rng(20261130 + ALL_WORKLOADS.index(w))

    def u(shape, lo, hi):
        return rng.uniform(lo, hi, size=shape).astype(np.float32)

    if w in ("chain", "tiny-chain"):
        return [u(s["n"], -2, 2), u(s["n"], -2, 2)]
    if w == "blackscholes":
        return [u(s["n"], 10, 100), u(s["n"], 10, 100), u(s["n"], 0.1, 2)]
    # The ranges of lazyfuse's bench/bench_workloads.cpp and bench/bench_reductions.cpp.
    if w == "sumsq":
        return [u(s["n"], -2, 2), u(s["n"], -2, 2)]
    if w in ("softmax", "rowvar"):
        return [u((s["rows"], s["cols"]), -3, 3)]
    if w == "heat2d":
        return [u((s["n"], s["n"]), 0, 1)]
    if w == "chain-f16":
        return [u(s["n"], -2, 2).astype(np.float16), u(s["n"], -2, 2).astype(np.float16)]
    if w == "chain-bf16":
        return [round_bf16(np, u(s["n"], -2, 2)), round_bf16(np, u(s["n"], -2, 2))]
    # Sums of [-1, 1) values: a sum of 2^26 [0, 1) values would overflow float16.
    if w == "sum-f16":
        return [u(s["n"], -1, 1).astype(np.float16)]
    if w == "sum-bf16":
        return [round_bf16(np, u(s["n"], -1, 1))]
    if w in ("cmadd-c64", "cmadd-c128"):
        t = np.complex64 if w == "cmadd-c64" else np.complex128
        return [(rng.uniform(-2, 2, s["n"]) + 1j * rng.uniform(-2, 2, s["n"])).astype(t) for _ in range(3)]
    if w == "astype-f16":
        return [u(s["n"], -2, 2).astype(np.float16)]
    raise ValueError(w)


def erf64(np, x):
    try:
        from scipy.special import erf  # type: ignore
        return erf(x)
    except Exception:
        return np.frompyfunc(math.erf, 1, 1)(x).astype(np.float64)


def rel_l2(np, out, ref) -> float:
    out = np.asarray(out, dtype=np.float64).ravel()
    ref = np.asarray(ref, dtype=np.float64).ravel()
    if out.shape != ref.shape:
        return float("inf")
    if not np.all(np.isfinite(out)):
        return float("inf")
    den = float(np.linalg.norm(ref))
    return float(np.linalg.norm(out - ref)) / (den if den > 0 else 1.0)


def check(np, w: str, inputs: list, outs, small_run=None) -> dict:
    """Compares outputs with a float64 numpy reference: on the same data, subsampled (rows for the row-wise
    workloads, a strided subset for elementwise ones); the full sum is checked on a smaller input via small_run."""
    f64 = lambda a: np.asarray(a, dtype=np.float64)  # noqa: E731
    tol = TOL_ELEMENTWISE
    if w in ("chain", "tiny-chain"):
        st = 61 if w == "chain" else 1
        x, y = f64(inputs[0][::st]), f64(inputs[1][::st])
        ref = np.sqrt(np.abs(np.sin(x) * np.cos(y) + x * y * 0.5 - np.exp(-x * x)))
        err = rel_l2(np, np.asarray(outs).ravel()[::st], ref)
    elif w == "blackscholes":
        st = 127
        S, K, T = (f64(a[::st]) for a in inputs)
        r, v = 0.02, 0.30
        sqrtT = np.sqrt(T)
        d1 = (np.log(S / K) + (r + 0.5 * v * v) * T) / (v * sqrtT)
        d2 = d1 - v * sqrtT
        cdf = lambda d: 0.5 * (1.0 + erf64(np, d / math.sqrt(2.0)))  # noqa: E731
        disc = K * np.exp(-r * T)
        call = S * cdf(d1) - disc * cdf(d2)
        put = disc * cdf(-d2) - S * cdf(-d1)
        c, p = outs
        err = rel_l2(np, np.concatenate([np.asarray(c).ravel()[::st], np.asarray(p).ravel()[::st]]),
                     np.concatenate([call, put]))
    elif w == "sumsq":
        tol = TOL_SUM
        rng = np.random.default_rng(7)
        xs = rng.uniform(-2, 2, SUMSQ_CHECK_N).astype(np.float32)
        ys = rng.uniform(-2, 2, SUMSQ_CHECK_N).astype(np.float32)
        got = small_run(xs, ys)
        ref = np.sum((f64(xs) - f64(ys)) ** 2)
        err = rel_l2(np, np.asarray(got).reshape(1), np.asarray([ref]))
        # The full-size result, for the record (float32 accumulation over 2^26 terms).
        full_ref = float(np.sum((f64(inputs[0]) - f64(inputs[1])) ** 2))
        full_err = rel_l2(np, np.asarray(outs).reshape(1), np.asarray([full_ref]))
        return {"check": "ok" if err <= tol else "WRONG", "rel_err": err, "tol": tol,
                "check_on": f"n={SUMSQ_CHECK_N}", "full_size_rel_err": full_err}
    elif w in HALF_CHAINS:
        return check_half_chain(np, w, inputs, outs)
    elif w in ("sum-f16", "sum-bf16"):
        x = f64(inputs[0])
        want = float(np.sum(x))
        got = float(half_values(np, outs).reshape(-1)[0])
        tol = HALF_EPS[w] + 1e-6 * float(np.sum(np.abs(x))) / abs(want)
        err = abs(got - want) / abs(want) if math.isfinite(got) else float("inf")
        return {"check": "ok" if err <= tol else "WRONG", "rel_err": err, "tol": tol,
                "check_on": "same data, whole sum; tolerance = half an ulp of the type + float32 accumulation"}
    elif w in ("cmadd-c64", "cmadd-c128"):
        st = 61
        a, b, c = (np.asarray(t[::st], dtype=np.complex128) for t in inputs)
        ref = a * b + c
        got = np.asarray(outs).ravel()[::st].astype(np.complex128)
        tol = 1e-5 if w == "cmadd-c64" else 1e-12
        err = rel_l2(np, np.concatenate([got.real, got.imag]), np.concatenate([ref.real, ref.imag]))
    elif w == "astype-f16":
        tol = 0.0  # x * 2 is exact in float32 and back in float16
        x = f64(inputs[0])
        got = np.asarray(outs)
        err = rel_l2(np, got.astype(np.float64), 2.0 * x)
        if got.dtype != np.float16:
            err = float("inf")
    elif w in ("softmax", "rowvar"):
        rows = slice(None, None, 61)
        m = f64(inputs[0][rows])
        if w == "softmax":
            e = np.exp(m - m.max(axis=1, keepdims=True))
            ref = e / e.sum(axis=1, keepdims=True)
        else:
            ref = (m * m).mean(axis=1) - m.mean(axis=1) ** 2
        err = rel_l2(np, np.asarray(outs)[rows], ref)
    elif w == "heat2d":
        u = inputs[0]
        n = u.shape[0]
        rows = sorted(set([0, 1, n - 2, n - 1] + list(range(0, n, 61))))
        ref = np.empty((len(rows), n))
        for k, i in enumerate(rows):
            if i == 0 or i == n - 1:
                ref[k] = u[i]
                continue
            c = f64(u[i])
            r = c.copy()
            r[1:-1] = c[1:-1] + 0.1 * (f64(u[i - 1, 1:-1]) + f64(u[i + 1, 1:-1]) + c[2:] + c[:-2] - 4.0 * c[1:-1])
            ref[k] = r
        err = rel_l2(np, np.asarray(outs)[rows], ref)
    else:
        raise ValueError(w)
    return {"check": "ok" if err <= tol else "WRONG", "rel_err": err, "tol": tol, "check_on": "same data, subsampled"}


def half_chain_references(np, w: str, x, y):
    """Two float32 arrays of half values: the chain with every op rounded to the type (lazyfuse's and NumPy's
    float16 semantics: each op in float32, then rounded) and the chain computed in float32 and rounded once."""
    r = lambda a: round_half(np, w, a)  # noqa: E731
    x, y = np.asarray(x, dtype=np.float32), np.asarray(y, dtype=np.float32)
    h = np.float32(0.5)
    total = r(r(r(np.sin(x)) * r(np.cos(y))) + r(r(x * y) * h))
    per_op = r(np.sqrt(np.abs(r(total - r(np.exp(r(-x * x)))))))
    once = r(np.sqrt(np.abs(np.sin(x) * np.cos(y) + x * y * h - np.exp(-x * x))))
    return per_op, once


def check_half_chain(np, w: str, inputs: list, outs) -> dict:
    """Checks a half chain against float64 (loosely: the type's precision) and says which arithmetic the system did:
    the share of elements equal to the per-op rounded reference and to the rounded-once one."""
    st = 61
    x = np.asarray(inputs[0][::st], dtype=np.float32)
    y = np.asarray(inputs[1][::st], dtype=np.float32)
    got = half_values(np, np.asarray(outs).ravel()[::st])
    xd, yd = x.astype(np.float64), y.astype(np.float64)
    exact = np.sqrt(np.abs(np.sin(xd) * np.cos(yd) + xd * yd * 0.5 - np.exp(-xd * xd)))
    err = rel_l2(np, got, exact)
    per_op, once = half_chain_references(np, w, x, y)
    m_op = float(np.mean(got == per_op.astype(np.float64)))
    m_once = float(np.mean(got == once.astype(np.float64)))
    if m_op >= 0.99:
        precision = "per-op rounding (each op rounded to the type)"
    elif m_once >= 0.99:
        precision = "computed in float32, rounded once"
    else:
        precision = "neither: some roundings kept, others not"
    precision += f"; equal to per-op reference {100 * m_op:.1f}%, to rounded-once {100 * m_once:.1f}%"
    tol = TOL_HALF_CHAIN[w]
    return {"check": "ok" if err <= tol else "WRONG", "rel_err": err, "tol": tol, "check_on": "same data, subsampled",
            "per_op_match": m_op, "rounded_once_match": m_once, "precision": precision}


def bf16_elementwise_kernel(cp):
    """The bfloat16 chain for CuPy, which has no bfloat16 dtype: an ElementwiseKernel on the bits (uint16), each op
    rounded to bfloat16 as NumPy semantics would (ops in float32; _rn products and sums: no FMA contraction)."""
    k = cp.ElementwiseKernel(
        "uint16 xb, uint16 yb", "uint16 ob",
        """
        const __nv_bfloat16 x = __ushort_as_bfloat16(xb), y = __ushort_as_bfloat16(yb);
        const __nv_bfloat16 s = __float2bfloat16_rn(sinf(__bfloat162float(x)));
        const __nv_bfloat16 c = __float2bfloat16_rn(cosf(__bfloat162float(y)));
        const __nv_bfloat16 h = __hmul_rn(__hmul_rn(x, y), __float2bfloat16_rn(0.5f));
        const __nv_bfloat16 a = __hadd_rn(__hmul_rn(s, c), h);
        const __nv_bfloat16 e = __float2bfloat16_rn(expf(__bfloat162float(__hmul_rn(__hneg(x), x))));
        const __nv_bfloat16 d = __hsub_rn(a, e);
        ob = __bfloat16_as_ushort(__float2bfloat16_rn(sqrtf(fabsf(__bfloat162float(d)))));
        """, "peers_chain_bf16", preamble="#include <cuda_bf16.h>")
    return k


def half_sum_reduction_kernel(cp, bf16: bool):
    """sum of halves with a float32 accumulator, rounded once, on the bits (uint16; CuPy has no bfloat16)."""
    if bf16:
        to_f, from_f, inc = "__bfloat162float(__ushort_as_bfloat16(x))", \
            "__bfloat16_as_ushort(__float2bfloat16_rn(a))", "#include <cuda_bf16.h>"
    else:
        to_f, from_f, inc = "__half2float(__ushort_as_half(x))", "__half_as_ushort(__float2half_rn(a))", \
            "#include <cuda_fp16.h>"
    return cp.ReductionKernel("uint16 x", "uint16 y", to_f, "a + b", f"y = {from_f}", "0",
                              "peers_sum_bf16" if bf16 else "peers_sum_f16", reduce_type="float32", preamble=inc)


class CupyBackend:
    def __init__(self, np, fused: bool):
        try:
            import cupy as cp  # noqa: F401
        except Exception as e:
            raise NotAvailable(f"cupy not importable ({type(e).__name__}: {e})")
        self.np, self.cp, self.fused = np, cp, fused
        try:
            if cp.cuda.runtime.getDeviceCount() < 1:
                raise NotAvailable("cupy: no CUDA device")
            props = cp.cuda.runtime.getDeviceProperties(0)
        except NotAvailable:
            raise
        except Exception as e:
            raise NotAvailable(f"cupy: no usable CUDA device ({type(e).__name__}: {e})")
        name = props["name"]
        self.meta = {
            "packages": {"cupy": cp.__version__, "numpy": np.__version__},
            "device": name.decode() if isinstance(name, bytes) else str(name),
            "cuda_runtime": cp.cuda.runtime.runtimeGetVersion(),
            "cuda_driver": cp.cuda.runtime.driverGetVersion(),
        }
        from cupyx.scipy.special import erf
        self.erf = erf

    def to_dev(self, a):
        return self.cp.asarray(a)

    def as_bf16(self, d):
        # bfloat16 values held in float32: their upper 16 bits are the bfloat16 (the lower ones are zero).
        return (d.view(self.cp.uint32) >> 16).astype(self.cp.uint16)

    def to_np(self, a):
        if isinstance(a, (tuple, list)):
            return [self.to_np(t) for t in a]
        return self.cp.asnumpy(a)

    def sync(self):
        self.cp.cuda.Device().synchronize()

    def cleanup(self):
        self.cp.get_default_memory_pool().free_all_blocks()

    def copy_call(self, nbytes):
        cp = self.cp
        a = cp.full(nbytes // 4, 1.5, dtype=cp.float32)
        b = cp.empty_like(a)

        def call():
            cp.cuda.runtime.memcpyAsync(b.data.ptr, a.data.ptr, nbytes, cp.cuda.runtime.memcpyDeviceToDevice,
                                        cp.cuda.get_current_stream().ptr)
        return call, "cupy cudaMemcpyAsync D2D"

    def fn(self, w):
        cp, erf = self.cp, self.erf
        if self.fused:
            if w in ("chain", "tiny-chain"):
                def peers_chain(x, y):
                    return cp.sqrt(cp.abs(cp.sin(x) * cp.cos(y) + x * y * 0.5 - cp.exp(-x * x)))
                return cp.fuse(kernel_name="peers_chain")(peers_chain)
            if w == "sumsq":
                def peers_sumsq(x, y):
                    return cp.sum((x - y) ** 2)
                return cp.fuse(kernel_name="peers_sumsq")(peers_sumsq)
            if w == "blackscholes":
                k = cp.ElementwiseKernel(
                    "float32 S, float32 K, float32 T, float32 r, float32 v", "float32 c_out, float32 p_out",
                    """
                    const float sqrtT = sqrtf(T);
                    const float d1 = (logf(S / K) + (r + 0.5f * v * v) * T) / (v * sqrtT);
                    const float d2 = d1 - v * sqrtT;
                    const float disc = K * expf(-r * T);
                    c_out = S * (0.5f * (1.0f + erff(d1 * 0.70710678f))) - disc * (0.5f * (1.0f + erff(d2 * 0.70710678f)));
                    p_out = disc * (0.5f * (1.0f + erff(-d2 * 0.70710678f))) - S * (0.5f * (1.0f + erff(-d1 * 0.70710678f)));
                    """, "peers_blackscholes")
                r, v = self.np.float32(0.02), self.np.float32(0.30)
                return lambda S, K, T: k(S, K, T, r, v)
            if w == "chain-f16":
                def peers_chain_f16(x, y):
                    return cp.sqrt(cp.abs(cp.sin(x) * cp.cos(y) + x * y * 0.5 - cp.exp(-x * x)))
                return cp.fuse(kernel_name="peers_chain_f16")(peers_chain_f16)
            if w == "chain-bf16":
                return bf16_elementwise_kernel(cp)
            if w == "sum-f16":
                k16 = half_sum_reduction_kernel(cp, bf16=False)
                return lambda x: k16(x.view(cp.uint16)).view(cp.float16)
            if w == "sum-bf16":
                return half_sum_reduction_kernel(cp, bf16=True)
            if w in ("cmadd-c64", "cmadd-c128"):
                def peers_cmadd(a, b, c):
                    return a * b + c
                return cp.fuse(kernel_name="peers_cmadd")(peers_cmadd)
            if w == "astype-f16":
                def peers_astype(x):
                    return (x.astype(cp.float32) * 2).astype(cp.float16)
                return cp.fuse(kernel_name="peers_astype")(peers_astype)
            raise NotAvailable("no fused CuPy variant")
        if w in ("chain", "tiny-chain", "chain-f16"):
            return lambda x, y: cp.sqrt(cp.abs(cp.sin(x) * cp.cos(y) + x * y * 0.5 - cp.exp(-x * x)))
        if w == "sum-f16":
            return lambda x: cp.sum(x)
        if w in ("cmadd-c64", "cmadd-c128"):
            return lambda a, b, c: a * b + c
        if w == "astype-f16":
            return lambda x: (x.astype(cp.float32) * 2).astype(cp.float16)
        if w in BF16_WORKLOADS:
            raise NotAvailable("CuPy has no bfloat16 dtype")
        if w == "blackscholes":
            def bs(S, K, T):
                r, v = 0.02, 0.30
                sqrtT = cp.sqrt(T)
                d1 = (cp.log(S / K) + (r + 0.5 * v * v) * T) / (v * sqrtT)
                d2 = d1 - v * sqrtT
                disc = K * cp.exp(-r * T)
                cdf = lambda d: 0.5 * (1.0 + erf(d * 0.7071067811865476))  # noqa: E731
                return S * cdf(d1) - disc * cdf(d2), disc * cdf(-d2) - S * cdf(-d1)
            return bs
        if w == "sumsq":
            return lambda x, y: cp.sum((x - y) ** 2)
        if w == "softmax":
            def softmax(m):
                e = cp.exp(m - m.max(axis=1, keepdims=True))
                return e / e.sum(axis=1, keepdims=True)
            return softmax
        if w == "rowvar":
            return lambda m: (m * m).mean(axis=1) - m.mean(axis=1) ** 2
        if w == "heat2d":
            def heat(u):
                out = u.copy()
                c = u[1:-1, 1:-1]
                out[1:-1, 1:-1] = c + 0.1 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2] - 4.0 * c)
                return out
            return heat
        raise ValueError(w)

    def extras(self, w):
        return {}


def make_torch_fns(torch) -> dict:
    """The torch workloads. Each has its own code object (Dynamo caches per code object: a shared one would turn the
    tiny-chain compile into a dynamic-shape recompile of the chain); `torch` is a closure variable, no import inside
    the compiled functions."""

    def t_chain(x, y):
        return torch.sqrt(torch.abs(torch.sin(x) * torch.cos(y) + x * y * 0.5 - torch.exp(-x * x)))

    def t_tiny_chain(x, y):
        return torch.sqrt(torch.abs(torch.sin(x) * torch.cos(y) + x * y * 0.5 - torch.exp(-x * x)))

    def t_blackscholes(S, K, T):
        r, v = 0.02, 0.30
        sqrtT = torch.sqrt(T)
        d1 = (torch.log(S / K) + (r + 0.5 * v * v) * T) / (v * sqrtT)
        d2 = d1 - v * sqrtT
        disc = K * torch.exp(-r * T)
        c1 = 0.5 * (1.0 + torch.erf(d1 * 0.7071067811865476))
        c2 = 0.5 * (1.0 + torch.erf(d2 * 0.7071067811865476))
        m2 = 0.5 * (1.0 + torch.erf(-d2 * 0.7071067811865476))
        m1 = 0.5 * (1.0 + torch.erf(-d1 * 0.7071067811865476))
        return S * c1 - disc * c2, disc * m2 - S * m1

    def t_sumsq(x, y):
        return torch.sum((x - y) ** 2)

    def t_softmax(m):
        e = torch.exp(m - torch.amax(m, dim=1, keepdim=True))
        return e / torch.sum(e, dim=1, keepdim=True)

    def t_rowvar(m):
        return torch.mean(m * m, dim=1) - torch.mean(m, dim=1) ** 2

    def t_heat2d(u):
        out = u.clone()
        c = u[1:-1, 1:-1]
        out[1:-1, 1:-1] = c + 0.1 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2] - 4.0 * c)
        return out

    def t_chain_f16(x, y):
        return torch.sqrt(torch.abs(torch.sin(x) * torch.cos(y) + x * y * 0.5 - torch.exp(-x * x)))

    def t_chain_bf16(x, y):
        return torch.sqrt(torch.abs(torch.sin(x) * torch.cos(y) + x * y * 0.5 - torch.exp(-x * x)))

    def t_sum_f16(x):
        return torch.sum(x)

    def t_sum_bf16(x):
        return torch.sum(x)

    def t_cmadd_c64(a, b, c):
        return a * b + c

    def t_cmadd_c128(a, b, c):
        return a * b + c

    def t_astype_f16(x):
        return (x.to(torch.float32) * 2).to(torch.float16)

    return {"chain": t_chain, "tiny-chain": t_tiny_chain, "blackscholes": t_blackscholes, "sumsq": t_sumsq,
            "softmax": t_softmax, "rowvar": t_rowvar, "heat2d": t_heat2d, "chain-f16": t_chain_f16,
            "chain-bf16": t_chain_bf16, "sum-f16": t_sum_f16, "sum-bf16": t_sum_bf16, "cmadd-c64": t_cmadd_c64,
            "cmadd-c128": t_cmadd_c128, "astype-f16": t_astype_f16}


class TorchBackend:
    def __init__(self, np, compiled: bool):
        try:
            import torch
        except Exception as e:
            raise NotAvailable(f"torch not importable ({type(e).__name__}: {e})")
        if not torch.cuda.is_available():
            raise NotAvailable(f"torch {torch.__version__}: torch.cuda.is_available() is False")
        self.np, self.torch, self.compiled = np, torch, compiled
        pk = {"torch": torch.__version__, "numpy": np.__version__}
        if compiled:
            try:
                import triton
                pk["triton"] = triton.__version__
            except Exception as e:
                pk["triton"] = f"not importable ({type(e).__name__})"
        self.meta = {"packages": pk, "device": torch.cuda.get_device_name(0), "torch_cuda": torch.version.cuda}
        if compiled:
            # The settings that decide how inductor computes halves (upcast to float32 inside a fused kernel; whether
            # it emulates the roundings of the eager ops): recorded, the half chains' checks measure the effect.
            try:
                import torch._inductor.config as ic
                self.meta["inductor"] = {"triton.codegen_upcast_to_fp32": getattr(ic.triton, "codegen_upcast_to_fp32",
                                                                                  "absent"),
                                         "emulate_precision_casts": getattr(ic, "emulate_precision_casts", "absent")}
            except Exception as e:
                self.meta["inductor"] = f"config not readable ({type(e).__name__})"
        self.dev = torch.device("cuda", 0)
        self.fns = make_torch_fns(torch)

    def to_dev(self, a):
        return self.torch.from_numpy(a).to(self.dev)

    def as_bf16(self, d):
        return d.to(self.torch.bfloat16)  # exact: the values are bfloat16 values

    def to_np(self, a):
        if isinstance(a, (tuple, list)):
            return [self.to_np(t) for t in a]
        if a.dtype == self.torch.bfloat16:  # numpy has no bfloat16: exact in float32
            a = a.float()
        return a.detach().cpu().numpy()

    def sync(self):
        self.torch.cuda.synchronize()

    def cleanup(self):
        self.torch.cuda.empty_cache()

    def copy_call(self, nbytes):
        a = self.torch.full((nbytes // 4,), 1.5, dtype=self.torch.float32, device=self.dev)
        b = self.torch.empty_like(a)
        return (lambda: b.copy_(a)), "torch Tensor.copy_ D2D"

    def fn(self, w):
        f = self.fns[w]
        return self.torch.compile(f) if self.compiled else f

    def extras(self, w):
        if w == "softmax" and not self.compiled:
            torch = self.torch
            return {"torch.softmax": lambda m: torch.softmax(m, dim=1)}
        return {}


class JaxBackend:
    def __init__(self, np):
        os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
        try:
            import jax
            import jax.numpy as jnp
            import jax.scipy.special as jss
        except Exception as e:
            raise NotAvailable(f"jax not importable ({type(e).__name__}: {e})")
        try:
            devs = jax.devices()
        except Exception as e:
            raise NotAvailable(f"jax: no devices ({type(e).__name__}: {e})")
        if devs[0].platform not in ("gpu", "cuda"):
            raise NotAvailable(f"jax has no GPU backend (default device: {devs[0].platform})")
        self.np, self.jax, self.jnp, self.erf = np, jax, jnp, jss.erf
        self.dev = devs[0]
        pk = {"jax": jax.__version__, "numpy": np.__version__}
        try:
            import jaxlib
            pk["jaxlib"] = jaxlib.__version__
        except Exception:
            pass
        self.meta = {"packages": pk, "device": getattr(self.dev, "device_kind", str(self.dev)),
                     # XLA's default xla_allow_excess_precision=true lets it drop roundings to halves inside a
                     # fusion; the half chains' checks measure what it did.
                     "XLA_FLAGS": os.environ.get("XLA_FLAGS", "")}
        self.last = None

    def to_dev(self, a):
        return self.jax.device_put(a, self.dev)

    def as_bf16(self, d):
        return d.astype(self.jnp.bfloat16)  # exact: the values are bfloat16 values

    def to_np(self, a):
        if isinstance(a, (tuple, list)):
            return [self.to_np(t) for t in a]
        return self.np.asarray(a)

    def sync(self):
        # jax is asynchronous: the 20 calls queue; blocking on the last result waits for all of them.
        if self.last is not None:
            self.jax.block_until_ready(self.last)

    def cleanup(self):
        self.last = None

    def fn(self, w):
        jax, jnp, erf = self.jax, self.jnp, self.erf

        def chain(x, y):
            return jnp.sqrt(jnp.abs(jnp.sin(x) * jnp.cos(y) + x * y * 0.5 - jnp.exp(-x * x)))

        def tiny_chain(x, y):
            return jnp.sqrt(jnp.abs(jnp.sin(x) * jnp.cos(y) + x * y * 0.5 - jnp.exp(-x * x)))

        def bs(S, K, T):
            r, v = 0.02, 0.30
            sqrtT = jnp.sqrt(T)
            d1 = (jnp.log(S / K) + (r + 0.5 * v * v) * T) / (v * sqrtT)
            d2 = d1 - v * sqrtT
            disc = K * jnp.exp(-r * T)
            cdf = lambda d: 0.5 * (1.0 + erf(d * 0.7071067811865476))  # noqa: E731
            return S * cdf(d1) - disc * cdf(d2), disc * cdf(-d2) - S * cdf(-d1)

        def sumsq(x, y):
            return jnp.sum((x - y) ** 2)

        def softmax(m):
            e = jnp.exp(m - jnp.max(m, axis=1, keepdims=True))
            return e / jnp.sum(e, axis=1, keepdims=True)

        def rowvar(m):
            return jnp.mean(m * m, axis=1) - jnp.mean(m, axis=1) ** 2

        def heat2d(u):
            c = u[1:-1, 1:-1]
            return u.at[1:-1, 1:-1].set(c + 0.1 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2] - 4.0 * c))

        def chain_half(x, y):
            return jnp.sqrt(jnp.abs(jnp.sin(x) * jnp.cos(y) + x * y * 0.5 - jnp.exp(-x * x)))

        def half_sum(x):
            return jnp.sum(x)

        def cmadd(a, b, c):
            return a * b + c

        def astype_f16(x):
            return (x.astype(jnp.float32) * 2).astype(jnp.float16)

        f = {"chain": chain, "tiny-chain": tiny_chain, "blackscholes": bs, "sumsq": sumsq, "softmax": softmax,
             "rowvar": rowvar, "heat2d": heat2d, "chain-f16": chain_half, "chain-bf16": chain_half,
             "sum-f16": half_sum, "sum-bf16": half_sum, "cmadd-c64": cmadd, "cmadd-c128": cmadd,
             "astype-f16": astype_f16}[w]
        return jax.jit(f)

    def extras(self, w):
        return {}


class NumpyBackend:
    """CPU self-test of the harness (timing, checks, report); not a peer."""

    def __init__(self, np):
        self.np = np
        self.meta = {"packages": {"numpy": np.__version__}, "device": "CPU " + (platform.processor() or platform.machine())}

    def to_dev(self, a):
        return a

    def as_bf16(self, d):
        return d  # bfloat16 values stay in float32; fn emulates bfloat16 arithmetic on them

    def to_np(self, a):
        return a

    def sync(self):
        pass

    def cleanup(self):
        pass

    def copy_call(self, nbytes):
        a = self.np.full(nbytes // 4, 1.5, dtype=self.np.float32)
        b = self.np.empty_like(a)
        return (lambda: self.np.copyto(b, a)), "numpy copyto (CPU)"

    def fn(self, w):
        np = self.np
        if w in ("chain", "tiny-chain"):
            return lambda x, y: np.sqrt(np.abs(np.sin(x) * np.cos(y) + x * y * np.float32(0.5) - np.exp(-x * x)))
        if w == "chain-f16":  # NumPy's float16: each op in float32, rounded (0.5 is a weak scalar)
            return lambda x, y: np.sqrt(np.abs(np.sin(x) * np.cos(y) + x * y * 0.5 - np.exp(-x * x)))
        if w == "chain-bf16":
            return lambda x, y: half_chain_references(np, w, x, y)[0]
        if w == "sum-f16":
            return lambda x: np.sum(x, dtype=np.float32).astype(np.float16)
        if w == "sum-bf16":
            return lambda x: round_bf16(np, np.sum(x, dtype=np.float32))
        if w in ("cmadd-c64", "cmadd-c128"):
            return lambda a, b, c: a * b + c
        if w == "astype-f16":
            return lambda x: (x.astype(np.float32) * 2).astype(np.float16)
        if w == "blackscholes":
            def bs(S, K, T):
                r, v = np.float32(0.02), np.float32(0.30)
                sqrtT = np.sqrt(T)
                d1 = (np.log(S / K) + (r + np.float32(0.5) * v * v) * T) / (v * sqrtT)
                d2 = d1 - v * sqrtT
                disc = K * np.exp(-r * T)
                cdf = lambda d: (0.5 * (1.0 + self.erf(d.astype(np.float64) / math.sqrt(2)))).astype(np.float32)  # noqa
                return S * cdf(d1) - disc * cdf(d2), disc * cdf(-d2) - S * cdf(-d1)
            return bs
        if w == "sumsq":
            return lambda x, y: np.sum((x - y) ** 2)
        if w == "softmax":
            def softmax(m):
                e = np.exp(m - m.max(axis=1, keepdims=True))
                return e / e.sum(axis=1, keepdims=True)
            return softmax
        if w == "rowvar":
            return lambda m: (m * m).mean(axis=1) - m.mean(axis=1) ** 2
        if w == "heat2d":
            def heat(u):
                out = u.copy()
                c = u[1:-1, 1:-1]
                out[1:-1, 1:-1] = c + np.float32(0.1) * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2]
                                                         - np.float32(4.0) * c)
                return out
            return heat
        raise ValueError(w)

    def erf(self, x):
        # Abramowitz & Stegun 7.1.26 (|error| < 1.5e-7): vectorized, so the self-test needs no scipy.
        np = self.np
        t = 1.0 / (1.0 + 0.3275911 * np.abs(x))
        y = 1.0 - (((((1.061405429 * t - 1.453152027) * t) + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t \
            * np.exp(-x * x)
        return np.sign(x) * y

    def extras(self, w):
        return {}


def make_backend(system: str, np):
    if system == "cupy":
        return CupyBackend(np, fused=False)
    if system == "cupy_fused":
        return CupyBackend(np, fused=True)
    if system == "torch":
        return TorchBackend(np, compiled=False)
    if system == "torch_compile":
        return TorchBackend(np, compiled=True)
    if system == "jax":
        return JaxBackend(np)
    if system == "numpy":
        return NumpyBackend(np)
    raise NotAvailable(f"unknown system {system!r}")


def atomic_write_json(path: str, obj) -> None:
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(obj, f, indent=1)
    os.replace(tmp, path)


def measure_copy(be) -> dict:
    call, how = be.copy_call(COPY_BYTES)
    r = bench(call, be.sync)
    r.update({"bytes": 2 * COPY_BYTES, "bandwidth_Bps": 2 * COPY_BYTES / r["time_s"], "how": how})
    return r


def run_cell(be, np, w: str, s: dict, quick: bool) -> dict:
    host = make_inputs(np, w, s)
    dev = [be.to_dev(a) for a in host]
    if w in BF16_WORKLOADS:
        dev = [be.as_bf16(d) for d in dev]
    be.sync()
    f = be.fn(w)
    holder = [None]
    is_jax = isinstance(be, JaxBackend)

    def call():
        holder[0] = f(*dev)
        if is_jax:
            be.last = holder[0]

    cell = {"status": "ok", "size": size_text(w, s), "bytes": minimal_bytes(w, s)}
    cell.update(bench(call, be.sync))
    outs = be.to_np(holder[0])
    holder[0] = None
    if is_jax:
        be.last = None

    def small_run(xs, ys):
        out = f(be.to_dev(xs), be.to_dev(ys))
        return be.to_np(out)

    cell.update(check(np, w, host, outs, small_run))
    for name, g in be.extras(w).items():
        h = [None]

        def xcall(g=g, h=h):
            h[0] = g(*dev)
        try:
            x = bench(xcall, be.sync)
            xc = check(np, w, host, be.to_np(h[0]))
            cell.setdefault("extras", {})[name] = {"time_s": x["time_s"], "trials_s": x["trials_s"],
                                                   "check": xc["check"], "rel_err": xc["rel_err"]}
        except Exception as e:
            cell.setdefault("extras", {})[name] = {"error": f"{type(e).__name__}: {e}"[:300]}
    return cell


def worker_main(args) -> int:
    system = args.worker
    res = {"system": system, "status": "starting", "cells": {}, "meta": {}}
    rf = args.result_file
    atomic_write_json(rf, res)
    try:
        import numpy as np
    except Exception as e:
        res.update(status="n/a", reason=f"numpy not importable ({type(e).__name__}: {e})")
        atomic_write_json(rf, res)
        log(f"n/a: {res['reason']}")
        return 0
    try:
        be = make_backend(args.copy_via if system == "copy" else system, np)
    except NotAvailable as e:
        res.update(status="n/a", reason=str(e))
        atomic_write_json(rf, res)
        log(f"n/a: {e}")
        return 0
    except Exception as e:
        res.update(status="n/a", reason=f"{type(e).__name__}: {e}"[:400])
        atomic_write_json(rf, res)
        log(f"n/a: {res['reason']}")
        return 0
    res["meta"] = be.meta
    res["meta"]["python"] = platform.python_version()
    res["status"] = "running"
    atomic_write_json(rf, res)
    log(f"device: {be.meta.get('device')}; packages: {be.meta.get('packages')}")

    if hasattr(be, "copy_call"):
        try:
            c = measure_copy(be)
            res["copy"] = c
            log(f"copy reference (256 MiB D2D, {c['how']}): {c['time_s'] * 1e3:.3f} ms = "
                f"{c['bandwidth_Bps'] / 1e12:.3f} TB/s")
        except Exception as e:
            res["copy"] = {"error": f"{type(e).__name__}: {e}"[:300]}
            log(f"copy reference failed: {res['copy']['error']}")
        be.cleanup()
        atomic_write_json(rf, res)
    if system == "copy":
        res["status"] = "done"
        atomic_write_json(rf, res)
        return 0

    sz = sizes(args.quick)
    for w in [w for w in args.workloads.split(",") if w]:
        if (system, w) in NOT_APPLICABLE:
            res["cells"][w] = {"status": "not_applicable"}
            atomic_write_json(rf, res)
            continue
        res["cells"][w] = {"status": "running"}
        atomic_write_json(rf, res)
        log(f"{w} ({size_text(w, sz[w])}) ...")
        t0 = time.perf_counter()
        try:
            cell = run_cell(be, np, w, sz[w], args.quick)
            log(f"{w}: {cell['time_s'] * 1e3:.4f} ms per call (first call {cell['first_call_s']:.2f} s), "
                f"check {cell['check']} (rel. err {cell['rel_err']:.2e})")
        except NotAvailable as e:
            cell = {"status": "error", "reason": str(e)}
        except Exception as e:
            cell = {"status": "error", "reason": f"{type(e).__name__}: {e}".strip()[:400]}
            log(f"{w}: FAILED: {cell['reason']}")
            traceback.print_exc(limit=3)
        cell["wall_s"] = time.perf_counter() - t0
        res["cells"][w] = cell
        atomic_write_json(rf, res)
        try:
            import gc
            gc.collect()
            be.cleanup()
        except Exception:
            pass
    res["status"] = "done"
    atomic_write_json(rf, res)
    return 0


# ----------------------------------------------------------------------------------------------------------------
# Parent side: run the workers, read lazyfuse's JSON, write the report.
# ----------------------------------------------------------------------------------------------------------------

def run_worker(system: str, args, workloads: list, tmpdir: str, timeout: float) -> dict:
    rf = os.path.join(tmpdir, f"result_{system}.json")
    cmd = [args.python, "-u", os.path.abspath(__file__), "--worker", system, "--result-file", rf,
           "--workloads", ",".join(workloads)]
    if args.quick:
        cmd.append("--quick")
    if system == "copy":
        cmd += ["--copy-via", args.copy_via]
    env = dict(os.environ)
    env["PYTHONUNBUFFERED"] = "1"
    env["XLA_PYTHON_CLIENT_PREALLOCATE"] = "false"
    env["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(tmpdir, f"inductor_{system}")
    env["TRITON_CACHE_DIR"] = os.path.join(tmpdir, f"triton_{system}")
    env.setdefault("CUPY_CACHE_DIR", os.path.join(tmpdir, "cupy_cache"))
    tail = collections.deque(maxlen=40)
    t0 = time.time()
    log(f"== {system}: starting (time limit {timeout:.0f} s)")
    try:
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, text=True,
                             errors="replace", bufsize=1, start_new_session=True)
    except Exception as e:
        return {"system": system, "status": "n/a", "reason": f"could not start worker: {e}", "cells": {}}

    def reader():
        for line in p.stdout:
            tail.append(line.rstrip("\n"))
            print(f"  [{system}] {line}", end="", flush=True)

    th = threading.Thread(target=reader, daemon=True)
    th.start()
    timed_out = False
    try:
        rc = p.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        log(f"== {system}: time limit of {timeout:.0f} s reached, killing its process group {p.pid}")
        rc = None
    # End the worker's process group (the worker and e.g. inductor's compile workers it started), if any is left.
    try:
        os.killpg(p.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    if rc is None:
        try:
            rc = p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            rc = "killed"
    th.join(timeout=5)
    elapsed = time.time() - t0
    res = None
    try:
        with open(rf) as f:
            res = json.load(f)
    except Exception:
        pass
    last = next((ln for ln in reversed(tail) if ln.strip()), "")
    if timed_out:
        why = f"time limit of {timeout:.0f} s for the system reached"
    else:
        why = f"worker exited with status {rc}" + (f": {last.strip()[:200]}" if last else "")
    if res is None:
        res = {"system": system, "status": "n/a", "reason": why, "cells": {}}
    elif res.get("status") not in ("done", "n/a"):
        res["status"] = "partial"
        res["reason"] = why
    if res.get("status") != "n/a" and system != "copy":
        for w in workloads:
            c = res["cells"].get(w)
            if c is None or c.get("status") == "running":
                res["cells"][w] = {"status": "error", "reason": why if c is None or not timed_out else
                                   f"{why} (while running this workload)"}
    res["elapsed_s"] = elapsed
    res["returncode"] = rc
    log(f"== {system}: {res.get('status')} in {elapsed:.1f} s" + (f" ({res.get('reason')})" if res.get("reason") else ""))
    return res


# bench_types' families: BM_ChainF16, BM_SumBF16, BM_ComplexMaddC64, BM_AstypeRoundTripF16, ...
TYPE_FAMILIES = {"chainf16": "chain-f16", "chainbf16": "chain-bf16", "sumf16": "sum-f16", "sumbf16": "sum-bf16",
                 "complexmaddc64": "cmadd-c64", "complexmaddc128": "cmadd-c128", "astyperoundtripf16": "astype-f16"}
LF_FAMILIES = {"chain": "chain", "blackscholes": "blackscholes", "sumsq": "sumsq", "softmax": "softmax",
               "rowvar": "rowvar", "heat2d": "heat2d", "tinychain": "tiny-chain", **TYPE_FAMILIES}
UNIT_S = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}


def pick(lst):
    """[(kind, entry, argv)] of one benchmark -> (the entry to use, error text, repetitions): the median aggregate
    when present, else the median of the iterations."""
    errs = [e for _, e, *_ in lst if e.get("error_occurred") or e.get("skipped")]
    good = [(k, e, *rest) for k, e, *rest in lst if not (e.get("error_occurred") or e.get("skipped"))]
    med = [t for t in good if t[0] == "median"]
    if med:
        return med[-1], None, len([t for t in good if t[0] == "iteration"])
    its = [t for t in good if t[0] == "iteration"]
    if its:
        times = sorted(its, key=lambda t: entry_seconds(t[1]))
        return times[len(times) // 2], None, len(its)
    msg = (errs[-1].get("error_message") or "skipped") if errs else "no result"
    return None, msg, 0


def entry_seconds(e: dict) -> float:
    return e["real_time"] * UNIT_S.get(e.get("time_unit", "ns"), 1e-9)


def gbench_entries(files: list, out: dict):
    """Yields (family, argv, kind, entry) of every usable entry of Google Benchmark JSON files; records each file in
    out["files"] and out["context"]."""
    for fn in files:
        try:
            with open(fn) as f:
                data = json.load(f)
        except Exception as e:
            out["files"].append({"file": fn, "error": f"{type(e).__name__}: {e}"})
            log(f"benchmark JSON {fn}: unreadable ({e})")
            continue
        out["files"].append({"file": fn})
        ctx = data.get("context", {})
        out["context"].append({k: ctx.get(k) for k in ("date", "host_name", "executable", "library_build_type")})
        for e in data.get("benchmarks", []):
            name = e.get("run_name") or re.sub(r"_(median|mean|stddev|cv)$", "", e.get("name", ""))
            parts = name.split("/")
            argv = {}
            for p in parts[1:]:
                m = re.fullmatch(r"([A-Za-z_]\w*):(-?\d+)", p)
                if m and m.group(1) != "iterations":
                    argv[m.group(1)] = int(m.group(2))
            kind = e.get("aggregate_name") if e.get("run_type") == "aggregate" else "iteration"
            if kind not in ("median", "iteration"):
                continue
            yield parts[0], argv, kind, e


def copy_from(entries: list):
    t, _, _ = pick([(k, e, {}) for k, e in entries])
    if t is None:
        return None
    ts = entry_seconds(t[1])
    return {"time_s": ts, "bandwidth_Bps": 2 * COPY_BYTES / ts, "event_ms": t[1].get("event_ms")}


LIMIT_FAMILIES = {"chain": "chain", "blackscholes": "blackscholes", "sumsq": "sumsq", "softmax": "softmax",
                  "rowvar": "rowvar", "heat2d": "heat2d", "chainf16": "chain-f16", "chainbf16": "chain-bf16",
                  "sumf16": "sum-f16", "sumbf16": "sum-bf16", "complexmaddc64": "cmadd-c64"}


def parse_limits(files: list) -> dict:
    """Reads bench_limits' Google Benchmark JSON (BM_Limit<Workload>/<variant args>). Each workload's cell is its
    fastest variant that passed its own check; variants that failed are counted, not shown."""
    out = {"cells": {}, "copy": None, "files": [], "context": []}
    variants = collections.defaultdict(lambda: collections.defaultdict(list))  # w -> run name -> [(kind, e, argv)]
    copy_entries = []
    for fam, argv, kind, e in gbench_entries(files, out):
        if fam == "BM_CopyReference":
            copy_entries.append((kind, e))
            continue
        key = re.sub(r"[^a-z0-9]", "", fam.lower().removeprefix("bm_"))
        if not key.startswith("limit") or key.removeprefix("limit") not in LIMIT_FAMILIES:
            continue  # BM_LimitCopyKernel and anything unknown
        w = LIMIT_FAMILIES[key.removeprefix("limit")]
        variants[w][e.get("run_name") or e.get("name")].append((kind, e, argv))
    for w, runs in variants.items():
        best, errors = None, []
        for run_name, lst in runs.items():
            t, err, reps = pick(lst)
            if t is None:
                errors.append(f"{run_name}: {err}")
                continue
            if best is None or entry_seconds(t[1]) < entry_seconds(best[0][1]):
                best = (t, reps)
        if best is None:
            out["cells"][w] = {"status": "error",
                               "reason": "CUDA limit: every variant failed; " + "; ".join(errors)[:300]}
            continue
        (kind, e, argv), reps = best
        cell = {"status": "ok", "time_s": entry_seconds(e), "benchmark": e.get("run_name") or e.get("name"),
                "args": argv, "variants": len(runs), "failed_variants": len(errors), "repetitions": reps,
                "source": "median aggregate" if kind == "median" else "median of iterations"}
        for k in ("pct_of_copy", "event_ms", "GB_per_s", "kernels_per_call"):
            if k in e:
                cell[k] = e[k]
        out["cells"][w] = cell
    if copy_entries:
        out["copy"] = copy_from(copy_entries)
    return out


def parse_lazyfuse(files: list) -> dict:
    """Reads Google Benchmark JSON. Returns {"fused"|"eager": {workload: cell}, "copy": {...}, "files": [...]}."""
    entries = collections.defaultdict(list)  # (mode, workload) -> [(kind, entry, argv)]
    copy_entries = []
    out = {"fused": {}, "eager": {}, "copy": None, "files": [], "context": []}
    for fam, argv, kind, e in gbench_entries(files, out):
        if fam == "BM_CopyReference":
            copy_entries.append((kind, e))
            continue
        key = re.sub(r"[^a-z0-9]", "", fam.lower().removeprefix("bm_"))
        w = LF_FAMILIES.get(key)
        if w is None:
            continue
        if w == "chain" and argv.get("n", 1 << 26) <= 4096:
            w = "tiny-chain"
        mode = "eager" if argv.get("eager", 0) else "fused"
        entries[(mode, w)].append((kind, e, argv))

    for (mode, w), lst in entries.items():
        t, err, reps = pick(lst)
        if t is None:
            out[mode][w] = {"status": "error", "reason": f"lazyfuse: {err}"}
            continue
        e, argv = t[1], t[2] if len(t) > 2 else {}
        ts = entry_seconds(e)
        cell = {"status": "ok", "time_s": ts, "benchmark": e.get("name"), "repetitions": reps,
                "args": argv, "source": "median aggregate" if t[0] == "median" else "median of iterations"}
        for k in ("pct_of_copy", "event_ms", "GB_per_s", "kernels_per_call"):
            if k in e:
                cell[k] = e[k]
        out[mode][w] = cell
    if copy_entries:
        out["copy"] = copy_from(copy_entries)
    return out


def lazyfuse_bytes(w: str, argv: dict):
    full = sizes(False)[w]
    if "n" in argv and w in ("chain", "blackscholes", "sumsq", "tiny-chain", *TYPE_WORKLOADS):
        full = {"n": argv["n"]}
    elif "n" in argv and w == "heat2d":
        full = {"n": argv["n"]}
    elif w in ("softmax", "rowvar") and ("rows" in argv or "cols" in argv):
        full = {"rows": argv.get("rows", full["rows"]), "cols": argv.get("cols", full["cols"])}
    return minimal_bytes(w, full), size_text(w, full)


def fmt_time(t: float) -> str:
    if t < 1e-5:
        return f"{t * 1e6:.2f} µs"
    if t < 1e-4:
        return f"{t * 1e6:.1f} µs"
    if t < 1e-2:
        return f"{t * 1e3:.3f} ms"
    if t < 1e-1:
        return f"{t * 1e3:.2f} ms"
    return f"{t * 1e3:.1f} ms"


EXTERNAL = ("lazyfuse", "lazyfuse_eager", "limit")  # columns read from Google Benchmark JSON, not run here


def build_table(report: dict) -> list:
    """The table's columns: lazyfuse (fused, eager), the CUDA limit, then the systems run here."""
    cols = []
    if report.get("lazyfuse"):
        cols += ["lazyfuse", "lazyfuse_eager"]
    if report.get("limits"):
        cols.append("limit")
    cols += report["systems_run"]
    return cols


def external_cells(report: dict, c: str) -> dict:
    """{workload: cell} of an EXTERNAL column."""
    if c == "limit":
        return (report.get("limits") or {}).get("cells") or {}
    return (report.get("lazyfuse") or {}).get("eager" if c == "lazyfuse_eager" else "fused") or {}


def write_markdown(report: dict, path: str) -> None:
    cols = build_table(report)
    copy_bw = report["copy_reference"].get("bandwidth_Bps")
    notes = []  # footnote texts, deduplicated

    def note(text):
        if text not in notes:
            notes.append(text)
        return f"[^{notes.index(text) + 1}]"

    def pct(bytes_, t):
        if bytes_ and copy_bw and t:
            return f" ({100.0 * bytes_ / t / copy_bw:.0f}%)"
        return ""

    meta = report["meta"]
    lines = ["# Peer benchmarks on the PERF_TARGETS.md workloads", ""]
    lines.append(f"GPU: **{meta.get('gpu') or 'unknown'}**, driver {meta.get('driver') or 'unknown'}; "
                 f"date {meta['date']}; host python {meta['python']}; mode: "
                 + ("**quick (1/16 sizes: a smoke test, not comparable)**" if report["quick"] else "full size") + ".")
    lines.append("")
    vers = []
    for s in report["systems_run"]:
        r = report["systems"].get(s, {})
        pk = r.get("meta", {}).get("packages")
        extra = ""
        m = r.get("meta", {})
        if m.get("torch_cuda"):
            extra = f", CUDA {m['torch_cuda']}"
        if m.get("cuda_runtime"):
            extra = f", CUDA runtime {m['cuda_runtime']}, driver API {m.get('cuda_driver')}"
        if pk:
            vers.append(f"{LABELS[s]}: " + ", ".join(f"{k} {v}" for k, v in pk.items()) + extra)
        else:
            vers.append(f"{LABELS[s]}: n/a ({r.get('reason', 'no result')})")
    for key, label in (("lazyfuse", "lazyfuse"), ("limits", "CUDA limit (bench_limits)")):
        if report.get(key):
            files = [os.path.basename(f["file"]) + (" (unreadable)" if f.get("error") else "")
                     for f in report[key]["files"]]
            vers.append(f"{label}: " + ", ".join(files))
    lines.append("Versions: " + "; ".join(vers) + ".")
    lines.append("")
    cr = report["copy_reference"]
    if copy_bw:
        lines.append(f"Copy reference: 256 MiB device-to-device copy ({cr.get('how')}, in the `{cr.get('system')}` "
                     f"worker of this run): {fmt_time(cr['time_s'])} = **{copy_bw / 1e12:.2f} TB/s** (read + written).")
    else:
        lines.append(f"Copy reference: n/a ({cr.get('reason', 'not measured')}); no percentages.")
    others = []
    for s in report["systems_run"]:
        c = report["systems"].get(s, {}).get("copy")
        if c and c.get("bandwidth_Bps"):
            others.append(f"{LABELS[s]} {c['bandwidth_Bps'] / 1e12:.2f} TB/s")
    lf = report.get("lazyfuse") or {}
    if lf.get("copy"):
        others.append(f"lazyfuse BM_CopyReference {lf['copy']['bandwidth_Bps'] / 1e12:.2f} TB/s")
    lim = report.get("limits") or {}
    if lim.get("copy"):
        others.append(f"bench_limits BM_CopyReference {lim['copy']['bandwidth_Bps'] / 1e12:.2f} TB/s")
    if others:
        lines.append(f"The same copy measured in each process: {', '.join(others)}.")
    lines.append("")
    lines.append(f"Timing: {WARMUP} warm-up calls, then the median of {TRIALS} trials, each the wall clock of {CALLS} "
                 f"back-to-back calls followed by one device synchronize, divided by {CALLS}. Cells: time per call "
                 f"(% of the copy reference = (minimal bytes / time) / copy bandwidth), then ok/WRONG: relative L2 "
                 f"error against float64 numpy (≤ {TOL_ELEMENTWISE:g} arrays, ≤ {TOL_SUM:g} sums).")
    if any(w in TYPE_WORKLOADS for w in report["workloads"]):
        lines.append("")
        lines.append("Element types: the half chains are checked against float64 within the type's precision (≤ "
                     + ", ".join(f"{TOL_HALF_CHAIN[w]:g} {w}" for w in HALF_CHAINS) + "), and each cell's note "
                     "says which arithmetic the system did: the share of elements equal to the chain with every op "
                     "rounded to the type (NumPy's and lazyfuse's semantics) and to the chain computed in float32 "
                     "and rounded once. Half sums: within half an ulp of the type plus float32 accumulation; "
                     "complex64 a*b + c within 1e-5, complex128 within 1e-12; the float16 round trip exactly.")
    lines.append("")
    hdr = ["workload", "size", "minimal bytes", "copy ref."] + [LABELS[c] for c in cols]
    lines.append("| " + " | ".join(hdr) + " |")
    lines.append("|" + "|".join("---" for _ in hdr) + "|")
    for w in report["workloads"]:
        s = report["sizes"][w]
        b = minimal_bytes(w, s)
        row = [w, size_text(w, s), f"{b / 1e6:.0f} MB" if b else "–",
               fmt_time(b / copy_bw) if (b and copy_bw) else "–"]
        for c in cols:
            if c in EXTERNAL:
                cell = external_cells(report, c).get(w)
                if cell is None:
                    row.append("–")
                    continue
                if cell.get("status") != "ok":
                    row.append("n/a" + note(f"{LABELS[c]}, {w}: {cell.get('reason')}"))
                    continue
                # bench_limits always runs the full sizes; its variant arguments are not sizes.
                lb, lsz = lazyfuse_bytes(w, {} if c == "limit" else cell.get("args", {}))
                txt = fmt_time(cell["time_s"])
                if copy_bw:
                    txt += pct(lb, cell["time_s"])
                elif cell.get("pct_of_copy") is not None and lb:
                    txt += f" ({cell['pct_of_copy']:.0f}% of its own copy ref.)"
                if lsz != size_text(w, s):
                    txt += note(f"{LABELS[c]}, {w}: measured at size {lsz}, the peers at {size_text(w, s)}")
                row.append(txt)
                continue
            r = report["systems"].get(c) or {"status": "n/a", "reason": "not run (interrupted)"}
            if (c, w) in NOT_APPLICABLE:
                row.append("–")
                continue
            if r.get("status") == "n/a":
                row.append("n/a" + note(f"{LABELS[c]}: {r.get('reason')}"))
                continue
            cell = r.get("cells", {}).get(w)
            if cell is None:
                row.append("n/a" + note(f"{LABELS[c]}, {w}: no result"))
                continue
            if cell.get("status") == "not_applicable":
                row.append("–")
                continue
            if cell.get("status") != "ok":
                row.append("n/a" + note(f"{LABELS[c]}, {w}: {cell.get('reason')}"))
                continue
            txt = fmt_time(cell["time_s"]) + pct(b, cell["time_s"])
            if cell.get("check") == "ok":
                txt += " ok"
            else:
                txt += " **WRONG**" + note(f"{LABELS[c]}, {w}: relative L2 error {cell.get('rel_err'):.3g} > "
                                           f"{cell.get('tol'):g} (checked on {cell.get('check_on')})")
            if c == "cupy_fused" and w in FUSED_HOW:
                txt += f" ({FUSED_HOW[w]})"
            if cell.get("precision"):
                txt += note(f"{LABELS[c]}, {w}: {cell['precision']}")
            for xn, x in (cell.get("extras") or {}).items():
                if "time_s" in x:
                    txt += note(f"{LABELS[c]}, {w}, `{xn}`: {fmt_time(x['time_s'])}{pct(b, x['time_s'])} "
                                f"{x.get('check')}")
                else:
                    txt += note(f"{LABELS[c]}, {w}, `{xn}`: failed: {x.get('error')}")
            row.append(txt)
        lines.append("| " + " | ".join(str(x).replace("|", "\\|") for x in row) + " |")
    lines.append("")
    lines.append("n/a: the system did not run the workload (reason in the note); –: no such variant.")
    if lim.get("cells"):
        picked = [f"{w} `{re.sub(r'/(iterations:[0-9]+|manual_time)', '', c['benchmark'])}` (of {c['variants']}" +
                  (f", {c['failed_variants']} failed their check" if c.get("failed_variants") else "") + ")"
                  for w, c in lim["cells"].items() if c.get("status") == "ok" and w in report["workloads"]]
        lines.append("")
        lines.append("CUDA limit: hand-written kernels (bench/bench_limits.cu), each checked against float64 before "
                     "it is timed with the same method; the cell is the fastest variant: " + "; ".join(picked) + ".")
    fc = []
    for c in report["systems_run"]:
        cells = report["systems"].get(c, {}).get("cells", {})
        got = [f"{w} {cells[w]['first_call_s']:.2f} s" for w in report["workloads"]
               if cells.get(w, {}).get("status") == "ok" and "first_call_s" in cells[w]]
        if got and c in ("cupy_fused", "torch_compile", "jax"):
            fc.append(f"{LABELS[c]}: " + ", ".join(got))
    if fc:
        lines.append("")
        lines.append("First call, synchronized (includes compilation; caches were empty for torch.compile and "
                     "Triton, CuPy's kernel cache in a temp dir, JAX without a persistent cache): " + "; ".join(fc)
                     + ".")
    lines.append("")
    for i, t in enumerate(notes):
        lines.append(f"[^{i + 1}]: {str(t).replace(chr(10), ' ')}")
    lines.append("")
    with open(path, "w") as f:
        f.write("\n".join(lines))


def write_png(report: dict, path: str) -> str | None:
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.lines import Line2D
        from matplotlib.patches import Patch
    except Exception as e:
        return f"matplotlib not importable ({type(e).__name__}: {e}); no PNG written"
    cols = build_table(report)
    wl = report["workloads"]
    copy_bw = report["copy_reference"].get("bandwidth_Bps")
    data = {}  # (w, c) -> (time_s, wrong)
    for w in wl:
        for c in cols:
            if c in EXTERNAL:
                cell = external_cells(report, c).get(w)
                if cell and cell.get("status") == "ok":
                    data[(w, c)] = (cell["time_s"], False)
            else:
                cell = report["systems"].get(c, {}).get("cells", {}).get(w)
                if cell and cell.get("status") == "ok":
                    data[(w, c)] = (cell["time_s"], cell.get("check") != "ok")
    fig, ax = plt.subplots(figsize=(max(10, 1.9 * len(wl) + 2), 6.5))
    width = 0.84 / max(1, len(cols))
    handles = []
    all_t = [v[0] * 1e3 for v in data.values()]
    for w_i, w in enumerate(wl):
        b = minimal_bytes(w, report["sizes"][w])
        if b and copy_bw:
            all_t.append(b / copy_bw * 1e3)
    lo = min(all_t) / 3 if all_t else 1e-3
    hi = max(all_t) * 9 if all_t else 1e2
    for j, c in enumerate(cols):
        xs, hs, wrong = [], [], []
        for i, w in enumerate(wl):
            if (w, c) in data:
                xs.append(i - 0.42 + width * (j + 0.5))
                hs.append(data[(w, c)][0] * 1e3)
                wrong.append(data[(w, c)][1])
        bars = ax.bar(xs, hs, width * 0.95, color=COLORS.get(c, "gray"), edgecolor="black", linewidth=0.4, zorder=2)
        handles.append(Patch(facecolor=COLORS.get(c, "gray"), edgecolor="black", linewidth=0.4,
                             label=LABELS[c] + ("" if hs else " (no result)")))
        for bar, h, bad in zip(bars, hs, wrong):
            if bad:
                bar.set_hatch("xx")
                bar.set_edgecolor("red")
            label = fmt_time(h / 1e3).replace(" ms", "").replace(" µs", "µs")
            ax.text(bar.get_x() + bar.get_width() / 2, h * 1.08, label + (" WRONG" if bad else ""),
                    ha="center", va="bottom", rotation=90, fontsize=6.5)
        for i, w in enumerate(wl):
            if (w, c) not in data:
                cell_na = (c, w) not in NOT_APPLICABLE and not (c in EXTERNAL and w not in external_cells(report, c))
                ax.text(i - 0.42 + width * (j + 0.5), lo * 1.15, "n/a" if cell_na else "–", ha="center",
                        va="bottom", rotation=90, fontsize=6.5, color="gray")
    first = True
    for i, w in enumerate(wl):
        b = minimal_bytes(w, report["sizes"][w])
        if b and copy_bw:
            t = b / copy_bw * 1e3
            ax.hlines(t, i - 0.45, i + 0.45, colors="black", linestyles="--", linewidth=1.3, zorder=3)
            if first:
                handles.append(Line2D([], [], color="black", linestyle="--", linewidth=1.3,
                                      label="copy reference: minimal bytes / copy bandwidth"))
            first = False
    ax.set_yscale("log")
    ax.set_ylim(lo, hi)
    ax.set_xticks(range(len(wl)))
    ax.set_xticklabels([f"{w}\n{size_text(w, report['sizes'][w])}" for w in wl], fontsize=9)
    ax.set_ylabel("time per call, ms (log scale; lower is better)")
    gpu = report["meta"].get("gpu") or "unknown GPU"
    ttl = f"Peers on {gpu}: median time per call ({TRIALS} trials × {CALLS} calls + sync)"
    if report["quick"]:
        ttl += " — QUICK (1/16 sizes)"
    ax.set_title(ttl, fontsize=11)
    ax.grid(axis="y", which="both", alpha=0.3, zorder=0)
    if any(v[1] for v in data.values()):
        handles.append(Patch(facecolor="white", edgecolor="red", hatch="xx", label="WRONG result"))
    ax.legend(handles=handles, fontsize=8.5, ncol=min(5, len(handles)), loc="upper center",
              bbox_to_anchor=(0.5, -0.11), frameon=False)
    fig.tight_layout()
    fig.savefig(path, dpi=150)
    plt.close(fig)
    return None


def gpu_info() -> dict:
    exe = shutil.which("nvidia-smi")
    if not exe:
        return {}
    try:
        out = subprocess.run([exe, "--query-gpu=name,driver_version", "--format=csv,noheader"], capture_output=True,
                             text=True, timeout=30).stdout.strip().splitlines()
        if out:
            name, drv = [x.strip() for x in out[0].split(",", 1)]
            return {"gpu": name, "driver": drv}
    except Exception:
        pass
    return {}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out-md", default="peers.md")
    ap.add_argument("--out-png", default="peers.png")
    ap.add_argument("--out-json", default="peers.json")
    ap.add_argument("--systems", default=",".join(SYSTEMS),
                    help="comma list of " + ",".join(SYSTEMS) + " ('numpy' = CPU self-test of the harness)")
    ap.add_argument("--workloads", default=",".join(WORKLOADS),
                    help="comma list of " + ",".join(ALL_WORKLOADS) + ", or a group: f32 (the default), types "
                         "(issue 14's: " + ",".join(TYPE_WORKLOADS) + "), all")
    ap.add_argument("--quick", action="store_true", help="1/16 sizes: a smoke test")
    ap.add_argument("--lazyfuse-json", nargs="*", default=[], metavar="FILE",
                    help="Google Benchmark JSON of lazyfuse's bench programs (--benchmark_out_format=json)")
    ap.add_argument("--limits-json", nargs="*", default=[], metavar="FILE",
                    help="Google Benchmark JSON of build/<preset>/bench/bench_limits (hand-written CUDA kernels): "
                         "a 'CUDA limit' column with each workload's fastest variant")
    ap.add_argument("--timeout", type=float, default=180.0, help="time limit of each system's worker, seconds")
    ap.add_argument("--python", default=sys.executable, help="interpreter for the workers")
    ap.add_argument("--copy-via", choices=["cupy", "torch"], default="cupy",
                    help="library that measures the common copy reference (the other is tried if it fails)")
    ap.add_argument("--from-json", metavar="FILE",
                    help="run nothing: rewrite the Markdown and PNG from a JSON this script wrote earlier")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--result-file", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        return worker_main(args)

    if args.from_json:
        with open(args.from_json) as f:
            report = json.load(f)
        if args.lazyfuse_json:
            report["lazyfuse"] = parse_lazyfuse(args.lazyfuse_json)
        if args.limits_json:
            report["limits"] = parse_limits(args.limits_json)
        write_markdown(report, args.out_md)
        err = write_png(report, args.out_png)
        log(f"wrote {args.out_md}" + (f"; PNG: {err}" if err else f", {args.out_png}"))
        return 0

    systems = [s.strip() for s in args.systems.split(",") if s.strip()]
    workloads = []
    for w in (w.strip() for w in args.workloads.split(",")):
        for x in WORKLOAD_GROUPS.get(w, [w] if w else []):
            if x not in workloads:
                workloads.append(x)
    bad = [s for s in systems if s not in SYSTEMS + TEST_SYSTEMS] + [w for w in workloads if w not in ALL_WORKLOADS]
    if bad:
        ap.error(f"unknown system/workload: {', '.join(bad)} (systems: {', '.join(SYSTEMS)}; "
                 f"workloads: {', '.join(ALL_WORKLOADS)}, or {', '.join(WORKLOAD_GROUPS)})")
    for p in (args.out_md, args.out_png, args.out_json):
        os.makedirs(os.path.dirname(os.path.abspath(p)), exist_ok=True)
    t_start = time.time()
    tmpdir = tempfile.mkdtemp(prefix="lazyfuse_peers_")
    meta = {"date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
            "python": platform.python_version(), "host": platform.node(), "argv": sys.argv, **gpu_info()}
    log(f"peers: systems {systems}, workloads {workloads}, {'quick' if args.quick else 'full size'}; "
        f"GPU {meta.get('gpu', 'unknown')}, driver {meta.get('driver', 'unknown')}; temp dir {tmpdir}")
    report = {"meta": meta, "quick": args.quick, "workloads": workloads, "systems_run": systems,
              "sizes": {w: sizes(args.quick)[w] for w in workloads}, "systems": {},
              "timing": {"warmup": WARMUP, "trials": TRIALS, "calls_per_trial": CALLS},
              "tolerances": {"elementwise": TOL_ELEMENTWISE, "sum": TOL_SUM, "sumsq_check_n": SUMSQ_CHECK_N}}

    def finish():
        cr = report.get("copy_reference") or {}
        if not cr.get("bandwidth_Bps"):  # fall back to a worker's own copy measurement
            for s in systems:
                c = report["systems"].get(s, {}).get("copy")
                if c and c.get("bandwidth_Bps"):
                    cr = dict(c, system=s)
                    break
        report["copy_reference"] = cr
        if not meta.get("gpu"):  # no nvidia-smi: the device name a worker saw
            for s in systems:
                dev = report["systems"].get(s, {}).get("meta", {}).get("device")
                if dev and s != "numpy":
                    meta["gpu"] = dev
                    break
        for s in report["systems"].values():
            if not isinstance(s, dict):
                continue
            for w, c in s.get("cells", {}).items():
                if c.get("status") == "ok" and c.get("bytes") and cr.get("bandwidth_Bps"):
                    c["pct_of_copy"] = 100.0 * c["bytes"] / c["time_s"] / cr["bandwidth_Bps"]
        if args.lazyfuse_json:
            report["lazyfuse"] = parse_lazyfuse(args.lazyfuse_json)
        if args.limits_json:
            report["limits"] = parse_limits(args.limits_json)
        report["total_s"] = time.time() - t_start
        atomic_write_json(args.out_json, report)
        write_markdown(report, args.out_md)
        err = write_png(report, args.out_png)
        if err:
            report["png_error"] = err
            atomic_write_json(args.out_json, report)
            log(f"PNG: {err}")
        log(f"wrote {args.out_md}, {args.out_json}" + ("" if err else f", {args.out_png}") +
            f" (total {report['total_s']:.0f} s)")

    try:
        # The common copy reference, in its own process (the workers measure it too, for the record).
        copy_res = None
        if any(s != "numpy" for s in systems):
            for via in [args.copy_via] + [v for v in ("cupy", "torch") if v != args.copy_via]:
                args_copy = argparse.Namespace(**vars(args))
                args_copy.copy_via = via
                r = run_worker("copy", args_copy, [], tmpdir, min(args.timeout, 120))
                if r.get("copy", {}).get("bandwidth_Bps"):
                    copy_res = dict(r["copy"], system=f"copy/{via}")
                    break
                log(f"copy reference via {via}: n/a ({r.get('reason') or r.get('copy', {}).get('error')})")
        report["copy_reference"] = copy_res or {"reason": "neither cupy nor torch could measure it"}
        for s in systems:
            report["systems"][s] = run_worker(s, args, workloads, tmpdir, args.timeout)
            atomic_write_json(args.out_json, report)  # partial results survive anything that follows
    except KeyboardInterrupt:
        log("interrupted: writing what completed")
    finally:
        finish()
        shutil.rmtree(tmpdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
