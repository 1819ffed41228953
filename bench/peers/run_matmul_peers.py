#!/usr/bin/env python3
"""Peer benchmarks of matrix products, the workloads of bench/bench_matmul.cpp (issue 15): a float32 GEMM 4096^3 in
full FP32 and in TF32, a bfloat16 GEMM 8192^3, 2048 batched float32 products of 128 x 128 matrices, the MLP block
gelu(x @ w + b) with the exact (erf) GELU, x 16384 x 2048, w 2048 x 8192, in TF32 and bfloat16, and the bias+ReLU
block maximum(x @ w + b, 0) of the same shapes beside the bare product. Systems: torch eager, torch.compile,
jax.jit and CuPy (cuBLAS; the MLP's GELU as one ElementwiseKernel; no bfloat16 dtype, so no bfloat16 rows), each in
its own subprocess, with the timing method of run_peers.py (its `bench`: 3 warm-up calls, 5 trials of 20
back-to-back calls and one synchronize, the median). TF32: torch's allow_tf32, jax's default_matmul_precision
"tensorfloat32", CUPY_TF32=1.

Checks: the first 64 rows (of the first batch entry) against float64 products of the same inputs, relative L2
error within 1e-5 (FP32), 5e-3 (TF32) or 2e-2 (bfloat16); a failed check marks the cell WRONG.

lazyfuse's rows come from bench_matmul's Google Benchmark JSON (--lazyfuse-json), its cuBLASLt rows (the limit)
too. Reported: milliseconds and TFLOP/s (2 m n k batch per second).

Usage:
  python3 bench/peers/run_matmul_peers.py --out-md matmul-peers.md --out-json matmul-peers.json \
      [--systems torch,torch_compile,jax,cupy] [--workloads mlp-gelu-bf16,...] [--quick]
      [--lazyfuse-json bench_matmul.json] [--timeout 600]
"""
from __future__ import annotations

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run_peers import bench, run_workers  # noqa: E402  (the same timing method)

SYSTEMS = ["torch", "torch_compile", "jax", "cupy"]
LABELS = {"lazyfuse": "lazyfuse", "limit": "cuBLASLt direct", "torch": "torch eager", "torch_compile": "torch.compile",
          "jax": "jax.jit", "cupy": "CuPy"}
# name: (batch, m, n, k, dtype, tf32, work)
WORKLOADS = {
    "sgemm-4096-fp32": (1, 4096, 4096, 4096, "float32", False, "gemm"),
    "sgemm-4096-tf32": (1, 4096, 4096, 4096, "float32", True, "gemm"),
    "gemm-8192-bf16": (1, 8192, 8192, 8192, "bfloat16", False, "gemm"),
    "batched-128x2048-fp32": (2048, 128, 128, 128, "float32", False, "gemm"),
    "mlp-gemm-tf32": (1, 16384, 8192, 2048, "float32", True, "gemm"),
    "mlp-gemm-bf16": (1, 16384, 8192, 2048, "bfloat16", False, "gemm"),
    "bias-relu-tf32": (1, 16384, 8192, 2048, "float32", True, "bias_relu"),
    "bias-relu-bf16": (1, 16384, 8192, 2048, "bfloat16", False, "bias_relu"),
    "mlp-gelu-tf32": (1, 16384, 8192, 2048, "float32", True, "mlp_gelu"),
    "mlp-gelu-bf16": (1, 16384, 8192, 2048, "bfloat16", False, "mlp_gelu"),
}
# bench_matmul's benchmark names (without /manual_time) for each workload: (lazyfuse, cuBLASLt direct).
LAZYFUSE_NAMES = {
    "sgemm-4096-fp32": ("BM_Sgemm4096/tf32:0", "BM_Sgemm4096_cuBLASLt/tf32:0"),
    "sgemm-4096-tf32": ("BM_Sgemm4096/tf32:1", "BM_Sgemm4096_cuBLASLt/tf32:1"),
    "gemm-8192-bf16": ("BM_Bf16Gemm8192/tf32:0", "BM_Bf16Gemm8192_cuBLASLt/tf32:0"),
    "batched-128x2048-fp32": ("BM_Batched128x2048/tf32:0", "BM_Batched128x2048_cuBLASLt/tf32:0"),
    "mlp-gemm-tf32": ("BM_MlpGemm/tf32:1/bf16:0", "BM_MlpGemm_cuBLASLt/tf32:1/bf16:0"),
    "mlp-gemm-bf16": ("BM_MlpGemm/tf32:0/bf16:1", "BM_MlpGemm_cuBLASLt/tf32:0/bf16:1"),
    "bias-relu-tf32": ("BM_BiasRelu/tf32:1/bf16:0", "BM_BiasRelu_cuBLASLt/tf32:1/bf16:0"),
    "bias-relu-bf16": ("BM_BiasRelu/tf32:0/bf16:1", "BM_BiasRelu_cuBLASLt/tf32:0/bf16:1"),
    "mlp-gelu-tf32": ("BM_MlpGelu/tf32:1/bf16:0", "BM_MlpGelu_cuBLASLt/tf32:1/bf16:0"),
    "mlp-gelu-bf16": ("BM_MlpGelu/tf32:0/bf16:1", "BM_MlpGelu_cuBLASLt/tf32:0/bf16:1"),
}
CHECK_ROWS = 64


