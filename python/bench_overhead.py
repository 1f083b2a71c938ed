"""The cost of one Python call plan.multiply(x, y) over the C++ plan's own product, on a small
matrix where that overhead is visible (target: <= 5 us a call).

    PYTHONPATH=build/python python3 python/bench_overhead.py [--rows 100 --nnz 500 --calls 100000]

Python: N calls of plan.multiply(x, y) timed with time.perf_counter (argument checks, the GIL
released and taken again, x copied into the plan and y out of it, the product). C++: the same plan's
Plan::time_runs(N) / N (products only, on the resident x). Best of --repeats for each.
"""
import argparse
import time

import numpy as np
import scipy.sparse

import spmv


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=100)
    ap.add_argument("--nnz", type=int, default=500)
    ap.add_argument("--calls", type=int, default=100_000)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--backend", default="omp")
    ap.add_argument("--threads", type=int, default=0)
    args = ap.parse_args()

    n = args.rows
    a = scipy.sparse.random(n, n, density=args.nnz / (n * n), format="csr", random_state=1)
    plan = spmv.Plan(a, backend=args.backend, threads=args.threads, products=args.calls)
    x = np.random.default_rng(1).uniform(-1, 1, n)
    y = np.empty(n)
    multiply = plan.multiply
    for _ in range(1000):  # warm up: threads started, caches filled
        multiply(x, y)

    py_call, cpp_product = float("inf"), float("inf")
    for _ in range(args.repeats):
        t0 = time.perf_counter()
        for _ in range(args.calls):
            multiply(x, y)
        py_call = min(py_call, (time.perf_counter() - t0) / args.calls)
        cpp_product = min(cpp_product, plan.time_runs(args.calls) / args.calls)

    overhead = py_call - cpp_product
    print(f"matrix {n}x{n}, {a.nnz} nnz; plan {plan.backend}: {plan.describe()}")
    print(f"python plan.multiply(x, y): {py_call * 1e6:.3f} us/call")
    print(f"C++ Plan::time_runs:        {cpp_product * 1e6:.3f} us/product")
    print(f"overhead per call:          {overhead * 1e6:.3f} us (target <= 5 us): "
          f"{'ok' if overhead <= 5e-6 else 'OVER'}")


if __name__ == "__main__":
    main()
