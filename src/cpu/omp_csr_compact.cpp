// OpenMP compact CSR: fewer bytes a nonzero than CSR's 12 (8 in single precision) where the matrix
// allows. Columns: a row whose columns span less than 65536 keeps 2-byte offsets from its smallest
// column, other rows their 4-byte columns. Values: where the matrix has at most 65536 distinct
// values (stencils, pattern and integer matrices, repeated element matrices), a 1- or 2-byte index
// into their table. A stencil's nonzero then moves 3 bytes. Each is a variant word (index
// narrow|wide, values shared|plain), chosen from the matrix where not given. Rows split into parts
// of equal nonzeros, one a thread; SpMV and SpMM through the row kernels.
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "core/register.hpp"
#include "cpu/cpu_plan.hpp"
#include "cpu/row_kernels.hpp"
#include "cpu/trial.hpp"
#include "formats/compact.hpp"

namespace spmv::cpu {

// A compact row (found by the row kernels by ADL): columns CT (2-byte offsets from `base`, or
// 4-byte columns with base 0), values in place (IT = V) or an index into `table`.
template <class IT, class V, class CT>
struct CompactRowRef {
  const CT* col;
  index_t base;
  const IT* val;
  const V* table;
  offset_t len;
  V value(offset_t p) const {
    if constexpr (std::is_same_v<IT, V>)
      return val[p];
    else
      return table[val[p]];
  }
};
template <class IT, class V, class CT, class VV>
inline VV row_dot(const CompactRowRef<IT, V, CT>& row, const VV* x) {
  const VV* xb = x + row.base;
  VV s = 0;
#pragma omp simd reduction(+ : s)
  for (offset_t p = 0; p < row.len; ++p) s += static_cast<VV>(row.value(p)) * xb[row.col[p]];
  return s;
}
// Four sums: one would make each entry wait for the last one's add.
template <class IT, class V, class CT, class VV>
inline VV row_dot_scalar(const CompactRowRef<IT, V, CT>& row, const VV* x) {
  const VV* xb = x + row.base;
  VV s[4] = {0, 0, 0, 0};
  offset_t p = 0;
  for (; p + 4 <= row.len; p += 4)
    for (int u = 0; u < 4; ++u) s[u] += static_cast<VV>(row.value(p + u)) * xb[row.col[p + u]];
  for (; p < row.len; ++p) s[0] += static_cast<VV>(row.value(p)) * xb[row.col[p]];
  return (s[0] + s[1]) + (s[2] + s[3]);
}
template <class IT, class V, class CT>
inline std::size_t entry_col(const CompactRowRef<IT, V, CT>& r, offset_t p) {
  return static_cast<std::size_t>(r.base) + r.col[p];
}
template <class IT, class V, class CT>
inline V entry_val(const CompactRowRef<IT, V, CT>& r, offset_t p) {
  return r.value(p);
}

// Every row narrow (CT = uint16_t, base given) or every row wide (CT = index_t, no base).
template <class IT, class V, class CT>
struct CompactCsrRows {
  using value_type = V;
  const offset_t* rp;
  const index_t* base;
  const CT* col;
  const IT* val;
  const V* table;
  CompactRowRef<IT, V, CT> operator()(index_t r) const {
    const offset_t b = rp[r];
    return {col + b, base ? base[r] : 0, val + b, table, rp[r + 1] - b};
  }
};

// Some rows narrow (base[r] >= 0), some wide: a row of either kind, the branch once a row.
template <class IT, class V>
struct MixedRowRef {
  CompactRowRef<IT, V, std::uint16_t> narrow;
  const index_t* wide;  // null: a narrow row
  offset_t len;
};
template <class IT, class V>
CompactRowRef<IT, V, index_t> as_wide(const MixedRowRef<IT, V>& r) {
  return {r.wide, 0, r.narrow.val, r.narrow.table, r.narrow.len};
}
template <class IT, class V, class VV>
inline VV row_dot(const MixedRowRef<IT, V>& row, const VV* x) {
  return row.wide ? row_dot(as_wide(row), x) : row_dot(row.narrow, x);
}
template <class IT, class V, class VV>
inline VV row_dot_scalar(const MixedRowRef<IT, V>& row, const VV* x) {
  return row.wide ? row_dot_scalar(as_wide(row), x) : row_dot_scalar(row.narrow, x);
}
template <class IT, class V>
inline std::size_t entry_col(const MixedRowRef<IT, V>& r, offset_t p) {
  return r.wide ? static_cast<std::size_t>(r.wide[p]) : entry_col(r.narrow, p);
}
template <class IT, class V>
inline V entry_val(const MixedRowRef<IT, V>& r, offset_t p) {
  return r.narrow.value(p);
}
template <class IT, class V>
struct MixedCsrRows {
  using value_type = V;
  const offset_t* rp;
  const index_t* base;
  const std::uint16_t* c16;
  const index_t* c32;
  const IT* val;
  const V* table;
  MixedRowRef<IT, V> operator()(index_t r) const {
    const offset_t b = rp[r];
    const bool narrow = base[r] >= 0;
    const offset_t len = rp[r + 1] - b;
    return {{c16 + b, narrow ? base[r] : 0, val + b, table, len}, narrow ? nullptr : c32 + b, len};
  }
};

namespace {

std::vector<VariantGroup> csr_compact_variants() {
  std::vector<VariantGroup> g = row_variants(false);
  for (auto& c : detail::compact_variants()) g.push_back(std::move(c));
  return g;
}

class OmpCsrCompact final : public CpuPlan {
 public:
  OmpCsrCompact(const CsrView& a, const PlanOptions& opt)
      : CpuPlan(a.rows, a.cols, opt), threads_(plan_threads(opt)), float_values_(opt.precision != Precision::Double) {
    const auto t0 = std::chrono::steady_clock::now();
    const VariantChoice words = parse_variant("csr-compact", csr_compact_variants(), opt.kernel.variant);
    const detail::CompactChoice want = detail::compact_choice(words);
    // At most: the row pointers and bases, both column copies, values in place, and while the
    // distinct values are counted each thread's set of at most kMaxSharedValues (about 48 bytes an
    // entry) and the table with its index.
    const double vb = value_bytes(opt.precision);
    const double hashing = 48.0 * static_cast<double>(detail::kMaxSharedValues) * (threads_ + 2);
    check_format_memory("csr-compact", static_cast<double>(a.nnz()) * (2 + 4 + vb) + 12.0 * (a.rows + 1) + hashing, a,
                        convert_options(opt));
    rp_.assign(a.row_ptr.begin(), a.row_ptr.end());
    columns(a, want.narrow);
    if (float_values_)
      values<float>(a, want.shared, tablef_, valf_);
    else
      values<double>(a, want.shared, table_, val_);
    // Parts of equal nonzeros, one a thread.
    const int parts = static_cast<int>(std::clamp<offset_t>(rows_, 1, threads_));
    bounds_ = balanced_bounds(rows_, parts, [this](index_t i) { return rp_[static_cast<std::size_t>(i)]; });
    convert_seconds = seconds_since(t0);
    stored_entries = a.nnz();
    const offset_t wide_entries = a.nnz() - narrow_entries_;
    bytes_per_product = 2 * narrow_entries_ + 4 * wide_entries + value_bytes_ * a.nnz() +
                        (8 + (base_.empty() ? 0 : 4)) * static_cast<offset_t>(a.rows) +
                        vector_bytes(opt.precision) * (static_cast<offset_t>(a.cols) + a.rows) * opt.k;
    const auto t1 = std::chrono::steady_clock::now();
    if (k_ == 1) {
      choose_inner(
          row_variant(words).inner, [this](bool s) { simd_ = s; }, [this] { product(); });
      detail = fmt::format("inner={} ", simd_ ? "simd" : "scalar");
    }
    detail += fmt::format("index={} ({} of {} rows in 2-byte offsets) values={}", narrow_ ? "narrow" : "wide",
                          narrow_rows_, rows_, shared_ ? "shared" : "plain");
    detail += shared_ ? fmt::format(" ({} distinct, {}-byte indices)", distinct_, value_bytes_)
                      : fmt::format(" ({})", values_why_);
    setup_seconds = seconds_since(t1);
    note_fewer_threads(detail, parts, threads_, fmt::format("{} row{}", rows_, rows_ == 1 ? "" : "s"));
  }

