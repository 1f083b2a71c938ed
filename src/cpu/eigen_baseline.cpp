// Baseline: Eigen's row-major sparse x dense product, parallel through Eigen's own OpenMP loop
// (schedule(dynamic) over rows, enabled above 20000 nonzeros). The matrix is an Eigen::Map of our
// arrays: only the row pointer is copied, to 32 bits, because Eigen wants one index type for both
// index arrays; beyond 2^31 nonzeros the column indices are widened to 64 bits instead.
#include "cpu/register_cpu.hpp"

#ifdef SPMV_HAVE_EIGEN
#include <Eigen/Core>
#include <Eigen/SparseCore>

#include <cstdint>
#include <limits>

#include "cpu/cpu_plan.hpp"

namespace spmv::cpu {

namespace {

template <class Index>
class EigenPlan final : public CpuPlan {
  using SpMat = Eigen::SparseMatrix<double, Eigen::RowMajor, Index>;
  using RowMat = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  using ColMat = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::ColMajor>;

 public:
  EigenPlan(const CsrView& a, const PlanOptions& opt)
      : CpuPlan(a.rows, a.cols, opt), threads_(plan_threads(opt)),
        outer_(a.row_ptr.begin(), a.row_ptr.end()) {
    const auto t0 = std::chrono::steady_clock::now();
    const Index* inner;
    if constexpr (std::is_same_v<Index, index_t>) {
      inner = a.col.data();
    } else {
      inner_.assign(a.col.begin(), a.col.end());
      inner = inner_.data();
    }
    map_ = std::make_unique<Eigen::Map<const SpMat>>(a.rows, a.cols, a.nnz(), outer_.data(), inner, a.val.data());
    convert_seconds = seconds_since(t0);
    stored_entries = a.nnz();
    bytes_per_product = (static_cast<offset_t>(sizeof(Index)) + 8) * a.nnz() +
                        static_cast<offset_t>(sizeof(Index)) * (a.rows + 1) +
                        8 * static_cast<offset_t>(a.cols) * opt.k + 8 * static_cast<offset_t>(a.rows) * opt.k;
    detail = fmt::format("eigen {}.{}.{}, index {} bits", EIGEN_WORLD_VERSION, EIGEN_MAJOR_VERSION,
                         EIGEN_MINOR_VERSION, 8 * sizeof(Index));
  }

 protected:
  void product() override {
    // Eigen's thread count is process-wide; set it for this plan before each product.
    Eigen::setNbThreads(threads_);
    const auto& A = *map_;
    if (k_ == 1) {
      Eigen::Map<const Eigen::VectorXd> x(x_.data(), cols_);
      Eigen::Map<Eigen::VectorXd> y(y_.data(), rows_);
      y.noalias() = A * x;
    } else if (layout_ == Layout::RowMajor) {
      Eigen::Map<const RowMat> x(x_.data(), cols_, k_);
      Eigen::Map<RowMat> y(y_.data(), rows_, k_);
      y.noalias() = A * x;
    } else {
      Eigen::Map<const ColMat> x(x_.data(), cols_, k_);
      Eigen::Map<ColMat> y(y_.data(), rows_, k_);
      y.noalias() = A * x;
    }
  }

 private:
  int threads_;
  std::vector<Index> outer_, inner_;
  std::unique_ptr<Eigen::Map<const SpMat>> map_;
};

}  // namespace

void register_eigen_baseline() {
  add_kernel({.name = "eigen",
              .backend = Backend::Omp,
              .format = "csr",
              .description = "Eigen row-major SparseMatrix * dense (Eigen's OpenMP), the CPU baseline",
              .baseline = true,
              .spmm = true,
              .params = {"threads"},
              .make = [](const CsrView& a, const PlanOptions& o) -> std::unique_ptr<Plan> {
                if (a.nnz() < std::numeric_limits<std::int32_t>::max())
                  return std::make_unique<EigenPlan<index_t>>(a, o);
                return std::make_unique<EigenPlan<std::int64_t>>(a, o);
              }});
}

}  // namespace spmv::cpu

#else

namespace spmv::cpu {
void register_eigen_baseline() {}  // built without Eigen: no baseline kernel
}  // namespace spmv::cpu

#endif
