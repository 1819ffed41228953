#!/usr/bin/env python3
"""Peer benchmarks of elementwise work across layouts, the workloads of bench/bench_layout.cpp (issue 19): a + b.T and
x + x.T of 8192^2 float32 (BM_AddTransposed, BM_AddOwnTranspose), 3-d permutes copied into C order of
256 x 1024 x 1024 and 255 x 1000 x 1001 float32 (BM_Permute): NumPy's ascontiguousarray(x.transpose(axes)), torch's
x.permute(axes).contiguous(), jnp.transpose(x, axes); and broadcasts on an 8192^2 matrix: x * 2 (BM_ScaleContiguous,
the plain contiguous kernel), x + row (BM_AddRow), x * column (BM_MulColumn) and a layer norm over rows with
per-column scale and shift (BM_LayerNorm; torch: F.layer_norm). Systems: CuPy, torch eager, torch.compile (default mode),
jax.jit. Each system runs in its own subprocess with the timing method of run_peers.py (3 warm-up calls, 5 trials of
20 back-to-back calls and one synchronize, the median), beside a 256 MiB device-to-device copy for the bandwidth
percentages over the minimal bytes (each operand read once, the result written once; x + x.T reads x once).

Checks: every result equal to NumPy's on the same inputs (float32 additions, products and copies are exact), the
layer norm within 1e-4 (absolute and relative) of NumPy's float64 one; a failure marks the cell WRONG.

Usage:
  python3 bench/peers/run_layout_peers.py --out-md layout-peers.md --out-json layout-peers.json \
      [--systems cupy,torch,torch_compile,jax] [--quick] [--lazyfuse-json bench_layout.json] [--timeout 300]
"""
from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run_peers import (  # noqa: E402  (the same timing method)
    COPY_BYTES, finish_peers_report, jax_copy_and_sync, lazyfuse_medians, peers_arguments, share_of_copy,
    time_workloads, write_peers_markdown)

PERMUTES = {"021": (0, 2, 1), "210": (2, 1, 0), "102": (1, 0, 2)}
SYSTEMS = ["cupy", "torch", "torch_compile", "jax"]
LABELS = {"lazyfuse": "lazyfuse", "cupy": "CuPy", "torch": "torch eager", "torch_compile": "torch.compile",
          "jax": "jax.jit"}


def shapes(quick: bool) -> dict:
    """The side of the square matrices and the two 3-d shapes ("pow2", "odd")."""
    if quick:
        return {"side": 1024, "pow2": (32, 256, 256), "odd": (31, 250, 251)}
    return {"side": 8192, "pow2": (256, 1024, 1024), "odd": (255, 1000, 1001)}


def workloads() -> list:
    return (["add_transposed", "add_own_transpose"] + [f"permute{p}_{k}" for k in ("pow2", "odd") for p in PERMUTES]
            + BROADCASTS)


BROADCASTS = ["scale", "add_row", "mul_column", "layer_norm"]


def minimal_bytes(w: str, s: dict) -> int:
    if w == "add_transposed":
        return 3 * 4 * s["side"] ** 2
    if w == "add_own_transpose":
        return 2 * 4 * s["side"] ** 2
    if w in BROADCASTS:
        side = s["side"]
        return 2 * 4 * side ** 2 + {"scale": 0, "add_row": 1, "mul_column": 1, "layer_norm": 2}[w] * 4 * side
    d0, d1, d2 = s[w.split("_")[1]]
    return 2 * 4 * d0 * d1 * d2


def make_input(np, s: dict):
    rng = np.random.default_rng(20261203)
    side = s["side"]
    return {"a": rng.uniform(-1, 1, (side, side)).astype(np.float32),
            "b": rng.uniform(-1, 1, (side, side)).astype(np.float32),
            "pow2": rng.uniform(-1, 1, s["pow2"]).astype(np.float32),
            "odd": rng.uniform(-1, 1, s["odd"]).astype(np.float32),
            "row": rng.uniform(-1, 1, side).astype(np.float32),
            "column": rng.uniform(-1, 1, (side, 1)).astype(np.float32),
            "gamma": rng.uniform(0.5, 1.5, side).astype(np.float32),
            "beta": rng.uniform(-1, 1, side).astype(np.float32)}


