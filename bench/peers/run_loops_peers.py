#!/usr/bin/env python3
"""Peer benchmarks of time loops and an iterative solver, the workloads of bench/bench_loops.cpp (issue 19):
update_loop (x = x * 0.999 + 0.001 applied 1,000 times to 2^20 float32; BM_UpdateLoop), heat_roll (20 periodic heat
steps through roll on 4096^2 float32; BM_HeatRollLoop), stencil_step_N (one Jacobi step of an N^2 grid, the border
kept; BM_StencilStep) and jacobi_N (100 such steps reading ||u_new - u|| on the host every 10 steps; BM_JacobiSolver),
N = 2048 and 8192. Systems: CuPy, torch eager, torch.compile (default mode), jax.jit, each written as its users write
it: torch.compile and jax.jit compile the whole 1,000-step update loop as one function, and the step function of the
heat loop and of the solver, which a Python loop calls (the host reads the norm with float()). Timing: run_peers.py's
(3 warm-up calls, 5 trials of 20 back-to-back calls and one synchronize, the median), beside a 256 MiB
device-to-device copy for the bandwidth percentages over the minimal bytes (each step reads its grid, and the solver
its right-hand side, once and writes the grid once; the update loop reads x and writes the result once).

Checks: each result within 1e-4 (relative and absolute) of NumPy's float32 loop on the same inputs; a failure marks
the cell WRONG.

Usage:
  python3 bench/peers/run_loops_peers.py --out-md loops-peers.md --out-json loops-peers.json \
      [--systems cupy,torch,torch_compile,jax] [--quick] [--lazyfuse-json bench_loops.json] [--timeout 600]
"""
from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run_peers import (  # noqa: E402  (the same timing method)
    COPY_BYTES, finish_peers_report, jax_copy_and_sync, lazyfuse_medians, peers_arguments, share_of_copy,
    time_workloads, write_peers_markdown)

SYSTEMS = ["cupy", "torch", "torch_compile", "jax"]
LABELS = {"lazyfuse": "lazyfuse", "cupy": "CuPy", "torch": "torch eager", "torch_compile": "torch.compile",
          "jax": "jax.jit"}
UPDATE_STEPS, HEAT_STEPS, SOLVER_STEPS, CHECK_EVERY = 1000, 20, 100, 10


def sizes(quick: bool) -> dict:
    if quick:
        return {"update": 1 << 16, "heat": 256, "grids": [128, 256]}
    return {"update": 1 << 20, "heat": 4096, "grids": [2048, 8192]}


def workloads(s: dict) -> list:
    return (["update_loop", "heat_roll"] + [f"stencil_step_{n}" for n in s["grids"]]
            + [f"jacobi_{n}" for n in s["grids"]])


def minimal_bytes(w: str, s: dict) -> int:
    if w == "update_loop":
        return 2 * 4 * s["update"]
    if w == "heat_roll":
        return HEAT_STEPS * 2 * 4 * s["heat"] ** 2
    n = int(w.rsplit("_", 1)[1])
    return (1 if w.startswith("stencil") else SOLVER_STEPS) * 3 * 4 * n * n


def make_input(np, s: dict) -> dict:
    rng = np.random.default_rng(20261204)
    out = {"x": rng.uniform(-1, 1, s["update"]).astype(np.float32),
           "heat": rng.uniform(0, 1, (s["heat"], s["heat"])).astype(np.float32)}
    for n in s["grids"]:
        out[f"u{n}"] = rng.uniform(0, 1, (n, n)).astype(np.float32)
        out[f"f{n}"] = rng.uniform(0, 1, (n, n)).astype(np.float32)
    return out


# ---- the loops, written once over an array module's functions (NumPy, CuPy, torch, jax.numpy) ----

def update_loop(x):
    for _ in range(UPDATE_STEPS):
        x = x * 0.999 + 0.001
    return x


