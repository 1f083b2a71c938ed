// OpenMP CSR with shared values: each entry's value an index (1, 2 or, past 65536 distinct values,
// 4 bytes) into the matrix's table of distinct values, so a nonzero moves 5 or 6 bytes instead of
// 12 where values repeat (stencils, pattern and integer matrices, repeated element matrices).
// Rows split into parts of equal nonzeros, one a thread; SpMV and SpMM through the row kernels.
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/register.hpp"
#include "cpu/cpu_plan.hpp"
#include "cpu/row_kernels.hpp"
#include "cpu/trial.hpp"
#include "formats/shared_values.hpp"

namespace spmv::cpu {

// A row whose values come through an index into a table (found by the row kernels by ADL).
template <class IT, class V>
struct SharedRowRef {
  const index_t* col;
  const IT* idx;
  const V* table;
  offset_t len;
};
template <class IT, class V, class VV>
inline VV row_dot(const SharedRowRef<IT, V>& row, const VV* x) {
  VV s = 0;
#pragma omp simd reduction(+ : s)
  for (offset_t p = 0; p < row.len; ++p) s += static_cast<VV>(row.table[row.idx[p]]) * x[row.col[p]];
  return s;
}
template <class IT, class V, class VV>
inline VV row_dot_scalar(const SharedRowRef<IT, V>& row, const VV* x) {
  VV s = 0;
  for (offset_t p = 0; p < row.len; ++p) s += static_cast<VV>(row.table[row.idx[p]]) * x[row.col[p]];
  return s;
}
template <class IT, class V>
inline std::size_t entry_col(const SharedRowRef<IT, V>& r, offset_t p) {
  return static_cast<std::size_t>(r.col[p]);
}
template <class IT, class V>
inline V entry_val(const SharedRowRef<IT, V>& r, offset_t p) {
  return r.table[r.idx[p]];
}

template <class IT, class V>
struct SharedCsrRows {
  using value_type = V;
  const offset_t* rp;
  const index_t* col;
  const IT* idx;
  const V* table;
  SharedRowRef<IT, V> operator()(index_t r) const {
    const offset_t b = rp[r];
    return {col + b, idx + b, table, rp[r + 1] - b};
  }
};

namespace {

constexpr std::size_t kMaxNarrow = 65536;

class OmpCsrShared final : public CpuPlan {
 public:
  OmpCsrShared(const CsrView& a, const PlanOptions& opt)
      : CpuPlan(a.rows, a.cols, opt), threads_(plan_threads(opt)), float_values_(opt.precision != Precision::Double) {
    const auto t0 = std::chrono::steady_clock::now();
    // The copies, the indices at their widest and a table entry and a hash entry per value at worst.
    check_format_memory("csr-shared", static_cast<double>(a.nnz()) * (4 + 4 + 2 * 8 + 32) + 8.0 * (a.rows + 1), a,
                        convert_options(opt));
    rp_.assign(a.row_ptr.begin(), a.row_ptr.end());
    col_.assign(a.col.begin(), a.col.end());
    if (float_values_)
      build<float>(a, tablef_);
    else
      build<double>(a, table_);
    // Parts of equal nonzeros, one a thread.
    const int parts = static_cast<int>(std::clamp<offset_t>(rows_, 1, threads_));
    bounds_.assign(static_cast<std::size_t>(parts) + 1, rows_);
    bounds_[0] = 0;
    for (int p = 1; p < parts; ++p)
      bounds_[static_cast<std::size_t>(p)] =
          static_cast<index_t>(std::lower_bound(rp_.begin(), rp_.end(), a.nnz() * p / parts) - rp_.begin());
    convert_seconds = seconds_since(t0);
    stored_entries = a.nnz();
    bytes_per_product = (4 + index_bytes_) * a.nnz() + 8 * static_cast<offset_t>(a.rows) +
                        vector_bytes(opt.precision) * (static_cast<offset_t>(a.cols) + a.rows) * opt.k;
    const auto t1 = std::chrono::steady_clock::now();
    if (k_ == 1) {
      choose_inner(
          row_variant(opt.kernel.variant, false, "csr-shared").inner, [this](bool s) { simd_ = s; },
          [this] { product(); });
      detail = fmt::format("inner={} ", simd_ ? "simd" : "scalar");
    }
    detail += fmt::format("{} distinct values, {}-byte indices", distinct_, index_bytes_);
    setup_seconds = seconds_since(t1);
    note_fewer_threads(detail, parts, threads_, fmt::format("{} row{}", rows_, rows_ == 1 ? "" : "s"));
  }

