#!/usr/bin/env python3
"""Plots and Markdown tables from the CSV `spmv bench` writes.

usage: report.py results.csv -o DIR

Writes into DIR: report.md (tables in the style of the course reports: matrix, rows, nnz, nnz/row
mean and std, one GFLOPS column per kernel, best in bold; a short summary) and PNG plots:
GFLOPS / speedup / efficiency vs threads per CPU kernel, GFLOPS vs block size per GPU kernel,
GPU kernels side by side per matrix (with cuSPARSE), CPU vs GPU, a roofline-style chart of
effective bandwidth against the measured ceilings, conversion cost against product time, and the
harmonic mean over the suite per CSR-adaptive nz_per_block; the automatic planner (kernel `auto`)
against the oracle (our fastest row of its backend and k) and the best baseline, with a plot of
auto/oracle per matrix. Only rows whose check passed and whose timing was steady (status ok, not
noisy) count; the noisy ones are listed, with the spread of every configuration's samples. Where the CSV has several precisions
(column `precision`), those sections read one of them (double where present) and a section of its
own compares the precisions per matrix and backend (best GFLOPS, single/double, mixed/double).
Needs matplotlib (Debian: python3-matplotlib); nothing else beyond the standard library.
"""
import argparse
import math
import os
import re
import statistics
import sys
from collections import defaultdict, OrderedDict

try:
    from report_common import (plt, load, usable, is_noisy, label, variant, is_gpu, is_auto, full_label, fastest,
                               matrix_order, best_by, save, finish, safe, harmonic_mean, fmt, md_table, lines_vs,
                               lines_per_matrix, pages_of, page_file,
                               grouped_bars, display_name, serial_times,
                               same_format_speedup, COLORS, MARKERS, NAMES, shown, ReportError, PRECISIONS)
    import seed_tables
    from report_sections import (precision_section, spmm_section, loop_section, timing_section, noisy_section,
                                 csr5_sigma_section)
except ImportError as e:  # exit 3: the caller names what to install
    print(f"report.py: {e}", file=sys.stderr)
    sys.exit(3)

def auto_comparisons(rows, matrices):
    """Per "backend k=K" (plus the precision where the rows have several) with auto rows: per
    matrix, the auto row (the most threads asked for when several), the oracle (fastest usable non-baseline,
    non-auto row of that backend, k, precision and operation, any setting), the best baseline of the
    same side (CPU: Eigen, on one thread for a serial auto; GPU: every cuSPARSE kernel), k, precision
    and operation, and
    the ratios other time / auto time (1 = auto as fast; None where one side is missing): those of
    the interleaved timing after the sweep (duel_* columns) where the run made one, else the
    sweep's medians (also kept as sweep_oracle)."""
    by = defaultdict(list)
    for r in rows:
        by[r["matrix"]].append(r)
    groups = OrderedDict()
    many_p = len({r["precision"] for r in rows if r["kernel"]}) > 1
    for m in matrices:
        autos = OrderedDict()
        for r in by[m]:
            key = (r["backend"], int(r["k"]), r["precision"], r.get("operation", "n"))
            if is_auto(r) and (key not in autos or r["threads_requested"] > autos[key]["threads_requested"]):
                autos[key] = r
        for (backend, k, p, op), a in autos.items():
            same = lambda r: r["k"] == k and r["precision"] == p and r.get("operation", "n") == op
            oracle = fastest(by[m], lambda r: not r["baseline"] and not is_auto(r) and r["backend"] == backend
                             and same(r))
            base = fastest(by[m], lambda r: r["baseline"] and is_gpu(r) == is_gpu(a) and same(r)
                           and (backend != "serial" or r["threads"] == 1))
            ok = usable(a) and a["time_median_s"] > 0
            ratio = lambda o: o["time_median_s"] / a["time_median_s"] if ok and o else None
            duel = lambda col, o: a.get(col) if ok and o and a.get(col, 0) > 0 else ratio(o)
            groups.setdefault(f"{backend}{' A^T' if op == 't' else ''} k={k}" + (f" {p}" if many_p else ""),
                              []).append(dict(
                matrix=m, auto=a, ok=ok, oracle=oracle, base=base, vs_oracle=duel("duel_oracle", oracle),
                vs_base=duel("duel_baseline", base), sweep_oracle=ratio(oracle),
                products=(a.get("planning_s", 0) + a["convert_s"]) / a["time_median_s"] if ok else None))
    return groups


def ratio_stats(cmp, key, limit):
    """'geomean G, worst W (matrix), below LIMIT on N of M' over the matrices that have the ratio."""
    v = [(c[key], shown(c["matrix"])) for c in cmp if c[key]]
    if not v:
        return "-"
    g = math.exp(sum(math.log(x) for x, _ in v) / len(v))
    w = min(v)
    return (f"geomean {g:.3f}, worst {w[0]:.3f} ({w[1]}), below {limit:.2f} on "
            f"{sum(1 for x, _ in v if x < limit)} of {len(v)}")


