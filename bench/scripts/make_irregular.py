#!/usr/bin/env python3
"""Irregular test matrices the generator (spmv generate) has no kind for, written as Matrix Market:
a 2D 5-point mesh with rows and columns randomly permuted (no locality left in x), and a matrix of
mostly empty rows with a few heavy ones. Usage: make_irregular.py OUTDIR [SCALE]; deterministic."""
import os
import sys

import numpy as np


def write_mtx(path, rows, cols, r, c, comment):
    v = np.random.default_rng(3).uniform(-1, 1, r.size)
    order = np.lexsort((c, r))
    with open(path, "w") as f:
        f.write(f"%%MatrixMarket matrix coordinate real general\n% spmv-generated: {comment}\n{rows} {cols} {r.size}\n")
        np.savetxt(f, np.column_stack((r[order] + 1, c[order] + 1, v[order])), fmt="%d %d %.6f")


def permuted_mesh(n, seed=1):
    """n x n grid, 5-point stencil, then P A Q with random P, Q."""
    i = np.arange(n * n)
    x, y = i % n, i // n
    r, c = [i], [i]
    for dx, dy in ((1, 0), (-1, 0), (0, 1), (0, -1)):
        ok = (x + dx >= 0) & (x + dx < n) & (y + dy >= 0) & (y + dy < n)
        r.append(i[ok])
        c.append(i[ok] + dx + dy * n)
    rng = np.random.default_rng(seed)
    p, q = rng.permutation(n * n), rng.permutation(n * n)
    return p[np.concatenate(r)], q[np.concatenate(c)]


def empty_and_heavy(rows, seed=2):
    """90% empty rows; the rest 1-8 entries, and 1 row in 1000 of them 2000-20000 entries."""
    rng = np.random.default_rng(seed)
    full = rng.random(rows) < 0.1
    lens = np.where(full, rng.integers(1, 9, rows), 0)
    heavy = full & (rng.random(rows) < 0.001)
    lens[heavy] = rng.integers(2000, 20000, heavy.sum())
    r = np.repeat(np.arange(rows), lens)
    c = np.concatenate([np.sort(rng.choice(rows, k, replace=False)) if k else np.empty(0, int) for k in lens[lens > 0]])
    return r, c


def main():
    out = sys.argv[1]
    scale = float(sys.argv[2]) if len(sys.argv) > 2 else 1.0
    os.makedirs(out, exist_ok=True)
    n = max(8, int(1000 * scale ** 0.5))
    r, c = permuted_mesh(n)
    write_mtx(f"{out}/permuted_mesh.mtx", n * n, n * n, r, c, f"5-point mesh {n}x{n}, rows and columns randomly permuted")
    rows = max(1000, int(2_000_000 * scale))
    r, c = empty_and_heavy(rows)
    write_mtx(f"{out}/empty_and_heavy.mtx", rows, rows, r, c, "90% empty rows, 1 in 1000 of the rest 2000-20000 entries")


if __name__ == "__main__":
    main()
