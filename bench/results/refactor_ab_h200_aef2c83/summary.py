"""A/B of the CUDA sweep before (05f7cb2) and after (a0fba0d; runs 4-5 with aef2c83's bench fix)
the issue-46 refactoring: geometric means of after/before median times per (matrix, kernel),
against the same binary's run-to-run spread and cuSPARSE (code unchanged) as the noise floor."""
import csv, gzip, math, re, sys, glob, os
d = sys.argv[1]
def load(n):
    out = {}
    for r in csv.DictReader(gzip.open(os.path.join(d, f"ab_{n}.csv.gz"), "rt")):
        if r["status"] in ("ok", "noisy"):
            out[(r["matrix"], r["kernel"])] = (float(r["time_median_s"]), r["chosen"])
    return out
R = {n: load(n) for n in ["before_1", "after_1", "after_2", "before_3", "after_3", "before_4", "after_4", "before_5", "after_5"]}
def gm(a, b, f):
    ks = [k for k in R[a] if k in R[b] and f(k)]
    rs = [R[b][k][0] / R[a][k][0] for k in ks]
    return f"{math.exp(sum(map(math.log, rs)) / len(rs)):.3f} [{min(rs):.2f}, {max(rs):.2f}] ({len(ks)})"
ours = lambda k: not k[1].startswith("cusparse") and k[1] != "auto"
cus = lambda k: k[1].startswith("cusparse")
print("pair                 ours (7 kernels)         cuSPARSE alg2 (unchanged)")
for a, b in [("before_1", "after_1"), ("before_3", "after_3"), ("before_4", "after_4"), ("before_5", "after_5"),
             ("after_1", "after_2"), ("after_2", "after_3"), ("before_1", "before_3"), ("before_4", "before_5")]:
    print(f"{a:>8} -> {b:<9}  {gm(a, b, ours):<24} {gm(a, b, cus)}")
print("auto (runs 4-5, after the fix):", gm("before_4", "after_4", lambda k: k[1] == "auto"), gm("before_5", "after_5", lambda k: k[1] == "auto"))
kern = lambda c: re.sub(r" (bs|npb)=\d+", "", c)
print("auto's choice, before (runs 1, 3, 4, 5) | after the fix (runs 4, 5):")
for m in sorted({m for (m, k) in R["before_4"] if k == "auto"}):
    print(f"  {m:<11} {', '.join(kern(R[n][(m, 'auto')][1]) for n in ['before_1', 'before_3', 'before_4', 'before_5'])} | "
          f"{', '.join(kern(R[n][(m, 'auto')][1]) for n in ['after_4', 'after_5'])}")
