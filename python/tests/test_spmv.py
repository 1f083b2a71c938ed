"""Tests of the Python module spmv (PYTHONPATH=<build>/python): reading against scipy.io.mmread,
products against scipy on every shared matrix, alpha/beta, k > 1, errors and lifetimes."""
import csv
import gc
import gzip
import os
import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest
import scipy.io
import scipy.sparse

import spmv

# $SPMV_SHARED_MATRICES, or ../shared/matrices beside the repository, else the subset in
# tests/data/suitesparse (as the C++ tests).
_BESIDE = Path(__file__).resolve().parents[2].parent / "shared" / "matrices"
SHARED = Path(os.environ.get("SPMV_SHARED_MATRICES")
              or (_BESIDE if (_BESIDE / "MANIFEST.tsv").exists()
                  else Path(__file__).resolve().parents[2] / "tests" / "data" / "suitesparse"))
FULL_SET = (SHARED / "MANIFEST.tsv").exists() and sum(1 for _ in open(SHARED / "MANIFEST.tsv")) > 30


def manifest():
    """(name, file) of every real (non-complex) matrix in MANIFEST.tsv; [] if there is none."""
    path = SHARED / "MANIFEST.tsv"
    if not path.exists():
        return []
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    # Complex matrices are skipped on purpose: the kernels are real-only.
    return [(r["name"], r["file"]) for r in rows if r["field"] != "complex"]


MATRICES = manifest()


def scipy_read(path):
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rb") as f:
        return scipy.sparse.csr_matrix(scipy.io.mmread(f), dtype=np.float64)


def check_product(y, a, x):
    """y == a @ x within 1e-12 of |a| @ |x|, row by row (rounding grows with the row's terms)."""
    ref = a @ x
    bound = 1e-12 * (abs(a) @ abs(x))
    assert y.shape == ref.shape
    assert np.all(np.abs(y - ref) <= bound), f"max error {np.max(np.abs(y - ref))}"


def small(rows=100, cols=80, density=0.06, seed=1):
    return scipy.sparse.random(rows, cols, density=density, format="csr", random_state=seed)


def test_manifest_count():
    assert len(MATRICES) > (60 if FULL_SET else 10), f"{len(MATRICES)} real matrices in {SHARED}/MANIFEST.tsv"


@pytest.mark.parametrize("name,file", MATRICES, ids=[m[0] for m in MATRICES])
def test_shared_matrix(name, file):
    path = SHARED / file
    a = spmv.read(path)
    s = scipy_read(path)
    assert a.shape == s.shape and a.nnz == s.nnz
    # Same structure (both sum duplicates, keep explicit zeros), values to the last bit or so.
    got = a.to_scipy()
    assert np.array_equal(got.indptr, s.indptr) and np.array_equal(got.indices, s.indices)
    np.testing.assert_allclose(got.data, s.data, rtol=1e-15, atol=0)

    x = np.random.default_rng(7).uniform(-1, 1, a.shape[1])
    plan = spmv.Plan(a, backend="omp")
    check_product(plan @ x, s, x)
    # The same from the scipy matrix itself.
    check_product(spmv.Plan(s, backend="omp", kernel="csr") @ x, s, x)


@pytest.mark.parametrize("backend", ["omp", "serial"])
def test_alpha_beta(backend):
    s = small()
    plan = spmv.Plan(s, backend=backend)
    rng = np.random.default_rng(3)
    x = rng.uniform(-1, 1, s.shape[1])
    y0 = rng.uniform(-1, 1, s.shape[0])
    y = y0.copy()
    plan.multiply(x, y, alpha=2.0, beta=-0.5)
    np.testing.assert_allclose(y, 2.0 * (s @ x) - 0.5 * y0, rtol=1e-12, atol=1e-12)
    y = np.full(s.shape[0], np.nan)  # beta = 0 never reads y
    plan.multiply(x, y)
    check_product(y, s, x)


