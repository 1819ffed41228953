#!/usr/bin/env python3
"""Peer benchmarks of gathers and mask selection, the workloads of bench/bench_gather.cpp (issue 17): a random gather
x[idx] * 1.5 - 0.25 of 2^23 uniform random int64 indices into 2^25 float32 (BM_RandomGather), 32,768 rows of 512
float32 gathered from a 131,072-row table and scaled by 2 (BM_EmbeddingGather), x[x > 0] of 2^25 float32 uniforms in
[-1, 1) (BM_MaskSelect), and a scatter-add of 2^23 float32 values into 2^20 float32 elements at uniform random int64
indices (BM_ScatterAdd: NumPy's add.at, torch.index_add, cupyx.scatter_add on a copy, x.at[idx].add). Systems: CuPy,
torch eager, torch eager under torch.use_deterministic_algorithms(True) (index_add's deterministic path: the peer that
gives the same bits on every run, as lazyfuse does), torch.compile (its default mode; the mask selection, whose size
depends on the data, as Inductor compiles it with a graph break), jax.jit (no mask selection: jit needs a static
size). Each system runs in its own subprocess with the timing method of run_peers.py (3 warm-up calls, 5 trials of 20
back-to-back calls and one synchronize, the median), beside a 256 MiB device-to-device copy for the bandwidth
percentages over the minimal bytes (indices read, gathered elements read, results written; for the selection, x read
once and the selected values written; for the scatter-add, the indices and values read once, x read and the result
written).

Checks: the gathers within 1 ulp (of the larger of the product and the result) of NumPy's float32 computation of the
same expression on the same inputs (NumPy rounds the multiply and the subtraction each; a contracted multiply-add
rounds once), the selection equal to NumPy's x[x > 0], the scatter-add within 1e-6 relative L2 error of np.add.at in float64;
a failure marks the cell WRONG.

Usage:
  python3 bench/peers/run_gather_peers.py --out-md gather-peers.md --out-json gather-peers.json \
      [--systems cupy,torch,torch_deterministic,torch_compile,jax] [--quick] [--lazyfuse-json bench_gather.json] [--timeout 180]
"""
from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run_peers import (  # noqa: E402  (the same timing method)
    COPY_BYTES, finish_peers_report, jax_copy_and_sync, lazyfuse_medians, peers_arguments, share_of_copy,
    time_workloads, write_peers_markdown)

WORKLOADS = ["random_gather", "embedding", "mask_select", "scatter_add"]
SYSTEMS = ["cupy", "torch", "torch_deterministic", "torch_compile", "jax"]
LABELS = {"lazyfuse": "lazyfuse", "cupy": "CuPy", "torch": "torch eager",
          "torch_deterministic": "torch eager, deterministic", "torch_compile": "torch.compile", "jax": "jax.jit"}
ROWS, WIDTH, PICKED = 131072, 512, 32768
BINS = 1 << 20  # the scatter-add's elements (a quick run: 2^16)


def sizes(quick: bool):
    """(n, m): the gathered array's and the mask's length, and the number of random indices."""
    return (1 << 21, 1 << 19) if quick else (1 << 25, 1 << 23)


def minimal_bytes(w: str, n: int, m: int, selected: int = 0) -> int:
    if w == "random_gather":
        return m * (8 + 4 + 4)
    if w == "embedding":
        return PICKED * (8 + 2 * 4 * WIDTH)
    if w == "scatter_add":
        return m * (8 + 4) + 2 * 4 * bins_of(n)
    return 4 * n + 4 * selected


def bins_of(n: int) -> int:
    return BINS if n == sizes(False)[0] else 1 << 16


def make_input(np, n: int, m: int):
    rng = np.random.default_rng(20261203)
    x = rng.uniform(-1, 1, n).astype(np.float32)
    idx = rng.integers(0, n, m, dtype=np.int64)
    table = rng.uniform(-1, 1, (ROWS, WIDTH)).astype(np.float32)
    rows = rng.integers(0, ROWS, PICKED, dtype=np.int64)
    bins = bins_of(n)
    target = rng.uniform(-1, 1, bins).astype(np.float32)
    where = rng.integers(0, bins, m, dtype=np.int64)
    added = rng.uniform(-1, 1, m).astype(np.float32)
    return x, idx, table, rows, target, where, added


