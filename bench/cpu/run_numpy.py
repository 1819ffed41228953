#!/usr/bin/env python3
"""NumPy on bench_cpu's workloads, and (with --bench) bench_cpu itself in the same run: one Markdown table.
--bench LABEL=PATH may be given more than once (a build of another commit, say): one column each, run in order.
--setting LABEL:NAME=VALUE sets a LAZYFUSE_* setting in the environment of LABEL's run (repeatable), e.g. two columns
of one build with LAZYFUSE_CPU_CODEGEN=interpreter and =llvm.

Each NumPy row is timed as Google Benchmark times bench_cpu's: repetitions of at least --min-time seconds of calls
each, the mean call time per repetition, the median over --repetitions. Inputs are uniform in [-2, 2] float32, as
bench_cpu draws them (other values of the same distribution). The numexpr column needs `pip install numexpr`, the
Black-Scholes row's NumPy column SciPy's erf (`pip install scipy`); without them those cells are "-".

    build/venv/bin/python bench/cpu/run_numpy.py --bench lazyfuse=build/default/bench/bench_cpu
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

N24 = 1 << 24


def uniform(shape, seed, lo=-2.0, hi=2.0):
    return np.random.default_rng(seed).uniform(lo, hi, size=shape).astype(np.float32)


def where_sqrt_exp(x):
    with np.errstate(invalid="ignore"):
        return np.where(x > 0, np.sqrt(x) * 2, np.exp(x) - 1)


def standardize_then_mean(x):
    z = (x - x.mean()) / x.std()
    return (z > 2).mean()


def row_softmax(a):
    e = np.exp(a - a.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def row_variance(m):
    return (m * m).mean(axis=1) - m.mean(axis=1) ** 2


def chain(x, y):
    return np.sqrt(np.abs(np.sin(x) * np.cos(y) + x * y * np.float32(0.5) - np.exp(-x * x)))


def black_scholes(S, K, T):
    # NumPy has no erf: SciPy's (a float32 ufunc), as a NumPy user would write it.
    r, v = np.float32(0.02), np.float32(0.30)
    sqrt_t = np.sqrt(T)
    d1 = (np.log(S / K) + (r + np.float32(0.5) * v * v) * T) / (v * sqrt_t)
    d2 = d1 - v * sqrt_t
    disc = K * np.exp(-r * T)
    cdf = lambda d: np.float32(0.5) * (np.float32(1) + erf(d * np.float32(0.70710678)))  # noqa: E731
    return S * cdf(d1) - disc * cdf(d2), disc * cdf(-d2) - S * cdf(-d1)


try:
    from scipy.special import erf
except ImportError:
    black_scholes = None  # noqa: F811 (the row then has no NumPy column)


def heat_roll(u):
    return u + np.float32(0.1) * (np.roll(u, 1, 0) + np.roll(u, -1, 0) + np.roll(u, 1, 1) + np.roll(u, -1, 1)
                                  - np.float32(4) * u)


def numexpr_call(expression, names):
    """numexpr's evaluate of `expression` over the arguments, bound to `names` (None without numexpr)."""
    try:
        import numexpr
    except ImportError:
        return None
    return lambda *args: numexpr.evaluate(expression, local_dict=dict(zip(names, args)))


N26 = 1 << 26
X = ("x",)
# (bench_cpu's benchmark name, the row's label, the NumPy call, its inputs, the numexpr call or None)
ROWS = [
    ("BM_WhereSqrtExp/16777216", "where(x > 0, sqrt(x) * 2, exp(x) - 1), float32 2^24", where_sqrt_exp,
     lambda: (uniform(N24, 1),), numexpr_call("where(x > 0, sqrt(x) * 2, exp(x) - 1)", X)),
    ("BM_Axpb/4194304", "x * 2 + 1, float32 4M", lambda x: x * 2 + 1, lambda: (uniform(4 << 20, 2),),
     numexpr_call("x * 2 + 1", X)),
    ("BM_Sum/16777216", "sum, float32 2^24", np.sum, lambda: (uniform(N24, 3),), numexpr_call("sum(x)", X)),
    ("BM_StandardizeThenMean/16777216", "(x - mean) / std, then mean(z > 2), float32 2^24", standardize_then_mean,
     lambda: (uniform(N24, 4),), None),
    ("BM_RowSums/4096", "row sums, float32 4096x4096", lambda a: a.sum(axis=1), lambda: (uniform((4096, 4096), 5),),
     None),
    ("BM_RowSoftmax/4096", "row softmax, float32 4096x4096", row_softmax, lambda: (uniform((4096, 4096), 6),), None),
    ("BM_HeatRoll/1024", "periodic heat step by roll, float32 1024x1024, eval per step", heat_roll,
     lambda: (uniform((1024, 1024), 17),), None),
    ("BM_WhereSqrtExp/67108864", "where(x > 0, sqrt(x) * 2, exp(x) - 1), float32 2^26", where_sqrt_exp,
     lambda: (uniform(N26, 1),), numexpr_call("where(x > 0, sqrt(x) * 2, exp(x) - 1)", X)),
    ("BM_Axpb/67108864", "x * 2 + 1, float32 2^26", lambda x: x * 2 + 1, lambda: (uniform(N26, 2),),
     numexpr_call("x * 2 + 1", X)),
    ("BM_Sum/67108864", "sum, float32 2^26", np.sum, lambda: (uniform(N26, 3),), numexpr_call("sum(x)", X)),
    ("BM_StandardizeThenMean/67108864", "(x - mean) / std, then mean(z > 2), float32 2^26", standardize_then_mean,
     lambda: (uniform(N26, 4),), None),
    ("BM_RowSums/8192", "row sums, float32 8192x8192", lambda a: a.sum(axis=1), lambda: (uniform((8192, 8192), 5),),
     None),
    ("BM_RowSoftmax/8192", "row softmax, float32 8192x8192", row_softmax, lambda: (uniform((8192, 8192), 6),), None),
    ("BM_RowVariance/8192", "row variance mean(m*m, 1) - mean(m, 1)**2, float32 8192x8192", row_variance,
     lambda: (uniform((8192, 8192), 16),), None),
    ("BM_Chain/67108864", "chain sqrt(abs(sin(x)*cos(y) + x*y*0.5 - exp(-x*x))), float32 2^26", chain,
     lambda: (uniform(N26, 11), uniform(N26, 12)),
     numexpr_call("sqrt(abs(sin(x) * cos(y) + x * y * 0.5 - exp(-x * x)))", ("x", "y"))),
    ("BM_BlackScholes/33554432", "Black-Scholes call and put, float32 2^25", black_scholes,
     lambda: (uniform(1 << 25, 13, 10, 100), uniform(1 << 25, 14, 10, 100), uniform(1 << 25, 15, 0.1, 2)), None),
]


