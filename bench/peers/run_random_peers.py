#!/usr/bin/env python3
"""Peer benchmarks of random-number generation, the workloads of bench/bench_random.cpp: 2^26 float32 uniforms and
standard normals written to memory, and a Monte Carlo European option (GBM terminal values of 2^26 paths from
standard normals, payoff, mean). Systems: CuPy (cupy.random's default generator; the option eagerly), torch eager
(torch.rand / torch.randn, Philox), torch.compile (the option compiled: Inductor generates the normals in the
fused kernel), jax.jit (jax.random with threefry keys, each workload jitted). Each system runs in its own
subprocess, with the timing method of run_peers.py (its `bench`: 3 warm-up calls, 5 trials of 20 back-to-back
calls and one synchronize, the median), and a 256 MiB device-to-device copy for the bandwidth percentages.

Checks: random numbers have no elementwise reference, so each output is checked statistically (mean and standard
deviation of the uniforms within 1e-3 of 1/2 and 1/sqrt(12), of the normals within 1e-3 of 0 and 1; the option's
price within 0.02 of the Black-Scholes value, about 9 standard errors at 2^26 paths); a failed check marks the cell
WRONG.

Usage:
  python3 bench/peers/run_random_peers.py --out-md random-peers.md --out-json random-peers.json \
      [--systems cupy,torch,torch_compile,jax] [--quick] [--lazyfuse-json bench_random.json] \
      [--limits-json bench_limits.json] [--timeout 180]
"""
from __future__ import annotations

import json
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run_peers import (  # noqa: E402  (the same timing method)
    COPY_BYTES, finish_peers_report, jax_copy_and_sync, lazyfuse_medians, peers_arguments, time_workloads,
    write_peers_markdown)

WORKLOADS = ["random", "standard_normal", "monte_carlo_option"]
SYSTEMS = ["cupy", "torch", "torch_compile", "jax"]
LABELS = {"lazyfuse": "lazyfuse", "cupy": "CuPy", "torch": "torch eager", "torch_compile": "torch.compile",
          "jax": "jax.jit"}
S0, STRIKE, RATE, SIGMA, T = 100.0, 105.0, 0.03, 0.25, 1.5


def black_scholes_call() -> float:
    cdf = lambda x: 0.5 * math.erfc(-x / math.sqrt(2.0))  # noqa: E731
    d1 = (math.log(S0 / STRIKE) + (RATE + 0.5 * SIGMA * SIGMA) * T) / (SIGMA * math.sqrt(T))
    return S0 * cdf(d1) - STRIKE * math.exp(-RATE * T) * cdf(d1 - SIGMA * math.sqrt(T))


def minimal_bytes(w: str, n: int) -> int:
    return 4 * n if w in ("random", "standard_normal") else 0


def check(w: str, np, out) -> str:
    """"" when the output is plausible, else why not."""
    if w == "monte_carlo_option":
        price, exact = float(out), black_scholes_call()
        return "" if abs(price - exact) <= 0.02 else f"price {price:.5f}, Black-Scholes {exact:.5f}"
    x = np.asarray(out, dtype=np.float64)
    mean, std = float(x.mean()), float(x.std())
    want = (0.5, 1 / math.sqrt(12)) if w == "random" else (0.0, 1.0)
    if abs(mean - want[0]) > 1e-3 or abs(std - want[1]) > 1e-3:
        return f"mean {mean:.5f} std {std:.5f}, expected {want[0]:.5f} {want[1]:.5f}"
    return ""


# ---- workers: one system each, in its own process ----