def test_spmm_k4():
    s = small(seed=4)
    plan = spmv.Plan(s, backend="omp", k=4)
    assert plan.k == 4
    x = np.random.default_rng(5).uniform(-1, 1, (s.shape[1], 4))
    check_product(plan @ x, s, x)
    y = np.ones((s.shape[0], 4))
    plan.multiply(x, y, alpha=1.0, beta=1.0)
    np.testing.assert_allclose(y, s @ x + 1.0, rtol=1e-12, atol=1e-12)
    with pytest.raises(ValueError, match="C-contiguous"):
        plan.multiply(np.asfortranarray(x), y)
    with pytest.raises(ValueError, match=r"shape \(80, 4\)"):
        plan @ x[:, :3]


@pytest.mark.parametrize("backend", ["omp", "serial"])
def test_precisions(backend):
    s = small(rows=300, cols=200, seed=9)
    x = np.random.default_rng(2).uniform(-1, 1, s.shape[1])
    x32 = x.astype(np.float32)
    ref = abs(s) @ abs(x)
    # single: float32 in and out; within float's rounding of the row (|A| |x| times ~1e-6).
    plan = spmv.Plan(s, backend=backend, precision="single")
    assert plan.precision == "single"
    y = plan @ x32
    assert y.dtype == np.float32
    assert np.all(np.abs(y - s @ x32.astype(np.float64)) <= 1e-5 * ref + 1e-30)
    # mixed: float64 vectors, values rounded to float32 once: error ~1e-7 of |A| |x|, above double's.
    mixed = spmv.Plan(s, backend=backend, precision="mixed")
    ym = mixed @ x
    assert ym.dtype == np.float64
    assert np.all(np.abs(ym - s @ x) <= 1e-6 * ref + 1e-30)
    s32 = s.astype(np.float32).astype(np.float64)  # the values the mixed plan multiplies
    assert np.all(np.abs(ym - s32 @ x) <= 1e-12 * ref + 1e-30)
    # float32 y with alpha and beta; float64 arrays on a single plan are converted by the plan.
    y0 = np.ones(s.shape[0], dtype=np.float32)
    plan.multiply(x32, y0, alpha=2.0, beta=1.0)
    assert np.all(np.abs(y0 - (2.0 * (s @ x32.astype(np.float64)) + 1.0)) <= 2e-5 * ref + 1e-6)
    y64 = np.empty(s.shape[0])
    plan.multiply(x, y64)
    assert np.all(np.abs(y64 - s @ x) <= 1e-5 * ref + 1e-30)
    with pytest.raises(ValueError, match="float32"):
        plan.multiply(x32, np.empty(s.shape[0]))
    with pytest.raises(ValueError, match="precision"):
        spmv.Plan(s, backend=backend, precision="half")


@pytest.mark.parametrize("backend", ["omp", "serial"])
def test_float32_matrices(backend, tmp_path):
    s = small(rows=300, cols=200, seed=9)
    x32 = np.random.default_rng(3).uniform(-1, 1, s.shape[1]).astype(np.float32)
    f = s.astype(np.float32)
    m = spmv.as_matrix(f)
    assert m.dtype == np.float32 and m.data.dtype == np.float32
    assert np.shares_memory(m.data, f.data)  # float32 data held, not widened
    # The same floats as the plan's own rounding of the float64 matrix: the serial CSR kernel
    # (no timed trial that may pick another variant) gives bit-identical products; every backend's
    # auto is within float's rounding of the exact product of those floats.
    ref = abs(f.astype(np.float64)) @ abs(x32.astype(np.float64))
    for precision in ("single", "mixed"):
        x = x32 if precision == "single" else x32.astype(np.float64)
        y = spmv.Plan(m, backend="serial", kernel="csr", precision=precision) @ x
        want = spmv.Plan(s, backend="serial", kernel="csr", precision=precision) @ x
        assert np.array_equal(y, want), precision
        exact = f.astype(np.float64) @ x32.astype(np.float64)
        ya = spmv.Plan(m, backend=backend, precision=precision) @ x
        assert np.all(np.abs(ya - exact) <= 1e-5 * ref + 1e-30), precision
    with pytest.raises(spmv.Unsupported, match="single or mixed"):
        spmv.Plan(m, backend=backend)
    # read(precision="single") reads straight into float32; a value beyond it names its line.
    path = tmp_path / "a.mtx"
    path.write_text("%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 0.1\n2 2 3\n")
    r = spmv.read(path, precision="single")
    assert r.dtype == np.float32 and list(r.data) == [np.float32(0.1), np.float32(3)]
    path.write_text("%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 0.1\n2 2 1e300\n")
    with pytest.raises(spmv.ParseError, match=r"a.mtx:4: value 1e\+300 does not fit in single precision"):
        spmv.read(path, precision="single")
    assert spmv.read(path).dtype == np.float64


