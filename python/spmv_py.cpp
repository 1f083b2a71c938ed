// The compiled part of the Python package spmv (python/src/spmv/__init__.py adds the scipy
// conversions): Matrix wraps a spmv::Csr, Plan a spmv::Plan that multiplies numpy arrays in place.
// Only the public API (include/spmv) is used.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <spmv/device.hpp>
#include <spmv/formats/reorder.hpp>
#include <spmv/formats/transpose.hpp>
#include <spmv/io.hpp>
#include <spmv/matrix.hpp>
#include <spmv/params.hpp>
#include <spmv/plan.hpp>
#include <spmv/reference.hpp>
#include <spmv/version.hpp>

#include <complex>
#include <cstdint>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>

namespace py = pybind11;
using namespace py::literals;

namespace {

// spmv.Matrix: a CsrView over arrays it keeps alive, either a Csr or CsrF32 the reader made
// (owned) or the caller's numpy arrays (held, not copied: scipy's indices and data are read in
// place; float32 data stays float32, for plans in single or mixed precision).
struct PyMatrix {
  std::shared_ptr<const void> owned;
  py::object arrays;  // (indptr, indices, data) when made from arrays
  spmv::CsrView view;
};
using MatrixPtr = std::shared_ptr<PyMatrix>;

template <class V>
MatrixPtr from_csr(spmv::BasicCsr<V> a) {
  auto m = std::make_shared<PyMatrix>();
  auto owned = std::make_shared<const spmv::BasicCsr<V>>(std::move(a));
  m->view = owned->view();
  m->owned = std::move(owned);
  return m;
}

std::string shape_str(const py::array& a) {
  std::string s = "(";
  for (py::ssize_t d = 0; d < a.ndim(); ++d) s += (d ? ", " : "") + std::to_string(a.shape(d));
  return s + (a.ndim() == 1 ? ",)" : ")");
}

// A read-only numpy view of one of the matrix's arrays; `owner` (the Python Matrix) keeps it alive.
// Read-only because a plan may borrow the arrays, which must not change while the plan lives.
template <typename T>
py::array view(std::span<const T> v, py::handle owner) {
  py::array a(py::dtype::of<T>(), {static_cast<py::ssize_t>(v.size())}, {static_cast<py::ssize_t>(sizeof(T))}, v.data(),
              owner);
  a.attr("setflags")("write"_a = false);
  return a;
}

// A Matrix over CSR arrays, checked as the kernels require (spmv::csr_structure_error). Arrays of
// the right dtype and C order are held as they are; others are converted once where numpy can do
// it safely (an int32 indptr widened; indices or data of a wider type refused).
MatrixPtr matrix_from_arrays(std::int64_t rows, std::int64_t cols,
                             py::array_t<spmv::offset_t, py::array::c_style> indptr,
                             py::array_t<spmv::index_t, py::array::c_style> indices, py::object data_in) {
  // float32 data is held as it is (the matrix is then in float); anything else becomes float64
  // where numpy casts it safely (integers, lists), and is refused otherwise (complex, long double).
  const py::array arr = py::array::ensure(data_in);
  if (!arr) throw py::type_error("data must be an array of real numbers");
  const bool f32 = arr.dtype().kind() == 'f' && arr.dtype().itemsize() == 4;
  py::array data = f32 ? py::array(py::array_t<float, py::array::c_style>::ensure(arr))
                       : py::array(py::array_t<double, py::array::c_style>::ensure(arr));
  if (!data) {
    PyErr_Clear();
    throw py::type_error("data of dtype " + std::string(py::str(arr.dtype())) +
                         " cannot be held as float64 without losing values (nor is it float32)");
  }
  constexpr auto max_index = std::numeric_limits<spmv::index_t>::max();
  if (rows < 0 || cols < 0 || rows > max_index || cols > max_index)
    throw py::value_error("shape (" + std::to_string(rows) + ", " + std::to_string(cols) +
                          ") out of range: rows and cols must be in [0, 2^31)");
  if (indptr.ndim() != 1 || indptr.shape(0) != rows + 1)
    throw py::value_error("indptr must have rows + 1 = " + std::to_string(rows + 1) + " entries");
  if (indices.ndim() != 1 || data.ndim() != 1 || data.size() != indices.size())
    throw py::value_error("indices and data must be 1-d and of the same length");
  auto m = std::make_shared<PyMatrix>();
  m->arrays = py::make_tuple(indptr, indices, data);
  m->view.rows = static_cast<spmv::index_t>(rows);
  m->view.cols = static_cast<spmv::index_t>(cols);
  m->view.row_ptr = {indptr.data(), static_cast<std::size_t>(rows + 1)};
  m->view.col = {indices.data(), static_cast<std::size_t>(indices.size())};
  const auto n = static_cast<std::size_t>(data.size());
  if (f32)
    m->view.val_f32 = {static_cast<const float*>(data.data()), n};
  else
    m->view.val = {static_cast<const double*>(data.data()), n};
  if (const std::string e = spmv::csr_structure_error(m->view); !e.empty()) throw py::value_error(e);
  return m;
}

py::object to_scipy(py::object self) {
  const spmv::CsrView& a = self.cast<const PyMatrix&>().view;
  py::object data = a.values_in_float() ? view(a.val_f32, self) : view(a.val, self);
  if (a.is_complex()) data = data + view(a.imag, self) * py::cast(std::complex<double>(0, 1));
  // copy=True: the scipy matrix owns its arrays and may be changed freely.
  return py::module_::import("scipy.sparse")
      .attr("csr_matrix")(py::make_tuple(data, view(a.col, self), view(a.row_ptr, self)),
                          "shape"_a = py::make_tuple(a.rows, a.cols), "copy"_a = true);
}

// A plan with the matrix it was made from: a CPU CSR plan borrows the matrix's arrays, so the
// Matrix is held here for as long as the plan lives (a_ is declared first, so it is destroyed last).
class PyPlan {
 public:
  PyPlan(MatrixPtr a, const std::optional<std::string>& backend, const std::string& kernel,
         const spmv::PlanOptions& opt)
      : a_(std::move(a)), k_(opt.k), precision_(opt.precision), opt_(opt) {
    py::gil_scoped_release nogil;  // planning may convert, time trials or upload
    backend_ = backend ? spmv::parse_backend(*backend) : spmv::default_backend();
    plan_ = spmv::make_plan(a_->view, backend_, kernel, opt);
  }

