#!/usr/bin/env python3
"""NumPy on bench_cpu's workloads, and (with --bench) bench_cpu itself in the same run: one Markdown table.
--bench LABEL=PATH may be given more than once (a build of another commit, say): one column each, run in order.
--setting LABEL:NAME=VALUE sets a LAZYFUSE_* setting in the environment of LABEL's run (repeatable), e.g. two columns
of one build with LAZYFUSE_CPU_CODEGEN=interpreter and =llvm.

Each NumPy row is timed as Google Benchmark times bench_cpu's: repetitions of at least --min-time seconds of calls
each, the mean call time per repetition, the median over --repetitions. Inputs are uniform in [-2, 2] float32, as
bench_cpu draws them (other values of the same distribution).

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


def uniform(shape, seed):
    return np.random.default_rng(seed).uniform(-2.0, 2.0, size=shape).astype(np.float32)


def where_sqrt_exp(x):
    with np.errstate(invalid="ignore"):
        return np.where(x > 0, np.sqrt(x) * 2, np.exp(x) - 1)


def standardize_then_mean(x):
    z = (x - x.mean()) / x.std()
    return (z > 2).mean()


def row_softmax(a):
    e = np.exp(a - a.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


# (bench_cpu's benchmark name, the row's label, the NumPy call, its input)
ROWS = [
    ("BM_WhereSqrtExp/16777216", "where(x > 0, sqrt(x) * 2, exp(x) - 1), float32 2^24", where_sqrt_exp, lambda: uniform(N24, 1)),
    ("BM_Axpb/4194304", "x * 2 + 1, float32 4M", lambda x: x * 2 + 1, lambda: uniform(4 << 20, 2)),
    ("BM_Sum/16777216", "sum, float32 2^24", np.sum, lambda: uniform(N24, 3)),
    ("BM_StandardizeThenMean/16777216", "(x - mean) / std, then mean(z > 2), float32 2^24", standardize_then_mean,
     lambda: uniform(N24, 4)),
    ("BM_RowSums/4096", "row sums, float32 4096x4096", lambda a: a.sum(axis=1), lambda: uniform((4096, 4096), 5)),
    ("BM_RowSoftmax/4096", "row softmax, float32 4096x4096", row_softmax, lambda: uniform((4096, 4096), 6)),
]


def time_numpy(call, arg, repetitions, min_time):
    call(arg)  # warm up
    means = []
    for _ in range(repetitions):
        calls, start = 0, time.perf_counter()
        while True:
            call(arg)
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
    print(f"NumPy {np.__version__}, {os.cpu_count()} CPUs; median of {args.repetitions} (min-max), ms")
    for label, runs in benches:
        if "BM_StreamSum/16777216" in runs:
            gbps = statistics.median(b for _, b in runs["BM_StreamSum/16777216"]) / 1e9
            print(f"memory-read reference (BM_StreamSum of {label}'s run, float32 2^24, all cores): {gbps:.1f} GB/s")
    print()
    head = ["workload"] + [label for label, _ in benches] + ["NumPy"] + [f"{label} / NumPy" for label, _ in benches]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for name, label, call, make in ROWS:
        numpy_times = time_numpy(call, make(), args.repetitions, args.min_time)
        row = [label]
        ratios = []
        for _, runs in benches:
            t = [s for s, _ in runs.get(name, [])]
            row.append(cell(t) if t else "-")
            ratios.append(f"{statistics.median(t) / statistics.median(numpy_times):.2f}" if t else "-")
        row.append(cell(numpy_times))
        print("| " + " | ".join(row + ratios) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
