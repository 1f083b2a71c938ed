"""Shared pieces of the report (report.py) and its course-report section (seed_tables.py): the
CSV's rows, which of them count, names as the report shows them, Markdown tables, and the plot
helpers every figure goes through (at most about ten series a plot, distinct colours and markers,
integer ticks, synthetic matrices marked)."""
import csv
import gzip
import math
import os
import statistics
from collections import defaultdict, OrderedDict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import matplotlib.ticker  # noqa: E402

NUM = {"scale", "rows", "cols", "nnz", "nnz_row_mean", "nnz_row_std", "nnz_row_min", "nnz_row_max", "baseline", "threads",
       "block_size", "hack", "nz_per_block", "k", "max_rel_error", "mean_rel_error", "convert_s",
       "setup_s", "time_median_s", "time_min_s", "products_per_sample", "samples", "gflops",
       "speedup", "efficiency", "bandwidth_gbs", "ceiling_gbs", "bandwidth_share",
       "bytes_per_product", "stored_entries", "iter50_s", "iter500_s", "cores", "cpu_triad_gbs",
       "gpu_copy_gbs", "gpu_peak_gbs", "planning_s", "duel_oracle", "duel_baseline", "threads_requested",
       "time_mean_s", "time_max_s", "time_cv", "time_drift", "measurements", "noise_threshold",
       "cpu_triad_min_gbs", "cpu_triad_max_gbs", "cpu_triad_runs", "gpu_copy_min_gbs", "gpu_copy_max_gbs",
       "gpu_copy_runs", "loop_host_s", "loop_pinned_s", "loop_device_s", "loop_copies_s", "gpu_h2d_gbs",
       "gpu_d2h_gbs"}

# The precisions a CSV may hold, in the order tables show them.
PRECISIONS = ("double", "single", "mixed")


class ReportError(Exception):
    """A CSV the report cannot read: the message names the file (and line)."""


# Columns every `spmv bench` CSV has (later ones get defaults below).
REQUIRED = ("matrix", "backend", "kernel", "status", "check", "gflops", "k")


def load(path):
    try:
        rows = load_rows(path)
    except (csv.Error, UnicodeDecodeError, gzip.BadGzipFile, EOFError) as e:  # NUL bytes, a binary file, a broken .gz
        raise ReportError(f"{path}: not a CSV: {e}") from None
    # CSVs joined from runs before and after the shortest and longest row's columns: a matrix's rows
    # all take them from any that has them, so one rule groups it (is_regular).
    lengths = {}
    for r in rows:
        if r.get("nnz_row_max"):
            lengths[(r["matrix"], r.get("scale"))] = (r["nnz_row_min"], r["nnz_row_max"])
    for r in rows:
        if not r.get("nnz_row_max") and (r["matrix"], r.get("scale")) in lengths:
            r["nnz_row_min"], r["nnz_row_max"] = lengths[(r["matrix"], r.get("scale"))]
    return rows


def load_rows(path):
    rows = []
    opener = (lambda: gzip.open(path, "rt", newline="")) if path.endswith(".gz") else (lambda: open(path, newline=""))
    with opener() as f:
        reader = csv.DictReader(f)
        missing = [k for k in REQUIRED if k not in (reader.fieldnames or [])]
        if missing:
            raise ReportError(f"{path}: not a results CSV of `spmv bench` (no column '{missing[0]}')")
        for r in reader:
            if None in r.values() or None in r:
                fields = sum(1 for k, v in r.items() if k is not None and v is not None) + len(r.get(None, []))
                raise ReportError(f"{path}:{reader.line_num}: {len(reader.fieldnames)} columns in the header, "
                                  f"{fields} in this row")
            for k in NUM:
                if k in r:
                    try:
                        r[k] = float(r[k]) if r[k] != "" else 0.0
                    except ValueError:
                        r[k] = 0.0
            r.setdefault("precision", "double")  # a CSV from before the column: double only
            # A CSV from before the timing statistics: the threads asked for are those in the row,
            # and nothing says how the samples spread.
            r.setdefault("threads_requested", r.get("threads", 0.0))
            for k in ("time_mean_s", "time_max_s", "time_cv", "time_drift", "measurements", "noise_threshold"):
                r.setdefault(k, 0.0)
            rows.append(r)
    return rows


def usable(r):
    """Checked and timed with a steady spread: status "ok" (a "noisy" row, whose samples spread above
    the run's threshold twice, is left out like a failed one)."""
    return r["status"] == "ok" and r["check"] == "passed" and r["gflops"] > 0


