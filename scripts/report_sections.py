"""Sections of the report (report.py) beside its main tables: precisions, SpMM, what a loop of
multiply() pays on the GPU, the timing statistics and the noisy configurations."""
import math
import re
import statistics
from collections import defaultdict

import matplotlib.ticker

from report_common import (plt, usable, is_noisy, label, is_gpu, is_auto, is_regular, regular_rule, fmt, md_table,
                           save, shown, best_by, grouped_bars, setting, settings_value, COLORS, PRECISIONS)


def precision_section(rows, matrices, out, written):
    """Per matrix and backend, our best SpMV GFLOPS (any kernel of ours, auto included; baselines
    left out) in each precision, and single/double, mixed/double; a summary of the ratios per
    backend and a plot of them. "" when the rows have one precision."""
    present = [p for p in PRECISIONS if any(r["precision"] == p for r in rows)]
    if len(present) < 2:
        return ""
    best = best_by([r for r in rows if not r["baseline"]], lambda r: (r["matrix"], r["backend"], r["precision"]))
    backends = [b for b in ("serial", "omp", "cuda") if any(k[1] == b for k in best)]
    others = [p for p in present if p != "double"]
    md = ["\n## Precisions: best GFLOPS per backend\n",
          "Our fastest checked kernel and setting (auto included, baselines left out) in each precision; "
          "ratios: GFLOPS over double's (the issue's target: single >= 1.4x double on matrices larger than "
          "the last-level cache / L2; 'double MB': the bytes the best double row's product moves at least, "
          "to judge that).\n"]
    lines, ratios = [], defaultdict(list)
    for m in matrices:
        for b in backends:
            cells = {p: best.get((m, b, p)) for p in present}
            if not any(cells.values()):
                continue
            d = cells.get("double")
            line = [shown(m), b, fmt(d and d["bytes_per_product"] / 1e6)]
            for p in present:
                r = cells[p]
                line.append(f'{r["gflops"]:.4g} ({r["kernel"]})' if r else "-")
            for p in others:
                f = cells[p]
                x = f["gflops"] / d["gflops"] if f and d and d["gflops"] > 0 else None
                if x:
                    ratios[(b, p)].append((x, m))
                line.append(f"{x:.2f}" if x else "-")
            lines.append(line)
    md.append("\n" + md_table(["matrix", "backend", "double MB"] + [f"{p} GFLOPS" for p in present]
                              + [f"{p}/double" for p in others], lines))
    for (b, p), v in sorted(ratios.items(), key=lambda e: (backends.index(e[0][0]), others.index(e[0][1]))):
        g = math.exp(sum(math.log(x) for x, _ in v) / len(v))
        lo = min(v)
        md.append(f"\n- {b} {p}/double over {len(v)} matrices: geometric mean {g:.2f}x, lowest {lo[0]:.2f}x "
                  f"({lo[1]}), at least 1.4x on {sum(1 for x, _ in v if x >= 1.4)}")
    md.append("\n")
    keys = [f"{b} {p}/double" for b in backends for p in others if (b, p) in ratios]
    per = {(m, f"{b} {p}/double"): x for (b, p), v in ratios.items() for x, m in v}
    grouped_bars([m for m in matrices if any((m, k) in per for k in keys)], keys, lambda m, k: per.get((m, k)),
                 "Best GFLOPS over double's, per matrix", "ratio to double", out, "precision_ratios", written,
                 log=False)
    return "".join(md)


# 004's SpMM kernels by their names: (backend, kernel, variant words) -> name. CUDA csr-adaptive at
# k > 1 is its CSR-Adaptive SpMM whatever its words.
SEED_SPMM_KERNELS = {
    ("cuda", "ell", "elements"): "ELLPACK_kernel (thread per element)",
    ("cuda", "hll", "elements"): "ELLPACK_kernel on HLL",
    ("cuda", "ell", "subwarp"): "ELLPACK_Sub_warp (2 threads an element)",
    ("cuda", "hll", "subwarp"): "ELLPACK_Sub_warp on HLL",
    ("cuda", "csr", "c1:w32:k8"): "CSR_Vector_by_row (8 sub-warps x 4)",
    ("cuda", "csr", "blocks"): "CSR_Adaptive_sub_blocks (a block a row)",
    ("omp", "ell", "elements"): "OpenMP ELLPACK, collapse(2)",
    ("omp", "ell-rowlen", "elements"): "OpenMP ELLPACK to each row's length, collapse(2)",
    ("omp", "ell-rowlen", "unpadded"): "OpenMP ELLPACK without padding in storage",
    ("omp", "ell-rowlen", "unpadded:elements"): "OpenMP ELLPACK without padding, collapse(2)",
}