def test_errors():
    s = small()
    plan = spmv.Plan(s, backend="omp")
    x = np.ones(s.shape[1])
    y = np.zeros(s.shape[0])
    with pytest.raises(ValueError, match=r"x must have shape \(80,\), got \(79,\)"):
        plan.multiply(x[:-1], y)
    with pytest.raises(ValueError, match="y must have shape"):
        plan.multiply(x, np.zeros(s.shape[0] + 1))
    with pytest.raises(ValueError, match="x must have shape"):
        plan @ np.ones(s.shape[1] + 1)
    with pytest.raises(TypeError):  # a list for y would lose the result: refused
        plan.multiply(x, list(y))
    with pytest.raises(ValueError, match="float64"):
        plan.multiply(x.astype(np.float32), y)
    with pytest.raises(ValueError, match="C-contiguous"):
        plan.multiply(np.ones(2 * s.shape[1])[::2], y)
    y.setflags(write=False)
    with pytest.raises(ValueError, match="read-only"):
        plan.multiply(x, y)
    z = np.zeros(200)
    with pytest.raises(ValueError, match="overlap"):
        spmv.Plan(small(100, 100), backend="omp").multiply(z[:100], z[50:150])
    with pytest.raises(FileNotFoundError, match="no_such_matrix.mtx"):
        spmv.read("/nonexistent/no_such_matrix.mtx")
    with pytest.raises(spmv.Unsupported, match="unknown backend"):
        spmv.Plan(s, backend="nope")
    with pytest.raises(ValueError, match="no kernel 'nope'"):  # spmv.Unsupported is a ValueError
        spmv.Plan(s, backend="omp", kernel="nope")
    with pytest.raises(TypeError):
        spmv.Plan(np.eye(3))


def test_parse_error_names_file(tmp_path):
    bad = tmp_path / "bad.mtx"
    bad.write_text("%%MatrixMarket matrix coordinate real general\n2 2 1\n3 1 1.0\n")
    with pytest.raises(spmv.ParseError, match="bad.mtx"):
        spmv.read(bad)


def test_scipy_inputs():
    s = small(seed=9)
    x = np.random.default_rng(2).uniform(-1, 1, s.shape[1])
    for a in (scipy.sparse.csr_array(s), s.tocoo(), s.tocsc()):
        check_product(spmv.Plan(a, backend="omp") @ x, s, x)
    # Unsorted columns and duplicates are put in canonical form first.
    coo = s.tocoo()
    dup = scipy.sparse.csr_matrix((np.r_[coo.data, coo.data], (np.r_[coo.row, coo.row], np.r_[coo.col, coo.col])),
                                  shape=s.shape)
    dup.has_sorted_indices = False
    check_product(spmv.Plan(dup, backend="omp") @ x, 2 * s, x)
    with pytest.raises(ValueError, match="sorted"):
        spmv.Matrix.from_csr(1, 3, np.array([0, 2]), np.array([2, 1], np.int32), np.ones(2))
    with pytest.raises(TypeError):  # int64 indices are not narrowed silently
        spmv.Matrix.from_csr(1, 3, np.array([0, 2]), np.array([0, 2**40], np.int64), np.ones(2))
    with pytest.raises(TypeError, match="complex128"):  # nor complex data made real
        spmv.Matrix.from_csr(1, 3, np.array([0, 2]), np.array([0, 2], np.int32), np.array([1 + 2j, 3j]))
    m = spmv.Matrix.from_csr(1, 3, np.array([0, 2]), np.array([0, 2], np.int32), [1, 2])  # a list, widened
    assert m.dtype == np.float64 and list(m.data) == [1.0, 2.0]