def time_numpy(call, args, repetitions, min_time):
    call(*args)  # warm up
    means = []
    for _ in range(repetitions):
        calls, start = 0, time.perf_counter()
        while True:
            call(*args)
            calls += 1
            elapsed = time.perf_counter() - start
            if elapsed >= min_time:
                break
        means.append(elapsed / calls)
    return means


def run_bench(path, repetitions, min_time, settings):
    env = dict(os.environ, **settings)
    out = subprocess.run([path, f"--benchmark_repetitions={repetitions}", f"--benchmark_min_time={min_time}",
                          "--benchmark_format=json", "--benchmark_filter=-BM_ColdCompile"], check=True,
                         capture_output=True, text=True, env=env).stdout
    runs = {}
    for b in json.loads(out)["benchmarks"]:
        if b.get("run_type") != "iteration":
            continue
        name = b["run_name"].removesuffix("/real_time")
        scale = {"ms": 1e-3, "us": 1e-6, "ns": 1e-9, "s": 1.0}[b["time_unit"]]
        runs.setdefault(name, []).append((b["real_time"] * scale, b.get("bytes_per_second", 0.0)))
    return runs


def cell(times):
    return f"{statistics.median(times) * 1e3:.1f} ({min(times) * 1e3:.1f}-{max(times) * 1e3:.1f})"


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--bench", action="append", default=[], metavar="LABEL=PATH",
                   help="a built bench_cpu and its column's label; repeatable")
    p.add_argument("--setting", action="append", default=[], metavar="LABEL:NAME=VALUE",
                   help="a setting in the environment of LABEL's run; repeatable")
    p.add_argument("--repetitions", type=int, default=5)
    p.add_argument("--min-time", type=float, default=0.3)
    args = p.parse_args()

    settings = {}
    for spec in args.setting:
        label, _, assignment = spec.partition(":")
        name, _, value = assignment.partition("=")
        settings.setdefault(label, {})[name] = value
    benches = []
    for spec in args.bench:
        label, _, path = spec.rpartition("=")
        label = label or "lazyfuse CPU"
        benches.append((label, run_bench(path, args.repetitions, args.min_time, settings.get(label, {}))))
    try:
        import numexpr
        ne_version = f", numexpr {numexpr.__version__} ({numexpr.get_num_threads()} threads)"
    except ImportError:
        ne_version = ", no numexpr"
    print(f"NumPy {np.__version__}{ne_version}, {os.cpu_count()} CPUs; median of {args.repetitions} (min-max), ms")
    for label, runs in benches:
        for size in ("16777216", "67108864"):
            if f"BM_StreamSum/{size}" in runs:
                gbps = statistics.median(b for _, b in runs[f"BM_StreamSum/{size}"]) / 1e9
                print(f"memory-read reference (BM_StreamSum of {label}'s run, float32 {size}, all cores): "
                      f"{gbps:.1f} GB/s")
    print()
    have_numexpr = any(ne for *_, ne in ROWS)
    head = (["workload"] + [label for label, _ in benches] + ["NumPy"] + (["numexpr"] if have_numexpr else []) +
            [f"{label} / NumPy" for label, _ in benches] +
            ([f"{label} / numexpr" for label, _ in benches] if have_numexpr else []))
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for name, label, call, make, numexpr_of in ROWS:
        args_ = make()
        numpy_times = time_numpy(call, args_, args.repetitions, args.min_time) if call else None
        numexpr_times = time_numpy(numexpr_of, args_, args.repetitions, args.min_time) if numexpr_of else None
        del args_
        row = [label]
        ratios, ne_ratios = [], []
        for _, runs in benches:
            t = [s for s, _ in runs.get(name, [])]
            row.append(cell(t) if t else "-")
            ratios.append(f"{statistics.median(t) / statistics.median(numpy_times):.2f}" if t and numpy_times else "-")
            ne_ratios.append(f"{statistics.median(t) / statistics.median(numexpr_times):.2f}"
                             if t and numexpr_times else "-")
        row.append(cell(numpy_times) if numpy_times else "-")
        if have_numexpr:
            row.append(cell(numexpr_times) if numexpr_times else "-")
        print("| " + " | ".join(row + ratios + (ne_ratios if have_numexpr else [])) + " |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
