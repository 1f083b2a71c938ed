#!/usr/bin/env python3
"""Markdown tables from `spmv bench --distributed` CSVs: per source, operation and k, the time per
product by ranks (the "all" rows), its ratio to the fewest ranks', GFLOPS, the communication share,
the bytes exchanged per product, the exchange alone and the share of it the local product hides, and CG per iteration.

    python3 bench/scripts/distributed_summary.py distributed_cpu_h200_COMMIT.csv [...]
"""
import csv
import sys
from collections import defaultdict


def comm_share(r, t):
    """The product's time beyond the slowest rank's kernels alone, over it (the CSV's column where
    the kernels were not timed alone)."""
    if r.get("compute_s") is None:
        return f"{float(r['comm_share']):.2f}"
    return f"{max(0.0, t - float(r['compute_s'])) / t:.2f}"


def main(paths):
    rows = defaultdict(dict)
    for path in paths:
        with open(path, newline="") as f:
            for r in csv.DictReader(f):
                if r["rank"] != "all":
                    continue
                rows[(r["matrix"], r["backend"], r["operation"], r["k"])][int(r["ranks"])] = r
    print("| matrix | backend | op | k | ranks | time/product us | vs fewest ranks | GFLOPS | comm share | "
          "bytes exchanged | exchange alone us | hidden | CG us/iteration (product share) | check |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for (matrix, backend, op, k), by_ranks in rows.items():
        first = by_ranks[min(by_ranks)]
        for n in sorted(by_ranks):
            r = by_ranks[n]
            t = float(r["time_median_s"])
            cg = "-"
            if int(r.get("cg_iterations") or 0) > 0:
                it = float(r["cg_iteration_s"])  # the product's share: its timed median over an iteration
                cg = f"{it * 1e6:.1f} ({t / it:.2f})"
            exchange = r.get("exchange_s")
            hidden = None
            if exchange is not None and float(r["bytes_exchanged"]) > 0:  # the product beyond the slowest rank's kernels: the exchange's exposed part
                e, c = float(exchange), float(r["compute_s"])
                hidden = min(1.0, max(0.0, (e + c - t) / e)) if e > 0 else 1.0
            print(f"| {matrix} | {backend} | {'A^T x' if op == 't' else 'A x'} | {k} | {n} | {t * 1e6:.1f} | "
                  f"{t / float(first['time_median_s']):.2f} | {float(r['gflops']):.1f} | "
                  f"{comm_share(r, t)} | {float(r['bytes_exchanged']):.0f} | "
                  f"{float(exchange) * 1e6:.1f} | {'-' if hidden is None else f'{hidden:.2f}'} | {cg} | {r['check']} |"
                  if exchange is not None else
                  f"| {matrix} | {backend} | {'A^T x' if op == 't' else 'A x'} | {k} | {n} | {t * 1e6:.1f} | "
                  f"{t / float(first['time_median_s']):.2f} | {float(r['gflops']):.1f} | "
                  f"{float(r['comm_share']):.2f} | {float(r['bytes_exchanged']):.0f} | - | - | - | {r['check']} |")


if __name__ == "__main__":
    main(sys.argv[1:])