def test_matrix_views_and_lifetime():
    s = small(seed=11)
    m = spmv.as_matrix(s)
    assert m.shape == s.shape and m.nnz == s.nnz and m.field == "real"
    assert m.indptr.dtype == np.int64 and m.indices.dtype == np.int32
    # Zero-copy: the Matrix (and so a CSR plan) reads scipy's own indices and values.
    assert np.shares_memory(m.indices, s.indices) and np.shares_memory(m.data, s.data)
    assert np.array_equal(m.indptr, s.indptr)
    with pytest.raises(ValueError):
        m.data[0] = 1.0  # read-only: a plan may borrow the matrix
    x = np.random.default_rng(1).uniform(-1, 1, s.shape[1])
    # The plan keeps the matrix alive (CPU CSR plans borrow it).
    plan = spmv.Plan(spmv.as_matrix(s.copy()), backend="omp", kernel="csr")
    del m
    gc.collect()
    check_product(plan @ x, s, x)
    assert plan.matrix.shape == s.shape


def test_describe_and_version():
    plan = spmv.Plan(small(), backend="omp", products=1000)
    assert plan.backend == "omp"
    assert isinstance(plan.describe(), str) and plan.describe()
    assert isinstance(plan.detail, str)
    assert re.fullmatch(r"\d+\.\d+\.\d+", spmv.__version__)
    assert spmv.default_backend() in ("omp", "cuda")
    assert spmv.Plan(small()).backend == spmv.default_backend()  # backend=None
    assert plan.time_runs(3) > 0


def test_check_runs_the_pipeline_of_run_and_bench():
    """Plan.check: one product against the accurate reference, as `spmv run` and the benchmark do."""
    a = small()
    for precision, bound in (("double", 1e-12), ("single", 1e-3)):
        r = spmv.Plan(a, backend="omp", precision=precision).check()
        assert r["passed"] and r["failures"] == 0, r
        assert 0 <= r["max_rel_error"] < bound, r
    x = np.linspace(-1.0, 1.0, 80)
    r = spmv.Plan(a, backend="serial", kernel="csr").check(x)
    assert r["passed"] and r["max_rel_error"] < 1e-13, r
    r4 = spmv.Plan(a, backend="omp", k=4).check(np.ones((80, 4)))
    assert r4["passed"], r4
    with pytest.raises(ValueError, match="cols \\* k = 80"):
        spmv.Plan(a, backend="omp").check(np.ones(79))