  bool transposes() const { return opt_.operation == spmv::Operation::Transpose; }
  const spmv::PlanOptions& options() const { return opt_; }
  // The sizes of x and y: A's columns and rows, or the other way round for A^T.
  spmv::index_t x_size() const { return transposes() ? a_->view.rows : a_->view.cols; }
  spmv::index_t y_size() const { return transposes() ? a_->view.cols : a_->view.rows; }

  // y = alpha*A*x + beta*y on the numpy buffers themselves; x and y are checked, never copied.
  // float64 or float32, both the same: the plan converts where its precision's type differs.
  void multiply(const py::array& x, py::array y, double alpha, double beta) {
    const bool f32 = py::isinstance<py::array_t<float>>(x);
    check(x, "x", x_size(), f32);
    check(y, "y", y_size(), f32);
    if (!y.writeable()) throw py::value_error("y is read-only");
    const auto* xb = static_cast<const char*>(x.data());
    auto* yb = static_cast<char*>(y.mutable_data());
    if (xb < yb + y.nbytes() && yb < xb + x.nbytes()) throw py::value_error("x and y must not overlap");
    if (f32)
      multiply_as(reinterpret_cast<const float*>(xb), reinterpret_cast<float*>(yb), x.size(), y.size(), alpha, beta);
    else
      multiply_as(reinterpret_cast<const double*>(xb), reinterpret_cast<double*>(yb), x.size(), y.size(), alpha, beta);
  }

  // y = alpha*A*x + beta*y on GPU memory the caller's array library owns (CuPy, PyTorch, anything
  // with __cuda_array_interface__; spmv/__init__.py reads the pointers): queued on `stream` (a
  // cudaStream_t as an integer, 0: the default stream), nothing copied, no host synchronisation.
  // The library checks that the pointers are device memory and the sizes and type the plan's.
  void multiply_device(std::uintptr_t x, std::size_t nx, std::uintptr_t y, std::size_t ny, bool f32, double alpha,
                       double beta, std::uintptr_t stream) {
    const auto s = reinterpret_cast<spmv::CudaStream>(stream);
    py::gil_scoped_release nogil;
    std::lock_guard lock(mu_);
    if (f32)
      plan_->multiply(spmv::DeviceSpan<const float>(reinterpret_cast<const float*>(x), nx),
                      spmv::DeviceSpan<float>(reinterpret_cast<float*>(y), ny), static_cast<float>(alpha),
                      static_cast<float>(beta), s);
    else
      plan_->multiply(spmv::DeviceSpan<const double>(reinterpret_cast<const double*>(x), nx),
                      spmv::DeviceSpan<double>(reinterpret_cast<double*>(y), ny), alpha, beta, s);
  }

