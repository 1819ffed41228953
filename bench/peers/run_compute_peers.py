#!/usr/bin/env python3
"""Peer benchmarks of compute-bound kernels, the workloads of bench/bench_compute.cpp (issue 19): generated_sum, the
sum of where(v > 0.25, sin(v * 6.2831853), 0) over v = float32((arange(n) * 1103515245) % 1000003) / 1000003, n =
2^26 (BM_GeneratedSum): no memory is read, so the instructions per element set the time. Each system writes it as
its users do (int64 arange, float32 from the cast on; the multiplier and the modulus are Python constants, which
torch.compile and jax.jit compile into their kernels; lazyfuse passes them as kernel arguments). Systems: CuPy, torch
eager, torch.compile (default mode), jax.jit (with jax_enable_x64 for the int64 arange). Timing: run_peers.py's (3
warm-up calls, 5 trials of 20 back-to-back calls and one synchronize, the median).

Checks: the sum within 1e-5 of the sum of |terms| of NumPy's float64 sum of the same terms (float32 v, float64 sine).

Usage:
  python3 bench/peers/run_compute_peers.py --out-md compute-peers.md --out-json compute-peers.json \
      [--systems cupy,torch,torch_compile,jax] [--quick] [--lazyfuse-json bench_compute.json] [--timeout 300]
"""
from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run_peers import (  # noqa: E402  (the same timing method)
    COPY_BYTES, finish_peers_report, jax_copy_and_sync, lazyfuse_medians, peers_arguments, time_workloads,
    write_peers_markdown)

SYSTEMS = ["cupy", "torch", "torch_compile", "jax"]
LABELS = {"lazyfuse": "lazyfuse", "cupy": "CuPy", "torch": "torch eager", "torch_compile": "torch.compile",
          "jax": "jax.jit"}
MULTIPLIER, MODULUS = 1103515245, 1000003
WORKLOADS = ["generated_sum"]


def size(quick: bool) -> int:
    return 1 << 16 if quick else 1 << 26


def generated_sum(xp, where, n: int):
    """The workload over an array module (CuPy, torch, jax.numpy): float32 from the cast on."""
    k = (xp.arange(n) * MULTIPLIER) % MODULUS
    v = k.astype(xp.float32) if hasattr(k, "astype") else k.to(xp.float32)
    v = v * (1.0 / MODULUS)
    return where(v > 0.25, xp.sin(v * 6.2831853), 0.0).sum()


def check(np, n: int, out) -> str:
    k = (np.arange(n, dtype=np.int64) * MULTIPLIER) % MODULUS
    v = k.astype(np.float32) * np.float32(1.0 / MODULUS)
    terms = np.where(v > np.float32(0.25), np.sin(v.astype(np.float64) * np.float32(6.2831853)), 0.0)
    got, want, scale = float(np.asarray(out)), float(terms.sum()), float(np.abs(terms).sum())
    return "" if abs(got - want) <= 1e-5 * scale else f"sum {got}, expected {want} (within {1e-5 * scale:g})"


def cupy_worker(n: int):
    import cupy as cp
    a = cp.full(COPY_BYTES // 4, 1.5, dtype=cp.float32)
    b = cp.empty_like(a)
    copy = lambda: cp.cuda.runtime.memcpyAsync(b.data.ptr, a.data.ptr, COPY_BYTES,  # noqa: E731
                                               cp.cuda.runtime.memcpyDeviceToDevice, 0)
    return ({"generated_sum": lambda: generated_sum(cp, cp.where, n)}, copy, cp.cuda.Device().synchronize,
            cp.asnumpy, {"cupy": cp.__version__})


def torch_start(n: int, compile_it: bool):
    import torch

    def fn():
        k = (torch.arange(n, device="cuda") * MULTIPLIER) % MODULUS
        v = k.to(torch.float32) * (1.0 / MODULUS)
        return torch.where(v > 0.25, torch.sin(v * 6.2831853), 0.0).sum()

    if compile_it:
        fn = torch.compile(fn)
    a = torch.full((COPY_BYTES // 4,), 1.5, dtype=torch.float32, device="cuda")
    b = torch.empty_like(a)
    return ({"generated_sum": fn}, (lambda: b.copy_(a)), torch.cuda.synchronize,
            (lambda t: t.detach().cpu().numpy()), {"torch": torch.__version__})


def jax_worker(n: int):
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    import jax
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    state = {"last": None}
    fn = jax.jit(lambda: generated_sum(jnp, jnp.where, n))

    def call():
        state["last"] = fn()
        return state["last"]

    copy, sync = jax_copy_and_sync(jax, jnp, state)
    return {"generated_sum": call}, copy, sync, (lambda v: jax.device_get(v)), {"jax": jax.__version__}


def worker_main(args) -> int:
    import numpy as np
    n = size(args.quick)
    workers = {"cupy": lambda: cupy_worker(n), "torch": lambda: torch_start(n, False),
               "torch_compile": lambda: torch_start(n, True), "jax": lambda: jax_worker(n)}
    if args.worker not in workers:
        raise ValueError(f"unknown system {args.worker}")
    return time_workloads(n, workers[args.worker], WORKLOADS,
                          lambda w, out: {"wrong": check(np, n, out), "bytes": 0}, args.worker_out)


def lazyfuse_cells(paths: list) -> dict:
    """bench_compute's Google Benchmark JSON."""
    names = {"BM_CopyReference": "copy", f"BM_GeneratedSum/n:{size(False)}": "generated_sum"}
    return {w: {"time_s": secs, "bytes": 2 * COPY_BYTES if w == "copy" else 0}
            for w, (secs, _) in lazyfuse_medians(paths, names).items()}


def write_markdown(report: dict, path: str) -> None:
    n = size(report.get("quick", False))
    write_peers_markdown(report, path, WORKLOADS, SYSTEMS, LABELS, lambda cell, system: "",
                         "timing: median of 5 trials of 20 calls (bench/peers/run_peers.py's method). generated_sum: "
                         f"n = {n}, no memory read; the multiplier {MULTIPLIER} and the modulus {MODULUS} are "
                         "compile-time constants for torch.compile and jax.jit, kernel arguments for lazyfuse.")


def main() -> int:
    ap = peers_arguments(__doc__, SYSTEMS, "a small size (2^16)", "compute-peers")
    args = ap.parse_args()
    if args.worker:
        return worker_main(args)
    report = {"n": size(args.quick), "quick": args.quick, "systems": {}}
    return finish_peers_report(report, args, __file__, lazyfuse_cells, write_markdown)


if __name__ == "__main__":
    sys.exit(main())