def cupy_worker(n: int):
    import cupy as cp
    cp.random.seed(1)
    drift, vol = (RATE - 0.5 * SIGMA * SIGMA) * T, SIGMA * math.sqrt(T)
    disc = math.exp(-RATE * T)
    last = {}

    def option():
        z = cp.random.standard_normal(n, dtype=cp.float32)
        last["out"] = (disc * cp.maximum(S0 * cp.exp(drift + vol * z) - STRIKE, 0)).mean()
        return last["out"]

    fns = {"random": lambda: cp.random.random(n, dtype=cp.float32),
           "standard_normal": lambda: cp.random.standard_normal(n, dtype=cp.float32),
           "monte_carlo_option": option}
    a = cp.full(COPY_BYTES // 4, 1.5, dtype=cp.float32)
    b = cp.empty_like(a)
    copy = lambda: cp.cuda.runtime.memcpyAsync(b.data.ptr, a.data.ptr, COPY_BYTES,  # noqa: E731
                                               cp.cuda.runtime.memcpyDeviceToDevice, 0)
    sync = cp.cuda.Device().synchronize
    to_host = lambda x: cp.asnumpy(x)  # noqa: E731
    return fns, copy, sync, to_host, {"cupy": cp.__version__}


def torch_worker(n: int, compiled: bool):
    import torch
    dev = torch.device("cuda", 0)
    torch.manual_seed(1)
    drift, vol = (RATE - 0.5 * SIGMA * SIGMA) * T, SIGMA * math.sqrt(T)
    disc = math.exp(-RATE * T)

    def option_eager():
        z = torch.randn(n, device=dev, dtype=torch.float32)
        return (disc * torch.clamp(S0 * torch.exp(drift + vol * z) - STRIKE, min=0)).mean()

    option = torch.compile(option_eager) if compiled else option_eager
    rand = lambda: torch.rand(n, device=dev, dtype=torch.float32)  # noqa: E731
    randn = lambda: torch.randn(n, device=dev, dtype=torch.float32)  # noqa: E731
    fns = {"random": torch.compile(rand) if compiled else rand,
           "standard_normal": torch.compile(randn) if compiled else randn,
           "monte_carlo_option": option}
    a = torch.full((COPY_BYTES // 4,), 1.5, dtype=torch.float32, device=dev)
    b = torch.empty_like(a)
    return fns, (lambda: b.copy_(a)), torch.cuda.synchronize, (lambda x: x.detach().cpu().numpy()), \
        {"torch": torch.__version__}


def jax_worker(n: int):
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    import jax
    import jax.numpy as jnp
    drift, vol = (RATE - 0.5 * SIGMA * SIGMA) * T, SIGMA * math.sqrt(T)
    disc = math.exp(-RATE * T)
    # A new key per call (split outside the timed function's kernel, as a user would carry it along).
    state = {"key": jax.random.PRNGKey(1), "last": None}

    def keyed(f):
        g = jax.jit(f)

        def call():
            state["key"], sub = jax.random.split(state["key"])
            state["last"] = g(sub)
            return state["last"]
        return call

    fns = {"random": keyed(lambda k: jax.random.uniform(k, (n,), dtype=jnp.float32)),
           "standard_normal": keyed(lambda k: jax.random.normal(k, (n,), dtype=jnp.float32)),
           "monte_carlo_option": keyed(lambda k: jnp.mean(
               disc * jnp.maximum(S0 * jnp.exp(drift + vol * jax.random.normal(k, (n,), dtype=jnp.float32)) - STRIKE,
                                  0.0)))}
    copy, sync = jax_copy_and_sync(jax, jnp, state)
    return fns, copy, sync, (lambda x: jax.device_get(x)), {"jax": jax.__version__}


def worker_main(args) -> int:
    import numpy as np
    n = 1 << (22 if args.quick else 26)
    workers = {"cupy": lambda: cupy_worker(n), "torch": lambda: torch_worker(n, False),
               "torch_compile": lambda: torch_worker(n, True), "jax": lambda: jax_worker(n)}
    if args.worker not in workers:
        raise ValueError(f"unknown system {args.worker}")
    return time_workloads(n, workers[args.worker], WORKLOADS,
                          lambda w, out: {"wrong": check(w, np, out), "bytes": minimal_bytes(w, n)}, args.worker_out)


def lazyfuse_cells(paths: list) -> dict:
    """BM_Random, BM_StandardNormal/bits:32 and BM_MonteCarloOption of bench_random's Google Benchmark JSON, and its
    BM_CopyReference."""
    names = {"BM_Random": "random", "BM_StandardNormal/bits:32": "standard_normal",
             "BM_MonteCarloOption": "monte_carlo_option", "BM_CopyReference": "copy"}
    return {w: {"time_s": secs, "bytes": 2 * COPY_BYTES if w == "copy" else minimal_bytes(w, 1 << 26)}
            for w, (secs, _) in lazyfuse_medians(paths, names).items()}


def write_only_bandwidth(paths: list):
    """The best BM_LimitWriteOnly variant of bench_limits' JSON (2^26 float32 written), in bytes per second."""
    best = None
    for p in paths:
        with open(p) as f:
            data = json.load(f)
        for e in data.get("benchmarks", []):
            if not e["name"].startswith("BM_LimitWriteOnly") or e.get("error_occurred"):
                continue
            if e.get("run_type") == "aggregate" and e.get("aggregate_name") != "median":
                continue
            secs = e["real_time"] * {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}[e.get("time_unit", "ns")]
            best = secs if best is None else min(best, secs)
    return None if best is None else 4 * (1 << 26) / best


def write_markdown(report: dict, path: str) -> None:
    def share(cell, s):
        copy = s.get("copy", {}).get("bandwidth_Bps")
        if not (cell.get("bytes") and copy):
            return ""
        text = f" ({100 * cell['bytes'] / cell['time_s'] / copy:.0f}% of copy"
        if report.get("write_only_Bps"):
            text += f", {100 * cell['bytes'] / cell['time_s'] / report['write_only_Bps']:.0f}% of write-only"
        return text + ")"

    write_peers_markdown(report, path, WORKLOADS, SYSTEMS, LABELS, share,
                         f"n = {report['n']} float32 elements or paths; timing: median of 5 trials of 20 calls "
                         "(bench/peers/run_peers.py's method); % of each system's own 256 MiB device copy"
                         + (f", and of bench_limits' write-only kernel ({report['write_only_Bps'] / 1e12:.2f} TB/s)"
                            if report.get("write_only_Bps") else "") + ".")


def main() -> int:
    ap = peers_arguments(__doc__, SYSTEMS, "2^22 instead of 2^26 elements", "random-peers")
    ap.add_argument("--limits-json", action="append", default=[],
                    help="bench_limits' Google Benchmark JSON: its BM_LimitWriteOnly is the write-only reference")
    args = ap.parse_args()
    if args.worker:
        return worker_main(args)
    report = {"n": 1 << (22 if args.quick else 26), "systems": {}}
    if args.limits_json:
        report["write_only_Bps"] = write_only_bandwidth(args.limits_json)
    return finish_peers_report(report, args, __file__, lazyfuse_cells, write_markdown)


if __name__ == "__main__":
    sys.exit(main())
