"""A/B on the H200 of the CUDA kernels before the refactoring of the house (05f7cb2) and after it
(563fa5a: typed settings in PlanOptions::kernel, one variant grammar, formats' storage described once, CSR5 single-pass and CSR-merge split into device functions), alternated
before/after twice: SpMV over ten matrices with csr-merge (ab_*) and SpMM at k = 8 in both layouts over four
(spmm_*). Geometric means of after/before median times per (matrix, kernel, layout), against the
same binary's run-to-run spread and cuSPARSE (code unchanged) as the noise floor; auto's choices."""
import csv, gzip, math, os, re, sys

d = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))


def load(name):
    out = {}
    for r in csv.DictReader(gzip.open(os.path.join(d, name + ".csv.gz"), "rt")):
        if r["status"] in ("ok", "noisy"):
            out[(r["matrix"], r["kernel"], r["layout"])] = (float(r["time_median_s"]), r["chosen"])
    return out


def gm(R, a, b, keep):
    ks = [k for k in R[a] if k in R[b] and keep(k)]
    rs = [R[b][k][0] / R[a][k][0] for k in ks]
    if not rs:
        return "-"
    return f"{math.exp(sum(map(math.log, rs)) / len(rs)):.3f} [{min(rs):.2f}, {max(rs):.2f}] ({len(ks)})"


ours = lambda k: not k[1].startswith("cusparse") and k[1] != "auto"
cus = lambda k: k[1].startswith("cusparse")
auto = lambda k: k[1] == "auto"
kern = lambda c: re.sub(r" (bs|npb)=\d+", "", c)
for sweep in ("ab", "spmm"):
    R = {n: load(f"{sweep}_{n}") for n in ("before_1", "after_1", "before_2", "after_2")}
    print(f"{sweep}: pair, ours, cuSPARSE (unchanged), auto")
    for a, b in (("before_1", "after_1"), ("before_2", "after_2"), ("before_1", "before_2"), ("after_1", "after_2")):
        print(f"  {a:>8} -> {b:<8}  {gm(R, a, b, ours):<26} {gm(R, a, b, cus):<26} {gm(R, a, b, auto)}")
    print("  auto's choice, before (2 runs) | after (2 runs):")
    for k in sorted(k for k in R["before_1"] if auto(k)):
        pick = lambda runs: ", ".join(kern(R[n].get(k, (0, "?"))[1]) for n in runs)
        print(f"    {k[0]:<11} {k[2]:<4} {pick(('before_1', 'before_2'))} | {pick(('after_1', 'after_2'))}")
