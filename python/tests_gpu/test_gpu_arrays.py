"""GPU arrays through a CUDA plan (run on a machine with a GPU, CuPy and PyTorch; without them these
fail, as the C++ GPU tests do): CuPy in, CuPy out; PyTorch CUDA tensors in, tensors out; in place
with alpha and beta; on the library's current stream and on one given; SpMM in either order;
float32; the transposed plan; cupyx's cg on our plan as a LinearOperator; the errors that name
the argument."""
import os
from pathlib import Path

import numpy as np
import pytest
import scipy.io
import scipy.sparse

import spmv

import cupy  # noqa: E402 - the GPU machine's; an import error fails the run
import torch  # noqa: E402

SHARED = Path(os.environ.get("SPMV_SHARED_MATRICES", Path(__file__).resolve().parents[2] / "tests" / "data" /
                             "suitesparse"))


def matrix(name="bcsstk16"):
    import gzip
    with gzip.open(SHARED / f"{name}.mtx.gz", "rb") as f:
        return scipy.sparse.csr_matrix(scipy.io.mmread(f), dtype=np.float64)


def close(got, want, rtol=1e-12):
    np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * np.abs(want).max())


def test_cupy_in_cupy_out():
    a = matrix()
    plan = spmv.Plan(a, backend="cuda")
    assert plan.on_device
    xh = np.linspace(-1, 1, a.shape[1])
    x = cupy.asarray(xh)
    y = plan @ x
    assert isinstance(y, cupy.ndarray) and y.shape == (a.shape[0],) and y.device == x.device
    close(cupy.asnumpy(y), a @ xh)
    y0 = cupy.ones(a.shape[0])
    plan.multiply(x, y0, alpha=2.0, beta=0.5)  # in place
    close(cupy.asnumpy(y0), 2.0 * (a @ xh) + 0.5)
    # On a stream of the caller's: CuPy's current one, and one given.
    s = cupy.cuda.Stream(non_blocking=True)
    with s:
        y1 = plan @ x
    s.synchronize()
    close(cupy.asnumpy(y1), a @ xh)
    y2 = cupy.zeros(a.shape[0])
    plan.multiply(x, y2, stream=s)
    s.synchronize()
    close(cupy.asnumpy(y2), a @ xh)
    # The transposed plan, and float32.
    close(cupy.asnumpy(plan.T @ cupy.asarray(np.ones(a.shape[0]))), a.T @ np.ones(a.shape[0]))
    f = spmv.Plan(a, backend="cuda", precision="single")
    yf = f @ x.astype(cupy.float32)
    assert yf.dtype == cupy.float32
    close(cupy.asnumpy(yf), a @ xh, rtol=1e-5)


def test_cupy_spmm_both_orders():
    a = matrix()
    X = np.arange(a.shape[1] * 4, dtype=np.float64).reshape(a.shape[1], 4) / a.shape[1]
    row = spmv.Plan(a, backend="cuda", k=4)
    col = spmv.Plan(a, backend="cuda", k=4, layout="col")
    yr = row @ cupy.asarray(X)
    yc = col @ cupy.asfortranarray(cupy.asarray(X))
    assert yr.flags.c_contiguous and yc.flags.f_contiguous
    close(cupy.asnumpy(yr), a @ X)
    close(cupy.asnumpy(yc), a @ X)
    with pytest.raises(ValueError, match="Fortran-ordered"):
        col.multiply(cupy.asarray(X), cupy.empty((a.shape[0], 4)))


def test_torch_tensors():
    a = matrix()
    plan = spmv.Plan(a, backend="cuda")
    xh = np.linspace(0, 1, a.shape[1])
    x = torch.tensor(xh, device="cuda")
    y = plan @ x
    assert isinstance(y, torch.Tensor) and y.is_cuda and y.dtype == torch.float64
    close(y.cpu().numpy(), a @ xh)
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        y2 = torch.zeros(a.shape[0], dtype=torch.float64, device="cuda")
        plan.multiply(x, y2, 1.0, 0.0)
    s.synchronize()
    close(y2.cpu().numpy(), a @ xh)