def is_noisy(r):
    return r["status"] == "noisy"


def label(r):
    return f'{r["backend"]}/{r["kernel"]}'


def variant(r):
    """Kernel plus the settings that are not swept on a plot's x axis (HLL hack)."""
    s = label(r)
    if r["hack"]:
        s += f' hack={int(r["hack"])}'
    return s


def settings_value(r, name):
    """A setting of the CSV's `settings` column ("subwarp=32 variant=elements"), or None."""
    for word in (r.get("settings") or "").split():
        key, _, value = word.partition("=")
        if key == name:
            return value
    return None


def is_gpu(r):
    return r["backend"] == "cuda"


def is_auto(r):
    return r["kernel"] == "auto"


def setting(r):
    """The swept parameters, as the stdout summary writes them: the threads a CPU kernel ran on, and
    those the sweep asked for where the kernel fell back to fewer ("t=1 of 16")."""
    t, asked = int(r["threads"]), int(r.get("threads_requested") or r["threads"])
    parts = [(f't={t}' + (f' of {asked}' if asked != t else ""), r["threads"] and r["backend"] != "serial"),
             (f'bs={int(r["block_size"])}', r["block_size"]), (f'hack={int(r["hack"])}', r["hack"]),
             (f'npb={int(r["nz_per_block"])}', r["nz_per_block"]), (f'k={int(r["k"])}', r["k"] > 1)]
    return " ".join(p for p, on in parts if on)


def full_label(r):
    return f"{label(r)} {setting(r)}".strip()


def fastest(rows, keep):
    sel = [r for r in rows if usable(r) and r["time_median_s"] > 0 and keep(r)]
    return min(sel, key=lambda r: r["time_median_s"]) if sel else None


def matrix_order(rows):
    return list(OrderedDict.fromkeys(r["matrix"] for r in rows))


def best_by(rows, key):
    """Best GFLOPS row per key(row) among usable rows."""
    out = {}
    for r in rows:
        if not usable(r) or r["k"] != 1:
            continue
        k = key(r)
        if k not in out or r["gflops"] > out[k]["gflops"]:
            out[k] = r
    return out


def save(fig, out, name, written):
    path = os.path.join(out, name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)
    written.append(name)


def finish(fig, ax, out, name, written, xlabel, ylabel, title, grid_which="major"):
    """Labels, grid and legend of the summary plots, then save."""
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(alpha=0.3, which=grid_which)
    ax.legend(fontsize=7)
    save(fig, out, name, written)


def safe(s):
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in s)


def harmonic_mean(v):
    v = [x for x in v if x > 0]
    return len(v) / sum(1 / x for x in v) if v else 0


def fmt(v, digits=3):
    if v is None or v == 0:
        return "-"
    return f"{v:.{digits}g}"


def md_table(header, lines):
    s = "| " + " | ".join(header) + " |\n|" + "|".join("---" for _ in header) + "|\n"
    for l in lines:
        s += "| " + " | ".join(l) + " |\n"
    return s


def display_name(r):
    """The matrix name as every table and plot shows it: synthetic structure-alikes marked *,
    scaled-down alikes **."""
    o = r.get("origin", "real")
    return r["matrix"] + ("" if o in ("real", "") else (" *" if o == "synthetic" else " **"))


# Matrix -> name as shown (display_name of its first row); report.py fills it from the CSV, so
# tables and plots made from bare matrix names mark the alikes too.
NAMES = {}


def shown(m):
    return NAMES.get(m, m)


REGULAR_RULE = ("irregular where the longest row holds over 100 x the mean or over 4096 entries (003 groups its "
                "24 matrices, 14 regular and 10 irregular, by their rows' shortest, mean and longest lengths "
                "without naming thresholds; dc2, its example of an irregular matrix, has one row of 114K "
                "entries in 117K rows)")
REGULAR_RULE_STD = "irregular where the row lengths' std exceeds their mean (this CSV has no longest row)"


def is_regular(r):
    """003's grouping of matrices by their rows' lengths (REGULAR_RULE); CSVs without the longest
    row (nnz_row_max, newer than them) by the spread alone (REGULAR_RULE_STD)."""
    if r.get("nnz_row_max"):
        return r["nnz_row_max"] <= 4096 and r["nnz_row_max"] <= 100 * r["nnz_row_mean"]
    return r["nnz_row_std"] <= r["nnz_row_mean"]


