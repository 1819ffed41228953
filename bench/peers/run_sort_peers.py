#!/usr/bin/env python3
"""Peer benchmarks of sorting, scanning and counting, the workloads of bench/bench_scan.cpp's BM_Sort, BM_Argsort,
BM_Cumsum and BM_Bincount: a 1-D sort, argsort and cumsum of 2^25 float32 uniforms in [-1, 1), and bincount of 2^25
int32 uniform in [0, 4096) (cupy.bincount and torch.bincount read the maximum on the host as NumPy's bincount and
lazyfuse's do; jax.jit's jnp.bincount takes length=4096 instead, as lazyfuse's bincount_fixed), and unique of the
float32 values (BM_Unique; cupy.unique, torch.unique; jax.jit has no NumPy unique: jnp.unique under jit pads to a
static size). Systems: CuPy (cupy.sort, cupy.argsort: CUB radix sorts), torch eager
(torch.sort(x).values, torch.argsort(x), torch.cumsum(x, 0)), jax.jit (jnp.sort, jnp.argsort, jnp.cumsum, each
jitted). torch.compile is left out: Inductor runs a lone sort as the eager op. Each system runs in its own subprocess, with the timing method of
run_peers.py (its `bench`: 3 warm-up calls, 5 trials of 20 back-to-back calls and one synchronize, the median), and a
256 MiB device-to-device copy for the bandwidth percentages (minimal bytes: one read and one write of the float32
values for sort and cumsum, one read of the values and one write of the int64 indices for argsort).

Checks: the sorted values must equal NumPy's np.sort exactly, and the values taken at the returned indices likewise
(ties among 2^25 uniforms are possible, so the indices themselves are not compared); the cumsum within a relative
L2 error of 1e-4 of NumPy's float64 cumsum of the same values; the counts equal to np.bincount's, the distinct
values to np.unique's; a failure marks the
cell WRONG.

Usage:
  python3 bench/peers/run_sort_peers.py --out-md sort-peers.md --out-json sort-peers.json \
      [--systems cupy,torch,jax] [--quick] [--lazyfuse-json bench_scan.json] [--timeout 180]
"""
from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run_peers import (  # noqa: E402  (the same timing method)
    COPY_BYTES, finish_peers_report, jax_copy_and_sync, lazyfuse_medians, peers_arguments, share_of_copy,
    time_workloads, write_peers_markdown)

WORKLOADS = ["sort", "argsort", "cumsum", "bincount", "unique"]
BINS = 4096
SYSTEMS = ["cupy", "torch", "jax"]
LABELS = {"lazyfuse": "lazyfuse", "cupy": "CuPy", "torch": "torch eager", "jax": "jax.jit"}


def minimal_bytes(w: str, n: int, distinct: int = 0) -> int:
    if w == "unique":
        return 4 * (n + distinct)
    if w == "bincount":
        return 4 * n + 8 * BINS
    return (4 + 8) * n if w == "argsort" else (4 + 4) * n


def make_input(np, n: int):
    """The float32 values (sort, argsort, cumsum) and the int32 bins of bincount."""
    rng = np.random.default_rng(20261202)
    return rng.uniform(-1, 1, n).astype(np.float32), rng.integers(0, BINS, n, dtype=np.int32)


def check(w: str, np, x, out) -> str:
    """"" when the output is right, else why not."""
    x, k = x
    if w == "unique":
        want, got = np.unique(x), np.asarray(out)
        if got.shape != want.shape:
            return f"{got.size} values, np.unique has {want.size}"
        return "" if bool((got == want).all()) else "values differ from np.unique"
    if w == "bincount":
        want = np.bincount(k, minlength=BINS)
        got = np.asarray(out).astype(np.int64)
        return "" if got.shape == want.shape and bool((got == want).all()) else "counts differ from np.bincount"
    if w == "cumsum":
        want = np.cumsum(x.astype(np.float64))
        got = np.asarray(out).astype(np.float64)
        if got.shape != want.shape:
            return f"shape {got.shape}, expected {want.shape}"
        err = float(np.linalg.norm(got - want) / np.linalg.norm(want))
        return "" if err <= 1e-4 else f"relative L2 error {err:.3g} against float64"
    want = np.sort(x, kind="stable")
    got = np.asarray(out) if w == "sort" else x[np.asarray(out).astype(np.int64)]
    if got.shape != want.shape:
        return f"shape {got.shape}, expected {want.shape}"
    bad = np.flatnonzero(got != want)
    return "" if bad.size == 0 else f"{bad.size} elements differ from np.sort, the first at {int(bad[0])}"


# ---- workers: one system each, in its own process ----