  int threads_used() const override { return threads_running(static_cast<int>(bounds_.size()) - 1); }

 protected:
  void product() override {
    if (float_values_)
      with_values(tablef_, valf_);
    else
      with_values(table_, val_);
  }

 private:
  // Rows whose columns span less than kNarrowSpan keep 2-byte offsets from their smallest column.
  // narrow -1: where at least half the entries are in such rows; 4-byte columns kept where any row
  // needs them.
  void columns(const CsrView& a, int narrow) {
    std::vector<index_t> base(static_cast<std::size_t>(a.rows), -1);
    offset_t fit = 0, rows_fit = 0;
#pragma omp parallel for schedule(static) num_threads(threads_) reduction(+ : fit, rows_fit)
    for (index_t r = 0; r < a.rows; ++r) {
      const auto [lo, hi] = std::minmax_element(a.col.begin() + a.row_ptr[r], a.col.begin() + a.row_ptr[r + 1]);
      if (lo == hi && a.row_ptr[r] == a.row_ptr[r + 1]) {
        base[static_cast<std::size_t>(r)] = 0;  // empty: narrow, nothing read
      } else if (*hi - *lo < detail::kNarrowSpan) {
        base[static_cast<std::size_t>(r)] = *lo;
        fit += a.row_ptr[r + 1] - a.row_ptr[r];
      } else {
        continue;
      }
      ++rows_fit;
    }
    const bool use = narrow == 1 || (narrow < 0 && 2 * fit >= a.nnz() && a.nnz() > 0);
    if (!use) {
      col_.assign(a.col.begin(), a.col.end());
      return;
    }
    narrow_ = true;
    narrow_entries_ = fit;
    narrow_rows_ = rows_fit;
    base_ = std::move(base);
    c16_.resize(static_cast<std::size_t>(a.nnz()));
    const bool any_wide = rows_fit < a.rows;
    if (any_wide) col_.assign(a.col.begin(), a.col.end());
#pragma omp parallel for schedule(static) num_threads(threads_)
    for (index_t r = 0; r < a.rows; ++r)
      if (const index_t b = base_[static_cast<std::size_t>(r)]; b >= 0)
        for (offset_t q = a.row_ptr[r]; q < a.row_ptr[r + 1]; ++q)
          c16_[static_cast<std::size_t>(q)] = static_cast<std::uint16_t>(a.col[q] - b);
  }

