#!/usr/bin/env python3
"""The transposed product's figures from `spmv bench --op n,t` CSVs (bench/scripts/transpose_run.sh):
per backend, auto's A^T against its A (speed), auto's A^T against the best baseline's A^T (cuSPARSE's
transposed algorithms, Eigen's A.transpose() * x), the deterministic choice against the fastest of
ours (auto, csr-scatter), and A^T's making (the detail's "A^T made once (X ms") in auto's A^T products.
    python3 bench/scripts/transpose_summary.py FILE.csv [FILE.csv ...]"""
import csv
import math
import re
import sys


def geomean(v):
    return math.exp(sum(math.log(x) for x in v) / len(v)) if v else float("nan")


def line(what, pairs, limit):
    if not pairs:
        return f"  {what:<44} -"
    v = [x for _, x in pairs]
    worst = min(pairs, key=lambda p: p[1])
    below = sum(x < limit for x in v)
    return (f"  {what:<44} geomean {geomean(v):.3f}  lowest {worst[1]:.3f} ({worst[0]})  "
            f"below {limit:.2f} on {below} of {len(v)}")


def main(paths):
    rows = [r for p in paths for r in csv.DictReader(open(p))]
    t = {}  # (matrix, backend, kernel, op) -> row, usable ones
    for r in rows:
        if r["status"] == "ok" and r["check"] == "passed" and float(r["time_median_s"] or 0) > 0:
            t[(r["matrix"], r["backend"], r["kernel"], r["operation"])] = r
    sec = lambda r: float(r["time_median_s"])
    for backend in ("cuda", "omp"):
        mats = sorted({m for (m, b, k, o) in t if b == backend and k == "auto"})
        if not mats:
            continue
        speed, base, determ, scatter, make = [], [], [], [], []
        for m in mats:
            an, at = t.get((m, backend, "auto", "n")), t.get((m, backend, "auto", "t"))
            if an and at:
                speed.append((m, sec(an) / sec(at)))
            bases = [r for (mm, b, k, o), r in t.items()
                     if mm == m and b == backend and o == "t" and r["baseline"] == "1"]
            if at and bases:
                base.append((m, min(sec(r) for r in bases) / sec(at)))
            sc = t.get((m, backend, "csr-scatter", "t"))
            if at and sc:
                scatter.append((m, sec(sc) / sec(at)))
                # auto (A^T made once) is deterministic; csr-scatter is on the CPU, not on the GPU
                ours = [sec(at)] + ([sec(sc)] if backend == "cuda" else [])
                det = sec(at) if backend == "cuda" else min(sec(at), sec(sc))
                determ.append((m, min(ours + [sec(sc)]) / det))
            made = re.search(r"A\^T made once \(([0-9.]+) ms", at["detail"]) if at else None
            if made:
                make.append((m, float(made.group(1)) * 1e-3 / sec(at)))
        name = "CUDA (H200)" if backend == "cuda" else "OpenMP (16 cores)"
        print(f"{name}, {len(mats)} matrices:")
        print(line("auto A^T speed / auto A speed", speed, 0.8))
        print(line("auto A^T vs the best baseline's A^T", base, 1.0))
        print(line("csr-scatter A^T time / auto A^T time", scatter, 1.0))
        print(line("deterministic vs the fastest of ours", determ, 1 / 1.2))
        mk = sorted(x for _, x in make)
        if mk:
            print(f"  {'A^T made once, in auto A^T products':<44} median {mk[len(mk) // 2]:.0f}  "
                  f"range {mk[0]:.0f}-{mk[-1]:.0f}")


if __name__ == "__main__":
    main(sys.argv[1:])