def cupy_worker(inputs):
    import cupy as cp
    d, dk = cp.asarray(inputs[0]), cp.asarray(inputs[1])
    fns = {"sort": lambda: cp.sort(d), "argsort": lambda: cp.argsort(d), "cumsum": lambda: cp.cumsum(d),
           "bincount": lambda: cp.bincount(dk, minlength=BINS), "unique": lambda: cp.unique(d)}
    a = cp.full(COPY_BYTES // 4, 1.5, dtype=cp.float32)
    b = cp.empty_like(a)
    copy = lambda: cp.cuda.runtime.memcpyAsync(b.data.ptr, a.data.ptr, COPY_BYTES,  # noqa: E731
                                               cp.cuda.runtime.memcpyDeviceToDevice, 0)
    return fns, copy, cp.cuda.Device().synchronize, cp.asnumpy, {"cupy": cp.__version__}


def torch_worker(inputs):
    import torch
    d, dk = torch.from_numpy(inputs[0]).to("cuda"), torch.from_numpy(inputs[1]).to("cuda")
    fns = {"sort": lambda: torch.sort(d).values, "argsort": lambda: torch.argsort(d),
           "cumsum": lambda: torch.cumsum(d, 0), "bincount": lambda: torch.bincount(dk, minlength=BINS),
           "unique": lambda: torch.unique(d)}
    a = torch.full((COPY_BYTES // 4,), 1.5, dtype=torch.float32, device="cuda")
    b = torch.empty_like(a)
    return fns, (lambda: b.copy_(a)), torch.cuda.synchronize, (lambda t: t.detach().cpu().numpy()), \
        {"torch": torch.__version__}


def jax_worker(inputs):
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    import jax
    import jax.numpy as jnp
    d, dk = jnp.asarray(inputs[0]), jnp.asarray(inputs[1])
    state = {"last": None}

    def jitted(f, arg=d):
        g = jax.jit(f)

        def call():
            state["last"] = g(arg)
            return state["last"]
        return call

    def no_jitted_unique():
        raise NotImplementedError("jnp.unique under jax.jit needs a static size (it pads to it): no NumPy unique")

    # jax.jit needs the number of bins statically: `length` (lazyfuse's bincount_fixed), no read of the maximum.
    fns = {"sort": jitted(jnp.sort), "argsort": jitted(jnp.argsort), "cumsum": jitted(jnp.cumsum),
           "bincount": jitted(lambda v: jnp.bincount(v, length=BINS), dk), "unique": no_jitted_unique}
    copy, sync = jax_copy_and_sync(jax, jnp, state)
    return fns, copy, sync, (lambda v: jax.device_get(v)), {"jax": jax.__version__}


def worker_main(args) -> int:
    import numpy as np
    n = 1 << (21 if args.quick else 25)
    x = make_input(np, n)
    workers = {"cupy": cupy_worker, "torch": torch_worker, "jax": jax_worker}
    if args.worker not in workers:
        raise ValueError(f"unknown system {args.worker}")
    return time_workloads(n, lambda: workers[args.worker](x), WORKLOADS,
                          lambda w, out: {"wrong": check(w, np, x, out),
                                          "bytes": minimal_bytes(w, n, int(np.asarray(out).size))}, args.worker_out)


def lazyfuse_cells(paths: list) -> dict:
    """BM_Sort, BM_Argsort, BM_Cumsum, BM_Bincount and BM_Unique of bench_scan's Google Benchmark JSON, and its
    BM_CopyReference."""
    names = {"BM_Sort": "sort", "BM_Argsort": "argsort", "BM_Cumsum": "cumsum", "BM_Bincount": "bincount",
             "BM_Unique": "unique", "BM_CopyReference": "copy"}
    return {w: {"time_s": secs,
                "bytes": 2 * COPY_BYTES if w == "copy" else minimal_bytes(w, 1 << 25, int(e.get("distinct", 0)))}
            for w, (secs, e) in lazyfuse_medians(paths, names).items()}


def write_markdown(report: dict, path: str) -> None:
    write_peers_markdown(report, path, WORKLOADS, SYSTEMS, LABELS, share_of_copy,
                         f"n = {report['n']} float32 uniforms in [-1, 1); timing: median of 5 trials of 20 calls "
                         "(bench/peers/run_peers.py's method); % of each system's own 256 MiB device copy over the "
                         "minimal bytes (sort and cumsum: 8 per element, argsort: 12, bincount: 4 and the counts, "
                         "unique: 4 and the distinct values).")


def main() -> int:
    ap = peers_arguments(__doc__, SYSTEMS, "2^21 instead of 2^25 elements", "sort-peers")
    args = ap.parse_args()
    if args.worker:
        return worker_main(args)
    report = {"n": 1 << (21 if args.quick else 25), "systems": {}}
    return finish_peers_report(report, args, __file__, lazyfuse_cells, write_markdown)


if __name__ == "__main__":
    sys.exit(main())