def test_errors_name_the_argument():
    a = matrix()
    gpu = spmv.Plan(a, backend="cuda")
    cpu = spmv.Plan(a, backend="omp")
    x = cupy.ones(a.shape[1])
    with pytest.raises(ValueError, match="runs on backend 'omp'"):
        cpu.multiply(x, cupy.empty(a.shape[0]))
    with pytest.raises(ValueError, match="x is float32, the plan's vectors are float64"):
        gpu.multiply(x.astype(cupy.float32), cupy.empty(a.shape[0]))
    with pytest.raises(ValueError, match=r"y must have shape \(4884,\)"):
        gpu.multiply(x, cupy.empty(7))
    with pytest.raises(ValueError, match="both be GPU arrays"):
        gpu.multiply(x, np.empty(a.shape[0]))


def test_cupyx_cg_on_our_operator():
    import cupyx.scipy.sparse.linalg as csla
    a = matrix()
    plan = spmv.Plan(a, backend="cuda")
    op = csla.LinearOperator(a.shape, matvec=plan.matvec, dtype=np.float64)
    b = cupy.asarray(a @ np.ones(a.shape[1]))
    import inspect
    tol = "rtol" if "rtol" in inspect.signature(csla.cg).parameters else "tol"
    x, info = csla.cg(op, b, maxiter=20000, **{tol: 1e-10})
    assert info == 0
    np.testing.assert_allclose(cupy.asnumpy(x), 1.0, rtol=1e-5)
    # cupyx's aslinearoperator takes the plan as it is (shape, dtype, matvec, rmatvec through plan.T).
    op2 = csla.aslinearoperator(plan)
    x2, info2 = csla.cg(op2, b, maxiter=20000, **{tol: 1e-10})
    assert info2 == 0
    np.testing.assert_allclose(cupy.asnumpy(x2), 1.0, rtol=1e-5)
    r = np.linspace(-1, 1, a.shape[0])
    close(cupy.asnumpy(op2.rmatvec(cupy.asarray(r))), a.T @ r)


class DLPackOnly:
    """A GPU array that offers DLPack alone (as JAX's and others' do)."""

    def __init__(self, a):
        self.a = a

    def __dlpack__(self, **kwargs):
        return self.a.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self.a.__dlpack_device__()


def test_plans_from_cupy_sparse_and_dlpack_arrays():
    """spmv.Plan(cupyx csr_matrix) (through the host); a DLPack-only GPU array in (read through CuPy,
    no copy), CuPy out where its library has no from_dlpack; in place into a CuPy y."""
    import cupyx.scipy.sparse as csp
    a = matrix()
    plan = spmv.Plan(csp.csr_matrix(a), backend="cuda")
    xh = np.linspace(-1, 1, a.shape[1])
    x = cupy.asarray(xh)
    close(cupy.asnumpy(plan @ x), a @ xh)
    y = plan @ DLPackOnly(x)
    assert isinstance(y, cupy.ndarray)
    close(cupy.asnumpy(y), a @ xh)
    y2 = cupy.zeros(a.shape[0])
    plan.multiply(DLPackOnly(x), y2)
    close(cupy.asnumpy(y2), a @ xh)


class InterfaceOnly:
    """A GPU array that offers __cuda_array_interface__ alone (as Numba's and others' do)."""

    def __init__(self, a):
        self.a = a
        self.__cuda_array_interface__ = a.__cuda_array_interface__


def test_cuda_array_interface_arrays():
    """An array known by its __cuda_array_interface__ alone: in place, and plan @ x into a CuPy
    array on x's device."""
    a = matrix()
    plan = spmv.Plan(a, backend="cuda", k=3, layout="col")
    X = np.asfortranarray(np.random.default_rng(3).uniform(-1, 1, (a.shape[1], 3)))
    x = cupy.asfortranarray(cupy.asarray(X))
    y = plan @ InterfaceOnly(x)
    assert isinstance(y, cupy.ndarray) and y.flags.f_contiguous and y.device == x.device
    close(cupy.asnumpy(y), a @ X)
    y2 = cupy.asfortranarray(cupy.ones((a.shape[0], 3)))
    plan.multiply(InterfaceOnly(x), InterfaceOnly(y2), alpha=-1.0, beta=2.0)
    close(cupy.asnumpy(y2), 2.0 - a @ X)