def seed_spmm_name(r):
    """004's name of an SpMM row's kernel, or None."""
    if r["backend"] == "cuda" and r["kernel"] == "csr-adaptive" and r["k"] > 1:
        return "CSR-Adaptive SpMM (a block an element)"
    return SEED_SPMM_KERNELS.get((r["backend"], r["kernel"], settings_value(r, "variant")))


def seed_spmm_table(sel, best, matrices):
    """004's kernels that ran (bench --variant), each beside auto and our best on its matrix, k and
    layout; "" when none ran."""
    named = {}
    for r in sel:
        if name := seed_spmm_name(r):
            key = (r["matrix"], int(r["k"]), r.get("layout", "row"), name)
            if key not in named or r["gflops"] > named[key]["gflops"]:
                named[key] = r
    if not named:
        return ""
    lines = []
    for m in matrices:
        for key in sorted(k for k in named if k[0] == m):
            r, d = named[key], best.get(key[:3], {})
            a, o = d.get("auto"), d.get("ours")
            lines.append([shown(m), str(key[1]), key[2], key[3], f'{r["kernel"]} {r["settings"] or ""}'.strip(), f'{r["gflops"]:.4g}',
                          f'{a["gflops"]:.4g}' if a else "-", f'{o["gflops"]:.4g} ({o["kernel"]})' if o else "-",
                          f'{r["gflops"] / a["gflops"]:.2f}' if a else "-"])
    return ("\n004's kernels by their names (`spmv bench --k K --variant auto,elements,subwarp,c1:w32:k8,blocks,"
            "unpadded`; best setting each), beside auto and our fastest kernel (the same rows' best, 004's included):"
            "\n\n" + md_table(["matrix", "k", "layout", "004's kernel", "ours as", "GFLOPS", "auto GFLOPS",
                                "our best", "kernel / auto"], lines))


