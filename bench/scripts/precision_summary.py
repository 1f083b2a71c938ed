#!/usr/bin/env python3
"""Figures of the three precisions from `spmv bench --precisions double,single,mixed` CSVs (k = 1): per matrix and
backend, auto's GFLOPS in each precision, single/double and mixed/double (the target: single >= 1.4x
double on matrices larger than the last-level cache / L2), and auto against the best baseline of the
same precision (every cuSPARSE SpMV algorithm; Eigen on the CPU). Geometric means per backend.
Usage: precision_summary.py CSV[.gz]..."""
import csv
import gzip
import math
import sys


def read(path):
    with (gzip.open(path, "rt") if path.endswith(".gz") else open(path)) as f:
        return list(csv.DictReader(f))


def geomean(v):
    return math.exp(sum(math.log(x) for x in v) / len(v)) if v else float("nan")


def main():
    rows = [r for p in sys.argv[1:] for r in read(p)]
    ok = [r for r in rows if r["status"] == "ok" and r["check"] == "passed" and r["k"] == "1"]
    t = lambda r: float(r["time_median_s"])
    for side in ("omp", "cuda"):
        mine = [r for r in ok if r["backend"] == side]
        if not mine:
            continue
        print(f"== {side}: GFLOPS of auto per precision, ratios to double; auto / best baseline of the same precision")
        print(f"{'matrix':24s} {'nnz':>10s} {'double':>8s} {'single':>8s} {'mixed':>8s} {'s/d':>6s} {'m/d':>6s}"
              f" {'d/base':>7s} {'s/base':>7s}  best single baseline")
        sd, md, dbase, sbase = [], [], [], []
        for m in sorted({r["matrix"] for r in mine}):
            rm = [r for r in mine if r["matrix"] == m]
            nnz = int(rm[0]["nnz"])
            auto = {p: min((t(r) for r in rm if r["kernel"] == "auto" and r["precision"] == p), default=None)
                    for p in ("double", "single", "mixed")}
            base = {}
            for p in ("double", "single"):
                b = [r for r in rm if r["baseline"] == "1" and r["precision"] == p]
                base[p] = min(b, key=t) if b else None
            g = {p: 2 * nnz / v / 1e9 if v else float("nan") for p, v in auto.items()}
            r_sd = auto["double"] / auto["single"] if auto["double"] and auto["single"] else float("nan")
            r_md = auto["double"] / auto["mixed"] if auto["double"] and auto["mixed"] else float("nan")
            r_db = t(base["double"]) / auto["double"] if base["double"] and auto["double"] else float("nan")
            r_sb = t(base["single"]) / auto["single"] if base["single"] and auto["single"] else float("nan")
            for lst, v in ((sd, r_sd), (md, r_md), (dbase, r_db), (sbase, r_sb)):
                if not math.isnan(v):
                    lst.append(v)
            which = base["single"]["kernel"] if base["single"] else "-"
            print(f"{m:24s} {nnz:10d} {g['double']:8.1f} {g['single']:8.1f} {g['mixed']:8.1f} {r_sd:6.2f} {r_md:6.2f}"
                  f" {r_db:7.2f} {r_sb:7.2f}  {which}")
        print(f"{'geomean':24s} {'':10s} {'':8s} {'':8s} {'':8s} {geomean(sd):6.2f} {geomean(md):6.2f}"
              f" {geomean(dbase):7.2f} {geomean(sbase):7.2f}")
        print()


if __name__ == "__main__":
    main()
