#!/usr/bin/env python3
"""Markdown rows for docs/performance.md from the Google Benchmark JSON of scripts/gpu-check.sh's bench stage.

  python3 scripts/perf_table.py bench-bench_workloads.json bench-bench_reductions.json [bench-bench_compile.json]

Prints, per benchmark, the median of the repetitions: wall-clock time per call (the peers' method), the CUDA-event
time, % of the copy reference measured by the same program, and the kernels launched per call (checked by the
benchmark itself). Only reads the files; the numbers are what the run measured.
"""
import json
import sys


def medians(paths):
    rows = []
    for path in paths:
        with open(path) as f:
            data = json.load(f)
        for b in data.get("benchmarks", []):
            if b.get("error_occurred"):
                rows.append((b["name"], None, b.get("error_message", "error")))
            elif b.get("aggregate_name") == "median":
                rows.append((b["run_name"], b, None))
    return rows


def fmt_time(b):
    t, unit = b["real_time"], b["time_unit"]
    return f"{t:.4g} {unit}"


def main(paths):
    print("| benchmark | time per call (median) | event time | % of copy | kernels per call |")
    print("|---|---|---|---|---|")
    for name, b, err in medians(paths):
        if b is None:
            print(f"| {name} | FAILED: {err} | | | |")
            continue
        event = b.get("event_ms")
        pct = b.get("pct_of_copy")
        kernels = b.get("kernels_per_call")
        print(f"| {name} | {fmt_time(b)} | {'' if event is None else f'{event:.4g} ms'} | "
              f"{'' if pct is None else f'{pct:.1f}%'} | {'' if kernels is None else int(kernels)} |")
        extra = {k: v for k, v in b.items() if k.endswith("_ms") and k != "event_ms"}
        if extra:
            print(f"| ↳ {name} | " + ", ".join(f"{k} {v:.4g}" for k, v in sorted(extra.items())) + " | | | |")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