def spmm_section(rows, matrices, out, written):
    """SpMM (k > 1): per backend, matrix, k and layout auto, our best and the best baseline (table),
    and GFLOPS against k per matrix class (regular or irregular rows, report_common.is_regular), the
    class median of auto and of the best baseline in each layout (plot)."""
    mm = [r for r in rows if r["k"] > 1 and usable(r)]
    if not mm:
        return ""
    md = ["\n## SpMM: k right-hand sides, each layout, against the best baseline\n",
          "Best setting per kernel; ours: our fastest kernel other than auto; baseline: the fastest of "
          "cuSPARSE's SpMM algorithms (GPU) or Eigen (CPU) in the same layout. The relative errors (004's "
          "two measures) are auto's, element by element: the largest and the mean of |y - ref| / |ref| "
          "against the accurate (compensated) reference, where 004 compares with its serial product; "
          "double's unit round-off, 004's yardstick, is 1.1e-16 (004 quotes the machine epsilon "
          "2.2e-16).\n"]
    for side in ("GPU", "CPU"):
        sel = [r for r in mm if is_gpu(r) == (side == "GPU") and r["backend"] != "serial"]
        if not sel:
            continue
        best = defaultdict(dict)  # (matrix, k, layout) -> role -> row
        for r in sel:
            key = (r["matrix"], int(r["k"]), r.get("layout", "row"))
            role = "auto" if is_auto(r) else ("baseline" if r["baseline"] else "ours")
            if role not in best[key] or r["gflops"] > best[key][role]["gflops"]:
                best[key][role] = r
        lines, ratios = [], defaultdict(list)
        for m in matrices:
            for key in sorted(k for k in best if k[0] == m):
                d = best[key]
                b = d.get("baseline")
                cell = lambda role: (f'{d[role]["gflops"]:.4g}' + ("" if role == "auto" else f' ({d[role]["kernel"]})')) if role in d else "-"
                ratio = d["auto"]["gflops"] / b["gflops"] if "auto" in d and b else None
                if ratio:
                    ratios[(key[1], key[2])].append(ratio)
                err = lambda col: f'{d["auto"][col]:.1e}' if "auto" in d and d["auto"].get(col) is not None else "-"
                lines.append([m, str(key[1]), key[2], cell("auto"), cell("ours"), cell("baseline"),
                              f"{ratio:.2f}" if ratio else "-", err("max_rel_error"), err("mean_rel_error")])
        md.append(f"\n### {side}\n\n" + md_table(["matrix", "k", "layout", "auto GFLOPS", "ours", "best baseline", "auto / baseline",
                                                   "max rel. error", "mean rel. error"], lines))
        md.append(seed_spmm_table(sel, best, matrices))
        if ratios:
            md.append("\n" + "; ".join(
                f"k={k} {l}: geometric mean {statistics.geometric_mean(v):.2f}x, lowest {min(v):.2f}x ({len(v)} matrices)"
                for (k, l), v in sorted(ratios.items())) + "\n")
        # GFLOPS against k, small multiples by matrix class; at most 4 lines a panel: auto's and the
        # best baseline's (a class, or the plot, only where either was measured).
        regular = is_regular
        classes = [(c, keep) for c, keep in (("regular rows", True), ("irregular rows", False))
                   if any(regular(d[role]) == keep for d in best.values() for role in ("auto", "baseline")
                          if role in d)]
        if not classes:
            continue
        fig, axes = plt.subplots(1, len(classes), figsize=(5.5 * len(classes) + 0.5, 4.2), sharey=True, squeeze=False)
        axes = axes[0]
        for ax, (cls, keep) in zip(axes, classes):
            for role, layout, style in (("auto", "row", "o-"), ("auto", "col", "s-"),
                                        ("baseline", "row", "o--"), ("baseline", "col", "s--")):
                pts = defaultdict(list)
                for (m, k, l), d in best.items():
                    if l == layout and role in d and regular(d[role]) == keep:
                        pts[k].append(d[role]["gflops"])
                if pts:
                    ks = sorted(pts)
                    ax.plot(ks, [statistics.median(pts[k]) for k in ks], style,
                            label=f'{"auto (ours)" if role == "auto" else "best baseline"}, {layout}-major')
            n = len({m for (m, k, l), d in best.items() if any(regular(r) == keep for r in d.values())})
            ax.set_title(f"{cls} ({n} matri{'x' if n == 1 else 'ces'})")
            ax.set_xscale("log", base=2)
            ks_all = sorted({k for (_, k, _) in best})
            ax.set_xticks(ks_all)
            ax.set_xticklabels([str(k) for k in ks_all])
            ax.set_xlabel("k (right-hand sides)")
            ax.grid(alpha=0.3)
            ax.legend(fontsize=7)
        axes[0].set_ylabel("GFLOPS (median over the class)")
        fig.suptitle(f"{side} SpMM: GFLOPS against k")
        save(fig, out, f"spmm_gflops_vs_k_{side.lower()}.png", written)
        md.append(f"\n`spmm_gflops_vs_k_{side.lower()}.png` groups the matrices as 003 does, {regular_rule(sel)}.\n")
    return "".join(md)