  // plan @ x: x converted to a C-contiguous array of the plan's vector type (float32 for
  // precision "single", else float64) if it is not one, y new of that type.
  py::array matmul(const py::object& x) {
    return precision_ == spmv::Precision::Single ? matmul_as<float>(x) : matmul_as<double>(x);
  }

  double time_runs(int times) {
    if (times < 1) throw py::value_error("times must be at least 1");
    py::gil_scoped_release nogil;
    std::lock_guard lock(mu_);
    return plan_->time_runs(times);
  }

  // One product checked against the accurate reference (spmv::checked_product: what `spmv run`
  // and the benchmark do before they time a plan), on x (float64, cols*k values in the plan's
  // layout) or, without one, a deterministic random x.
  py::dict checked(const std::optional<py::array_t<double, py::array::c_style | py::array::forcecast>>& x) {
    const std::size_t n = static_cast<std::size_t>(x_size()) * static_cast<std::size_t>(k_);
    std::vector<double> xv =
        x ? std::vector<double>(x->data(), x->data() + x->size()) : spmv::make_vector("random:1", n);
    if (xv.size() != n) throw py::value_error("x must hold cols * k = " + std::to_string(n) + " values");
    spmv::CheckResult c;
    {
      py::gil_scoped_release nogil;
      std::lock_guard lock(mu_);
      // The reference of A^T needs A^T itself: made at the first check, in the matrix's value type.
      if (transposes() && !at_) at_ = spmv::transpose_as_stored(a_->view);
      const spmv::CsrView m = transposes() ? at_->view() : a_->view;
      c = spmv::checked_product(*plan_, m, xv, k_, opt_.layout).check;
    }
    py::dict d;
    d["passed"] = c.passed;
    d["max_rel_error"] = c.max_rel_error;
    d["mean_rel_error"] = c.mean_rel_error;
    d["failures"] = c.failures;
    d["message"] = c.message;
    return d;
  }

  const spmv::Plan& plan() const { return *plan_; }
  const MatrixPtr& matrix() const { return a_; }
  spmv::Backend backend() const { return backend_; }
  spmv::Precision precision() const { return precision_; }
  int k() const { return k_; }
  const char* layout() const { return opt_.layout == spmv::Layout::ColMajor ? "col" : "row"; }

 private:
  template <class T>
  void multiply_as(const T* xp, T* yp, py::ssize_t nx, py::ssize_t ny, double alpha, double beta) {
    std::span<const T> xs(xp, static_cast<std::size_t>(nx));
    std::span<T> ys(yp, static_cast<std::size_t>(ny));
    py::gil_scoped_release nogil;
    std::lock_guard lock(mu_);
    plan_->multiply(xs, ys, static_cast<T>(alpha), static_cast<T>(beta));  // beta == 0 never reads y
  }

  template <class T>
  py::array matmul_as(const py::object& x) {
    if (col_major()) {
      auto xa = py::array_t<T, py::array::f_style | py::array::forcecast>::ensure(x);
      if (!xa) throw py::type_error("plan @ x: x must be convertible to a numeric array");
      py::array_t<T, py::array::f_style> y({static_cast<py::ssize_t>(y_size()), static_cast<py::ssize_t>(k_)});
      multiply(xa, y, 1.0, 0.0);
      return y;
    }
    auto xa = py::array_t<T, py::array::c_style | py::array::forcecast>::ensure(x);
    if (!xa) throw py::type_error("plan @ x: x must be convertible to a numeric array");
    py::array_t<T> y = k_ == 1 ? py::array_t<T>(y_size()) : py::array_t<T>({y_size(), k_});
    multiply(xa, y, 1.0, 0.0);
    return y;
  }
  // Column-major X and Y (layout "col", k > 1): Fortran-ordered arrays.
  bool col_major() const { return k_ > 1 && opt_.layout == spmv::Layout::ColMajor; }

