// Baseline: Eigen's row-major sparse x dense product, parallel through Eigen's own OpenMP loop
// (schedule(dynamic) over rows, enabled above 20000 nonzeros). The matrix is an Eigen::Map of our
// arrays: only the row pointer is copied, to 32 bits, because Eigen wants one index type for both
// index arrays; beyond 2^31 nonzeros the column indices are widened to 64 bits instead. In single
// precision the product is Eigen's float one over a float matrix's own values (mapped, not copied)
// or a double one's rounded into a copy (Eigen has no float-matrix x double-vector product, so no
// mixed baseline).

#ifdef SPMV_HAVE_EIGEN
#include <Eigen/Core>
#include <Eigen/SparseCore>

#include <cstdint>
#include <limits>

#include "cpu/cpu_plan.hpp"
#include "core/register.hpp"

namespace spmv::cpu {

namespace {

template <class Index, class Scalar>
class EigenPlan final : public CpuPlan {
  using SpMat = Eigen::SparseMatrix<Scalar, Eigen::RowMajor, Index>;
  using RowMat = Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  using ColMat = Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic, Eigen::ColMajor>;
  using Vec = Eigen::Matrix<Scalar, Eigen::Dynamic, 1>;

 public:
  // A transposed plan (PlanOptions::operation) multiplies by A.transpose(), as an Eigen user would:
  // x has A's rows and y its columns.
  EigenPlan(const CsrView& a, const PlanOptions& opt)
      : CpuPlan(transposed(opt) ? a.cols : a.rows, transposed(opt) ? a.rows : a.cols, opt),
        transposed_(transposed(opt)),
        threads_(plan_threads(opt)),
        outer_(a.row_ptr.begin(), a.row_ptr.end()) {
    const auto t0 = std::chrono::steady_clock::now();
    const Index* inner;
    if constexpr (std::is_same_v<Index, index_t>) {
      inner = a.col.data();
    } else {
      inner_.assign(a.col.begin(), a.col.end());
      inner = inner_.data();
    }
    const Scalar* values;
    if constexpr (std::is_same_v<Scalar, double>) {
      values = a.val.data();
    } else {
      values = float_values_of(a, threads_, valf_);
    }
    map_ = std::make_unique<Eigen::Map<const SpMat>>(a.rows, a.cols, a.nnz(), outer_.data(), inner, values);
    convert_seconds = seconds_since(t0);
    stored_entries = a.nnz();
    constexpr offset_t vb = sizeof(Scalar);
    bytes_per_product = (static_cast<offset_t>(sizeof(Index)) + vb) * a.nnz() +
                        static_cast<offset_t>(sizeof(Index)) * (a.rows + 1) +
                        vb * (static_cast<offset_t>(a.cols) + a.rows) * opt.k;
    detail = fmt::format("eigen {}.{}.{}, index {} bits", EIGEN_WORLD_VERSION, EIGEN_MAJOR_VERSION, EIGEN_MINOR_VERSION,
                         8 * sizeof(Index));
    if (transposed_) detail += ", A.transpose() * x";
    note_fewer_threads(detail, planned_threads(), threads_,
                       transposed_ ? std::string("Eigen's transposed product runs serially")
                       : eigen_work() <= kEigenParallelWork
                           ? fmt::format("Eigen multiplies serially at <= {} nonzeros{}", kEigenParallelWork,
                                         eigen_work() != stored_entries ? " x k" : "")
                           : fmt::format("{} row{}", rows_, rows_ == 1 ? "" : "s"));
  }

  int threads_used() const override { return threads_running(planned_threads()); }

 protected:
  void product() override {
    // Eigen's thread count is process-wide; set it for this plan before each product.
    Eigen::setNbThreads(threads_);
    if (transposed_)
      product_by(map_->transpose());
    else
      product_by(*map_);
  }

 private:
  static bool transposed(const PlanOptions& opt) { return opt.operation == Operation::Transpose; }

  // y = op(A) x on the plan's vectors, in its layout.
  template <class M>
  void product_by(const M& A) {
    const Scalar* xp = vec_x<Scalar>();
    Scalar* yp = vec_y<Scalar>();
    if (k_ == 1)
      multiply_into(A, Eigen::Map<const Vec>(xp, cols_), Eigen::Map<Vec>(yp, rows_));
    else if (layout_ == Layout::RowMajor)
      multiply_into(A, Eigen::Map<const RowMat>(xp, cols_, k_), Eigen::Map<RowMat>(yp, rows_, k_));
    else
      multiply_into(A, Eigen::Map<const ColMat>(xp, cols_, k_), Eigen::Map<ColMat>(yp, rows_, k_));
  }

  // y = alpha * A*x + beta * y as an Eigen user writes it: one product expression (beta == 0 never
  // reads y), y scaled first where beta != 0.
  template <class M, class X, class Y>
  void multiply_into(const M& A, const X& x, Y y) const {
    const Scale<Scalar> sc = scale<Scalar>();
    if (sc.beta == Scalar(0)) {
      if (sc.alpha == Scalar(1))
        y.noalias() = A * x;
      else
        y.noalias() = sc.alpha * (A * x);
      return;
    }
    y *= sc.beta;
    y.noalias() += sc.alpha * (A * x);
  }

  // Eigen's sparse x dense product (SparseDenseProduct.h) runs its OpenMP loop only above 20000
  // nonzeros (nonzeros x k for a row-major X); below, one thread whatever setNbThreads says.
  static constexpr offset_t kEigenParallelWork = 20000;
  offset_t eigen_work() const { return stored_entries * (k_ > 1 && layout_ == Layout::RowMajor ? k_ : 1); }
  int planned_threads() const {
    if (transposed_ || threads_ <= 1 || eigen_work() <= kEigenParallelWork) return 1;
    return static_cast<int>(std::clamp<offset_t>(rows_, 1, threads_));
  }

  bool transposed_;
  int threads_;
  std::vector<Index> outer_, inner_;
  HostArray<float> valf_;  // single precision over double values: the values rounded to float
  std::unique_ptr<Eigen::Map<const SpMat>> map_;
};

}  // namespace

void register_eigen_baseline() {
  add_kernel({.name = "eigen",
              .backend = Backend::Omp,
              .format = "csr",
              .description = "Eigen row-major SparseMatrix * dense (Eigen's OpenMP), the CPU baseline; "
                             "A.transpose() * x for the transposed product",
              .baseline = true,
              .spmm = true,
              .precisions = {Precision::Double, Precision::Single},
              .params = {"threads"},
              .transposes = true,
              .make = [](const CsrView& a, const PlanOptions& o) -> std::unique_ptr<Plan> {
                const bool small = a.nnz() < std::numeric_limits<std::int32_t>::max();
                if (o.precision == Precision::Single) {
                  if (small) return std::make_unique<EigenPlan<index_t, float>>(a, o);
                  return std::make_unique<EigenPlan<std::int64_t, float>>(a, o);
                }
                if (small) return std::make_unique<EigenPlan<index_t, double>>(a, o);
                return std::make_unique<EigenPlan<std::int64_t, double>>(a, o);
              }});
}

}  // namespace spmv::cpu

#else

namespace spmv::cpu {
void register_eigen_baseline() {}  // built without Eigen: no baseline kernel
}  // namespace spmv::cpu

#endif