def loop_section(rows, matrices, out, written):
    """What a user's loop pays per product on the GPU: per matrix, auto's kernel time (k = 1), a
    loop of multiply() calls on device vectors and on host vectors (x and y over the bus every
    call: pageable, through the plan's staging buffers, and pinned), and the host loops' floor: the
    kernel plus one copy of x and one of y between pinned memory and the device, measured at their
    sizes (latency included). Table, summary and a plot of the ratios."""
    sel = {}
    for r in rows:
        if is_gpu(r) and is_auto(r) and r["k"] == 1 and usable(r) and r.get("loop_device_s", 0) > 0:
            sel[r["matrix"]] = r
    if not sel:
        return ""
    md = ["\n## What a loop pays per product on the GPU (multiply() on device and host vectors)\n",
          "auto's plan, k = 1: the kernel's time (device events around back-to-back products); loops of "
          "`multiply()` calls (their wall time per call, to the final synchronisation) on device vectors "
          "(`DeviceVector`), on host vectors in pageable memory (through the plan's pinned staging buffers) and "
          "on the same vectors pinned (`PinnedHost`: copied straight over the bus). Floor of the host loops: "
          "the kernel plus one copy of x to the device and one of y back, measured between pinned memory and "
          "the device at their sizes (`loop_copies_s`).\n\n"]
    lines, dev, host, pin = [], [], [], []
    ms = [m for m in matrices if m in sel]
    for m in ms:
        r = sel[m]
        floor = r["time_median_s"] + r.get("loop_copies_s", 0)
        d = r["loop_device_s"] / r["time_median_s"]
        dev.append((d, shown(m), r["nnz"]))
        host.append((r["loop_host_s"] / floor, shown(m)))
        if r.get("loop_pinned_s", 0) > 0:
            pin.append((r["loop_pinned_s"] / floor, shown(m)))
        lines.append([shown(m), str(int(r["nnz"])), fmt(r["time_median_s"]), fmt(r["loop_device_s"]), f"{d:.3f}",
                      fmt(floor), fmt(r["loop_host_s"]), f'{r["loop_host_s"] / floor:.2f}',
                      fmt(r.get("loop_pinned_s", 0)),
                      f'{r["loop_pinned_s"] / floor:.2f}' if r.get("loop_pinned_s", 0) > 0 else "-"])
    md.append(md_table(["matrix", "nnz", "kernel (s)", "device loop (s)", "device / kernel", "host floor (s)",
                        "host loop (s)", "host / floor", "pinned loop (s)", "pinned / floor"], lines))
    geo = lambda v: math.exp(sum(math.log(x[0]) for x in v) / len(v))
    big = [x for x in dev if x[2] > 1e6]
    md.append(f"\n\nDevice loop / kernel: geometric mean {geo(dev):.3f}, worst {max(dev)[0]:.3f} ({max(dev)[1]})"
              + (f"; above 1M nonzeros worst {max(big)[0]:.3f} ({max(big)[1]}) over {len(big)} matrices" if big else "")
              + f". Host loop / floor: geometric mean {geo(host):.2f}, worst {max(host)[0]:.2f} ({max(host)[1]})"
              + (f"; pinned: geometric mean {geo(pin):.2f}, worst {max(pin)[0]:.2f} ({max(pin)[1]})" if pin else "")
              + ".\n")
    # One scatter over the suite: each matrix's ratios against its size.
    fig, ax = plt.subplots(figsize=(7.5, 4.6))
    nnz = [sel[m]["nnz"] for m in ms]
    series = [([d for d, _, _ in dev], "device vectors / kernel", "o", COLORS[0]),
              ([h for h, _ in host], "host vectors (pageable) / floor", "s", COLORS[1])]
    if len(pin) == len(ms):
        series.append(([p for p, _ in pin], "host vectors (pinned) / floor", "^", COLORS[2]))
    for vals, name, mark, col in series:
        ax.scatter(nnz, vals, marker=mark, s=18, color=col, label=name, alpha=0.8)
    ax.axhline(1.0, color="black", lw=1, ls="--", label="1: the kernel / the kernel + two copies")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("nonzeros")
    ax.set_ylabel("time per product / reference")
    for axis in (ax.yaxis,):  # plain numbers on the log axis (0.8, 1, 2, 3), not powers of ten
        axis.set_major_formatter(matplotlib.ticker.FormatStrFormatter("%g"))
        axis.set_minor_formatter(matplotlib.ticker.FormatStrFormatter("%g"))
    ax.set_title(f"GPU: what a loop of multiply() pays (auto, {len(ms)} matrices)")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=8)
    save(fig, out, "gpu_loop_vs_kernel.png", written)
    return "".join(md)


def pct(x):
    return f"{100 * x:.1f}%"


def timing_section(rows):
    """How the samples of every timed configuration spread, per backend: the coefficient of
    variation (median, 90th percentile, max), how long a sample lasted, how many configurations were
    measured twice and how many stayed noisy."""
    timed = [r for r in rows if r["kernel"] and r["status"] in ("ok", "noisy") and r["time_median_s"] > 0]
    if not timed:
        return ""
    if not any(r["measurements"] > 0 for r in timed):
        return ("\n## Timing statistics\n\nThis CSV predates the timing statistics (columns time_cv, time_drift, "
                "measurements): the spread of its samples is not known.\n")
    threshold = max(r["noise_threshold"] for r in timed)
    lines = []
    for b in sorted({r["backend"] for r in timed}):
        sel = [r for r in timed if r["backend"] == b]
        cvs = sorted(r["time_cv"] for r in sel)
        sample_ms = [r["products_per_sample"] * r["time_median_s"] * 1e3 for r in sel if r["products_per_sample"] > 0]
        lines.append([b, str(len(sel)), pct(statistics.median(cvs)), pct(cvs[min(len(cvs) - 1, int(0.9 * len(cvs)))]),
                      pct(cvs[-1]), pct(max(r["time_drift"] for r in sel)),
                      f"{min(sample_ms):.3g}" if sample_ms else "-", f"{statistics.median(sample_ms):.3g}" if sample_ms else "-",
                      str(sum(1 for r in sel if r["measurements"] > 1)), str(sum(1 for r in sel if is_noisy(r)))])
    return ("\n## Timing statistics\n\n"
            "Each configuration's samples (batches of back-to-back products) per backend: the coefficient of variation "
            "(standard deviation / mean) and the drift (the first half of the samples against the last half). A "
            + (f"configuration above {pct(threshold)} in either was measured again, and left out of every best as "
               "`noisy` where the second measurement was above it too. " if threshold > 0 else
               "threshold of 0: no configuration was measured again or flagged. ")
            + "Sample length: products per sample x median time.\n\n"
            + md_table(["backend", "configurations", "median cv", "90th pct cv", "max cv", "max drift",
                        "shortest sample (ms)", "median sample (ms)", "measured twice", "noisy"], lines))


