"""Sparse matrix-vector products (OpenMP on CPUs, CUDA on NVIDIA GPUs) from Python.

    import numpy as np, spmv
    A = spmv.read("matrix.mtx.gz")       # or any scipy.sparse matrix
    plan = spmv.Plan(A, backend="omp")   # prepared once (format, threads chosen for A) ...
    y = plan @ np.ones(A.shape[1])       # ... applied many times
    plan.multiply(x, y, alpha=2.0, beta=1.0)  # y = 2 A x + y, in y's own buffer

Built with the C++ library (CMake option SPMV_BUILD_PYTHON); import it with
PYTHONPATH=<build>/python.
"""
import errno
import os

import numpy as np

from . import _spmv
from ._spmv import Error, Matrix, ParseError, Unsupported, default_backend, settings

__version__ = _spmv.version()
__all__ = ["Error", "Matrix", "ParseError", "Plan", "Unsupported", "as_matrix",
           "default_backend", "read", "settings"]


def read(path, precision="double"):
    """Reads a Matrix Market file (.mtx, .mtx.gz) or a binary cache into a Matrix.

    precision "single" or "mixed" reads the values straight into float32 (half their memory; for
    plans in those precisions): a value beyond float32's range is refused with its file:line.
    """
    path = os.fspath(path)
    if not os.path.exists(path):
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), path)
    return _spmv.read(path, precision)


def _index_array(a, dtype, name):
    """a as a contiguous array of dtype, refusing values the narrower type would change."""
    out = np.ascontiguousarray(a, dtype=dtype)
    if out.dtype != np.asarray(a).dtype and not np.array_equal(out, a):
        raise ValueError(f"{name} does not fit in {np.dtype(dtype).name}")
    return out


def as_matrix(a):
    """A Matrix from a Matrix (itself) or a real scipy.sparse matrix/array of any format.

    float32 data stays float32 (held without a copy where already CSR): such a matrix plans in
    single or mixed precision. Other data becomes float64.
    """
    if isinstance(a, Matrix):
        return a
    import scipy.sparse
    if not scipy.sparse.issparse(a):
        raise TypeError(f"expected a spmv.Matrix or a scipy.sparse matrix, got {type(a).__name__}")
    if np.iscomplexobj(a.data):
        raise ValueError("complex matrices are not supported")
    a = a.tocsr()
    if not a.has_canonical_format:  # spmv::Csr wants sorted columns, no duplicates
        a = a.copy()
        a.sum_duplicates()
    rows, cols = a.shape
    return Matrix.from_csr(rows, cols, _index_array(a.indptr, np.int64, "indptr"),
                           _index_array(a.indices, np.int32, "indices"),
                           np.ascontiguousarray(a.data, dtype=np.float32 if a.data.dtype == np.float32 else np.float64))


class Plan(_spmv.Plan):
    """A matrix prepared once for products: plan @ x, plan.multiply(x, y, alpha, beta).

    backend: "omp", "cuda", "serial" or None (the fastest present); kernel: "auto" (chosen for
    the matrix) or a kernel's name; k: right-hand sides (X of shape (cols, k), row-major);
    products: how many products the plan will serve (the planner's conversion budget);
    precision: "double", "single" (float32 values, x, y and sums: plan @ x returns float32) or
    "mixed" (float32 values, float64 x, y and sums). Keywords beyond these are the kernels'
    settings, as the command line's: threads=4 (0: every core), block_size=256, hack=32,
    subwarp=8, variant="dynamic:scalar", ...; spmv.settings() lists them with their valid values
    and the kernels that take each (a kernel ignores those it does not take). The plan holds the
    matrix it was made from.
    """

    def __init__(self, a, backend=None, kernel="auto", k=1, products=100, precision="double", **settings):
        super().__init__(as_matrix(a), backend, kernel, k, products, precision, settings)
