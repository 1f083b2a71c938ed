// CSR scatter: y = alpha * A^T x + beta * y from A as stored (KernelSpec::scatters): entry a_ij of
// row i adds a_ij * x_i into y_j, so no transpose is made. Each part of A's rows (balanced by
// nonzeros; one part on the serial backend) adds into its own copy of y, kept zero between products;
// the copies are then summed in part order, a block of y per thread, into y (alpha and beta applied
// there) and cleared on the way, each copy only over the columns its part holds. No atomics: the same bits on every run for a given number of
// parts. The copies cost parts x cols(A) x k vector slots, refused over the memory budget, and are
// read and cleared at each product: against A^T made once, it pays for a few products or where
// A^T does not fit.
#include <algorithm>

#include <spmv/formats/limits.hpp>

#include "cpu/cpu_plan.hpp"
#include "cpu/partition.hpp"
#include "cpu/tuning.hpp"
#include "core/register.hpp"

namespace spmv::cpu {

namespace {

// Fewer nonzeros than this per part: fewer parts (each part's copy of y is cleared at each product).
constexpr offset_t kMinNnzPerPart = 4096;

class CsrScatter final : public CpuPlan {
 public:
  // rows_ and cols_ are the product's: A's columns and A's rows.
  CsrScatter(const CsrView& a, const PlanOptions& opt, int threads)
      : CpuPlan(a.cols, a.rows, opt), a_(a), float_values_(opt.precision != Precision::Double) {
    const auto t0 = std::chrono::steady_clock::now();
    if (float_values_) {
      vf_ = float_values_of(a, threads, valf_);
      if (!a.values_in_float()) convert_seconds = seconds_since(t0);
    }
    const offset_t nnz = a.nnz();
    parts_ = static_cast<int>(std::clamp<offset_t>(nnz / kMinNnzPerPart, 1, threads));
    ny_ = static_cast<std::size_t>(a.cols) * opt.k;
    const double copy_bytes = static_cast<double>(parts_) * static_cast<double>(ny_) * vector_bytes(opt.precision);
    check_format_memory("csr-scatter's copies of y (" + std::to_string(parts_) + ")", copy_bytes, a,
                        convert_options(opt));
    const auto t1 = std::chrono::steady_clock::now();
    if (single_)
      copiesf_ = parallel_zeros<float>(parts_ * ny_);
    else
      copies_ = parallel_zeros<double>(parts_ * ny_);
    const offset_t* rp = a.row_ptr.data();
    bounds_ = balanced_bounds(a.rows, parts_, [rp](index_t i) { return rp[i] + i; });
    find_column_spans(threads);
    setup_seconds = seconds_since(t1);
    // The matrix and x once, y read and written, each copy written by the scatter and read (and
    // cleared) by the sum over its part's columns.
    offset_t spanned = 0;
    for (const auto& [lo, hi] : spans_) spanned += std::max<offset_t>(hi - lo, 0);
    bytes_per_product = csr_product_bytes(a, opt.k, opt.precision) +
                        vector_bytes(opt.precision) * (static_cast<offset_t>(ny_) + 2 * spanned * opt.k);
    stored_entries = nnz;
    detail = fmt::format("rows scattered into {} cop{} of y", parts_, parts_ == 1 ? "y" : "ies");
    note_fewer_threads(detail, parts_, threads, fmt::format("{} nonzeros (a part per {})", nnz, kMinNnzPerPart));
  }

  int threads_used() const override { return threads_running(parts_); }

 protected:
  void product() override {
    if (float_values_)
      for_vectors<float>([&]<class VV>() { scatter_sum<float, VV>(vf_); });
    else
      for_vectors<double>([&]<class VV>() { scatter_sum<double, VV>(a_.val.data()); });
  }

 private:
  template <class VV>
  VV* copies() {
    if constexpr (std::is_same_v<VV, float>)
      return copiesf_.data();
    else
      return copies_.data();
  }

  // Rows [r0, r1) of A added into one copy of y (A's columns: n = rows_ of the product; X's rows: m = cols_).
  template <class V, class VV>
  void scatter_rows(index_t r0, index_t r1, const V* val, const VV* x, VV* out) const {
    const offset_t* rp = a_.row_ptr.data();
    const index_t* col = a_.col.data();
    const std::size_t n = static_cast<std::size_t>(rows_), m = static_cast<std::size_t>(cols_), k = k_;
    for (index_t r = r0; r < r1; ++r)
      if (k == 1) {
        const VV xr = x[r];
        for (offset_t p = rp[r]; p < rp[r + 1]; ++p) out[col[p]] += static_cast<VV>(val[p]) * xr;
      } else if (layout_ == Layout::RowMajor) {
        const VV* xr = x + static_cast<std::size_t>(r) * k;
        for (offset_t p = rp[r]; p < rp[r + 1]; ++p) {
          VV* o = out + static_cast<std::size_t>(col[p]) * k;
          const VV v = static_cast<VV>(val[p]);
          for (std::size_t c = 0; c < k; ++c) o[c] += v * xr[c];
        }
      } else {
        for (offset_t p = rp[r]; p < rp[r + 1]; ++p) {
          const VV v = static_cast<VV>(val[p]);
          for (std::size_t c = 0; c < k; ++c) out[c * n + col[p]] += v * x[c * m + r];
        }
      }
  }