def noisy_section(rows, prec):
    noisy = [r for r in rows if is_noisy(r)]
    if not noisy:
        return ""
    threshold = max(r["noise_threshold"] for r in noisy)
    lines = [[shown(r["matrix"]), label(r) + prec(r), setting(r) or "-", fmt(r["time_median_s"]), fmt(r["time_min_s"]),
              fmt(r["time_max_s"]), pct(r["time_cv"]), pct(r["time_drift"])] for r in noisy[:60]]
    serial = sorted({shown(r["matrix"]) for r in noisy if r["backend"] == "serial" and r["kernel"] == "csr"})
    return ("\n## Noisy configurations\n\n"
            f"{len(noisy)} configuration{'s' if len(noisy) != 1 else ''} whose samples spread above {pct(threshold)} "
            "(coefficient of variation or drift) in two measurements: timed (their numbers are in the CSV) but left out "
            "of every best, ratio, table and plot above. Many of them: the machine was busy, or its clocks changed."
            + (f" The serial CSR, every speedup's reference, was noisy on {', '.join(serial)}: the speedups of "
               "those matrices rest on it." if serial else "")
            + ("" if len(noisy) <= 60 else " The first 60:") + "\n\n"
            + md_table(["matrix", "kernel", "setting", "median time (s)", "min (s)", "max (s)", "cv", "drift"], lines))


def csr5_sigma_section(rows, matrices):
    """003's Fig. 17: CSR5 with its sigma chosen automatically (no csr5_sigma setting) against the
    best sigma swept (`--csr5-sigma 0,4,8,...`), per matrix and backend, each at its best thread
    count or block size. Empty where no sigma was swept."""
    sigma_of = lambda r: settings_value(r, "csr5_sigma")
    sel = [r for r in rows if r["kernel"] == "csr5" and r["k"] == 1 and usable(r)]
    if not any(sigma_of(r) for r in sel):
        return ""
    auto, swept = {}, defaultdict(dict)
    for r in sel:
        key = (r["matrix"], r["backend"])
        if (m := sigma_of(r)) is not None:
            s = int(m)
            if s not in swept[key] or r["gflops"] > swept[key][s]["gflops"]:
                swept[key][s] = r
        elif key not in auto or r["gflops"] > auto[key]["gflops"]:
            auto[key] = r
    lines, ratios = [], []
    for m in matrices:
        for key in sorted(k for k in auto if k[0] == m and swept.get(k)):
            a = auto[key]
            best_sigma, best = max(swept[key].items(), key=lambda kv: kv[1]["gflops"])
            chosen = re.search(r"sigma=(\d+)", a.get("detail") or "")
            ratio = a["gflops"] / max(a["gflops"], best["gflops"])
            ratios.append(ratio)
            lines.append([shown(m), key[1], chosen.group(1) if chosen else "?", f'{a["gflops"]:.4g}', str(best_sigma),
                          f'{best["gflops"]:.4g}', f"{ratio:.2f}"])
    if not lines:
        return ""
    gm = statistics.geometric_mean(ratios)
    return ("\n## CSR5: the automatic sigma against the best sigma (003 Fig. 17)\n\n"
            "Each at its best thread count or block size; the best of the automatic sigma and the swept ones "
            f"counts as the best. Automatic / best: geometric mean {gm:.2f}, lowest {min(ratios):.2f} "
            f"({len(ratios)} matrix-backend pair{'' if len(ratios) == 1 else 's'}).\n\n"
            + md_table(["matrix", "backend", "automatic sigma", "GFLOPS", "best swept sigma", "GFLOPS", "automatic / best"],
                       lines))