def shape_of(w: str, quick: bool):
    batch, m, n, k, dtype, tf32, work = WORKLOADS[w]
    if quick:  # an eighth of each dimension (the batch an eighth too): the pipeline, not the numbers
        batch, m, n, k = max(1, batch // 8), max(16, m // 8), max(16, n // 8), max(16, k // 8)
    return batch, m, n, k, dtype, tf32, work


def flops(w: str, quick: bool) -> float:
    batch, m, n, k = shape_of(w, quick)[:4]
    return 2.0 * batch * m * n * k


def inputs(np, w: str, quick: bool):
    """float32 host inputs in [-0.5, 0.5): a (batch, m, k), b (batch, k, n) or (k, n), bias (n,)."""
    batch, m, n, k = shape_of(w, quick)[:4]
    rng = np.random.default_rng(15 + list(WORKLOADS).index(w))
    a = (rng.random((batch, m, k), dtype=np.float32) - 0.5) if batch > 1 else (rng.random((m, k), np.float32) - 0.5)
    b = (rng.random((batch, k, n), dtype=np.float32) - 0.5) if batch > 1 else (rng.random((k, n), np.float32) - 0.5)
    return a, b, rng.random(n, dtype=np.float32) - 0.5


def reference(np, w: str, a, b, bias):
    """The first CHECK_ROWS rows of the result in float64, from the inputs as the device holds them."""
    work = WORKLOADS[w][6]
    a0 = (a[0] if a.ndim == 3 else a)[:CHECK_ROWS].astype(np.float64)
    b0 = (b[0] if b.ndim == 3 else b).astype(np.float64)
    y = a0 @ b0
    if work == "gemm":
        return y
    y = y + bias.astype(np.float64)
    if work == "bias_relu":
        return np.maximum(y, 0)
    from math import erf, sqrt
    return 0.5 * y * (1 + np.vectorize(erf)(y / sqrt(2)))


def check(np, w: str, a, b, bias, out) -> str:
    """"" when the first rows agree with float64 within the workload's tolerance, else why not."""
    _, _, _, _, dtype, tf32, _ = WORKLOADS[w]
    tol = 2e-2 if dtype == "bfloat16" else (5e-3 if tf32 else 1e-5)
    got = np.asarray(out, dtype=np.float64)
    got = (got[0] if got.ndim == 3 else got)[:CHECK_ROWS]
    ref = reference(np, w, a, b, bias)
    err = float(np.linalg.norm(got - ref) / max(np.linalg.norm(ref), 1e-300))
    return "" if err <= tol else f"relative L2 error {err:.2e} > {tol:.0e}"


# ---- workers: one system each, in its own process ----

def torch_worker(np, quick: bool, compiled: bool):
    import torch
    dev = torch.device("cuda", 0)

    def make(w):
        batch, m, n, k, dtype, tf32, work = shape_of(w, quick)
        torch.backends.cuda.matmul.allow_tf32 = tf32
        t = torch.bfloat16 if dtype == "bfloat16" else torch.float32
        a, b, bias = inputs(np, w, quick)
        da, db, dbias = (torch.from_numpy(v).to(dev).to(t) for v in (a, b, bias))

        def gemm(x, y):
            return x @ y

        def bias_relu(x, y, z):
            return torch.relu(x @ y + z)

        def mlp_gelu(x, y, z):
            return torch.nn.functional.gelu(x @ y + z, approximate="none")

        f = {"gemm": gemm, "bias_relu": bias_relu, "mlp_gelu": mlp_gelu}[work]
        if compiled:
            f = torch.compile(f)
        args = (da, db) if work == "gemm" else (da, db, dbias)
        host = [x.float().cpu().numpy() for x in (da, db, dbias)]

        def call():
            torch.backends.cuda.matmul.allow_tf32 = tf32
            return f(*args)
        return call, host, (lambda x: x.float().cpu().numpy())

    return make, torch.cuda.synchronize, {"torch": torch.__version__}


def jax_worker(np, quick: bool):
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    import jax
    import jax.numpy as jnp
    state = {"last": None}

    def make(w):
        batch, m, n, k, dtype, tf32, work = shape_of(w, quick)
        t = jnp.bfloat16 if dtype == "bfloat16" else jnp.float32
        a, b, bias = inputs(np, w, quick)
        da, db, dbias = (jnp.asarray(v).astype(t) for v in (a, b, bias))
        precision = "tensorfloat32" if tf32 else ("highest" if dtype == "float32" else "default")

        def body(x, y, z):
            with jax.default_matmul_precision(precision):
                p = jnp.matmul(x, y)
            if work == "gemm":
                return p
            p = p + z
            return jnp.maximum(p, 0) if work == "bias_relu" else jax.nn.gelu(p, approximate=False)

        f = jax.jit(body)
        host = [np.asarray(jax.device_get(x.astype(jnp.float32))) for x in (da, db, dbias)]

        def call():
            state["last"] = f(da, db, dbias)
            return state["last"]
        return call, host, (lambda x: np.asarray(jax.device_get(x.astype(jnp.float32))))

    def sync():
        if state["last"] is not None:
            jax.block_until_ready(state["last"])

    return make, sync, {"jax": jax.__version__}


def cupy_worker(np, quick: bool):
    import cupy as cp
    gelu = cp.ElementwiseKernel("float32 y", "float32 out", "out = 0.5f * y * erfcf(-y * 0.70710678f)", "erf_gelu")

    def make(w):
        batch, m, n, k, dtype, tf32, work = shape_of(w, quick)
        if dtype == "bfloat16":
            raise NotImplementedError("CuPy has no bfloat16 dtype")
        if tf32 != (os.environ.get("CUPY_TF32") == "1"):
            raise NotImplementedError("TF32 is chosen per process (CUPY_TF32): see the cupy_tf32 system")
        a, b, bias = inputs(np, w, quick)
        da, db, dbias = cp.asarray(a), cp.asarray(b), cp.asarray(bias)

        def call():
            p = cp.matmul(da, db)
            if work == "gemm":
                return p
            p += dbias
            return cp.maximum(p, 0, out=p) if work == "bias_relu" else gelu(p, p)
        return call, [a, b, bias], cp.asnumpy

    return make, cp.cuda.Device().synchronize, {"cupy": cp.__version__}


def worker_main(args) -> int:
    result = {"system": args.worker, "cells": {}}
    try:
        import numpy as np
        if args.worker in ("torch", "torch_compile"):
            make, sync, pk = torch_worker(np, args.quick, args.worker == "torch_compile")
        elif args.worker == "jax":
            make, sync, pk = jax_worker(np, args.quick)
        elif args.worker in ("cupy", "cupy_tf32"):
            make, sync, pk = cupy_worker(np, args.quick)
        else:
            raise ValueError(f"unknown system {args.worker}")
        result["packages"] = pk
        for w in os.environ["MATMUL_PEERS_WORKLOADS"].split(","):
            try:
                call, host, to_host = make(w)
                r = bench(call, sync)
                r["flops"] = flops(w, args.quick)
                r["wrong"] = check(np, w, *host, to_host(call()))
                result["cells"][w] = r
            except NotImplementedError as e:
                result["cells"][w] = {"not_applicable": str(e)}
            except Exception as e:  # one workload failing keeps the others
                result["cells"][w] = {"error": f"{type(e).__name__}: {e}"}
    except Exception as e:
        result["error"] = f"{type(e).__name__}: {e}"
    with open(args.worker_out, "w") as f:
        json.dump(result, f)
    return 0


def lazyfuse_cells(paths: list) -> tuple:
    """lazyfuse's and the direct cuBLASLt rows of bench_matmul's Google Benchmark JSON (the _median aggregate when
    present)."""
    ours, limit = {}, {}
    by_name = {}
    for w, (lf, direct) in LAZYFUSE_NAMES.items():
        by_name[lf] = (ours, w)
        by_name[direct] = (limit, w)
    for p in paths:
        with open(p) as f:
            data = json.load(f)
        for e in data.get("benchmarks", []):
            base = e.get("run_name", e["name"]).split("/iterations")[0].split("/manual_time")[0]
            if base not in by_name or e.get("error_occurred"):
                continue
            if e.get("run_type") == "aggregate" and e.get("aggregate_name") != "median":
                continue
            cells, w = by_name[base]
            secs = e["real_time"] * {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}[e.get("time_unit", "ns")]
            if w not in cells or e.get("aggregate_name") == "median":
                cells[w] = {"time_s": secs, "flops": flops(w, False)}
    return ours, limit


def write_markdown(report: dict, path: str) -> None:
    workloads = report["workloads"]
    cols = [c for c in ["lazyfuse", "limit"] + SYSTEMS + ["cupy_tf32"] if c in report["systems"]]
    label = dict(LABELS, cupy_tf32="CuPy (CUPY_TF32=1)")
    lines = ["| workload | " + " | ".join(label[c] for c in cols) + " |", "|---" * (len(cols) + 1) + "|"]
    notes = []
    for w in workloads:
        row = [w]
        for c in cols:
            s = report["systems"][c]
            cell = s.get("cells", {}).get(w)
            if cell and "not_applicable" in cell:
                row.append("–")
                continue
            if s.get("error") or not cell or "error" in cell:
                notes.append(f"{label[c]} {w}: {(s.get('error') or (cell or {}).get('error') or 'not measured')}")
                row.append("n/a")
                continue
            text = f"{cell['time_s'] * 1e3:.3f} ms ({cell['flops'] / cell['time_s'] * 1e-12:.0f} TFLOP/s)"
            if cell.get("wrong"):
                text += " **WRONG**"
                notes.append(f"{label[c]} {w}: {cell['wrong']}")
            row.append(text)
        lines.append("| " + " | ".join(row) + " |")
    lines.append("")
    lines.append("Timing: median of 5 trials of 20 calls (bench/peers/run_peers.py's method)"
                 + (" on shapes an eighth of the real ones (--quick)" if report.get("quick") else "") + ".")
    lines += [f"- {x}" for x in notes]
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--systems", default=",".join(SYSTEMS + ["cupy_tf32"]))
    ap.add_argument("--workloads", default=",".join(WORKLOADS), help="a comma-separated subset of the workloads")
    ap.add_argument("--quick", action="store_true", help="every dimension an eighth")
    ap.add_argument("--lazyfuse-json", action="append", default=[])
    ap.add_argument("--out-md", default="matmul-peers.md")
    ap.add_argument("--out-json", default="matmul-peers.json")
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--worker-out", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        return worker_main(args)
    workloads = [w for w in args.workloads.split(",") if w]
    unknown = [w for w in workloads if w not in WORKLOADS]
    if unknown:
        ap.error(f"unknown workloads {unknown}; known: {', '.join(WORKLOADS)}")
    report = {"quick": args.quick, "workloads": workloads, "systems": {}}
    if args.lazyfuse_json:
        ours, limit = lazyfuse_cells(args.lazyfuse_json)
        report["systems"]["lazyfuse"] = {"cells": ours}
        report["systems"]["limit"] = {"cells": limit}
    systems = [s for s in args.systems.split(",") if s]
    worker_env = lambda system: {"CUPY_TF32": "1" if system == "cupy_tf32" else "0",  # noqa: E731
                                 "MATMUL_PEERS_WORKLOADS": ",".join(workloads)}
    report["systems"].update(run_workers(__file__, systems, args.timeout, args.quick, extra_env=worker_env))
    with open(args.out_json, "w") as f:
        json.dump(report, f, indent=1)
    write_markdown(report, args.out_md)
    print(open(args.out_md).read())
    return 0


if __name__ == "__main__":
    sys.exit(main())