  // The columns of A each part's rows hold, [lo, hi): its copy of y is nonzero only there, so the
  // sum reads and clears only there (a band matrix's parts overlap little).
  void find_column_spans(int threads) {
    spans_.assign(static_cast<std::size_t>(parts_), {a_.cols, 0});
    const offset_t* rp = a_.row_ptr.data();
    const index_t* col = a_.col.data();
#pragma omp parallel for schedule(static) num_threads(threads) if (parts_ > 1)
    for (int q = 0; q < parts_; ++q) {
      index_t lo = a_.cols, hi = 0;
      for (offset_t p = rp[bounds_[q]]; p < rp[bounds_[q + 1]]; ++p) {
        lo = std::min(lo, col[p]);
        hi = std::max(hi, col[p] + 1);
      }
      spans_[q] = {lo, hi};
    }
  }

  template <class V, class VV>
  void scatter_sum(const V* val) {
    const VV* x = vec_x<VV>();
    VV* y = vec_y<VV>();
    VV* cp = copies<VV>();
    const Scale<VV> sc = scale<VV>();
    const std::size_t ny = ny_;
    const int parts = parts_;
    // Element e of y (and of each copy) is for A's column j(e).
    const std::size_t n = static_cast<std::size_t>(rows_), k = k_;
    const bool col_major = k > 1 && layout_ == Layout::ColMajor;
    const auto sum = [&](std::size_t e) {
      const auto j = static_cast<index_t>(col_major ? e % n : e / k);
      VV s = 0;
      for (int q = 0; q < parts; ++q)
        if (spans_[q].first <= j && j < spans_[q].second) {
          s += cp[q * ny + e];
          cp[q * ny + e] = 0;
        }
      sc.put(y[e], s);
    };
    if (parts == 1) {  // no parallel region: a small matrix's product costs less than one
      scatter_rows(0, cols_, val, x, cp);
      for (std::size_t e = 0; e < ny; ++e) sum(e);
      return;
    }
#pragma omp parallel num_threads(parts)
    {
#if defined(_OPENMP)
      const int nt = omp_get_num_threads(), me = omp_get_thread_num();
#else
      const int nt = 1, me = 0;
#endif
      for (int q = me; q < parts; q += nt) scatter_rows(bounds_[q], bounds_[q + 1], val, x, cp + q * ny);
#pragma omp barrier
#pragma omp for schedule(static)
      for (std::size_t e = 0; e < ny; ++e) sum(e);
    }
  }

  CsrView a_;
  bool float_values_;
  const float* vf_ = nullptr;  // single and mixed: a float matrix's own values, or valf_
  HostArray<float> valf_;
  int parts_ = 1;
  std::size_t ny_ = 0;
  std::vector<index_t> bounds_;
  std::vector<std::pair<index_t, index_t>> spans_;  // per part: the columns of A its rows hold
  HostArray<double> copies_;  // parts_ copies of y, zero between products (double and mixed plans)
  HostArray<float> copiesf_;  // ... single plans
};

KernelSpec scatter_spec(Backend b) {
  const bool omp = b == Backend::Omp;
  return {.name = "csr-scatter",
          .backend = b,
          .format = "csr",
          .description = omp ? "A^T x from A as stored: row parts scattered into copies of y, summed in order "
                               "(deterministic; no transpose made)"
                             : "A^T x from A as stored: rows scattered into y (no transpose made)",
          .spmm = true,
          .precisions = {Precision::Double, Precision::Single, Precision::Mixed},
          .params = omp ? std::vector<std::string>{"threads"} : std::vector<std::string>{},
          .scatters = true,
          .make = [omp](const CsrView& a, const PlanOptions& o) -> std::unique_ptr<Plan> {
            return std::make_unique<CsrScatter>(a, o, omp ? plan_threads(o) : 1);
          }};
}

}  // namespace

void register_csr_scatter() {
  add_kernel(scatter_spec(Backend::Serial));
  add_kernel(scatter_spec(Backend::Omp));
}

}  // namespace spmv::cpu
