"""The course reports' tables and figures (../shared/seeds 000, 001, 002) from a bench CSV, under
their definitions: GFLOPS = 2 nnz / t; speedup = T_serial of the same format / T_parallel (000;
written as a ratio, where 000 writes it in %), with the speedup over serial CSR (001, 002) beside
it; efficiency = speedup / threads; the CPU tables at a fixed thread count (the machine's cores, as
000's 20 on its 20 cores). Each heading names the seed table or figure it reproduces. Rows follow
the CSV's matrix order (the suite's: seed_suite.tsv's order under --seed-suite); synthetic
structure-alikes are marked * (scaled-down **) in every table and plot."""
import math
import statistics
from collections import defaultdict

from report_common import (usable, is_gpu, is_auto, is_regular, regular_rule, display_name, serial_times, md_table,
                           grouped_bars, settings_value)

FORMATS = ("csr", "ell", "hll", "csr5")


def _ours(r):
    return usable(r) and r["k"] == 1 and not r["baseline"] and not is_auto(r) and r["time_median_s"] > 0


def _fastest(rows, key):
    """Fastest usable row of ours per key(row)."""
    best = {}
    for r in rows:
        if _ours(r):
            k = key(r)
            if k not in best or r["time_median_s"] < best[k]["time_median_s"]:
                best[k] = r
    return best


def _x(v, digits=3):
    return "-" if v is None else f"{v:.{digits}g}"


def _unit(seconds):
    """The unit of a time column from its largest value: ms from a millisecond up, else us."""
    top = max((s for s in seconds if s and s > 0), default=0)
    return ("ms", 1e3) if top >= 1e-3 else ("us", 1e6)


def _in(seconds, unit):
    """A time in the column's unit with four significant digits, never in exponent form."""
    v = unit[1] * seconds if seconds else 0
    return f"{v:.{max(0, 3 - math.floor(math.log10(v)))}f}" if v > 0 else "-"


def _kernel(r):
    return r["kernel"] + (f' hack={int(r["hack"])}' if r["hack"] else "")


def _gpu_kernel(r):
    """A CUDA kernel's column: CSR-vector at a warp per row (000's CSR-Vector) apart from ours,
    whose sub-warp follows the mean row length."""
    warp = r["kernel"] == "csr-vector" and settings_value(r, "subwarp") == "32"
    return r["kernel"] + (" subwarp=32" if warp else "")


def table_threads(rows):
    """The CPU tables' thread count: the machine's cores where measured (000: 20 of 20), else the
    most threads measured."""
    measured = sorted({int(r["threads"]) for r in rows if r["backend"] == "omp" and _ours(r)})
    if not measured:
        return None
    cores = int(max((r.get("cores") or 0) for r in rows) or 0)
    at_most = [t for t in measured if t <= cores] if cores else []
    return at_most[-1] if at_most else measured[-1]