def auto_summary(name, cmp):
    bad = sum(1 for c in cmp if not c["ok"])
    return (f"auto {name} over {len(cmp)} matrices: auto/oracle {ratio_stats(cmp, 'vs_oracle', 0.85)}; "
            f"auto/best baseline {ratio_stats(cmp, 'vs_base', 1.0)}"
            + (f"; auto not usable on {bad}" if bad else "") + ".")


def gflops_table(rows, matrices, side_gpu):
    """000 Table 3: matrix, rows, nnz, nnz/row mean and std, one GFLOPS column per kernel (best
    setting each); among our kernels the best in bold, the worst in italics (000 marks them yellow
    and green); baseline columns unmarked."""
    best = best_by([r for r in rows if is_gpu(r) == side_gpu and not is_auto(r)], lambda r: (r["matrix"], label(r)))
    # Where a kernel has no steady row on a matrix, its fastest noisy one (checked) shows as ~value:
    # indicative, in no best or mark.
    indicative = {}
    for r in rows:
        if (is_noisy(r) and r["check"] == "passed" and r["gflops"] > 0 and r["k"] == 1 and is_gpu(r) == side_gpu
                and not is_auto(r)):
            k = (r["matrix"], label(r))
            if k not in best and (k not in indicative or r["gflops"] > indicative[k]):
                indicative[k] = r["gflops"]
    kernels = sorted({k for (_, k) in best} | {k for (_, k) in indicative})
    if not kernels:
        return "", kernels
    baseline = {label(r) for r in best.values() if r["baseline"]}
    info = {}
    for r in rows:
        info.setdefault(r["matrix"], r)
    lines = []
    for m in matrices:
        vals = {k: best[(m, k)]["gflops"] for k in kernels if (m, k) in best}
        if not vals:
            continue
        ours = [v for k, v in vals.items() if k not in baseline]
        top, low = (max(ours), min(ours)) if len(ours) > 1 else (None, None)
        i = info[m]
        cells = [display_name(i), str(int(i["rows"])), str(int(i["nnz"])), f'{i["nnz_row_mean"]:.4g}',
                 f'{i["nnz_row_std"]:.4g}']
        for k in kernels:
            v = vals.get(k)
            own = k not in baseline
            if v is None:
                cells.append(f"~{indicative[(m, k)]:.3g}" if (m, k) in indicative else "-")
                continue
            cells.append(f"**{v:.3g}**" if own and v == top else (f"_{v:.3g}_" if own and v == low else f"{v:.3g}"))
        lines.append(cells)
    note = ("\n~: indicative, the fastest of this kernel's configurations whose samples spread above the threshold "
            "twice (noisy): in no best, mark or mean.\n" if any(k[0] in matrices for k in indicative) else "")
    return md_table(["matrix", "rows", "nnz", "nnz/row mean", "nnz/row std"] + kernels, lines) + note, kernels




def commits_text(rows):
    """The commit the rows were measured at, or, for a CSV joined from several runs, each commit
    with its rows in the order they first appear."""
    counts = OrderedDict()
    for r in rows:
        c = r.get("git_commit") or "unknown"
        counts[c] = counts.get(c, 0) + 1
    if len(counts) == 1:
        return f"commit {next(iter(counts))}"
    return "commits " + ", ".join(f"{c} ({n} row{'' if n == 1 else 's'})" for c, n in counts.items())