def check(w: str, np, inputs, out) -> str:
    """"" when the output is right, else why not."""
    x, idx, table, rows, target, where, added = inputs
    got = np.asarray(out)
    if w == "scatter_add":
        want = target.astype(np.float64)
        np.add.at(want, where, added.astype(np.float64))
        if got.shape != want.shape:
            return f"shape {got.shape}, expected {want.shape}"
        err = float(np.linalg.norm(got.astype(np.float64) - want) / np.linalg.norm(want))
        return "" if err <= 1e-6 else f"relative L2 error {err:.2e} from np.add.at in float64"
    if w == "random_gather":
        want = x[idx] * np.float32(1.5) - np.float32(0.25)
    elif w == "embedding":
        want = table[rows] * np.float32(2)
    else:
        want = x[x > 0]
    if got.shape != want.shape:
        return f"shape {got.shape}, expected {want.shape}"
    if w == "mask_select":
        return "" if bool((got == want).all()) else "values differ from NumPy's x[x > 0]"
    # An ulp of the larger operand, not of the result: x * 1.5 - 0.25 cancels near x = 1/6, where a contracted
    # multiply-add and NumPy's two roundings differ by many ulps of the small result.
    scale = np.maximum(np.abs(want), np.abs(x[idx] * np.float32(1.5))) if w == "random_gather" else np.abs(want)
    ulps = np.abs(got.astype(np.float64) - want.astype(np.float64)) / np.spacing(scale).astype(np.float64)
    return "" if float(ulps.max(initial=0)) <= 1 else f"up to {float(ulps.max()):.1f} ulps from NumPy's float32"


# ---- workers: one system each, in its own process ----

