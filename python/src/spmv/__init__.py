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
           "default_backend", "rcm", "read", "settings"]


def read(path, precision="double"):
    """Reads a Matrix Market file (.mtx, .mtx.gz) or a binary cache into a Matrix.

        A = spmv.read("bcsstk16.mtx.gz")         # A.shape, A.nnz, A @ x, A.to_scipy()
        F = spmv.read("bcsstk16.mtx.gz", precision="single")

    precision "single" or "mixed" reads the values straight into float32 (half their memory; for
    plans in those precisions): a value beyond float32's range is refused with its file:line; a
    malformed file is a spmv.ParseError naming the file and line.
    """
    path = os.fspath(path)
    if not os.path.exists(path):
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), path)
    return _spmv.read(path, precision)


def rcm(a):
    """Reverse Cuthill-McKee of a square matrix (a Matrix or a scipy.sparse matrix): (order,
    position), int32 arrays; order[i] is the original index of new index i, position its inverse.

        order, position = spmv.rcm(A)
        B = A[order][:, order]                  # the renumbered matrix (scipy), banded
        x_new = x[order]; y = np.empty_like(y_new); y[order] = y_new
    """
    return _spmv.rcm(as_matrix(a))


def _index_array(a, dtype, name):
    """a as a contiguous array of dtype, refusing values the narrower type would change."""
    out = np.ascontiguousarray(a, dtype=dtype)
    if out.dtype != np.asarray(a).dtype and not np.array_equal(out, a):
        raise ValueError(f"{name} does not fit in {np.dtype(dtype).name}")
    return out


def as_matrix(a):
    """A Matrix from a Matrix (itself), a real scipy.sparse matrix/array of any format, or a
    cupyx.scipy.sparse matrix (copied to the host: a plan uploads its own copy).

    float32 data stays float32 (held without a copy where already CSR): such a matrix plans in
    single or mixed precision. Other data becomes float64.
    """
    if isinstance(a, Matrix):
        return a
    if type(a).__module__.startswith("cupyx.") and hasattr(a, "get"):  # a CuPy sparse matrix
        a = a.get()
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