def reference(np, w: str, inputs: dict):
    if w == "add_transposed":
        return inputs["a"] + inputs["b"].T
    if w == "add_own_transpose":
        return inputs["a"] + inputs["a"].T
    if w == "scale":
        return inputs["a"] * np.float32(2)
    if w == "add_row":
        return inputs["a"] + inputs["row"]
    if w == "mul_column":
        return inputs["a"] * inputs["column"]
    if w == "layer_norm":
        x = inputs["a"].astype(np.float64)
        z = (x - x.mean(1, keepdims=True)) / np.sqrt(x.var(1, keepdims=True) + 1e-5)
        return z * inputs["gamma"] + inputs["beta"]
    axes, kind = w[len("permute"):].split("_")
    return np.ascontiguousarray(inputs[kind].transpose(PERMUTES[axes]))


def check(np, w: str, inputs: dict, out) -> str:
    got, want = np.asarray(out), reference(np, w, inputs)
    if got.shape != want.shape:
        return f"shape {got.shape}, expected {want.shape}"
    if w == "layer_norm":
        return "" if bool(np.allclose(got, want, rtol=1e-4, atol=1e-4)) else "values differ from NumPy's"
    return "" if bool((got == want).all()) else "values differ from NumPy's"


def layer_norm(xp, x, gamma, beta):
    """The layer norm as written with NumPy's functions (CuPy, jax.numpy)."""
    mu = x.mean(1, keepdims=True)
    return (x - mu) / xp.sqrt(((x - mu) ** 2).mean(1, keepdims=True) + 1e-5) * gamma + beta


def calls(xp_add, xp_permute, arrays: dict, broadcasts: dict) -> dict:
    """The workloads' calls from a system's a + b.T, permute(x, axes) and its functions of the broadcast workloads,
    each called with the arrays it names (BROADCAST_ARGS)."""
    fns = {"add_transposed": lambda: xp_add(arrays["a"], arrays["b"]),
           "add_own_transpose": lambda: xp_add(arrays["a"], arrays["a"])}
    for w in BROADCASTS:
        fns[w] = (lambda f=broadcasts[w], args=[arrays[k] for k in BROADCAST_ARGS[w]]: f(*args))
    for p, axes in PERMUTES.items():
        for k in ("pow2", "odd"):
            fns[f"permute{p}_{k}"] = (lambda x=arrays[k], axes=axes: xp_permute(x, axes))
    return fns


BROADCAST_ARGS = {"scale": ["a"], "add_row": ["a", "row"], "mul_column": ["a", "column"],
                  "layer_norm": ["a", "gamma", "beta"]}


def broadcast_functions(xp) -> dict:
    return {"scale": lambda x: x * 2, "add_row": lambda x, r: x + r, "mul_column": lambda x, c: x * c,
            "layer_norm": lambda x, g, b: layer_norm(xp, x, g, b)}


# ---- workers: one system each, in its own process ----