def section(rows, matrices, out, written):
    """Markdown of the seeds' tables (and their figures written into out); "" without timings."""
    rows = [r for r in rows if r["k"] == 1]
    info = {}
    for r in rows:
        info.setdefault(r["matrix"], r)
    name = lambda m: display_name(info[m])
    ser = serial_times(rows)
    speedup = lambda s, r: s / r["time_median_s"] if s and r else None
    # Over serial CSR: the CSV's own column (each run's serial CSR); over the same format: the
    # fastest serial row of that format (CSR: the same column).
    over_csr = lambda r: r["speedup"] if r.get("speedup", 0) > 0 else speedup(ser.get((r["matrix"], "csr", r["precision"])), r)
    over_same = lambda r: over_csr(r) if r["format"] == "csr" else speedup(ser.get((r["matrix"], r["format"], r["precision"])), r)
    md = ["\n## The course reports' tables\n",
          "As ../shared/seeds 000, 001 and 002 present their results. Speedup: T_serial of the same format / "
          "T (000's definition, as a ratio where 000 writes %), and over serial CSR (001, 002); efficiency: speedup / "
          "threads. Best setting: the fastest checked setting of the kernel (threads, block size, hack). Times, "
          "GFLOPS (2 nnz / t) and speedups use t = the median of the samples (each a batch of back-to-back "
          "products); the reports take the mean of single products (000: 32 runs, 001: 10, 002: 3), which 000's "
          "tables give beside it. Names marked * are synthetic structure-alikes of the seed matrices, ** "
          "scaled-down ones.\n"]

    # 000 Tables 1-2: per format at a fixed thread count.
    t = table_threads(rows)
    if t:
        at_t = _fastest([r for r in rows if r["backend"] == "omp" and int(r["threads"]) == t],
                        lambda r: (r["matrix"], r["format"]))
        for f in FORMATS:
            lines = []
            unit = _unit([r["time_median_s"] for (m, g), r in at_t.items() if g == f])
            for m in matrices:
                r = at_t.get((m, f))
                if r:
                    extra = [] if f == "csr" else [_x(over_csr(r))]
                    lines.append([name(m), _in(r["time_median_s"], unit), _in(r.get("time_mean_s") or 0, unit),
                                  f'{r["gflops"]:.3g}', _x(over_same(r))] + extra + [_kernel(r)])
            if lines:
                md.append(f"\n### CPU, {f.upper()} format, {t} threads (000 Tables 1-2)\n\n"
                          f"Our fastest OpenMP kernel of the format at {t} threads.\n\n"
                          + md_table(["matrix", f"median time ({unit[0]})", f"mean time ({unit[0]})", "GFLOPS (median)",
                            f"speedup over serial {f.upper()}"]
                                     + ([] if f == "csr" else ["speedup over serial CSR"]) + ["kernel"], lines))

    # 000 Table 4 / 002 Table 2: GPU speedup per kernel over serial.
    gpu = _fastest([r for r in rows if is_gpu(r)], lambda r: (r["matrix"], _gpu_kernel(r)))
    kernels = sorted({k for (_, k) in gpu})
    if kernels:
        lines = []
        for m in matrices:
            cells = [gpu.get((m, k)) for k in kernels]
            if any(cells):
                lines.append([name(m)] + [_x(over_same(r)) if r else "-" for r in cells])
        md.append("\n### GPU speedup over serial, per kernel (000 Table 4)\n\n"
                  "Best setting of each CUDA kernel; over the serial kernel of its own format (CSR kernels over serial "
                  "CSR, ell over serial ELL, hll over serial HLL, csr5 over serial CSR5). 000's CSR-Vector is a warp "
                  "per row: `csr-vector subwarp=32` (`--subwarp 32`, which `spmv bench --seed-suite` times); "
                  "`csr-vector` alone is ours, its sub-warp from the mean row length.\n\n"
                  + md_table(["matrix"] + [f"cuda/{k}" for k in kernels], lines))

    # 002 Tables 1-4: best of each format on each side, speedup over serial CSR and GFLOPS.
    cpu_f = _fastest([r for r in rows if r["backend"] == "omp"], lambda r: (r["matrix"], r["format"]))
    gpu_f = _fastest([r for r in rows if is_gpu(r)], lambda r: (r["matrix"], r["format"]))
    cols = [(side, f) for side, best in (("CPU", cpu_f), ("GPU", gpu_f)) for f in FORMATS
            if any(k[1] == f for k in best)]
    if cols:
        pick = lambda side, m, f: (cpu_f if side == "CPU" else gpu_f).get((m, f))
        sp, gf = [], []
        for m in matrices:
            cells = [pick(s, m, f) for s, f in cols]
            if any(cells):
                sp.append([name(m)] + [_x(over_csr(r)) if r else "-" for r in cells])
                gf.append([name(m)] + [f'{r["gflops"]:.3g}' if r else "-" for r in cells])
        header = ["matrix"] + [f"{s} {f.upper()}" for s, f in cols]
        md.append("\n### Speedup over serial CSR, best setting per format (002 Tables 1-2)\n\n"
                  "CPU: OpenMP, any thread count; GPU: CUDA, any block size.\n\n" + md_table(header, sp))
        md.append("\n### GFLOPS, best setting per format (002 Tables 3-4)\n\n" + md_table(header, gf))

    # 002 Figures 11-12: T_cpu / T_gpu per matrix and format.
    both = [f for f in FORMATS if any(k[1] == f for k in cpu_f) and any(k[1] == f for k in gpu_f)]
    ratio = {}
    for m in matrices:
        for f in both:
            c, g = cpu_f.get((m, f)), gpu_f.get((m, f))
            if c and g:
                ratio[(m, f)] = c["time_median_s"] / g["time_median_s"]
    if ratio:
        ms = [m for m in matrices if any((m, f) in ratio for f in both)]
        lines = [[name(m)] + [_x(ratio.get((m, f))) for f in both] for m in ms]
        md.append("\n### T_cpu / T_gpu per format (002 Figures 11-12)\n\n"
                  "Best OpenMP time of the format over its best CUDA time (above 1: the GPU is faster).\n\n"
                  + md_table(["matrix"] + [f.upper() for f in both], lines))
        grouped_bars(ms, [f.upper() for f in both], lambda m, f: ratio.get((m, f.lower())),
                     "T_cpu / T_gpu, best setting per format (002 Figs. 11-12)", "T_cpu / T_gpu", out,
                     "seed_cpu_over_gpu", written, page=15 if len(both) > 2 else 30, names=name, line=(1.0, "= 1 (GPU as fast)"))

    # 001 Figures 9-11 and 24-25: CSR against HLL.
    for side, best, figs in (("OpenMP", cpu_f, (9, 10, 11)), ("CUDA", gpu_f, (24, 25))):
        ms = [m for m in matrices if (m, "csr") in best and (m, "hll") in best]
        if not ms:
            continue
        measures = [("GFLOPS", lambda r: r["gflops"], True),
                    ("speedup over serial CSR", lambda r: over_csr(r), True),
                    ("efficiency (speedup over serial CSR / threads)",
                     lambda r: over_csr(r) / r["threads"] if r["threads"] and over_csr(r) else None, False)]
        for fig, (what, val, log) in zip(figs, measures):
            grouped_bars(ms, ["CSR", "HLL"], lambda m, f, val=val: val(best[(m, f.lower())]),
                         f"{side}: CSR against HLL, {what} at the best setting (001 Fig. {fig})", what, out,
                         f"seed_csr_vs_hll_{side.lower()}_{what.split()[0].lower()}", written, log=log, page=30, names=name)
        md.append(f"\n001 Figs. {', '.join(map(str, figs))}: `seed_csr_vs_hll_{side.lower()}_*.png` (CSR and HLL on {side}, "
                  "each at its fastest setting).\n")

    # Regular against irregular rows.
    groups = defaultdict(list)
    for m in matrices:
        if any(k[0] == m for k in cpu_f) or any(k[0] == m for k in gpu_f):
            groups["regular" if is_regular(info[m]) else "irregular"].append(m)
    if groups:
        lines = []
        for g in ("regular", "irregular"):
            ms = groups.get(g, [])
            if not ms:
                continue
            line = [g, str(len(ms))]
            for side, f in cols:
                v = [r["gflops"] for m in ms if (r := (cpu_f if side == "CPU" else gpu_f).get((m, f)))]
                line.append(f"{statistics.median(v):.3g}" if v else "-")
            lines.append(line)
        irr = ", ".join(name(m) for m in groups.get("irregular", [])) or "none"
        rule = regular_rule([info[m] for ms in groups.values() for m in ms])
        md.append("\n### Regular and irregular rows: median GFLOPS per format (003's grouping)\n\n"
                  f"Matrices grouped by their rows, {rule}. Irregular here ({len(groups.get('irregular', []))} of "
                  f"{sum(map(len, groups.values()))}): {irr}.\n\n"
                  + md_table(["rows", "matrices"] + [f"{s} {f.upper()}" for s, f in cols], lines))
    return "".join(md)