  // Shape (n,) for one right-hand side, (n, k) row-major for k; float64 (float32 when f32),
  // C-contiguous.
  void check(const py::array& v, const char* name, spmv::index_t n, bool f32) const {
    const bool shape_ok =
        k_ == 1 ? v.ndim() == 1 && v.shape(0) == n : v.ndim() == 2 && v.shape(0) == n && v.shape(1) == k_;
    if (!shape_ok) {
      const std::string want =
          k_ == 1 ? "(" + std::to_string(n) + ",)" : "(" + std::to_string(n) + ", " + std::to_string(k_) + ")";
      throw py::value_error(std::string(name) + " must have shape " + want + ", got " + shape_str(v));
    }
    if (f32 ? !py::isinstance<py::array_t<float>>(v) : !py::isinstance<py::array_t<double>>(v))
      throw py::value_error(std::string(name) + " must be float64 (or x and y both float32), got " +
                            py::str(v.dtype()).cast<std::string>());
    if (col_major()) {
      if (!(v.flags() & py::array::f_style))
        throw py::value_error(std::string(name) +
                              " must be Fortran-ordered for a plan of layout 'col' (np.asfortranarray)");
    } else if (!(v.flags() & py::array::c_style)) {
      throw py::value_error(std::string(name) + " must be C-contiguous (np.ascontiguousarray)" +
                            (k_ > 1 ? ", or the plan of layout 'col' for Fortran order" : ""));
    }
  }