  int threads_used() const override { return threads_running(static_cast<int>(bounds_.size()) - 1); }

 protected:
  void product() override {
    if (float_values_)
      with_index(tablef_);
    else
      with_index(table_);
  }

 private:
  template <class V>
  void build(const CsrView& a, std::vector<V>& table) {
    const offset_t nnz = a.nnz();
    const detail::DistinctValues<V> d = detail::distinct_values<V>(a, SIZE_MAX, threads_);
    table = d.table;
    distinct_ = table.size();
    index_bytes_ = distinct_ <= 256 ? 1 : distinct_ <= kMaxNarrow ? 2 : 4;
    idx_.resize(static_cast<std::size_t>(nnz) * static_cast<std::size_t>(index_bytes_));
#pragma omp parallel for schedule(static) num_threads(threads_)
    for (offset_t q = 0; q < nnz; ++q) {
      const std::uint32_t i = d.index_of(detail::entry_value<V>(a, q));
      unsigned char* dst = idx_.data() + q * index_bytes_;
      if (index_bytes_ == 1)
        *dst = static_cast<unsigned char>(i);
      else if (index_bytes_ == 2)
        *reinterpret_cast<std::uint16_t*>(dst) = static_cast<std::uint16_t>(i);
      else
        *reinterpret_cast<std::uint32_t*>(dst) = i;
    }
    if (table.empty()) table.push_back(V(0));
  }

  template <class V>
  void with_index(const std::vector<V>& table) {
    if (index_bytes_ == 1)
      run(SharedCsrRows<std::uint8_t, V>{rp_.data(), col_.data(), idx_.data(), table.data()});
    else if (index_bytes_ == 2)
      run(SharedCsrRows<std::uint16_t, V>{rp_.data(), col_.data(), reinterpret_cast<const std::uint16_t*>(idx_.data()),
                                          table.data()});
    else
      run(SharedCsrRows<std::uint32_t, V>{rp_.data(), col_.data(), reinterpret_cast<const std::uint32_t*>(idx_.data()),
                                          table.data()});
  }

  template <class Rows>
  void run(const Rows& rows) {
    with_flag(simd_, [&](auto simd) {
      constexpr bool S = decltype(simd)::value;
      const int parts = static_cast<int>(bounds_.size()) - 1;
      if (parts == 1) return rows_part<S>(rows, 0, rows_, 0);
#pragma omp parallel num_threads(parts)
      {
        const int nt = omp_get_num_threads(), me = omp_get_thread_num();
        for (int p = me; p < parts; p += nt)
          rows_part<S>(rows, bounds_[static_cast<std::size_t>(p)], bounds_[static_cast<std::size_t>(p) + 1], me);
      }
    });
  }

  int threads_;
  bool float_values_;
  bool simd_ = true;
  std::size_t distinct_ = 0;
  int index_bytes_ = 1;
  std::vector<offset_t> rp_;
  std::vector<index_t> col_;
  std::vector<unsigned char> idx_;  // operator new aligns it for the 2- and 4-byte views
  std::vector<double> table_;
  std::vector<float> tablef_;
  std::vector<index_t> bounds_;
};

}  // namespace

void register_omp_csr_shared() {
  add_kernel({.name = "csr-shared",
              .backend = Backend::Omp,
              .format = "csr-shared",
              .description = "OpenMP CSR with shared values: each entry a column and a 1- or 2-byte index into the "
                             "matrix's distinct values (4 bytes past 65536 of them); rows in parts of equal nonzeros",
              .spmm = true,
              .precisions = {Precision::Double, Precision::Single, Precision::Mixed},
              .params = {"threads"},
              .variants = row_variants(false),
              .make = [](const CsrView& a, const PlanOptions& o) -> std::unique_ptr<Plan> {
                return std::make_unique<OmpCsrShared>(a, o);
              }});
}

}  // namespace spmv::cpu
