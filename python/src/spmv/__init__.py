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
__all__ = ["Error", "Matrix", "ParseError", "Plan", "Unsupported", "as_matrix", "aslinearoperator",
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

        plan = spmv.Plan(A)                    # A: a spmv.Matrix or any scipy.sparse matrix
        y = plan @ x                           # y = A x
        z = plan.T @ y                         # A^T y (plan.T is made once and kept)
        op = scipy.sparse.linalg.aslinearoperator(plan)   # matvec, rmatvec, matmat for scipy's solvers

    backend: "omp" (or "openmp"), "cuda" (or "gpu"), "serial", or None (the fastest present:
    spmv.default_backend()); kernel: "auto" (chosen for the matrix) or a kernel's name; k:
    right-hand sides (X of shape (cols, k), row-major); products: how many products the plan will
    serve (the planner's conversion budget); precision: "double", "single" (float32 values, x, y
    and sums: plan @ x returns float32) or "mixed" (float32 values, float64 x, y and sums);
    transpose: a plan of A^T (plan.T gives it too). Keywords beyond these are the kernels'
    settings, as the command line's: threads=4 (0: every core), block_size=256, hack=32,
    subwarp=8, variant="dynamic:scalar", ...; spmv.settings() lists them with their valid values
    and the kernels that take each (a kernel ignores those it does not take). The plan holds the
    matrix it was made from.
    """

    def __init__(self, a, backend=None, kernel="auto", k=1, products=100, precision="double", transpose=False,
                 **settings):
        a = as_matrix(a)
        super().__init__(a, backend, kernel, k, products, precision, transpose, settings)
        self._made_with = dict(a=a, backend=self.backend, kernel=kernel, k=k, products=products, precision=precision,
                               transpose=not transpose, **settings)

    @property
    def dtype(self):
        """The dtype of plan @ x: float32 for precision "single", else float64."""
        return np.dtype(np.float32 if self.precision == "single" else np.float64)

    @property
    def T(self):
        """The plan of A^T (of A, for a transposed plan), made at the first use and kept."""
        t = self.__dict__.get("_T")
        if t is None:
            t = self.__dict__["_T"] = Plan(**self._made_with)
        return t

    def matvec(self, x):
        """A @ x for a vector x of shape (cols,) or (cols, 1) (scipy's LinearOperator protocol)."""
        return _vector_product(self, x, "matvec")

    def rmatvec(self, x):
        """A^T @ x (through plan.T)."""
        return _vector_product(self.T, x, "rmatvec")

    def matmat(self, X):
        """A @ X for X of shape (cols, j): one SpMM where the plan has k = j, else column by column."""
        return _matrix_product(self, X)

    def rmatmat(self, X):
        """A^T @ X (through plan.T)."""
        return _matrix_product(self.T, X)


def _vector_product(plan, x, what):
    x = np.asarray(x)
    if plan.k != 1:
        raise ValueError(f"{what}: a plan of k={plan.k} right-hand sides multiplies (cols, {plan.k}) arrays: "
                         "use plan @ X, or a plan of k=1")
    if x.ndim == 2 and x.shape[1] == 1:
        return (plan @ x[:, 0]).reshape(-1, 1)
    return plan @ x


def _matrix_product(plan, X):
    X = np.asarray(X)
    if X.ndim != 2:
        raise ValueError(f"matmat: X must be 2-d (cols, j), got shape {X.shape}")
    if plan.k == X.shape[1]:
        return plan @ X
    if plan.k != 1:
        raise ValueError(f"matmat: X has {X.shape[1]} columns, the plan k={plan.k}")
    out = np.empty((plan.shape[0], X.shape[1]), dtype=plan.dtype)
    for j in range(X.shape[1]):
        out[:, j] = plan @ np.ascontiguousarray(X[:, j])
    return out


def aslinearoperator(plan):
    """A scipy.sparse.linalg.LinearOperator of a Plan (matvec, rmatvec through plan.T, matmat),
    for scipy's solvers: cg, gmres, lsqr, eigsh. The same as scipy.sparse.linalg.aslinearoperator(plan).
    """
    from scipy.sparse.linalg import LinearOperator
    if not isinstance(plan, Plan):
        raise TypeError(f"aslinearoperator: expected a spmv.Plan, got {type(plan).__name__}")
    return LinearOperator(plan.shape, matvec=plan.matvec, rmatvec=plan.rmatvec, matmat=plan.matmat,
                          rmatmat=plan.rmatmat, dtype=plan.dtype)


def _matrix_matmul(self, x):
    """A @ x for a Matrix: a plan made for this one product (planning costs more than the product:
    make a spmv.Plan for products in a loop)."""
    x = np.asarray(x)
    if x.ndim not in (1, 2):
        raise ValueError(f"Matrix @ x: x must be 1-d (cols,) or 2-d (cols, k), got shape {x.shape}")
    k = 1 if x.ndim == 1 else x.shape[1]
    dtype = np.float32 if self.dtype == np.float32 else np.float64
    precision = "mixed" if dtype == np.float32 else "double"
    return Plan(self, kernel="auto", k=k, products=1, precision=precision) @ np.ascontiguousarray(x, dtype=np.float64)


Matrix.__matmul__ = _matrix_matmul