def regular_rule(rows):
    """The rule is_regular applies to these rows."""
    return REGULAR_RULE if any(r.get("nnz_row_max") for r in rows) else REGULAR_RULE_STD


# Series colours and markers: tab10's colours, each with its own marker, so that no two series of
# a plot share both (at most ten series a plot).
COLORS = plt.get_cmap("tab10").colors
MARKERS = "osD^v<>ph*"
HATCHES = ["", "//", "..", "xx", "\\\\", "--", "++", "oo", "||", "**"]


def style(i):
    return dict(color=COLORS[i % 10], marker=MARKERS[i % 10])


def value_ticks(ax, values, log2=False):
    """Ticks at the measured values (threads, block sizes), written as integers."""
    vs = sorted({int(v) for v in values})
    if log2:
        ax.set_xscale("log", base=2)
    ax.set_xticks(vs)
    ax.set_xticklabels([str(v) for v in vs])
    ax.minorticks_off()


def lines_vs(rows, x, y, group, title, ylabel, out, name, written, ideal=None, named=6, log_y=False,
             value=None):
    """y against x for one kernel variant over the suite: the median over the matrices with the
    quartiles shaded, and the `named` largest matrices (by nnz) as lines of their own. value(r), when
    given, replaces r[y] (a quantity the CSV does not hold)."""
    series, info = series_per_matrix(rows, x, group, value or (lambda r: r[y]))
    if not series:
        return
    xs = sorted({v for s in series.values() for v in s})
    fig, ax = plt.subplots(figsize=(8, 5))
    if len(series) > named:
        med, lo, hi = [], [], []
        for v in xs:
            vals = sorted(s[v] for s in series.values() if v in s)
            q = statistics.quantiles(vals, n=4) if len(vals) > 1 else [vals[0]] * 3
            lo.append(q[0]), med.append(statistics.median(vals)), hi.append(q[2])
        ax.fill_between(xs, lo, hi, color="0.85", label=f"quartiles over {len(series)} matrices")
        ax.plot(xs, med, color="black", lw=2.5, label="median")
    shown = sorted(series, key=lambda m: -info[m]["nnz"])[:named]
    for i, m in enumerate(sorted(shown, key=lambda m: list(series).index(m))):
        s = series[m]
        pts = sorted(s)
        ax.plot(pts, [s[v] for v in pts], lw=1.2, ms=4, label=display_name(info[m]), **style(i))
    if ideal:
        ax.plot(xs, [ideal(v) for v in xs], "k--", lw=1, label="ideal")
    value_ticks(ax, xs, log2=x == "threads" or x == "block_size")
    values = [v for s in series.values() for v in s.values() if v > 0]
    if log_y and values and max(values) > 30 * min(values):  # log only where the values span decades
        ax.set_yscale("log")
        ax.yaxis.set_minor_formatter(matplotlib.ticker.LogFormatter(labelOnlyBase=False, minor_thresholds=(2, 0.5)))
    ax.set_xlabel(x.replace("_", " "))
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5))
    save(fig, out, name, written)


def series_per_matrix(rows, x, group, value):
    """Per matrix, value(r) against r[x] over the usable SpMV rows where group(r) holds, the best at
    each x (value None: left out), for the matrices with two points or more; and a row of each."""
    series, info = defaultdict(dict), {}
    for r in rows:
        if usable(r) and r["k"] == 1 and group(r):
            v = value(r)
            if v is None:
                continue
            m, xv = r["matrix"], r[x]
            info[m] = r
            if xv not in series[m] or v > series[m][xv]:
                series[m][xv] = v
    return {m: s for m, s in series.items() if len(s) >= 2}, info


def pages_of(items, size):
    """items in pages of `size`."""
    return [items[p:p + size] for p in range(0, len(items), size)]


def page_file(name, n, pages):
    """name.png, or name_N.png where there are several pages."""
    return name.replace(".png", f"_{n}.png") if pages > 1 else name