class _PlanFacts:
    __slots__ = ("on_device", "rows", "cols", "k", "single", "col_major", "typestr")

    def __init__(self, *values):
        for name, v in zip(self.__slots__, values):
            setattr(self, name, v)


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
    transpose: a plan of A^T (plan.T gives it too); reorder: "rcm" renumbers a square matrix once
    (reverse Cuthill-McKee) and multiplies in that numbering, x and y staying in A's (spmv.rcm(A)
    gives the permutation, for iterating in the new numbering); "auto" (the default) lets the
    planner (kernel "auto") do so where the products expected repay it; "none" never. Keywords beyond these are the kernels'
    settings, as the command line's: threads=4 (0: every core), block_size=256, hack=32,
    subwarp=8, variant="dynamic:scalar", ...; spmv.settings() lists them with their valid values
    and the kernels that take each (a kernel ignores those it does not take). The plan holds the
    matrix it was made from.
    """

    def __init__(self, a, backend=None, kernel="auto", k=1, products=100, precision="double", transpose=False,
                 layout="row", reorder="auto", **settings):
        a = as_matrix(a)
        super().__init__(a, backend, kernel, k, products, precision, transpose, layout, reorder, settings)
        self._made_with = dict(a=a, backend=self.backend, kernel=kernel, k=k, products=products, precision=precision,
                               transpose=not transpose, layout=layout, reorder=reorder, **settings)
        # What a product on GPU arrays checks, read once (each property is a call into the module).
        rows, cols = self.shape
        single = self.precision == "single"
        self._gpu = _PlanFacts(self.on_device, rows, cols, self.k, single, self.k > 1 and self.layout == "col",
                               "<f4" if single else "<f8")

    def multiply(self, x, y, alpha=1.0, beta=0.0, stream=None):
        """y = alpha * A @ x + beta * y in y's own memory (beta = 0 never reads y).

        NumPy arrays: float64 (or both float32), shape (cols,) or (cols, k), C-ordered (Fortran for a
        plan of layout "col"). GPU arrays (CuPy, PyTorch CUDA tensors, anything with
        __cuda_array_interface__ or a CUDA __dlpack__), for a plan on the GPU: used in place, of
        the plan's dtype, queued on `stream` (a cupy/torch stream or a cudaStream_t as an integer;
        default: the array library's current stream) without waiting for it.
        """
        gx, gy = _on_gpu(x), _on_gpu(y)
        if gx != gy:
            raise ValueError("x and y must both be GPU arrays (or both NumPy arrays)")
        if gx:
            return _device_multiply(self, x, y, alpha, beta, stream)
        return super().multiply(x, y, alpha, beta)

    def __matmul__(self, x):
        """A @ x: a new array of the kind x is (NumPy in, NumPy out; CuPy in, CuPy out on x's device;
        a PyTorch tensor in, one out; other GPU arrays: CuPy out)."""
        if _on_gpu(x):
            return _device_matmul(self, x)
        return super().__matmul__(_real(x, "plan @ x"))

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


# ---- GPU arrays ----------------------------------------------------------------------------
# Each call reads an array's interface once and checks it with plain comparisons: CuPy builds its
# __cuda_array_interface__ anew at each access and PyTorch's is Python code, so the reading is
# most of what a call costs beside the product (bench_gpu_arrays.py measures it).

_CUDA_DLPACK_DEVICES = (2, 3, 13)  # kDLCUDA, kDLCUDAHost, kDLCUDAManaged


def _on_gpu(a):
    """Whether a is a GPU array: a PyTorch CUDA tensor, anything with __cuda_array_interface__
    (CuPy, Numba), or a DLPack array on a CUDA device (JAX, ...)."""
    module = type(a).__module__
    if module.startswith("torch"):  # torch.Tensor and its subclasses (nn.Parameter)
        return a.is_cuda
    if module == "cupy" or module == "numpy":  # the common cases, without building an interface
        return module == "cupy"
    if hasattr(a, "__cuda_array_interface__"):
        return True
    try:
        return hasattr(a, "__dlpack_device__") and a.__dlpack_device__()[0] in _CUDA_DLPACK_DEVICES
    except Exception:  # noqa: BLE001 - a __dlpack_device__ that cannot answer: not a GPU array to us
        return False


def _library(a):
    return type(a).__module__.split(".")[0]


_modules = {}


def _module(name):
    """An array library's module, imported once (an import statement per call costs a lookup)."""
    m = _modules.get(name)
    if m is None:
        import importlib
        m = _modules[name] = importlib.import_module(name)
    return m


class _CudaArray:
    """What the product needs of a GPU array: pointer, shape, element type, order, the stream its
    library works on (PyTorch's read from the tensor; others' from __cuda_array_interface__;
    DLPack-only arrays through CuPy's view of them, no copy)."""

    __slots__ = ("array", "view", "name", "ptr", "readonly", "shape", "typestr", "strides", "stream")

    def __init__(self, a, name):
        self.array = self.view = a
        self.name = name
        module = type(a).__module__
        if module == "cupy":  # its own attributes: no interface dict built
            self.ptr, self.readonly, self.shape = a.data.ptr, False, a.shape
            self.typestr, self.strides = a.dtype.str, a.strides
            self.stream = _module("cupy").cuda.get_current_stream().ptr
            return
        if module.startswith("torch"):
            torch = _module("torch")
            self.ptr, self.readonly, self.shape = a.data_ptr(), False, tuple(a.shape)
            self.typestr = {torch.float64: "<f8", torch.float32: "<f4"}.get(a.dtype, str(a.dtype))
            self.strides = tuple(st * a.element_size() for st in a.stride())
            self.stream = torch.cuda.current_stream(a.device).cuda_stream
            return
        cai = getattr(a, "__cuda_array_interface__", None)
        if cai is None:
            try:
                cupy = _module("cupy")
            except ImportError:
                raise TypeError(f"{name} is a DLPack GPU array ({type(a).__name__}): spmv reads those through "
                                "CuPy, which is not installed; pass a CuPy array or a PyTorch tensor") from None
            self.view = cupy.from_dlpack(a)
            cai = self.view.__cuda_array_interface__
            s = cupy.cuda.get_current_stream().ptr
        else:
            s = cai.get("stream")
            s = 0 if s in (None, 1) else s  # 1: the legacy default stream
        self.ptr, self.readonly = cai["data"]
        self.shape = tuple(cai["shape"])
        self.typestr = cai["typestr"]
        self.strides = cai.get("strides")
        self.stream = s

    def check(self, plan, n, facts):
        k, col_major, typestr = facts.k, facts.col_major, facts.typestr
        shape = self.shape
        if shape != ((n,) if k == 1 else (n, k)) and not (k == 1 and shape == (n, 1)):
            raise ValueError(f"{self.name} must have shape {(n,) if k == 1 else (n, k)}, got {shape}")
        if self.typestr != typestr:
            got = np.dtype(self.typestr).name if self.typestr[1:2] in "fiuc" else self.typestr
            raise ValueError(f"{self.name} is {got}, the plan's vectors are {plan.dtype} "
                             f"(precision {plan.precision!r}): convert it (.astype) or plan in another precision")
        st, item = self.strides, int(typestr[2:])
        if len(shape) == 1:
            ok = st is None or tuple(st) == (item,)
        elif shape[1] == 1:
            ok = st is None or st[0] == item
        elif st is None:  # C-contiguous
            ok = not col_major
        else:
            ok = tuple(st) == ((item, item * shape[0]) if col_major else (item * shape[1], item))
        if not ok:
            raise ValueError(f"{self.name} must be Fortran-ordered (column-major) for a plan of layout 'col'"
                             if col_major else
                             f"{self.name} must be C-contiguous (row-major), or use a plan of layout 'col' "
                             "for Fortran order")