def cupy_worker(inputs):
    import cupy as cp
    arrays = {k: cp.asarray(v) for k, v in inputs.items()}
    fns = calls(lambda a, b: a + b.T, lambda x, axes: cp.ascontiguousarray(x.transpose(axes)), arrays,
                broadcast_functions(cp))
    a = cp.full(COPY_BYTES // 4, 1.5, dtype=cp.float32)
    b = cp.empty_like(a)
    copy = lambda: cp.cuda.runtime.memcpyAsync(b.data.ptr, a.data.ptr, COPY_BYTES,  # noqa: E731
                                               cp.cuda.runtime.memcpyDeviceToDevice, 0)
    return fns, copy, cp.cuda.Device().synchronize, cp.asnumpy, {"cupy": cp.__version__}


def torch_start(inputs, compile_them: bool):
    import torch
    arrays = {k: torch.from_numpy(v).to("cuda") for k, v in inputs.items()}

    def add(a, b):
        return a + b.T

    def permute(x, axes):
        return x.permute(axes).contiguous()

    broadcasts = broadcast_functions(torch)
    broadcasts["layer_norm"] = lambda x, g, b: torch.nn.functional.layer_norm(x, (x.shape[1],), g, b, 1e-5)
    if compile_them:
        add, permute = torch.compile(add), torch.compile(permute)
        broadcasts = {w: torch.compile(f) for w, f in broadcasts.items()}
    fns = calls(add, permute, arrays, broadcasts)
    a = torch.full((COPY_BYTES // 4,), 1.5, dtype=torch.float32, device="cuda")
    b = torch.empty_like(a)
    return fns, (lambda: b.copy_(a)), torch.cuda.synchronize, (lambda t: t.detach().cpu().numpy()), \
        {"torch": torch.__version__}


def jax_worker(inputs):
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    import jax
    import jax.numpy as jnp
    arrays = {k: jnp.asarray(v) for k, v in inputs.items()}
    state = {"last": None}
    add = jax.jit(lambda a, b: a + b.T)
    permutes = {axes: jax.jit(lambda x, axes=axes: jnp.transpose(x, axes)) for axes in PERMUTES.values()}

    def keep(v):
        state["last"] = v
        return v

    broadcasts = {w: (lambda *args, f=jax.jit(f): keep(f(*args))) for w, f in broadcast_functions(jnp).items()}
    fns = calls(lambda a, b: keep(add(a, b)), lambda x, axes: keep(permutes[axes](x)), arrays, broadcasts)
    copy, sync = jax_copy_and_sync(jax, jnp, state)
    return fns, copy, sync, (lambda v: jax.device_get(v)), {"jax": jax.__version__}


def worker_main(args) -> int:
    import numpy as np
    s = shapes(args.quick)
    inputs = make_input(np, s)
    workers = {"cupy": lambda: cupy_worker(inputs), "torch": lambda: torch_start(inputs, False),
               "torch_compile": lambda: torch_start(inputs, True), "jax": lambda: jax_worker(inputs)}
    if args.worker not in workers:
        raise ValueError(f"unknown system {args.worker}")
    return time_workloads(s["side"], workers[args.worker], workloads(),
                          lambda w, out: {"wrong": check(np, w, inputs, out), "bytes": minimal_bytes(w, s)},
                          args.worker_out)


def lazyfuse_cells(paths: list) -> dict:
    """bench_layout's Google Benchmark JSON: BM_AddTransposed, BM_AddOwnTranspose, BM_Permute's six runs and
    BM_CopyReference."""
    s = shapes(False)
    names = {"BM_AddTransposed": "add_transposed", "BM_AddOwnTranspose": "add_own_transpose",
             "BM_CopyReference": "copy", "BM_ScaleContiguous": "scale", "BM_AddRow": "add_row",
             "BM_MulColumn": "mul_column", "BM_LayerNorm": "layer_norm"}
    for k in ("pow2", "odd"):
        d0, d1, d2 = s[k]
        for p in PERMUTES:
            names[f"BM_Permute/d0:{d0}/d1:{d1}/d2:{d2}/axes:{int(p)}"] = f"permute{p}_{k}"
    return {w: {"time_s": secs, "bytes": 2 * COPY_BYTES if w == "copy" else minimal_bytes(w, s)}
            for w, (secs, _) in lazyfuse_medians(paths, names).items()}


def write_markdown(report: dict, path: str) -> None:
    write_peers_markdown(report, path, workloads(), SYSTEMS, LABELS, share_of_copy,
                         f"side = {report['n']}: timing: median of 5 trials of 20 calls (bench/peers/run_peers.py's "
                         "method); % of each system's own 256 MiB device copy over the minimal bytes (each operand "
                         "read once, the result written once). permuteABC_pow2: axes (A, B, C) of 256 x 1024 x 1024, "
                         "_odd: of 255 x 1000 x 1001; scale: x * 2 of the square matrix, add_row: x + row, mul_column: x * column, "
                         "layer_norm: over rows, with per-column scale and shift.")


def main() -> int:
    ap = peers_arguments(__doc__, SYSTEMS, "1024^2 and 32 x 256 x 256 instead of 8192^2 and 256 x 1024 x 1024",
                         "layout-peers")
    args = ap.parse_args()
    if args.worker:
        return worker_main(args)
    report = {"n": shapes(args.quick)["side"], "systems": {}}
    return finish_peers_report(report, args, __file__, lazyfuse_cells, write_markdown)


if __name__ == "__main__":
    sys.exit(main())