def cupy_worker(inputs):
    import cupy as cp
    import cupyx
    x, idx, table, rows, target, where, added = (cp.asarray(v) for v in inputs)

    def scatter_add():
        out = target.copy()
        cupyx.scatter_add(out, where, added)
        return out

    fns = {"random_gather": lambda: x[idx] * cp.float32(1.5) - cp.float32(0.25),
           "embedding": lambda: table[rows] * cp.float32(2), "mask_select": lambda: x[x > 0],
           "scatter_add": scatter_add}
    a = cp.full(COPY_BYTES // 4, 1.5, dtype=cp.float32)
    b = cp.empty_like(a)
    copy = lambda: cp.cuda.runtime.memcpyAsync(b.data.ptr, a.data.ptr, COPY_BYTES,  # noqa: E731
                                               cp.cuda.runtime.memcpyDeviceToDevice, 0)
    return fns, copy, cp.cuda.Device().synchronize, cp.asnumpy, {"cupy": cp.__version__}


def torch_fns(torch, inputs, compile_them: bool):
    x, idx, table, rows, target, where, added = (torch.from_numpy(v).to("cuda") for v in inputs)

    def gather(v, i):
        return v[i] * 1.5 - 0.25

    def embed(t, r):
        return t[r] * 2.0

    def select(v):
        return v[v > 0]

    def scatter_add(t, i, v):
        return torch.index_add(t, 0, i, v)

    if compile_them:
        gather, embed, select, scatter_add = (torch.compile(f) for f in (gather, embed, select, scatter_add))
    return {"random_gather": lambda: gather(x, idx), "embedding": lambda: embed(table, rows),
            "mask_select": lambda: select(x), "scatter_add": lambda: scatter_add(target, where, added)}


def torch_start(inputs, compile_them: bool, deterministic: bool = False):
    import torch
    # torch.use_deterministic_algorithms: index_add on CUDA takes its deterministic path (the same bits on every run,
    # as lazyfuse's at().add promises); the gathers and the selection are deterministic either way.
    torch.use_deterministic_algorithms(deterministic)
    fns = torch_fns(torch, inputs, compile_them)
    a = torch.full((COPY_BYTES // 4,), 1.5, dtype=torch.float32, device="cuda")
    b = torch.empty_like(a)
    return fns, (lambda: b.copy_(a)), torch.cuda.synchronize, (lambda t: t.detach().cpu().numpy()), \
        {"torch": torch.__version__}


def jax_worker(inputs):
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    import jax
    import jax.numpy as jnp
    x, idx, table, rows, target, where, added = (jnp.asarray(v) for v in inputs)
    state = {"last": None}

    def jitted(f, *args):
        g = jax.jit(f)

        def call():
            state["last"] = g(*args)
            return state["last"]
        return call

    def no_jitted_selection():
        raise NotImplementedError("x[x > 0] under jax.jit needs a static size: no NumPy mask selection")

    fns = {"random_gather": jitted(lambda v, i: v[i] * 1.5 - 0.25, x, idx),
           "embedding": jitted(lambda t, r: t[r] * 2.0, table, rows), "mask_select": no_jitted_selection,
           "scatter_add": jitted(lambda t, i, v: t.at[i].add(v), target, where, added)}
    copy, sync = jax_copy_and_sync(jax, jnp, state)
    return fns, copy, sync, (lambda v: jax.device_get(v)), {"jax": jax.__version__}


def worker_main(args) -> int:
    import numpy as np
    n, m = sizes(args.quick)
    inputs = make_input(np, n, m)
    workers = {"cupy": lambda: cupy_worker(inputs), "torch": lambda: torch_start(inputs, False),
               "torch_deterministic": lambda: torch_start(inputs, False, deterministic=True),
               "torch_compile": lambda: torch_start(inputs, True), "jax": lambda: jax_worker(inputs)}
    if args.worker not in workers:
        raise ValueError(f"unknown system {args.worker}")
    return time_workloads(n, workers[args.worker], WORKLOADS,
                          lambda w, out: {"wrong": check(w, np, inputs, out),
                                          "bytes": minimal_bytes(w, n, m, int(np.asarray(out).size))},
                          args.worker_out)


def lazyfuse_cells(paths: list) -> dict:
    """BM_RandomGather, BM_EmbeddingGather and BM_MaskSelect of bench_gather's Google Benchmark JSON, and its
    BM_CopyReference. x > 0 of uniforms in [-1, 1) selects half of them (the benchmark's bytes count n / 2)."""
    names = {"BM_RandomGather": "random_gather", "BM_EmbeddingGather": "embedding", "BM_MaskSelect": "mask_select",
             "BM_ScatterAdd": "scatter_add", "BM_CopyReference": "copy"}
    n, m = sizes(False)
    return {w: {"time_s": secs, "bytes": 2 * COPY_BYTES if w == "copy" else minimal_bytes(w, n, m, n // 2)}
            for w, (secs, _) in lazyfuse_medians(paths, names).items()}


def write_markdown(report: dict, path: str) -> None:
    write_peers_markdown(report, path, WORKLOADS, SYSTEMS, LABELS, share_of_copy,
                         f"n = {report['n']}: timing: median of 5 trials of 20 calls (bench/peers/run_peers.py's "
                         "method); % of each system's own 256 MiB device copy over the minimal bytes (random gather: "
                         "8 + 4 + 4 per index, embedding: the row indices, the rows read and written, x[x > 0]: x read "
                         "once and the selected values written; scatter-add: the indices and values read, x read "
                         "and the result written).")


def main() -> int:
    ap = peers_arguments(__doc__, SYSTEMS, "2^21 and 2^19 instead of 2^25 and 2^23 elements", "gather-peers")
    args = ap.parse_args()
    if args.worker:
        return worker_main(args)
    report = {"n": sizes(args.quick)[0], "systems": {}}
    return finish_peers_report(report, args, __file__, lazyfuse_cells, write_markdown)


if __name__ == "__main__":
    sys.exit(main())