def _stream_int(stream, x):
    """A cudaStream_t as an integer: the one given (an int, a CuPy or a PyTorch stream), else the one
    the array's library works on."""
    if stream is None:
        return x.stream
    if isinstance(stream, int):
        return stream
    for attr in ("ptr", "cuda_stream", "handle"):
        if hasattr(stream, attr):
            return int(getattr(stream, attr))
    raise TypeError(f"stream must be an int (cudaStream_t), a CuPy or a PyTorch stream, got {type(stream).__name__}")


def _require_device_plan(plan):
    if not plan._gpu.on_device:
        raise ValueError(f"x or y is a GPU array, but this plan runs on backend {plan.backend!r}: make the plan with "
                         "backend='cuda', or pass NumPy arrays")


def _device_multiply(plan, x, y, alpha, beta, stream):
    _require_device_plan(plan)
    xs = _CudaArray(x, "x")
    ys = _CudaArray(y, "y")
    f = plan._gpu
    xs.check(plan, f.cols, f)
    ys.check(plan, f.rows, f)
    if ys.readonly:
        raise ValueError("y is read-only")
    item = 4 if f.single else 8
    if xs.ptr < ys.ptr + f.rows * f.k * item and ys.ptr < xs.ptr + f.cols * f.k * item:
        raise ValueError("x and y must not overlap")
    plan._multiply_device(xs.ptr, f.cols * f.k, ys.ptr, f.rows * f.k, f.single, alpha, beta, _stream_int(stream, xs))