  MatrixPtr a_;
  std::unique_ptr<spmv::Plan> plan_;
  spmv::Backend backend_ = spmv::Backend::Omp;
  int k_;
  spmv::Precision precision_;
  spmv::PlanOptions opt_;
  std::mutex mu_;                       // a plan serves one thread at a time; the GIL is released during products
  std::optional<spmv::Transposed> at_;  // A^T for check()'s reference of a transposed plan
};

// Plan's keyword settings (spmv/params.hpp's names): an unknown name is a TypeError listing them, a
// value outside a setting's range a ValueError saying the range.
void set_settings(spmv::PlanOptions& opt, const py::dict& settings) {
  for (const auto& [key, value] : settings) {
    const std::string name = py::str(key);
    const spmv::ParamSpec* p = spmv::find_param(name);
    if (!p) {
      std::string names;
      for (const spmv::ParamSpec& q : spmv::kernel_params()) names += (names.empty() ? "" : ", ") + q.name;
      throw py::type_error("Plan() got an unexpected keyword '" + name + "' (the settings are " + names + ")");
    }
    if (p->kind == spmv::ParamSpec::Kind::Text) {
      opt.kernel.variant = py::cast<std::string>(value);
      continue;
    }
    if (py::isinstance<py::float_>(value) ||
        (p->kind == spmv::ParamSpec::Kind::Integer && py::isinstance<py::bool_>(value)))
      throw py::type_error(name + " takes an integer, got " +
                           std::string(py::str(py::type::of(value).attr("__name__"))));
    const long long v = py::cast<long long>(value);
    if (const std::string why = p->invalid(v); !why.empty())
      throw py::value_error(name + "=" + std::to_string(v) + ": " + why);
    p->set(opt, v);
  }
}

// spmv.Matrix: CSR arrays held or borrowed, read-only views of them.
void bind_matrix(py::module_& m) {
  py::class_<PyMatrix, MatrixPtr>(m, "Matrix",
                                  "A sparse matrix in CSR form (a spmv::CsrView over arrays it holds); read-only")
      .def_static("from_csr", &matrix_from_arrays, "rows"_a, "cols"_a, "indptr"_a, "indices"_a, "data"_a,
                  "From CSR arrays, checked; int64 indptr, int32 indices and float64 or float32 data (C order) "
                  "are held without a copy, other dtypes converted once. float32 data makes a matrix in float, "
                  "for plans in single or mixed precision")
      .def_property_readonly("shape", [](const PyMatrix& a) { return py::make_tuple(a.view.rows, a.view.cols); })
      .def_property_readonly("nnz", [](const PyMatrix& a) { return a.view.nnz(); })
      .def_property_readonly("field", [](const PyMatrix& a) { return spmv::to_string(a.view.field); })
      .def_property_readonly("symmetry", [](const PyMatrix& a) { return spmv::to_string(a.view.symmetry); })
      .def_property_readonly("indptr", [](py::object s) { return view(s.cast<const PyMatrix&>().view.row_ptr, s); })
      .def_property_readonly("indices", [](py::object s) { return view(s.cast<const PyMatrix&>().view.col, s); })
      .def_property_readonly(
          "data",
          [](py::object s) {
            const spmv::CsrView& a = s.cast<const PyMatrix&>().view;
            return a.values_in_float() ? view(a.val_f32, s) : view(a.val, s);
          },
          "The values: float64, or float32 for a matrix in float")
      .def_property_readonly(
          "dtype",
          [](const PyMatrix& m) {
            if (m.view.is_complex()) return py::dtype::of<std::complex<double>>();
            return m.view.values_in_float() ? py::dtype::of<float>() : py::dtype::of<double>();
          },
          "float64; float32 for a matrix kept in float (read with precision='single', or from float32 data); "
          "complex128 for a complex one (which the kernels refuse)")
      .def_property_readonly(
          "imag", [](py::object s) { return view(s.cast<const PyMatrix&>().view.imag, s); },
          "Imaginary parts (empty unless complex)")
      .def("to_scipy", &to_scipy, "A scipy.sparse.csr_matrix copy (complex where the matrix is)")
      .def("__repr__", [](const PyMatrix& m) {
        const spmv::CsrView& a = m.view;
        return "<spmv.Matrix " + std::to_string(a.rows) + "x" + std::to_string(a.cols) + ", " +
               std::to_string(a.nnz()) + " nnz, " + spmv::to_string(a.field) + " " + spmv::to_string(a.symmetry) + ">";
      });
}

// spmv.Plan and spmv.settings(): a plan over a Matrix, its products and what it says of itself.
void bind_plan(py::module_& m) {
  m.def(
      "settings",
      [] {
        py::list out;
        for (const spmv::ParamSpec& p : spmv::kernel_params()) {
          py::dict d;
          d["name"] = p.name;
          d["kind"] = p.kind == spmv::ParamSpec::Kind::Integer ? "int"
                      : p.kind == spmv::ParamSpec::Kind::Text  ? "str"
                                                               : "bool";
          d["help"] = p.full_help();
          if (p.kind == spmv::ParamSpec::Kind::Integer) d["valid"] = p.range();
          d["kernels"] = spmv::kernels_taking(p.name);
          out.append(d);
        }
        return out;
      },
      "The kernels' settings Plan takes as keywords: name, kind, help, valid values, the kernels that take each");

  py::class_<PyPlan>(m, "Plan")
      .def(py::init([](MatrixPtr a, std::optional<std::string> backend, const std::string& kernel, int k,
                       long long products, const std::string& precision, bool transpose, const std::string& layout,
                       const std::string& reorder, const py::dict& settings) {
             if (layout != "row" && layout != "col")
               throw py::value_error("layout must be 'row' (C order) or 'col' (Fortran order), got '" + layout + "'");
             spmv::PlanOptions opt;
             opt.k = k;
             opt.layout = layout == "col" ? spmv::Layout::ColMajor : spmv::Layout::RowMajor;
             opt.products = products;
             opt.precision = spmv::parse_precision(precision);
             opt.operation = transpose ? spmv::Operation::Transpose : spmv::Operation::NoTranspose;
             try {
               opt.reorder = spmv::parse_reorder(reorder);
             } catch (const spmv::Unsupported& e) {
               throw py::value_error(std::string("reorder: ") + e.what());
             }
             set_settings(opt, settings);
             return std::make_unique<PyPlan>(std::move(a), backend, kernel, opt);
           }),
           "matrix"_a, "backend"_a = py::none(), "kernel"_a = "auto", "k"_a = 1, "products"_a = 100,
           "precision"_a = "double", "transpose"_a = false, "layout"_a = "row", "reorder"_a = "auto",
           "settings"_a = py::dict())
      // noconvert: a list for y would be converted to a temporary and the result lost.
      .def("multiply", &PyPlan::multiply, "x"_a.noconvert(), "y"_a.noconvert(), "alpha"_a = 1.0, "beta"_a = 0.0,
           "y = alpha*A@x + beta*y in place; x, y float64 (or both float32), (n,) or (n, k): C-contiguous, "
           "Fortran-ordered for a plan of layout 'col'")
      .def("__matmul__", &PyPlan::matmul, "x"_a)
      .def("_multiply_device", &PyPlan::multiply_device, "x"_a, "nx"_a, "y"_a, "ny"_a, "f32"_a, "alpha"_a, "beta"_a,
           "stream"_a, "The product on device pointers (spmv/__init__.py's GPU arrays)")
      .def_property_readonly(
          "on_device", [](const PyPlan& p) { return p.plan().on_device(); },
          "Whether the products run on the GPU (device arrays are multiplied in place)")
      .def("time_runs", &PyPlan::time_runs, "times"_a,
           "Seconds of `times` back-to-back products on the last x (Plan::time_runs)")
      .def("check", &PyPlan::checked, "x"_a = py::none(),
           "One product checked against the accurate reference, as `spmv run` and the benchmark check: "
           "a dict of passed, max_rel_error, mean_rel_error, failures and message")
      .def("describe", [](const PyPlan& p) { return p.plan().describe(); })
      .def_property_readonly("detail", [](const PyPlan& p) { return p.plan().detail; })
      .def_property_readonly("chosen", [](const PyPlan& p) { return p.plan().chosen; })
      .def_property_readonly(
          "threads_used", [](const PyPlan& p) { return p.plan().threads_used(); },
          "CPU threads a product runs on (fewer than asked where the kernel falls back; "
          "detail says why); 0 on the GPU")
      .def_property_readonly("backend", [](const PyPlan& p) { return spmv::to_string(p.backend()); })
      .def_property_readonly("k", &PyPlan::k)
      .def_property_readonly("layout", &PyPlan::layout,
                             "Of X and Y when k > 1: 'row' (C-ordered arrays) or 'col' (Fortran-ordered)")
      .def_property_readonly("precision", [](const PyPlan& p) { return spmv::to_string(p.precision()); })
      .def_property_readonly(
          "shape", [](const PyPlan& p) { return py::make_tuple(p.y_size(), p.x_size()); },
          "(rows, cols) of the operation: A's, or A^T's for a transposed plan")
      .def_property_readonly("transposed", &PyPlan::transposes, "Whether the plan multiplies by A^T")
      .def_property_readonly(
          "reorder", [](const PyPlan& p) { return std::string(spmv::to_string(p.options().reorder)); },
          "The renumbering the plan multiplies in: 'none' or 'rcm' (x and y stay in the matrix's numbering)")
      .def_property_readonly("matrix", &PyPlan::matrix)
      .def_property_readonly("convert_seconds", [](const PyPlan& p) { return p.plan().convert_seconds; })
      .def_property_readonly("setup_seconds", [](const PyPlan& p) { return p.plan().setup_seconds; })
      .def_property_readonly("bytes_per_product", [](const PyPlan& p) { return p.plan().bytes_per_product; })
      .def("__repr__", [](const PyPlan& p) {
        return std::string("<spmv.Plan ") + spmv::to_string(p.backend()) + ": " + p.plan().describe() + ">";
      });
}

}  // namespace

