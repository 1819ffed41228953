#!/usr/bin/env python3
"""The kernels of one call of a benchmark, from ncu's CSV, with each kernel's metrics and the durations' sum.

  ncu --clock-control none --csv --metrics gpu__time_duration.sum,dram__bytes.sum -c 26 \\
      build/gpu/bench/bench_gather --benchmark_filter=BM_ScatterAdd/ > scatter.csv
  python3 scripts/ncu_kernels.py scatter.csv --first 'lf_k6dad' [--count 9]

ncu profiles the first -c launches of the program: the benchmark's inputs, its warm-up calls, then timed calls. A call
is a window of --count kernels that begins with a kernel whose name matches --first (a regular expression); the last
whole window is printed, names shortened (templates' arguments kept for lazyfuse's kernels, dropped for CUB's). Without
--first, every kernel is printed. Only reads the file; the numbers are what ncu measured.
"""
import argparse
import csv
import re
import sys


def kernels(path):
    """[(name, {metric: (value, unit)})] in launch order."""
    with open(path, newline="") as f:
        rows = [r for r in csv.reader(f) if len(r) > 10]  # the program's own output has no such rows
    if not rows:
        sys.exit(f"{path}: no ncu CSV rows (was --csv given, and did the filter match a benchmark?)")
    head = rows[0]
    col = {name: head.index(name) for name in ("ID", "Kernel Name", "Metric Name", "Metric Unit", "Metric Value")}
    by_id = {}
    for r in rows[1:]:
        name, metrics = by_id.setdefault(int(r[col["ID"]]), (r[col["Kernel Name"]], {}))
        metrics[r[col["Metric Name"]]] = (r[col["Metric Value"]], r[col["Metric Unit"]])
    return [by_id[i] for i in sorted(by_id)]


def short(name):
    name = name.split("(")[0].replace("void ", "").replace("lazyfuse::<unnamed>::", "")
    return name.split("<")[0] if name.startswith("cub::") else name


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("csv")
    parser.add_argument("--first", help="regular expression matching the first kernel of a call")
    parser.add_argument("--count", type=int, default=0, help="kernels in a call (default: up to the next --first)")
    args = parser.parse_args()
    found = kernels(args.csv)
    window = found
    if args.first:
        starts = [i for i, (name, _) in enumerate(found) if re.search(args.first, name)]
        if args.count:
            starts = [i for i in starts if i + args.count <= len(found)]
        if len(starts) < (1 if args.count else 2):
            sys.exit(f"{args.csv}: no whole call begins with a kernel matching {args.first!r}")
        begin = starts[-1] if args.count else starts[-2]
        end = begin + args.count if args.count else starts[-1]
        window = found[begin:end]
    metrics = sorted({m for _, ms in window for m in ms})
    total_ns = 0.0
    for name, ms in window:
        cells = []
        for m in metrics:
            value, unit = ms.get(m, ("", ""))
            cells.append(f"{value:>14s} {unit}")
            if m == "gpu__time_duration.sum" and value:
                total_ns += float(value.replace(",", "")) * {"nsecond": 1, "usecond": 1e3, "msecond": 1e6}.get(unit, 1)
        print(f"{short(name)[:60]:60s} " + "  ".join(cells))
    if "gpu__time_duration.sum" in metrics:
        print(f"{'sum of the durations':60s} {total_ns / 1000:14.2f} us  ({len(window)} kernels)")


if __name__ == "__main__":
    main()