def _device_matmul(plan, x):
    """plan @ x on a GPU array: x checked, y made (beside x, in x's library) and written in one call;
    y, new, needs none of multiply's checks."""
    _require_device_plan(plan)
    f = plan._gpu
    xs = _CudaArray(x, "x")
    lib = _library(x)
    if xs.typestr != f.typestr:  # a converted copy, in x's own library
        if lib == "torch":
            x = x.to(_torch_dtype(plan.dtype))
        elif hasattr(xs.view, "astype"):
            x = xs.view.astype(plan.dtype)
        else:
            raise ValueError(f"x is {xs.typestr}, the plan's vectors are {plan.dtype}: convert it first")
        xs = _CudaArray(x, "x")
    xs.check(plan, f.cols, f)
    shape = (f.rows,) if len(xs.shape) == 1 else (f.rows, xs.shape[1])
    col_major = f.col_major
    if lib == "torch":
        torch = _module("torch")
        y = torch.empty(shape[::-1] if col_major else shape, dtype=_torch_dtype(plan.dtype), device=x.device)
        y = y.T if col_major else y
        py = y.data_ptr()
    else:
        cupy = _module("cupy")
        view = xs.view
        device = view.data.device_id if type(view).__module__ == "cupy" else \
            cupy.cuda.runtime.pointerGetAttributes(xs.ptr).device
        order = "F" if col_major else "C"
        if device == cupy.cuda.runtime.getDevice():
            y = cupy.empty(shape, dtype=np.float32 if f.single else np.float64, order=order)
        else:
            with cupy.cuda.Device(device):  # y beside x
                y = cupy.empty(shape, dtype=np.float32 if f.single else np.float64, order=order)
        py = y.data.ptr
    n = f.rows * f.k
    plan._multiply_device(xs.ptr, f.cols * f.k, py, n, f.single, 1.0, 0.0, xs.stream)
    if lib not in ("torch", "cupy") and xs.view is not x:  # a DLPack array: back to its own kind
        import importlib
        for mod in (lib + ".numpy", lib):
            try:
                return importlib.import_module(mod).from_dlpack(y)
            except (ImportError, AttributeError):
                continue
    return y


def _torch_dtype(dtype):
    torch = _module("torch")
    return torch.float32 if np.dtype(dtype) == np.float32 else torch.float64


def _real(x, what):
    """x as a NumPy array of real numbers; complex (whose imaginary part a cast would drop), object and
    text arrays are refused."""
    x = np.asarray(x)
    if x.dtype.kind not in "fiub":
        raise TypeError(f"{what}: x of dtype {x.dtype} (the products are real: float64 or float32)")
    return x


def _vector_product(plan, x, what):
    x = x if _on_gpu(x) else _real(x, what)
    if plan.k != 1:
        raise ValueError(f"{what}: a plan of k={plan.k} right-hand sides multiplies (cols, {plan.k}) arrays: "
                         "use plan @ X, or a plan of k=1")
    if x.ndim == 2 and x.shape[1] == 1:
        return (plan @ x[:, 0]).reshape(-1, 1)
    return plan @ x


def _matrix_product(plan, X):
    if _on_gpu(X):
        if X.ndim != 2 or plan.k != X.shape[1]:
            raise ValueError(f"matmat on a GPU array: X of shape (cols, {plan.k}) for a plan of k={plan.k}, "
                             f"got {tuple(X.shape)}")
        return plan @ X
    X = _real(X, "matmat")
    if X.ndim != 2:
        raise ValueError(f"matmat: X must be 2-d (cols, j), got shape {X.shape}")
    if plan.k == X.shape[1] and plan.k > 1:
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

        import scipy.sparse.linalg as sla
        op = spmv.aslinearoperator(spmv.Plan(A))
        x, info = sla.cg(op, b)                  # A symmetric positive definite
        x = sla.lsqr(op, b)[0]                   # least squares: rmatvec runs A^T through plan.T
    """
    from scipy.sparse.linalg import LinearOperator
    if not isinstance(plan, Plan):
        raise TypeError(f"aslinearoperator: expected a spmv.Plan, got {type(plan).__name__}")
    return LinearOperator(plan.shape, matvec=plan.matvec, rmatvec=plan.rmatvec, matmat=plan.matmat,
                          rmatmat=plan.rmatmat, dtype=plan.dtype)


def _matrix_matmul(self, x):
    """A @ x for a Matrix: a plan made for this one product (planning costs more than the product:
    make a spmv.Plan for products in a loop)."""
    x = _real(x, "Matrix @ x")
    if x.ndim not in (1, 2):
        raise ValueError(f"Matrix @ x: x must be 1-d (cols,) or 2-d (cols, k), got shape {x.shape}")
    precision = "mixed" if self.dtype == np.float32 else "double"
    x = np.ascontiguousarray(x, dtype=np.float64)
    if x.ndim == 2 and x.shape[1] == 1:  # one column: the SpMV, as a column
        return (Plan(self, products=1, precision=precision) @ x[:, 0]).reshape(-1, 1)
    k = 1 if x.ndim == 1 else x.shape[1]
    return Plan(self, k=k, products=1, precision=precision) @ x


Matrix.__matmul__ = _matrix_matmul