  // shared -1: where there are at most kMaxSharedValues distinct values; asked for with more:
  // kept in place, and the detail says why.
  template <class V>
  void values(const CsrView& a, int shared, std::vector<V>& table, std::vector<V>& in_place) {
    const offset_t nnz = a.nnz();
    if (shared != 0) {
      const detail::DistinctValues<V> d = detail::distinct_values<V>(a, detail::kMaxSharedValues, threads_);
      if (!d.over) {
        table = d.table;
        if (table.empty()) table.push_back(V(0));
        distinct_ = d.table.size();
        value_bytes_ = distinct_ <= 256 ? 1 : 2;
        shared_ = true;
        idx_.resize(static_cast<std::size_t>(nnz) * static_cast<std::size_t>(value_bytes_));
#pragma omp parallel for schedule(static) num_threads(threads_)
        for (offset_t q = 0; q < nnz; ++q) {
          const std::uint32_t i = d.index_of(detail::entry_value<V>(a, q));
          if (value_bytes_ == 1)
            idx_[static_cast<std::size_t>(q)] = static_cast<unsigned char>(i);
          else
            reinterpret_cast<std::uint16_t*>(idx_.data())[q] = static_cast<std::uint16_t>(i);
        }
        return;
      }
      values_why_ = fmt::format("over {} distinct values", detail::kMaxSharedValues);
    } else {
      values_why_ = "as asked";
    }
    value_bytes_ = sizeof(V);
    in_place.resize(static_cast<std::size_t>(nnz));
#pragma omp parallel for schedule(static) num_threads(threads_)
    for (offset_t q = 0; q < nnz; ++q) in_place[static_cast<std::size_t>(q)] = detail::entry_value<V>(a, q);
  }

  template <class V>
  void with_values(const std::vector<V>& table, const std::vector<V>& in_place) {
    const auto go = [&]<class IT>(const IT* v) {
      if (!narrow_)
        run(CompactCsrRows<IT, V, index_t>{rp_.data(), nullptr, col_.data(), v, table.data()});
      else if (col_.empty())
        run(CompactCsrRows<IT, V, std::uint16_t>{rp_.data(), base_.data(), c16_.data(), v, table.data()});
      else
        run(MixedCsrRows<IT, V>{rp_.data(), base_.data(), c16_.data(), col_.data(), v, table.data()});
    };
    if (!shared_)
      go(in_place.data());
    else if (value_bytes_ == 1)
      go(reinterpret_cast<const std::uint8_t*>(idx_.data()));
    else
      go(reinterpret_cast<const std::uint16_t*>(idx_.data()));
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
  bool narrow_ = false, shared_ = false;
  std::size_t distinct_ = 0;
  int value_bytes_ = 8;  // 1 or 2 (an index), else the value's own
  std::string values_why_;
  offset_t narrow_entries_ = 0, narrow_rows_ = 0;
  std::vector<offset_t> rp_;
  std::vector<index_t> base_;       // per row: its smallest column (narrow), or -1; empty: all wide
  std::vector<std::uint16_t> c16_;  // narrow rows' column offsets
  std::vector<index_t> col_;        // 4-byte columns, kept where a row needs them
  std::vector<unsigned char> idx_;  // operator new aligns it for the 2-byte view
  std::vector<double> table_, val_;
  std::vector<float> tablef_, valf_;
  std::vector<index_t> bounds_;
};

}  // namespace

void register_omp_csr_compact() {
  add_kernel({.name = "csr-compact",
              .backend = Backend::Omp,
              .format = "csr-compact",
              .description = "OpenMP compact CSR: 2-byte column offsets in rows spanning under 65536 columns, "
                             "values as a 1- or 2-byte index into the matrix's distinct values where there are "
                             "at most 65536; rows in parts of equal nonzeros",
              .spmm = true,
              .precisions = {Precision::Double, Precision::Single, Precision::Mixed},
              .params = {"threads"},
              .variants = csr_compact_variants(),
              .make = [](const CsrView& a, const PlanOptions& o) -> std::unique_ptr<Plan> {
                return std::make_unique<OmpCsrCompact>(a, o);
              }});
}

}  // namespace spmv::cpu