def lines_per_matrix(rows, x, y, group, title, ylabel, out, name, written, page=10, ideal=None):
    """y against x for one kernel variant, a line per matrix, ten matrices a page (files name_1.png,
    name_2.png, ...; name.png where one page holds them): the course reports' per-matrix curves at
    every setting measured. A value of 0 (a ratio the CSV could not form) is left out."""
    series, info = series_per_matrix(rows, x, group, lambda r: r[y] or None)
    ms = list(series)
    if not ms:
        return
    xs = sorted({v for m in ms for v in series[m]})
    pages = pages_of(ms, page)
    for n, part in enumerate(pages, 1):
        fig, ax = plt.subplots(figsize=(8, 5))
        for i, m in enumerate(part):
            pts = sorted(series[m])
            ax.plot(pts, [series[m][v] for v in pts], lw=1.2, ms=4, label=display_name(info[m]), **style(i))
        if ideal:
            ax.plot(xs, [ideal(v) for v in xs], "k--", lw=1, label="ideal")
        value_ticks(ax, xs, log2=x in ("threads", "block_size"))
        ax.set_xlabel(x.replace("_", " "))
        ax.set_ylabel(ylabel)
        ax.set_title(title + (f" ({n}/{len(pages)})" if len(pages) > 1 else ""))
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5))
        save(fig, out, page_file(name, n, len(pages)), written)


def grouped_bars(matrices, series, value, title, ylabel, out, name, written, log=True, page=10, names=None,
                 line=None):
    """Bars of value(matrix, series) grouped per matrix, in pages of `page` matrices (files
    name_1.png, name_2.png, ... when more than one page); at most ten series, each with its own
    colour and hatch. names: matrix -> label (synthetic ones marked); line: a horizontal
    reference (value, label). A bar without a value (not run, failed, or too noisy to use) is
    marked x on the axis, not left out silently; a log axis labels its ticks at 1, 2 and 5 of
    each decade (of each decade alone past three)."""
    if not matrices or not series:
        return
    series = series[:10]
    pages = pages_of(matrices, page)
    for n, ms in enumerate(pages, 1):
        fig, ax = plt.subplots(figsize=(min(13, max(6.5, 0.16 * len(ms) * len(series) + 3)), 4.6))
        w = 0.8 / len(series)
        missing, shown = [], []
        for i, k in enumerate(series):
            vals = [value(m, k) for m in ms]
            missing += [j + i * w for j, v in enumerate(vals) if not v or v <= 0]
            shown += [v for v in vals if v and v > 0]
            ax.bar([j + i * w for j in range(len(ms))], [v if v and v > 0 else 0 for v in vals], w, label=k,
                   color=COLORS[i % 10], hatch=HATCHES[i % 10], edgecolor="white", linewidth=0.3)
        if missing:
            ax.plot(missing, [0.02] * len(missing), "x", color="dimgray", ms=5, transform=ax.get_xaxis_transform(),
                    label="no usable time (not run, failed or noisy)")
        ax.set_xticks([j + 0.4 - w / 2 for j in range(len(ms))])
        ax.set_xticklabels([names(m) if names else m for m in ms], rotation=45, ha="right", fontsize=8)
        if line:
            ax.axhline(line[0], color="black", lw=1, ls="--", label=line[1])
        if log and shown:
            ax.set_yscale("log")
            decades = math.log10(max(shown) / min(shown)) if min(shown) > 0 else 0
            ax.yaxis.set_major_locator(matplotlib.ticker.LogLocator(base=10, subs=(1.0,) if decades > 3 else (1.0, 2.0, 5.0)))
            ax.yaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}"))
            ax.yaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        ax.set_ylabel(ylabel)
        ax.set_title(title + (f" ({n}/{len(pages)})" if len(pages) > 1 else ""))
        ax.grid(axis="y", alpha=0.3)
        ax.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.01, 0.5))
        save(fig, out, page_file(f"{name}.png", n, len(pages)), written)


def serial_times(rows):
    """The seeds' speedup reference, T_serial of the same format: per (matrix, format, precision)
    the fastest checked serial kernel of that format (csr; ell: padded or row lengths; hll: its best
    hack; csr5), k = 1."""
    t = {}
    for r in rows:
        if r["backend"] == "serial" and usable(r) and r["k"] == 1 and not is_auto(r) and r["time_median_s"] > 0:
            key = (r["matrix"], r["format"], r["precision"])
            t[key] = min(t.get(key, math.inf), r["time_median_s"])
    return t


def same_format_speedup(serial):
    """value(r) for lines_vs: T_serial(same format) / T(r), or None where the format has no serial
    row. CSR rows take the CSV's own speedup column (over the serial CSR of their run)."""
    def value(r):
        if r["format"] == "csr" and r.get("speedup", 0) > 0:
            return r["speedup"]
        s = serial.get((r["matrix"], r["format"], r["precision"]))
        return s / r["time_median_s"] if s and r["time_median_s"] > 0 else None
    return value
