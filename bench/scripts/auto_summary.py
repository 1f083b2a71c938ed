#!/usr/bin/env python3
"""Figures of the planner from `spmv bench` CSVs: per backend (k = 1), auto against the oracle (our
fastest checked kernel and setting) and the best baseline (Eigen; every cuSPARSE algorithm), and the
planning cost (planning_s + convert_s) in auto's products above 1M nonzeros. Ratios are those of the
interleaved timing after the sweep (duel_* columns) where the CSV has them, else the sweep's medians
(also printed as '(sweep)').
Usage: auto_summary.py CSV[.gz]... [--model MODEL_CSV]: with --model, auto's rows come from MODEL_CSV (a run
of `spmv bench --kernels auto --no-trial`), the oracle and baselines from the CSVs."""
import csv
import gzip
import math
import statistics
import sys


N = 100  # the products a plan serves (spmv bench --products, default 100)


def read(path):
    """A CSV's rows; older runs' CSVs are kept gzipped (bench/results/README.md)."""
    with (gzip.open(path, "rt") if path.endswith(".gz") else open(path)) as f:
        return list(csv.DictReader(f))


def main():
    args = sys.argv[1:]
    model = args[args.index("--model") + 1] if "--model" in args else None
    paths = [a for i, a in enumerate(args) if a != "--model" and (i == 0 or args[i - 1] != "--model")]
    rows = [r for p in paths for r in read(p)]
    if model:
        rows = [r for r in rows if r["kernel"] != "auto"] + [r for r in read(model) if r["kernel"] == "auto"]
    ok = [r for r in rows if r["status"] == "ok" and r["check"] == "passed" and r["k"] == "1"]
    t = lambda r: float(r["time_median_s"])
    for side in ("omp", "cuda"):
        base_backends = ("serial", "omp") if side == "omp" else ("cuda",)
        ratios, bases, ours_base, plan, sweeps, costs = [], [], [], [], [], []
        for m in sorted({r["matrix"] for r in ok}):
            mine = [r for r in ok if r["matrix"] == m]
            auto = [r for r in mine if r["backend"] == side and r["kernel"] == "auto"]
            ours = [r for r in mine if r["backend"] == side and r["kernel"] != "auto" and r["baseline"] == "0"]
            base = [r for r in mine if r["backend"] in base_backends and r["baseline"] == "1"]
            if not auto or not ours:
                continue
            a, o = auto[0], min(ours, key=t)
            # The interleaved timing after the sweep where the run made one, else the sweep's medians.
            duel = lambda col, sweep: float(a[col]) if a.get(col) and float(a[col]) > 0 else sweep
            ratios.append((duel("duel_oracle", t(o) / t(a)), m, a["chosen"], f'{o["kernel"]}'))
            sweeps.append(t(o) / t(a))
            # What auto optimises: conversion + N products (planning left out, reported below).
            cost = lambda r: float(r["convert_s"]) + N * t(r)
            costs.append(min(cost(r) for r in ours) / cost(a))
            if base:
                b = min(base, key=t)
                bases.append((duel("duel_baseline", t(b) / t(a)), m, b["kernel"]))
                ours_base.append(t(b) / t(o))
            if int(a["nnz"]) > 1_000_000:
                plan.append(((float(a["planning_s"]) + float(a["convert_s"])) / t(a), m))
        if not ratios:
            continue
        g = lambda v: math.exp(sum(math.log(x[0] if isinstance(x, tuple) else x) for x in v) / len(v))
        print(f"{side}: {len(ratios)} matrices")
        print(f"  auto/oracle    geomean {g(ratios):.3f}  worst {min(ratios)[0]:.3f} ({min(ratios)[1]})  "
              f"below 0.85 on {sum(x[0] < 0.85 for x in ratios)}, below 0.95 on {sum(x[0] < 0.95 for x in ratios)}")
        print(f"  (sweep)        geomean {g(sweeps):.3f}  worst {min(sweeps):.3f}  below 0.85 on {sum(x < 0.85 for x in sweeps)}"
              "  (the sweep's medians: the oracle the best of many settings timed one after another)")
        print(f"  at {N} products geomean {g(costs):.3f}  worst {min(costs):.3f}  below 0.85 on {sum(x < 0.85 for x in costs)}"
              "  (the sweep's conversion + N products, the oracle's setting chosen on that cost: what auto optimises)")
        if bases:
            print(f"  auto/baseline  geomean {g(bases):.3f}  worst {min(bases)[0]:.3f} ({min(bases)[1]}, {min(bases)[2]})  "
                  f"below 1 on {sum(x[0] < 1 for x in bases)}, below 0.95 on {sum(x[0] < 0.95 for x in bases)}")
            print(f"  oracle/baseline geomean {g(ours_base):.3f}")
        if plan:
            v = sorted(p[0] for p in plan)
            print(f"  planning+conversion in products, {len(v)} matrices > 1M nnz: median {statistics.median(v):.1f}, "
                  f"max {max(plan)[0]:.1f} ({max(plan)[1]}), <= 20 on {sum(x <= 20 for x in v)}")
        for r in sorted(ratios)[:6]:
            print(f"    {r[1]:<20} {r[0]:.3f}  auto {r[2]}  oracle {r[3]}")


if __name__ == "__main__":
    main()