PYBIND11_MODULE(_spmv, m) {
  m.doc() = "Compiled part of the spmv package (see spmv/__init__.py)";

  // spmv.Error (RuntimeError) for every error of the library; bad input (a malformed file, an
  // unsupported request) is also a ValueError. Later registrations are tried first.
  auto& error = py::register_local_exception<spmv::Error>(m, "Error", PyExc_RuntimeError);
  py::register_local_exception<spmv::ParseError>(m, "ParseError", py::make_tuple(error, py::handle(PyExc_ValueError)));
  py::register_local_exception<spmv::Unsupported>(m, "Unsupported",
                                                  py::make_tuple(error, py::handle(PyExc_ValueError)));

  m.def(
      "rcm",
      [](const PyMatrix& a) {
        spmv::Permutation p;
        {
          py::gil_scoped_release nogil;
          p = spmv::rcm(a.view);
        }
        return py::make_tuple(
            py::array_t<spmv::index_t>(static_cast<py::ssize_t>(p.order.size()), p.order.data()),
            py::array_t<spmv::index_t>(static_cast<py::ssize_t>(p.position.size()), p.position.data()));
      },
      "matrix"_a,
      "Reverse Cuthill-McKee of a square Matrix: (order, position), order[i] the original index of new index i, "
      "position its inverse");
  m.def("version", &spmv::version, "The library's version");
  m.def("git_commit", &spmv::git_commit, "The git commit the library was built from");
  m.def(
      "default_backend", [] { return spmv::to_string(spmv::default_backend()); },
      "The fastest backend present: 'cuda' when a device is usable, else 'omp'");

  bind_matrix(m);
  m.def(
      "read",
      [](const std::string& path, const std::string& precision) {
        if (spmv::parse_precision(precision) != spmv::Precision::Double) {
          spmv::CsrF32 a;
          {
            py::gil_scoped_release nogil;
            a = spmv::io::load_f32(path).matrix;
          }
          return from_csr(std::move(a));
        }
        spmv::Csr a;
        {
          py::gil_scoped_release nogil;
          a = spmv::io::load_csr(path);
        }
        return from_csr(std::move(a));
      },
      "path"_a, "precision"_a = "double",
      "Reads .mtx, .mtx.gz or a binary cache (spmv::io::load_csr; precision 'single' or 'mixed': the values "
      "straight into float32, spmv::io::load_f32)");

  bind_plan(m);
}