def test_transposed_plan():
    """plan.T: y = A^T x on every host backend, SpMV and SpMM, float64 and float32, against scipy."""
    a = s = small(rows=100, cols=80)
    x = np.linspace(-1.0, 1.0, 100)
    for backend in ("serial", "omp"):
        plan = spmv.Plan(a, backend=backend, products=100000)  # enough to repay making A^T
        t = plan.T
        assert t.transposed and not plan.transposed and t.shape == (80, 100) and plan.shape == (100, 80)
        assert t.describe().find("A^T made once") >= 0, t.describe()
        # One product expected: the scatter on A as stored, nothing made.
        once = spmv.Plan(a, backend=backend, products=1).T
        assert once.describe().find("A^T by scatter") >= 0, once.describe()
        np.testing.assert_allclose(once @ x, s.T @ x, rtol=1e-12, atol=1e-13)
        np.testing.assert_allclose(t @ x, s.T @ x, rtol=1e-12, atol=1e-13)
        assert t.check()["passed"]
        assert not t.T.transposed and t.T.shape == (100, 80)
        y = np.ones(80)
        t.multiply(x, y, 2.0, 0.5)
        np.testing.assert_allclose(y, 2.0 * (s.T @ x) + 0.5, rtol=1e-12, atol=1e-13)
        with pytest.raises(ValueError, match="x must have shape \\(100,\\)"):
            t @ np.ones(80)
    t4 = spmv.Plan(a, backend="omp", k=4).T
    X = np.arange(400.0).reshape(100, 4) / 400
    np.testing.assert_allclose(t4 @ X, s.T @ X, rtol=1e-12, atol=1e-12)
    f = spmv.Plan(a, backend="omp", precision="single").T
    np.testing.assert_allclose(f @ x.astype(np.float32), s.T @ x, rtol=1e-5, atol=1e-5)
    assert f.check()["passed"]