def heat_roll_step(xp, u):
    roll = (lambda a, k, axis: xp.roll(a, k, dims=axis)) if xp.__name__ == "torch" else xp.roll
    return u + 0.1 * (roll(u, 1, 0) + roll(u, -1, 0) + roll(u, 1, 1) + roll(u, -1, 1) - 4.0 * u)


def interior(u, f):
    return 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:] + f[1:-1, 1:-1])


def jacobi_step(u, f):
    """One step of examples/jacobi.cpp's update, out of place (NumPy, CuPy, torch)."""
    v = u.clone() if hasattr(u, "clone") else u.copy()
    v[1:-1, 1:-1] = interior(u, f)
    return v


def solver(step, norm, u, f):
    for k in range(1, SOLVER_STEPS + 1):
        nxt = step(u, f)
        if k % CHECK_EVERY == 0:
            float(norm(nxt - u))  # the host decides on it
        u = nxt
    return u


def reference(np, w: str, inputs: dict, s: dict):
    if w == "update_loop":
        x = inputs["x"]
        for _ in range(UPDATE_STEPS):
            x = x * np.float32(0.999) + np.float32(0.001)
        return x
    if w == "heat_roll":
        u = inputs["heat"]
        for _ in range(HEAT_STEPS):
            u = heat_roll_step(np, u).astype(np.float32)
        return u
    n = int(w.rsplit("_", 1)[1])
    u, f = inputs[f"u{n}"], inputs[f"f{n}"]
    for _ in range(1 if w.startswith("stencil") else SOLVER_STEPS):
        u = jacobi_step(u, f)
    return u


def check(np, w: str, inputs: dict, s: dict, out) -> str:
    got, want = np.asarray(out), reference(np, w, inputs, s)
    if got.shape != want.shape:
        return f"shape {got.shape}, expected {want.shape}"
    return "" if bool(np.allclose(got, want, rtol=1e-4, atol=1e-4)) else "values differ from NumPy's"


def calls(s: dict, arrays: dict, update, heat_step, step, norm) -> dict:
    def heat():
        u = arrays["heat"]
        for _ in range(HEAT_STEPS):
            u = heat_step(u)
        return u

    fns = {"update_loop": lambda: update(arrays["x"]), "heat_roll": heat}
    for n in s["grids"]:
        u, f = arrays[f"u{n}"], arrays[f"f{n}"]
        fns[f"stencil_step_{n}"] = (lambda u=u, f=f: step(u, f))
        fns[f"jacobi_{n}"] = (lambda u=u, f=f: solver(step, norm, u, f))
    return fns


# ---- workers: one system each, in its own process ----

