"""GPU arrays from Python on a CUDA plan, against the C++ call and CuPy's own sparse matrix:

  1. per product (N back-to-back calls, then one synchronisation; wall time / N): the kernel alone
     (Plan.time_runs, CUDA events), plan.multiply(x, y) on CuPy arrays, plan @ x (y allocated by
     CuPy), cupyx.scipy.sparse.csr_matrix @ x; target: plan @ x within 10 us of the C++ call;
  2. cupyx.scipy.sparse.linalg.cg per iteration with our plan as the LinearOperator against
     cupyx's cg on CuPy's own CSR, on a 2-D Laplacian larger than the H200's L2.

    PYTHONPATH=<build>/python python3 python/bench_gpu_arrays.py [--grid 2000] [--calls 2000]
"""
import argparse
import gzip
import os
import time
from pathlib import Path

import cupy
import cupyx.scipy.sparse as csp
import cupyx.scipy.sparse.linalg as csla
import numpy as np
import scipy.io
import scipy.sparse

import spmv


def per_call(f, calls):
    for _ in range(min(calls, 200)):
        f()
    cupy.cuda.Device().synchronize()
    best = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        for _ in range(calls):
            f()
        cupy.cuda.Device().synchronize()
        best = min(best, (time.perf_counter() - t0) / calls)
    return best


def laplacian_2d(n):
    one = scipy.sparse.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(n, n))
    eye = scipy.sparse.identity(n)
    return (scipy.sparse.kron(one, eye) + scipy.sparse.kron(eye, one)).tocsr()


def products(name, a, calls):
    plan = spmv.Plan(a, backend="cuda", products=calls)
    x = cupy.asarray(np.random.default_rng(1).uniform(-1, 1, a.shape[1]))
    y = cupy.empty(a.shape[0])
    theirs = csp.csr_matrix(a)
    kernel = min(plan.time_runs(calls) / calls for _ in range(3))
    inplace = per_call(lambda: plan.multiply(x, y), calls)
    matmul = per_call(lambda: plan @ x, calls)
    cupy_mv = per_call(lambda: theirs @ x, calls)
    # Where plan @ x's time beyond the kernel goes: the module's call alone (pointers given), and
    # CuPy's allocation of y.
    n, m, stream = a.shape[0], a.shape[1], cupy.cuda.get_current_stream().ptr
    raw = per_call(lambda: plan._multiply_device(x.data.ptr, m, y.data.ptr, n, False, 1.0, 0.0, stream), calls)
    alloc = per_call(lambda: cupy.empty(n), calls)
    np.testing.assert_allclose(cupy.asnumpy(plan @ x), cupy.asnumpy(theirs @ x), rtol=1e-10, atol=1e-10)
    print(f"{name}: {a.shape[0]} rows, {a.nnz} nonzeros; plan {plan.describe()[:70]}")
    print(f"  kernel (C++ time_runs) {kernel * 1e6:8.2f} us | plan.multiply(x, y) {inplace * 1e6:8.2f} us | "
          f"plan @ x {matmul * 1e6:8.2f} us (+{(matmul - kernel) * 1e6:.2f}) | cupyx csr @ x {cupy_mv * 1e6:8.2f} us")
    print(f"  the module's call on pointers {raw * 1e6:8.2f} us | cupy.empty(rows) {alloc * 1e6:8.2f} us")


def plan_from_cupy(a):
    """spmv.Plan(cupyx csr_matrix) copies the matrix to the host (the plan uploads its own format):
    that copy's share of making the plan."""
    theirs = csp.csr_matrix(a)
    cupy.cuda.Device().synchronize()
    t0 = time.perf_counter()
    theirs.get()
    down = time.perf_counter() - t0
    t0 = time.perf_counter()
    spmv.Plan(theirs, backend="cuda")
    made = time.perf_counter() - t0
    t0 = time.perf_counter()
    spmv.Plan(a, backend="cuda")
    host = time.perf_counter() - t0
    print(f"Plan(cupyx csr_matrix) of {a.nnz} nonzeros: {made * 1e3:.1f} ms, of which the copy to the host "
          f"{down * 1e3:.1f} ms; Plan(scipy csr_matrix) {host * 1e3:.1f} ms")


def cg(a, iters):
    b = cupy.asarray(a @ np.ones(a.shape[1]))
    plan = spmv.Plan(a, backend="cuda", products=iters)
    op = csla.LinearOperator(a.shape, matvec=plan.matvec, dtype=np.float64)
    theirs = csp.csr_matrix(a)
    import inspect
    tol = {"rtol" if "rtol" in inspect.signature(csla.cg).parameters else "tol": 1e-30}  # runs every iteration
    out = {}
    for name, A in (("ours", op), ("cupyx", theirs)):
        csla.cg(A, b, maxiter=5, **tol)  # warm up
        cupy.cuda.Device().synchronize()
        t0 = time.perf_counter()
        csla.cg(A, b, maxiter=iters, **tol)
        cupy.cuda.Device().synchronize()
        out[name] = (time.perf_counter() - t0) / iters
    print(f"cg on a {a.shape[0]}-row 2-D Laplacian ({a.nnz} nonzeros), {iters} iterations: "
          f"ours {out['ours'] * 1e6:.1f} us/iteration, cupyx on its own CSR {out['cupyx'] * 1e6:.1f} us/iteration "
          f"(ratio {out['cupyx'] / out['ours']:.2f})")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--grid", type=int, default=2000)
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--iters", type=int, default=300)
    args = ap.parse_args()
    shared = Path(os.environ.get("SPMV_SHARED_MATRICES", "../shared/matrices"))
    with gzip.open(shared / "bcsstk16.mtx.gz", "rb") as f:
        small = scipy.sparse.csr_matrix(scipy.io.mmread(f), dtype=np.float64)
    products("bcsstk16", small, args.calls)
    big = laplacian_2d(args.grid)
    products(f"laplacian_{args.grid}", big, args.calls // 4)
    plan_from_cupy(big)
    cg(big, args.iters)


if __name__ == "__main__":
    main()