def test_scipy_solvers_on_a_plan():
    """A Plan is a linear operator to scipy (shape, dtype, matvec, rmatvec, matmat): cg on bcsstk16
    reaches the solution cg finds on scipy's own matrix; lsqr (matvec and rmatvec, through plan.T) on
    well1033; eigsh's largest eigenvalues; spmv.aslinearoperator gives the same operator."""
    import scipy.sparse.linalg as sla
    a = scipy_read(SHARED / "bcsstk16.mtx.gz")
    plan = spmv.Plan(a, backend="omp")
    assert plan.dtype == np.float64 and plan.shape == a.shape
    b = a @ np.ones(a.shape[1])
    import inspect
    tol = {"rtol" if "rtol" in inspect.signature(sla.cg).parameters else "tol": 1e-10}  # scipy < 1.12: tol
    x_ours, info_ours = sla.cg(sla.aslinearoperator(plan), b, atol=0.0, maxiter=20000, **tol)
    x_scipy, info_scipy = sla.cg(a, b, atol=0.0, maxiter=20000, **tol)
    assert info_ours == 0 and info_scipy == 0
    np.testing.assert_allclose(x_ours, x_scipy, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(x_ours, 1.0, rtol=1e-5)

    w = scipy_read(SHARED / "well1033.mtx.gz")
    wp = spmv.Plan(w, backend="omp")
    op = spmv.aslinearoperator(wp)
    assert op.shape == (1033, 320) and op.dtype == np.float64
    x = sla.lsqr(op, w @ np.ones(320), atol=1e-14, btol=1e-14, iter_lim=5000)[0]
    np.testing.assert_allclose(x, 1.0, rtol=1e-7)
    y = np.linspace(0, 1, 1033)
    np.testing.assert_allclose(op.rmatvec(y), w.T @ y, rtol=1e-12, atol=1e-13)
    assert wp.T is wp.T  # made once
    X = np.arange(640.0).reshape(320, 2) / 640
    np.testing.assert_allclose(op.matmat(X), w @ X, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(wp.rmatmat(np.ones((1033, 3))), w.T @ np.ones((1033, 3)), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(wp.matvec(np.ones((320, 1))), w @ np.ones((320, 1)), rtol=1e-12, atol=1e-12)

    vals = sla.eigsh(sla.aslinearoperator(plan), k=3, which="LA", return_eigenvectors=False)
    want = sla.eigsh(a, k=3, which="LA", return_eigenvectors=False)
    np.testing.assert_allclose(np.sort(vals), np.sort(want), rtol=1e-8)
    with pytest.raises(TypeError, match="expected a spmv.Plan"):
        spmv.aslinearoperator(a)
    with pytest.raises(ValueError, match="a plan of k=4"):
        spmv.Plan(a, backend="omp", k=4).matvec(np.ones(a.shape[1]))


def test_what_a_new_user_meets():
    """Matrix @ x computes the product; backend aliases are documented ("gpu" is "cuda"); a
    complex matrix says complex128; the transposed plan by keyword."""
    a = spmv.read(SHARED / "well1033.mtx.gz")
    s = scipy_read(SHARED / "well1033.mtx.gz")
    x = np.linspace(-1, 1, 320)
    check_product(a @ x, s, x)
    X = np.ones((320, 3))
    np.testing.assert_allclose(a @ X, s @ X, rtol=1e-12, atol=1e-13)
    with pytest.raises(ValueError, match="x must be 1-d"):
        a @ np.ones((2, 2, 2))
    assert spmv.Plan(a, backend="openmp").backend == "omp"
    if spmv.default_backend() == "cuda":
        assert spmv.Plan(a, backend="gpu").backend == "cuda"
    else:
        with pytest.raises(spmv.Unsupported, match="backend 'cuda': no usable GPU"):
            spmv.Plan(a, backend="gpu")
    assert spmv.read(SHARED / "dwg961b.mtx.gz").dtype == np.complex128
    assert a.dtype == np.float64
    t = spmv.Plan(a, backend="omp", transpose=True)
    assert t.transposed and t.shape == (320, 1033) and not t.T.transposed
    np.testing.assert_allclose(t @ np.ones(1033), s.T @ np.ones(1033), rtol=1e-12, atol=1e-12)


def test_type_hints_cover_the_api():
    """__init__.pyi names every public function and class of the package and every public member of
    Plan and Matrix (a member added without its hint fails here)."""
    import ast
    stub = Path(spmv.__file__).with_name("__init__.pyi")
    assert stub.exists() and stub.with_name("py.typed").exists()
    tree = ast.parse(stub.read_text())
    top = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    members = {n.name: {m.name for m in n.body if isinstance(m, ast.FunctionDef)}
               for n in tree.body if isinstance(n, ast.ClassDef)}
    assert set(spmv.__all__) <= top, set(spmv.__all__) - top
    for cls in (spmv.Plan, spmv.Matrix):
        public = {name for name in dir(cls) if not name.startswith("_")} | {"__matmul__"}
        assert public <= members[cls.__name__], (cls.__name__, public - members[cls.__name__])


def test_column_major_plans_take_fortran_arrays():
    """layout="col": X and Y Fortran-ordered (plan @ X returns one); C-ordered ones are refused naming
    the order, and the row plan refuses Fortran ones the same way."""
    a = small(rows=100, cols=80)
    X = np.asfortranarray(np.arange(320.0).reshape(80, 4) / 320)
    col = spmv.Plan(a, backend="omp", k=4, layout="col")
    assert col.layout == "col" and spmv.Plan(a, backend="omp", k=4).layout == "row"
    Y = col @ X
    assert Y.flags.f_contiguous
    np.testing.assert_allclose(Y, a @ X, rtol=1e-12, atol=1e-13)
    with pytest.raises(ValueError, match="must be Fortran-ordered"):
        col.multiply(np.ascontiguousarray(X), np.asfortranarray(np.empty((100, 4))))
    with pytest.raises(ValueError, match="or the plan of layout 'col' for Fortran order"):
        spmv.Plan(a, backend="omp", k=4).multiply(X, np.empty((100, 4)))
    with pytest.raises(ValueError, match="layout must be 'row'"):
        spmv.Plan(a, layout="columns")
    # check() computes the reference in the plan's layout, on A and on A^T.
    assert col.check()["passed"], col.check()
    assert col.T.check()["passed"], col.T.check()


class FakeCudaArray:
    """Host memory that claims to be a CUDA array: what the library must refuse."""

    def __init__(self, a):
        self.a = a
        self.__cuda_array_interface__ = {"shape": a.shape, "typestr": a.dtype.str, "data": (a.ctypes.data, False),
                                         "version": 3, "strides": None, "stream": 1}


def test_gpu_arrays_refused_where_they_cannot_run():
    """A GPU array given to a CPU plan, or host memory posing as one to any plan, is refused naming
    the argument (the GPU path itself: python/tests_gpu on the GPU machine)."""
    a = small(rows=100, cols=80)
    cpu = spmv.Plan(a, backend="omp")
    x, y = FakeCudaArray(np.ones(80)), FakeCudaArray(np.zeros(100))
    assert not cpu.on_device
    with pytest.raises(ValueError, match="GPU array, but this plan runs on backend 'omp'"):
        cpu.multiply(x, y)
    with pytest.raises(ValueError, match="GPU array, but this plan runs on backend 'omp'"):
        cpu @ x
    if spmv.default_backend() == "cuda":
        gpu = spmv.Plan(a, backend="cuda")
        with pytest.raises(spmv.Error, match="multiply: x is host memory, not device memory"):
            gpu.multiply(x, y)  # the library's pointer check names x
        with pytest.raises(ValueError, match="x is float32"):
            gpu.multiply(FakeCudaArray(np.ones(80, dtype=np.float32)), y)


def test_complex_and_one_column_inputs():
    """Complex x is refused (a cast would drop its imaginary part), not multiplied by its real part;
    one column (cols, 1) works through matvec, matmat and Matrix @."""
    a = small(rows=100, cols=80)
    plan = spmv.Plan(a, backend="omp")
    z = np.ones(80) + 1j
    for call in (lambda: plan @ z, lambda: plan.matvec(z), lambda: plan.matmat(z.reshape(80, 1)),
                 lambda: spmv.as_matrix(a) @ z, lambda: spmv.aslinearoperator(plan).matvec(z)):
        with pytest.raises(TypeError, match="complex128"):
            call()
    col = np.linspace(0, 1, 80).reshape(80, 1)
    for got in (plan.matmat(col), plan.matvec(col), spmv.as_matrix(a) @ col):
        assert got.shape == (100, 1)
        np.testing.assert_allclose(got, a @ col, rtol=1e-12, atol=1e-13)


def test_threads_used_says_a_fallback():
    # One row cannot be shared out: the OpenMP CSR asked for 4 threads runs on 1 and says why.
    one_row = scipy.sparse.csr_matrix(np.arange(1.0, 11.0).reshape(1, 10))
    plan = spmv.Plan(one_row, backend="omp", kernel="csr", threads=4)
    assert plan.threads_used == 1
    assert "runs on 1 of 4 threads" in plan.detail, plan.detail
    check_product(plan @ np.ones(10), one_row, np.ones(10))
    wide = spmv.Plan(small(rows=4000, cols=4000, density=0.01), backend="omp", kernel="csr", threads=2)
    assert wide.threads_used in (1, 2)  # 2, or 1 where its trial found one thread fastest, saying so
    assert (wide.threads_used == 1) == ("runs on 1 of 2 threads" in wide.detail), wide.detail
    assert spmv.Plan(small(), backend="serial", kernel="csr").threads_used == 1


def test_kernel_settings_as_keywords():
    """The kernels' settings are Plan keywords, checked as the command line checks them."""
    names = [p["name"] for p in spmv.settings()]
    for name in ("threads", "block_size", "hack", "subwarp", "variant"):
        assert name in names
    hack = next(p for p in spmv.settings() if p["name"] == "hack")
    assert "hll" in hack["kernels"] and hack["valid"].startswith("an integer in [1, ")
    s = small(500, 500, density=0.02, seed=5)
    x = np.random.default_rng(6).uniform(-1, 1, s.shape[1])
    plan = spmv.Plan(s, backend="omp", kernel="hll", hack=8, threads=2)
    assert "hack=8" in plan.detail, plan.detail
    check_product(plan @ x, s, x)
    scalar = spmv.Plan(s, backend="omp", kernel="csr", variant="dynamic:scalar", nz_per_chunk=7, threads=3)
    assert "inner=scalar" in scalar.detail, scalar.detail
    check_product(scalar @ x, s, x)
    with pytest.raises(TypeError, match="unexpected keyword 'hacks'.*hack"):
        spmv.Plan(s, backend="omp", hacks=8)
    with pytest.raises(ValueError, match=r"block_size=100: must be a multiple of 32 in \[32, 1024\]"):
        spmv.Plan(s, backend="omp", block_size=100)
    with pytest.raises(TypeError, match="takes an integer"):
        spmv.Plan(s, backend="omp", hack=8.5)


def test_threads_share_a_plan():
    """Products release the GIL; a plan serves one thread at a time (its lock)."""
    s = small(300, 300, density=0.02, seed=13)
    plan = spmv.Plan(s, backend="omp", threads=1)
    xs = np.random.default_rng(4).uniform(-1, 1, (8, s.shape[1]))

    def work(i):
        y = np.empty(s.shape[0])
        for _ in range(50):
            plan.multiply(xs[i], y)
        return y

    with ThreadPoolExecutor(4) as pool:
        for i, y in enumerate(pool.map(work, range(len(xs)))):
            check_product(y, s, xs[i])


def test_readme_python_example(monkeypatch):
    """README's Python lines run as shown (beside the matrices they name) and compute A @ ones."""
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text().splitlines()
    start = readme.index("## Use from Python")
    block = []
    for line in readme[start + 1:]:
        if line.startswith("## "):
            break
        if line.startswith("    "):
            block.append(line[4:])
    assert any("spmv.Plan(" in line for line in block), block
    monkeypatch.chdir(Path(__file__).resolve().parents[2] / "tests" / "data" / "suitesparse")
    names = {}
    exec("\n".join(block), names)
    a = scipy_read("bcsstk16.mtx.gz")
    check_product(names["y"], a, np.ones(a.shape[1]))
    assert names["f"].precision == "single" and "hack=16" in names["h"].detail


def test_reordered_plans_and_the_permutation():
    """Plan(reorder="rcm"): the product in A's numbering, as scipy's; spmv.rcm gives a permutation
    whose renumbered matrix is banded, the same one the plan multiplies in."""
    rng = np.random.default_rng(5)
    n = 30
    grid = scipy.sparse.kron(scipy.sparse.diags([-1.0, 2.5, -1.2], [-1, 0, 1], shape=(n, n)),
                             scipy.sparse.identity(n)) + scipy.sparse.kron(
        scipy.sparse.identity(n), scipy.sparse.diags([-0.7, 1.5, -1.0], [-1, 0, 1], shape=(n, n)))
    p = rng.permutation(n * n)
    a = scipy.sparse.csr_matrix(grid.tocsr()[p][:, p])
    order, position = spmv.rcm(a)
    assert order.dtype == np.int32 and sorted(order) == list(range(n * n))
    assert np.array_equal(position[order], np.arange(n * n))
    b = a[order][:, order].tocoo()
    assert np.abs(b.row - b.col).max() <= 2 * n < np.abs(a.tocoo().row - a.tocoo().col).max()
    assert spmv.Plan(a, backend="omp").reorder == "auto"  # the default: the planner decides
    plan = spmv.Plan(a, backend="omp", reorder="rcm")
    assert plan.reorder == "rcm" and "reordered rcm" in plan.detail
    x = rng.uniform(-1, 1, n * n)
    np.testing.assert_allclose(plan @ x, a @ x, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(plan.T @ x, a.T @ x, rtol=1e-12, atol=1e-12)
    X = rng.uniform(-1, 1, (n * n, 3))
    np.testing.assert_allclose(spmv.Plan(a, k=3, reorder="rcm") @ X, a @ X, rtol=1e-12, atol=1e-12)
    with pytest.raises(ValueError, match="reorder"):
        spmv.Plan(a, reorder="metis")
    with pytest.raises(spmv.Unsupported, match="square matrix"):
        spmv.Plan(scipy.sparse.random(20, 10, density=0.3, format="csr", random_state=1), reorder="rcm")