def cupy_worker(inputs, s):
    import cupy as cp
    arrays = {k: cp.asarray(v) for k, v in inputs.items()}
    fns = calls(s, arrays, update_loop, lambda u: heat_roll_step(cp, u), jacobi_step, cp.linalg.norm)
    a = cp.full(COPY_BYTES // 4, 1.5, dtype=cp.float32)
    b = cp.empty_like(a)
    copy = lambda: cp.cuda.runtime.memcpyAsync(b.data.ptr, a.data.ptr, COPY_BYTES,  # noqa: E731
                                               cp.cuda.runtime.memcpyDeviceToDevice, 0)
    return fns, copy, cp.cuda.Device().synchronize, cp.asnumpy, {"cupy": cp.__version__}


def torch_start(inputs, s, compile_them: bool):
    import torch
    arrays = {k: torch.from_numpy(v).to("cuda") for k, v in inputs.items()}
    update, heat, step = update_loop, (lambda u: heat_roll_step(torch, u)), jacobi_step
    if compile_them:
        update, heat, step = torch.compile(update), torch.compile(heat), torch.compile(step)
    fns = calls(s, arrays, update, heat, step, torch.linalg.norm)
    a = torch.full((COPY_BYTES // 4,), 1.5, dtype=torch.float32, device="cuda")
    b = torch.empty_like(a)
    return fns, (lambda: b.copy_(a)), torch.cuda.synchronize, (lambda t: t.detach().cpu().numpy()), \
        {"torch": torch.__version__}


def jax_worker(inputs, s):
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    import jax
    import jax.numpy as jnp
    arrays = {k: jnp.asarray(v) for k, v in inputs.items()}
    state = {"last": None}

    def keep(v):
        state["last"] = v
        return v

    update = jax.jit(update_loop)
    heat = jax.jit(lambda u: heat_roll_step(jnp, u))
    step = jax.jit(lambda u, f: u.at[1:-1, 1:-1].set(interior(u, f)))
    fns = calls(s, arrays, lambda x: keep(update(x)), lambda u: keep(heat(u)), lambda u, f: keep(step(u, f)),
                jax.jit(jnp.linalg.norm))
    copy, sync = jax_copy_and_sync(jax, jnp, state)
    return fns, copy, sync, (lambda v: jax.device_get(v)), {"jax": jax.__version__}


def worker_main(args) -> int:
    import numpy as np
    s = sizes(args.quick)
    inputs = make_input(np, s)
    workers = {"cupy": lambda: cupy_worker(inputs, s), "torch": lambda: torch_start(inputs, s, False),
               "torch_compile": lambda: torch_start(inputs, s, True), "jax": lambda: jax_worker(inputs, s)}
    if args.worker not in workers:
        raise ValueError(f"unknown system {args.worker}")
    return time_workloads(s["heat"], workers[args.worker], workloads(s),
                          lambda w, out: {"wrong": check(np, w, inputs, s, out), "bytes": minimal_bytes(w, s)},
                          args.worker_out)


def lazyfuse_cells(paths: list) -> dict:
    """bench_loops' Google Benchmark JSON (the heat loop's row: the run without an eval per step)."""
    s = sizes(False)
    names = {"BM_CopyReference": "copy", f"BM_UpdateLoop/n:{s['update']}/steps:{UPDATE_STEPS}": "update_loop",
             f"BM_HeatRollLoop/n:{s['heat']}/eval_per_step:0": "heat_roll"}
    for n in s["grids"]:
        names[f"BM_StencilStep/n:{n}"] = f"stencil_step_{n}"
        names[f"BM_JacobiSolver/n:{n}"] = f"jacobi_{n}"
    return {w: {"time_s": secs, "bytes": 2 * COPY_BYTES if w == "copy" else minimal_bytes(w, s)}
            for w, (secs, _) in lazyfuse_medians(paths, names).items()}


def write_markdown(report: dict, path: str) -> None:
    s = sizes(report.get("quick", False))
    write_peers_markdown(report, path, workloads(s), SYSTEMS, LABELS, share_of_copy,
                         "timing: median of 5 trials of 20 calls (bench/peers/run_peers.py's method), each call a "
                         f"whole loop; % of each system's own 256 MiB device copy over the minimal bytes. update_loop: "
                         f"{UPDATE_STEPS} steps of x * 0.999 + 0.001 on {s['update']} float32; heat_roll: "
                         f"{HEAT_STEPS} periodic heat steps (roll) of {s['heat']}^2 (lazyfuse: no eval per step); "
                         f"jacobi_N: {SOLVER_STEPS} Jacobi steps of N^2, the norm of the update read on the host every "
                         f"{CHECK_EVERY}; stencil_step_N: one such step.")


def main() -> int:
    ap = peers_arguments(__doc__, SYSTEMS, "small sizes (2^16, 256^2, 128^2 and 256^2)", "loops-peers")
    args = ap.parse_args()
    if args.worker:
        return worker_main(args)
    report = {"n": sizes(args.quick)["heat"], "quick": args.quick, "systems": {}}
    return finish_peers_report(report, args, __file__, lazyfuse_cells, write_markdown)


if __name__ == "__main__":
    sys.exit(main())
