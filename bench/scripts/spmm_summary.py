#!/usr/bin/env python3
"""SpMM against the best cuSPARSE (or Eigen) algorithm, from `spmv bench --k ... --layouts ...` CSVs.

Per matrix, K and layout: auto, our best kernel, the best baseline (which one), and the ratios;
then per K the geometric means and the worst ratio, per layout and with each side's best layout
(a user who may pick the layout). Usage: spmm_summary.py CSV [CSV ...] [--backend cuda|omp]
"""
import csv
import math
import sys
from collections import defaultdict


def main(argv):
    backend = "cuda"
    if "--backend" in argv:
        i = argv.index("--backend")
        backend = argv[i + 1]
        del argv[i:i + 2]
    rows = [r for f in argv[1:] for r in csv.DictReader(open(f))]
    best = defaultdict(dict)  # (matrix, k, layout) -> kernel -> (gflops, detail)
    for r in rows:
        if r["backend"] not in (backend, "serial") or r["k"] == "1":
            continue
        if r["status"] != "ok" or r["check"] != "passed":
            if r["status"] != "ok" and not r["status"].startswith("skipped: time budget"):
                print(f"not ok: {r['matrix']} {r['kernel']} k={r['k']} {r['layout']}: {r['status'][:100]}")
            continue
        if r["backend"] == "serial":
            continue
        key = (r["matrix"], int(r["k"]), r["layout"])
        g = float(r["gflops"])
        if g > best[key].get(r["kernel"], (0, ""))[0]:
            best[key][r["kernel"]] = (g, r["detail"], r["baseline"] == "1")
    per_k = defaultdict(lambda: defaultdict(list))
    both = defaultdict(lambda: defaultdict(dict))
    print(f"{'matrix':18s} {'k':>3s} lay {'auto':>8s} {'ours':>8s} {'baseline':>8s} {'which':20s} auto/b ours/b")
    for key in sorted(best):
        d = best[key]
        base = {k: v for k, v in d.items() if v[2]}
        ours = {k: v for k, v in d.items() if not v[2] and k != "auto"}
        if not base or not ours or "auto" not in d:
            continue
        bk = max(base, key=lambda k: base[k][0])
        b, o, a = base[bk][0], max(v[0] for v in ours.values()), d["auto"][0]
        m, k, lay = key
        print(f"{m:18s} {k:3d} {lay:3s} {a:8.1f} {o:8.1f} {b:8.1f} {bk:20s} {a / b:6.2f} {o / b:6.2f}")
        per_k[k][lay].append((a / b, o / b, m))
        both[k][m][lay] = (a, o, b)
    print()
    for k in sorted(per_k):
        for lay in sorted(per_k[k]):
            v = per_k[k][lay]
            gm = lambda xs: math.exp(sum(map(math.log, xs)) / len(xs))
            worst = min(v)
            print(f"k={k:3d} {lay}: {len(v)} matrices, auto/best baseline geomean {gm([x[0] for x in v]):.2f}x "
                  f"(worst {worst[0]:.2f}x {worst[2]}), best ours {gm([x[1] for x in v]):.2f}x")
        pick = [(max(a for a, o, b in l.values()) / max(b for a, o, b in l.values()), m)
                for m, l in both[k].items() if len(l) == 2]
        if pick:
            print(f"k={k:3d} either layout (each side its best): auto/best baseline geomean "
                  f"{math.exp(sum(math.log(p) for p, _ in pick) / len(pick)):.2f}x, worst {min(pick)[0]:.2f}x {min(pick)[1]}")


if __name__ == "__main__":
    main(sys.argv)