def earlier_plots(out, written):
    """The plots the report.md already in `out` names that this report did not draw again (an
    earlier run's pages, kernels or sections): left there they would pass for this run's. Only
    files that report named, inside `out`."""
    try:
        with open(os.path.join(out, "report.md")) as f:
            named = set(re.findall(r"\(([^()\s]+\.png)\)|`([^`\s]+\.png)`", f.read()))
    except OSError:
        return []
    names = {a or b for a, b in named}
    keep = set(written)
    return sorted(n for n in names if n not in keep and not os.path.isabs(n) and ".." not in n.split("/")
                  and os.path.isfile(os.path.join(out, n)))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("csv")
    ap.add_argument("-o", "--output", default="report")
    a = ap.parse_args()
    every_row = load(a.csv)
    if not every_row:
        sys.exit(f"{a.csv}: no rows")
    # Every section but the precisions' reads one precision: double where the run has it. Rows of a
    # matrix that never loaded carry the default precision and stay.
    measured = [p for p in PRECISIONS if any(r["precision"] == p and r["kernel"] for r in every_row)]
    main_precision = "double" if "double" in measured or not measured else measured[0]
    all_rows = [r for r in every_row if r["precision"] == main_precision or not r["kernel"]]
    # The SpMV sections read k = 1 rows; SpMM has its own (spmm_section).
    rows = [r for r in all_rows if r["k"] <= 1]
    out = a.output
    os.makedirs(out, exist_ok=True)
    written = []
    matrices = matrix_order(all_rows)
    first = all_rows[0]
    ok = [r for r in rows if usable(r)]
    cpu_rows = [r for r in rows if not is_gpu(r)]
    gpu_rows = [r for r in rows if is_gpu(r)]
    triad = max(r.get("cpu_triad_gbs", 0) or 0 for r in all_rows)
    copy = max(r.get("gpu_copy_gbs", 0) or 0 for r in all_rows)
    peak = max(r.get("gpu_peak_gbs", 0) or 0 for r in all_rows)

    def spread(col):
        """ " (median of N runs, lo-hi)" of a ceiling, from the row that carries its largest value."""
        r = max(all_rows, key=lambda r: r.get(col + "_gbs", 0) or 0)
        n = int(r.get(col + "_runs", 0) or 0)
        if n <= 1:
            return ""
        return f' (median of {n} runs, {r.get(col + "_min_gbs", 0):.1f}-{r.get(col + "_max_gbs", 0):.1f})'

    def pinning(r):
        bind, places = r.get("omp_proc_bind", ""), r.get("omp_places", "")
        if not bind and not places:
            return "OpenMP threads not pinned (OMP_PROC_BIND and OMP_PLACES unset)" if "omp_proc_bind" in r else ""
        return f"OpenMP threads pinned: OMP_PROC_BIND={bind or '(unset)'}, OMP_PLACES={places or '(unset)'}" + (
            f', OMP_NUM_THREADS={r["omp_num_threads"]}' if r.get("omp_num_threads") else "")

    for r in every_row:
        NAMES.setdefault(r["matrix"], display_name(r))
    name = shown
    serial = serial_times(rows)

    # --- thread scans (CPU kernels with a threads parameter): the suite's median and quartiles,
    # and the largest matrices by name (000 Figs. 1-2, 001 Figs. 3-8) ---
    cpu_variants = sorted({variant(r) for r in cpu_rows if r["backend"] != "serial" and r["threads"] > 0})
    for v in cpu_variants:
        g = (lambda v: lambda r: variant(r) == v)(v)
        fmt_name = next(r["format"] for r in cpu_rows if variant(r) == v).upper()
        speed = same_format_speedup(serial)
        lines_vs(cpu_rows, "threads", "gflops", g, f"GFLOPS against threads: {v}", "GFLOPS", out,
                 f"gflops_vs_threads_{safe(v)}.png", written, log_y=True)
        lines_vs(cpu_rows, "threads", "speedup", g, f"Speedup over serial {fmt_name} against threads: {v}",
                 f"speedup (T serial {fmt_name} / T)", out, f"speedup_vs_threads_{safe(v)}.png", written,
                 ideal=lambda t: t, value=speed)
        lines_vs(cpu_rows, "threads", "efficiency", g,
                 f"Efficiency (speedup over serial {fmt_name} / threads, 000's): {v}",
                 f"efficiency (T serial {fmt_name} / T / threads)", out, f"efficiency_vs_threads_{safe(v)}.png", written, ideal=lambda t: 1,
                 value=lambda r: speed(r) / r["threads"] if r["threads"] and speed(r) else None)

    # --- the same per matrix, ten a page, at every thread count measured (000 Figs. 1-2, 001 Figs.
    # 3-8 and 12-17): the course reports' formats (CSR, ELL, HLL) ---
    per_matrix = []
    for v in cpu_variants:
        g = (lambda v: lambda r: variant(r) == v)(v)
        fmt_row = next(r for r in cpu_rows if variant(r) == v)
        if fmt_row["format"] not in ("csr", "ell", "hll") or fmt_row["baseline"]:
            continue
        before = len(written)
        lines_per_matrix(cpu_rows, "threads", "gflops", g, f"GFLOPS against threads, per matrix: {v}", "GFLOPS",
                         out, f"per_matrix/gflops_vs_threads_{safe(v)}.png", written)
        lines_per_matrix(cpu_rows, "threads", "speedup", g,
                         f"Speedup over serial CSR (001's) against threads, per matrix: {v}",
                         "speedup (T serial CSR / T)", out, f"per_matrix/speedup_vs_threads_{safe(v)}.png",
                         written, ideal=lambda t: t)
        lines_per_matrix(cpu_rows, "threads", "efficiency", g,
                         f"Efficiency (speedup over serial CSR / threads, 001's eq. 3) per matrix: {v}",
                         "efficiency (T serial CSR / T / threads)", out,
                         f"per_matrix/efficiency_vs_threads_{safe(v)}.png", written, ideal=lambda t: 1)
        if len(written) > before:
            per_matrix.append(v)

    # --- block-size scans (GPU kernels; 001 Figs. 18-23, 002 Figs. 5-6) ---
    for v in sorted({variant(r) for r in gpu_rows if r["block_size"] > 0}):
        g = (lambda v: lambda r: variant(r) == v)(v)
        lines_vs(gpu_rows, "block_size", "gflops", g, f"GFLOPS against block size: {v}", "GFLOPS", out,
                 f"gflops_vs_block_size_{safe(v)}.png", written, log_y=True)
        # 001 Figs. 19, 21, 23: the CUDA kernels' speedup over serial CSR per block size.
        lines_vs(gpu_rows, "block_size", "speedup", g, f"Speedup over serial CSR against block size: {v}",
                 "speedup (T serial CSR / T)", out, f"speedup_vs_block_size_{safe(v)}.png", written, log_y=True)

    # --- 002 Figs. 7-10: speedup over serial CSR per matrix at 4, 8, 16 and 32 threads (CSR, ELL) and
    # at 128, 256, 512 and 1024 threads a block (GPU), the best kernel of the format at each ---
    def setting_bars(side_rows, form, key, values, unit, title, fname):
        best = {}
        for r in side_rows:
            if (r["format"] == form and r["k"] == 1 and usable(r) and not is_auto(r) and not r["baseline"]
                    and r[key] in values and r.get("speedup")):
                k = (r["matrix"], int(r[key]))
                best[k] = max(best.get(k, 0), r["speedup"])
        present = [v for v in values if any(k[1] == v for k in best)]
        if len(present) < 2:
            return
        ms = [m for m in matrices if any((m, v) in best for v in present)]
        grouped_bars(ms, [f"{v} {unit}" for v in present], lambda m, s: best.get((m, int(s.split()[0]))), title,
                     "speedup (T serial CSR / T)", out, fname, written, names=name)

    for form, fig in (("csr", 7), ("ell", 8)):
        setting_bars([r for r in cpu_rows if r["backend"] == "omp"], form, "threads", (4, 8, 16, 32), "threads",
                     f"Speedup over serial CSR per thread count, {form.upper()} (002 Fig. {fig})",
                     f"speedup_bars_threads_{form}")
    for form, fig in (("csr", 9), ("ell", 10)):
        setting_bars(gpu_rows, form, "block_size", (128, 256, 512, 1024), "a block",
                     f"Speedup over serial CSR per block size, {form.upper()} (002 Fig. {fig})",
                     f"speedup_bars_block_size_{form}")

    # --- kernels side by side per matrix, ten matrices a page (000 Figs. 4-6): our kernels, and
    # the baseline library's best algorithm as one series ---
    def side_bars(side_rows, keep, base_name, title, fname):
        key = lambda r: (r["matrix"], base_name if r["baseline"] else label(r))
        best = best_by([r for r in side_rows if keep(r) and not is_auto(r)], key)
        ks = sorted({k for (_, k) in best if k != base_name}) + ([base_name] if any(k == base_name for _, k in best) else [])
        if len(ks) > 10:  # one series per format, its fastest kernel
            best = best_by([r for r in side_rows if keep(r) and not is_auto(r)],
                           lambda r: (r["matrix"], base_name if r["baseline"] else r["format"].upper()))
            ks = sorted({k for (_, k) in best if k != base_name}) + [base_name]
        ms = [m for m in matrices if any((m, k) in best for k in ks)]
        grouped_bars(ms, ks, lambda m, k: best.get((m, k), {}).get("gflops"), title, "GFLOPS", out, fname,
                     written, names=name)

    side_bars(gpu_rows, lambda r: True, "cuSPARSE (best algorithm)", "GPU kernels per matrix, best setting each",
              "gpu_kernels")
    side_bars(cpu_rows, lambda r: r["backend"] == "omp", "Eigen", "OpenMP kernels per matrix, best setting each",
              "cpu_kernels")

    # --- CPU vs GPU ---
    # The best kernels leave auto out: it is compared with them in its own section.
    bcpu = best_by([r for r in cpu_rows if not is_auto(r)], lambda r: r["matrix"])
    bgpu = best_by([r for r in gpu_rows if not is_auto(r)], lambda r: r["matrix"])
    if bgpu:
        both = [m for m in matrices if m in bcpu or m in bgpu]
        grouped_bars(both, ["best CPU", "best GPU"],
                     lambda m, k: (bcpu if k == "best CPU" else bgpu).get(m, {}).get("gflops"),
                     "Best CPU against best GPU kernel", "GFLOPS", out, "cpu_vs_gpu", written, page=15, names=name)

    # --- roofline-style: GFLOPS vs arithmetic intensity, with the measured bandwidth roofs ---
    pts = best_by(rows, lambda r: (r["matrix"], label(r)))
    if pts:
        fig, ax = plt.subplots(figsize=(8, 5.5))
        for side, marker in (("CPU", "o"), ("GPU", "^")):
            sel = [r for r in pts.values() if is_gpu(r) == (side == "GPU") and r["bytes_per_product"] > 0]
            if sel:
                ai = [2 * r["nnz"] * r["k"] / r["bytes_per_product"] for r in sel]
                ax.scatter(ai, [r["gflops"] for r in sel], s=10, marker=marker, alpha=0.6, label=f"{side} kernels")
        xs = [0.05, 0.5]
        if peak > 0:  # 000 / 002: peak = memory clock x bus width x 2; 2 flops per 12 bytes at most 1/6 of it
            ax.plot(xs, [x * peak for x in xs], color="tab:purple", ls=":", lw=1.4,
                    label=f"GPU theoretical peak {peak:.0f} GB/s (at AI 1/6: {peak / 6:.0f} GFLOPS)")
            ax.axvline(1 / 6, color="0.5", lw=0.8, ls=":")
        if triad > 0:
            ax.plot(xs, [x * triad for x in xs], "b--", lw=1, label=f"CPU STREAM triad {triad:.1f} GB/s")
        if copy > 0:
            ax.plot(xs, [x * copy for x in xs], "r--", lw=1, label=f"GPU copy {copy:.0f} GB/s")
        # A point above a roof ran from the caches: its matrix and vectors fit there.
        ax.plot([], [], " ", label="above a roof: matrix and vectors held in the caches")
        ax.set_xscale("log")
        ax.set_yscale("log")
        finish(fig, ax, out, "roofline.png", written, "arithmetic intensity (flop / byte of the minimal traffic)",
               "GFLOPS", "Roofline: achieved GFLOPS against the bandwidth roofs (measured"
               + ("; GPU also theoretical)" if peak > 0 else ")"), "both")

        fig, ax = plt.subplots(figsize=(8, 5))
        for side, color in (("CPU", "tab:blue"), ("GPU", "tab:red")):
            sel = [r for r in pts.values() if is_gpu(r) == (side == "GPU")]
            if sel:
                ax.scatter([r["nnz"] for r in sel], [100 * r["bandwidth_share"] for r in sel], s=10,
                           color=color, alpha=0.6, label=side)
        ax.axhline(100, color="k", lw=1, ls="--", label="measured ceiling")
        ax.set_xscale("log")
        finish(fig, ax, out, "bandwidth_share.png", written, "nnz", "effective bandwidth, % of ceiling",
               "Effective bandwidth against the ceiling (above 100%: matrix fits in cache)")

    # --- conversion cost against product time ---
    conv = [r for r in ok if r["k"] == 1 and r["time_median_s"] > 0]
    if conv:
        fig, ax = plt.subplots(figsize=(7, 5.5))
        fmts = sorted({r["format"] for r in conv})
        cost = lambda r: r["convert_s"] + r["setup_s"]
        for i, f in enumerate(fmts):
            sel = [r for r in conv if r["format"] == f]
            ax.scatter([r["time_median_s"] for r in sel], [cost(r) for r in sel], s=12, alpha=0.6, label=f,
                       color=COLORS[i % 10], marker=MARKERS[i % 10])
        lo = min(r["time_median_s"] for r in conv)
        hi = max(r["time_median_s"] for r in conv)
        for n, ls in ((1, ":"), (10, "--"), (100, "-.")):
            ax.plot([lo, hi], [n * lo, n * hi], "k", ls=ls, lw=0.8,
                    label=f"costs {n} product{'' if n == 1 else 's'}")
        ax.set_xscale("log")
        # Symmetric log: a kernel that needs no conversion (CSR) sits at 0, not at a made-up 1e-9.
        positive = [cost(r) for r in conv if cost(r) > 0]
        ax.set_yscale("symlog", linthresh=min(positive + [lo]))
        ax.set_ylim(bottom=0)
        finish(fig, ax, out, "conversion_cost.png", written, "product time (s, median)",
               "conversion + setup time (s; 0: none)", "Conversion cost against product time", "both")

    # --- CSR-adaptive style tuning: harmonic mean over the suite per nz_per_block ---
    npb = [r for r in ok if r["nz_per_block"] > 0 and r["k"] == 1]
    hm_lines = []
    if npb:
        fig, ax = plt.subplots(figsize=(7, 4.5))
        for v in sorted({label(r) for r in npb}):
            best = defaultdict(dict)
            for r in npb:
                if label(r) == v:
                    z, m = r["nz_per_block"], r["matrix"]
                    best[z][m] = max(best[z].get(m, 0), r["gflops"])
            zs = sorted(best)
            hms = [harmonic_mean(list(best[z].values())) for z in zs]
            ax.plot(zs, hms, marker="o", label=v)
            top = zs[hms.index(max(hms))]
            hm_lines.append([v] + [f"**{h:.3g}**" if z == top else f"{h:.3g}" for z, h in zip(zs, hms)])
            hm_header = ["kernel"] + [str(int(z)) for z in zs]
        ax.set_xscale("log", base=2)
        finish(fig, ax, out, "nz_per_block_harmonic_mean.png", written, "nz_per_block",
               "harmonic mean GFLOPS over the suite", "CSR-adaptive row-block size")

    # --- the automatic planner against the oracle, per matrix ---
    # auto in each precision, against the oracle and baseline of its own.
    autos = auto_comparisons([r for r in every_row if r["k"] <= 1], matrices)
    plotted = [m for m in matrices if any(c["matrix"] == m and (c["vs_oracle"] or not c["ok"])
                                          for v in autos.values() for c in v)]
    # Pages of 30 matrices (auto_vs_oracle_1.png, ... where more than one), so the names stay readable.
    pages = pages_of(plotted, 30)
    top = max([1.2] + [(c["vs_oracle"] or 0) * 1.05 for v in autos.values() for c in v])
    for n, page in enumerate(pages, 1):
        fig, ax = plt.subplots(figsize=(max(8, 0.22 * len(page) + 3), 5))
        for (name, cmp), marker in zip(autos.items(), "os^Dv<>p"):
            pts = [(page.index(c["matrix"]), c["vs_oracle"]) for c in cmp if c["vs_oracle"] and c["matrix"] in page]
            dots = ax.scatter([x for x, _ in pts], [y for _, y in pts], s=22, marker=marker, alpha=0.8,
                              label=f"auto {name}")
            bad = [page.index(c["matrix"]) for c in cmp if not c["ok"] and c["matrix"] in page]
            if bad:  # a failed or erroring auto is shown, not left out
                ax.scatter(bad, [0.03] * len(bad), s=40, marker="x", color=dots.get_facecolor()[0],
                           label=f"auto {name}: not usable")
        ax.axhline(1.0, color="k", lw=1, label="= oracle")
        ax.axhline(0.85, color="tab:red", lw=1, ls="--", label="0.85 of the oracle")
        ax.set_xticks(range(len(page)))
        ax.set_xticklabels([shown(m) for m in page], rotation=60, ha="right", fontsize=8)
        ax.set_xlim(-1, len(page))
        ax.set_ylim(0, top)
        ax.set_ylabel("auto / oracle (oracle time / auto time,\ntimed interleaved where the run did)")
        ax.set_title("Automatic planner against the best of our kernels (any setting), per matrix"
                     + (f" ({n}/{len(pages)})" if len(pages) > 1 else ""))
        ax.grid(axis="y", alpha=0.3)
        ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5))
        save(fig, out, page_file("auto_vs_oracle.png", n, len(pages)), written)

    # --- report.md ---
    md = ["# SpMV benchmark report\n"]
    md.append(f'Machine: {first.get("hostname", "")}, {first.get("cpu_model", "")}, '
              f'{int(first.get("cores", 0) or 0)} cores; device: {first.get("device") or "no CUDA device: CPU only"}; '
              f'compiler: {first.get("compiler", "")}'
              + (f'; SIMD: {first["simd"]}' if first.get("simd") else "")
              + f"; {commits_text(rows)}"
              + (f"; {pinning(first)}" if pinning(first) else "") + ".  \n"
              f'Ceilings measured in the same run: STREAM triad {triad:.1f} GB/s{spread("cpu_triad")}'
              + (f", GPU device copy {copy:.0f} GB/s{spread('gpu_copy')}" if copy else "") + "."
              + (f" GPU theoretical peak (memory clock x bus width x 2, as 000 computes 448 GB/s) {peak:.0f} GB/s: "
                 f"at 2 flops per 12 bytes of matrix (000's arithmetic intensity 1/6) at most {peak / 6:.0f} GFLOPS"
                 + (f"; the measured copy ceiling is {100 * copy / peak:.0f}% of it" if copy else "") + "." if peak else "")
              + "\n")
    origins = defaultdict(int)
    seen = set()
    for r in rows:
        if r["matrix"] not in seen:
            seen.add(r["matrix"])
            origins[r["origin"]] += 1
    # Failures, errors and skips of every precision (the counts and lists say which).
    spmv_rows = [r for r in every_row if r["k"] <= 1]
    failed = [r for r in spmv_rows if r["status"] == "failed"]
    errors = [r for r in spmv_rows if r["status"].startswith("error")]
    skipped = [r for r in spmv_rows if r["status"].startswith("skipped")]
    noisy = [r for r in spmv_rows if is_noisy(r)]
    prec = (lambda r: f' ({r["precision"]})') if len(measured) > 1 else (lambda r: "")
    md.append("## Summary\n")
    if len(measured) > 1:
        md.append(f"Precisions measured: {', '.join(measured)}. The sections below read the {main_precision} rows "
                  "only; 'Precisions' compares them.\n\n")
    elif main_precision != "double":
        md.append(f"Precision: {main_precision} (every row).\n\n")
    md.append(f'{len(matrices)} matrices ({", ".join(f"{n} {o}" for o, n in sorted(origins.items()))}); '
              f"{len(spmv_rows)} measurements, {len(ok)} checked and timed"
              + (f" ({main_precision})" if len(measured) > 1 else "") + f", {len(failed)} failed the check, "
              f"{len(errors)} errors, {len(skipped)} skipped"
              + (f", {len(noisy)} noisy (timing spread above the threshold twice; listed below)" if noisy else "")
              + " (excluded from every best and mean). "
              "Names marked * are synthetic structure-alikes, ** scaled-down alikes.\n")
    if noisy and len(noisy) >= 0.1 * max(1, len(spmv_rows)):
        cores = int(first.get("cores", 0) or 0)
        md.append(f"\n**Verdict: a noisy run.** {len(noisy)} of {len(spmv_rows)} configurations "
                  f"({100 * len(noisy) / len(spmv_rows):.0f}%) kept a spread above the threshold after a second "
                  f"measurement{f' on this {cores}-core machine' if cores else ''}: other work shared its cores, or "
                  "threads beyond them waited for one. Their medians stay in the CSV and show as ~value "
                  "(indicative) in the GFLOPS tables; bests, ratios and plots leave them out. For firm figures run "
                  "on an idle machine, with longer samples (`--min-sample-ms 50`), threads unpinned "
                  "(`OMP_PROC_BIND=false`) where the machine is shared, or threads up to the cores only "
                  "(`--threads 1,2`).\n")
    for side, best in (("CPU", bcpu), ("GPU", bgpu)):
        if not best:
            if side == "GPU":
                md.append("- GPU: no CUDA device in this run (CPU only).\n")
            continue
        wins = defaultdict(int)
        for r in best.values():
            wins[label(r)] += 1
        lead = ", ".join(f"{k} on {n}" for k, n in sorted(wins.items(), key=lambda x: -x[1]))
        g = [r["gflops"] for r in best.values()]
        share = [r["bandwidth_share"] for r in best.values() if r["bandwidth_share"] > 0]
        md.append(f"- {side}: best kernel per matrix: {lead}. Best GFLOPS median {statistics.median(g):.3g}, "
                  f"max {max(g):.3g}; median share of the bandwidth ceiling {100 * statistics.median(share) if share else 0:.0f}%.\n")
        base = best_by([r for r in rows if (is_gpu(r) == (side == "GPU")) and r["baseline"] == 1],
                       lambda r: r["matrix"])
        own = best_by([r for r in rows if (is_gpu(r) == (side == "GPU")) and r["baseline"] != 1 and not is_auto(r)],
                      lambda r: r["matrix"])
        ratios = [own[m]["gflops"] / base[m]["gflops"] for m in own if m in base and base[m]["gflops"] > 0]
        if ratios:
            md.append(f"  Against the {side} baseline library ({', '.join(sorted({label(r) for r in base.values()}))}): "
                      f"median ratio {statistics.median(ratios):.2f}x, ours faster on "
                      f"{sum(1 for x in ratios if x > 1)} of {len(ratios)} matrices.\n")
    if autos:
        md += [f"- {auto_summary(name, cmp)}\n" for name, cmp in autos.items()]
    else:
        md.append("- Automatic planner: not measured in this run (no `auto` rows).\n")
    if failed:
        md.append("\nFailed checks: " + "; ".join(f'{r["matrix"]} {label(r)}{prec(r)}' for r in failed[:20]) + "\n")

    for side_gpu, title in ((False, "CPU"), (True, "GPU")):
        table, _ = gflops_table(rows, matrices, side_gpu)
        if table:
            md.append(f"\n## {title}: GFLOPS per kernel, best setting ({'000 Table 3' if side_gpu else 'as 000 Table 3'})\n\n"
                      "Among our kernels the fastest in bold, the slowest in italics; baselines unmarked.\n\n" + table)
    md.append(seed_tables.section(rows, matrices, out, written))

    md.append("\n## Automatic planner (auto) against the best of ours\n")
    if not autos:
        md.append("auto was not measured in this run (no `auto` rows in the CSV).\n")
    else:
        md.append("Oracle: our fastest checked kernel and setting of the same backend, k and precision; best baseline: the fastest "
                  "Eigen (CPU) or cuSPARSE (GPU) row of that precision. Ratios are their time / auto's time (1 = auto as fast, "
                  "below 1 = auto slower), from timing auto, the oracle and the baseline interleaved after the sweep "
                  "(median of per-round ratios) where the run did; '(sweep)': from the sweep's medians, where the "
                  "oracle is the luckiest of many settings timed one after another. Planning cost: (planning + "
                  "conversion) / auto's product time.\n")
    for name, cmp in autos.items():
        lines = []
        for c in cmp:
            a, o, b = c["auto"], c["oracle"], c["base"]
            if not c["ok"]:
                lines.append([shown(c["matrix"]), a.get("chosen") or "-", "not usable: " + a["status"][:60]] + ["-"] * 8)
                continue
            lines.append([shown(c["matrix"]), a.get("chosen") or "-", f'{a["gflops"]:.3g}', fmt(a["time_median_s"]),
                          full_label(o) if o else "-", fmt(o and o["time_median_s"]),
                          f'{c["vs_oracle"]:.3f}' if o else "-", f'{c["sweep_oracle"]:.3f}' if o else "-",
                          full_label(b) if b else "-",
                          f'{c["vs_base"]:.3f}' if b else "-", f'{c["products"]:.3g}'])
        md.append(f"\n### auto {name}\n\n" + md_table(
            ["matrix", "auto's choice", "auto GFLOPS", "auto time (s)", "oracle", "oracle time (s)", "auto/oracle",
             "auto/oracle (sweep)", "best baseline", "auto/baseline", "planning cost (products)"], lines) + f"\n{auto_summary(name, cmp)}\n")

    # Speedup and efficiency at the largest thread count, per CPU kernel variant.
    sp = best_by([r for r in cpu_rows if r["backend"] != "serial"], lambda r: (r["matrix"], variant(r)))
    if sp:
        vs = sorted({v for (_, v) in sp})
        lines = []
        for m in matrices:
            if any((m, v) in sp for v in vs):
                lines.append([shown(m)] + [f'{sp[(m, v)]["speedup"]:.2f} (t={int(sp[(m, v)]["threads"])})'
                                    if (m, v) in sp else "-" for v in vs])
        md.append("\n## CPU: speedup over serial CSR at the best thread count\n\n" + md_table(["matrix"] + vs, lines))

    md.append(loop_section(rows, matrices, out, written))
    md.append(spmm_section(all_rows, matrices, out, written))
    md.append(precision_section([r for r in every_row if r["k"] <= 1], matrices, out, written))
    md.append(csr5_sigma_section(rows, matrices))

    # The iterative scenario: conversion + N products, best setting per format.
    it = {}
    for r in ok:
        if r["k"] != 1:
            continue
        key = (r["matrix"], r["backend"] + "/" + r["format"])
        if key not in it or r["iter500_s"] < it[key]["iter500_s"]:
            it[key] = r
    if it:
        fs = sorted({f for (_, f) in it})
        lines = []
        for m in matrices:
            if any((m, f) in it for f in fs):
                lines.append([shown(m)] + [f'{fmt(it[(m, f)]["iter50_s"])} / {fmt(it[(m, f)]["iter500_s"])}'
                                    if (m, f) in it else "-" for f in fs])
        md.append("\n## Iterative use: seconds for conversion + 50 / + 500 products (best setting per format)\n\n"
                  + md_table(["matrix"] + fs, lines))
    if hm_lines:
        md.append("\n## CSR-adaptive nz_per_block: harmonic mean GFLOPS over the suite\n\n" + md_table(hm_header, hm_lines))
    md.append(timing_section(every_row))
    md.append(noisy_section(every_row, prec))
    bad = failed + errors + skipped
    if bad:  # one line per matrix, kernel and status, with how many of the sweep's settings it covers
        seen = {}
        for r in bad:
            key = (shown(r["matrix"]), (label(r) + prec(r)) if r["kernel"] else "-", r["status"][:120])
            seen[key] = seen.get(key, 0) + 1
        lines = [list(k) + [str(n)] for k, n in list(seen.items())[:60]]
        md.append("\n## Not measured\n\n" + md_table(["matrix", "kernel", "status", "settings"], lines))
    pages = [w for w in written if w.startswith("per_matrix/")]
    if pages:
        md.append("\n## Per-matrix curves against threads (000 Figs. 1-2, 001 Figs. 3-8 and 12-17)\n\n"
                  f"A line per matrix at every thread count measured, ten matrices a page, for {', '.join(per_matrix)}: "
                  f"{len(pages)} plots in `per_matrix/` (GFLOPS; speedup over serial CSR and efficiency, that speedup "
                  "over the threads: 001's eq. 3).\n\n"
                  + "".join(f"- [{w}]({w})\n" for w in pages))
    md.append("\n## Plots\n\n" + "".join(f"![{w}]({w})\n" for w in written if not w.startswith("per_matrix/")))
    stale = earlier_plots(out, written)
    with open(os.path.join(out, "report.md"), "w") as f:
        f.write("\n".join(md))
    for name in stale:
        os.remove(os.path.join(out, name))
    print(f"wrote {os.path.join(out, 'report.md')} and {len(written)} plots in {out}"
          + (f" (removed {len(stale)} an earlier report there drew and this one does not)" if stale else ""))


if __name__ == "__main__":
    # Input and output problems: one line naming the file, exit 1 (no traceback).
    try:
        main()
    except ReportError as e:
        sys.exit(str(e))
    except OSError as e:
        sys.exit(f"{e.filename}: {e.strerror}" if e.filename else str(e))
