// OpenMP ELLPACK (row-major): every row has the same padded width, so a static split into equal
// row ranges balances "ell"; "ell-rowlen" uses the same split and skips each row's padding. With
// chunk_rows, a dynamic schedule of that many rows a chunk instead (002's: 3). SpMM by elements
// (004's): every result Y(i, j) its own dot product, rows x K collapsed under a static schedule.
// "ell-rowlen --variant unpadded": 004's ELL without padding in storage, the rows' entries back to
// back, each row at the running sum of the lengths before it (nnz slots, not rows x width; the
// layout is CSR's, with the row loop and schedules of ELL).
#include <spmv/formats/ell.hpp>

#include <omp.h>

#include "cpu/cpu_plan.hpp"
#include "cpu/row_kernels.hpp"
#include "core/register.hpp"

namespace spmv::cpu {

// The row kernels' words and ELL's own: spmm rows|elements; ell-rowlen's (skip_padding) storage
// padded|unpadded too.
std::vector<VariantGroup> ell_variants(bool skip_padding);

namespace {

class OmpEll final : public CpuPlan {
 public:
  OmpEll(const CsrView& a, const PlanOptions& opt, bool skip_padding)
      : CpuPlan(a.rows, a.cols, opt),
        skip_padding_(skip_padding),
        threads_(plan_threads(opt)),
        chunk_rows_(opt.kernel.chunk_rows),
        float_values_(opt.precision != Precision::Double) {
    const VariantChoice choice =
        parse_variant(skip_padding ? "ell-rowlen" : "ell", ell_variants(skip_padding), opt.kernel.variant);
    unpadded_ = choice["storage"] == "unpadded";
    const auto t0 = std::chrono::steady_clock::now();
    if (unpadded_) {
      if (float_values_)
        rf_ = Ragged<float>(a);
      else
        r_ = Ragged<double>(a);
      stored_entries = a.nnz();
      bytes_per_product = (4 + value_bytes(opt.precision)) * a.nnz() + 8 * (offset_t{rows_} + 1) +
                          vector_bytes(opt.precision) * (offset_t{cols_} + rows_) * opt.k;
    } else {
      if (float_values_)
        ef_ = csr_to_ell<float>(a, Layout::RowMajor, convert_options(opt));
      else
        e_ = csr_to_ell(a, Layout::RowMajor, convert_options(opt));
      stored_entries = float_values_ ? ef_.slots() : e_.slots();
      bytes_per_product = float_values_ ? ell_product_bytes(ef_, skip_padding, opt.k, opt.precision)
                                        : ell_product_bytes(e_, skip_padding, opt.k, opt.precision);
    }
    convert_seconds = seconds_since(t0);
    const auto t1 = std::chrono::steady_clock::now();
    const RowVariant v = row_variant(choice);
    by_elements_ = k_ > 1 && choice["spmm"] == "elements";
    if (by_elements_) {
      detail = fmt::format("spmm=elements layout={}", layout_ == Layout::ColMajor ? "col" : "row");
    } else if (k_ == 1) {  // SpMV: keep the faster of the simd and scalar row loops
      choose_inner(
          v.inner, [this](bool s) { simd_ = s; }, [this] { product(); });
      detail = fmt::format("inner={}", simd_ ? "simd" : "scalar");
    } else if (transpose_possible()) {  // column-major SpMM: native or through row-major copies
      if (v.via != 0) make_transpose_scratch(threads_);
      std::string trial;
      choose_via(
          v.via, [this](bool t) { via_transpose_ = t; }, [this] { product(); }, trial);
      release_unused_transpose_scratch();
      detail = via_detail() + trial;
    }
    if (chunk_rows_ > 0)
      detail += fmt::format("{}schedule=dynamic chunk_rows={}", detail.empty() ? "" : " ", chunk_rows_);
    if (unpadded_) detail += std::string(detail.empty() ? "" : " ") + "storage=unpadded";
    setup_seconds = seconds_since(t1);
    note_fewer_threads(detail, planned_threads(), threads_, fmt::format("{} row{}", rows_, rows_ == 1 ? "" : "s"));
  }

  int threads_used() const override { return threads_running(planned_threads()); }

 protected:
  void product() override {
    if (unpadded_ && float_values_)
      product_with(rf_.rows());
    else if (unpadded_)
      product_with(r_.rows());
    else if (float_values_)
      product_format(ef_);
    else
      product_format(e_);
  }

 private:
  // 004's unpadded ELL: each row's entries at start[r], its length start[r + 1] - start[r] (the
  // lengths' running sum, made once).
  template <class V>
  struct Ragged {
    Ragged() = default;
    explicit Ragged(const CsrView& a)
        : start(static_cast<std::size_t>(a.rows) + 1),
          col(a.col.begin(), a.col.begin() + a.nnz()),
          val(static_cast<std::size_t>(a.nnz())) {
      for (index_t r = 0; r < a.rows; ++r) start[r + 1] = start[r] + a.row_length(r);
      for (std::size_t i = 0; i < val.size(); ++i)
        val[i] = a.values_in_float() ? static_cast<V>(a.val_f32[i]) : static_cast<V>(a.val[i]);
    }
    CsrRows<offset_t, V> rows() const { return {start.data(), col.data(), val.data()}; }
    std::vector<offset_t> start;
    std::vector<index_t> col;
    std::vector<V> val;
  };

  template <class V>
  void product_format(const BasicEll<V>& e) {
    if (skip_padding_)
      product_with(EllRowLenRows<V>{e.col.data(), e.val.data(), e.row_len.data(), e.width});
    else
      product_with(EllRows<V>{e.col.data(), e.val.data(), e.width});
  }

  template <class Rows>
  void product_with(const Rows& rows) {
    with_flag(simd_, [&](auto simd) { product_with<decltype(simd)::value>(rows); });
  }

  template <bool Simd, class Rows>
  void product_with(const Rows& rows) {
    if (by_elements_) {
      for_vectors<typename Rows::value_type>(
          [&]<class VV>() { elements(rows, vec_x<VV>(), vec_y<VV>(), scale<VV>()); });
      return;
    }
    if (via_transpose_) transpose_x(threads_);
    if (threads_ == 1) {
      rows_part<Simd>(rows, 0, rows_, 0);
      return;
    }
    if (chunk_rows_ > 0) {
      chunked_rows<Simd>(rows, chunk_rows_, threads_, true);
      return;
    }
    const int parts = threads_;
    const offset_t n = rows_;
#pragma omp parallel num_threads(parts)
    {
      const int nt = omp_get_num_threads(), me = omp_get_thread_num();
      for (int p = me; p < parts; p += nt)  // schedule(static), one block each
        rows_part<Simd>(rows, static_cast<index_t>(n * p / parts), static_cast<index_t>(n * (p + 1) / parts), me);
    }
  }

  // 004's SpMM: Y(i, j) = sum over row i's slots of A(i, s) X(col, j), each (i, j) on its own, the
  // rows x K space collapsed and dealt in equal blocks; X and Y in the plan's layout (column-major:
  // 004's X transposed, each column contiguous).
  template <class Rows, class VV>
  void elements(const Rows& rows, const VV* x, VV* y, const Scale<VV>& sc) {
    const bool col = layout_ == Layout::ColMajor;
    const std::size_t nr = static_cast<std::size_t>(rows_), nc = static_cast<std::size_t>(cols_), k = k_;
    const index_t n = rows_;
    const int kk = k_;
#pragma omp parallel for collapse(2) schedule(static) num_threads(threads_)
    for (index_t i = 0; i < n; ++i)
      for (int j = 0; j < kk; ++j) {
        const auto row = rows(i);
        VV acc = 0;
        for (offset_t s = 0; s < row.len; ++s) {
          const std::size_t c = static_cast<std::size_t>(row.col[s]);
          acc += static_cast<VV>(row.val[s]) * (col ? x[j * nc + c] : x[c * k + j]);
        }
        sc.put(col ? y[j * nr + static_cast<std::size_t>(i)] : y[static_cast<std::size_t>(i) * k + j], acc);
      }
  }

  // Threads with rows: each takes an equal block of rows (or chunks).
  int planned_threads() const {
    const offset_t work = chunk_rows_ > 0 ? (offset_t{rows_} + chunk_rows_ - 1) / chunk_rows_ : rows_;
    return static_cast<int>(std::clamp<offset_t>(work, 1, threads_));
  }

  Ell e_;
  EllFloat ef_;  // single and mixed precision
  Ragged<double> r_;
  Ragged<float> rf_;
  bool unpadded_ = false;
  bool skip_padding_;
  int threads_;
  index_t chunk_rows_;  // > 0: a dynamic schedule of chunks of this many rows
  bool by_elements_ = false;
  bool float_values_;
  bool simd_ = true;
};

}  // namespace

std::vector<VariantGroup> ell_variants(bool skip_padding) {
  std::vector<VariantGroup> g = row_variants(false);
  g.push_back({"spmm",
               {"rows", "elements"},
               "SpMM: a row's K results together, or each result its own dot product over rows x K collapsed "
               "(004's)",
               true});
  if (skip_padding)  // ell multiplies its padding: storage without it is ell-rowlen's
    g.push_back({"storage",
                 {"padded", "unpadded"},
                 "rows padded to the width, or stored without padding, back to back (004's)"});
  return g;
}

template <class V>
offset_t ell_product_bytes(const BasicEll<V>& e, bool skip_padding, int k, Precision p) {
  // Padded ELL moves every slot (an index and a value each), so padding shows as wasted
  // bandwidth; the rowlen variant reads the true entries plus the 4-byte length of each row.
  const offset_t slot = 4 + static_cast<offset_t>(sizeof(V));
  const offset_t matrix = skip_padding ? slot * e.nnz + 4 * static_cast<offset_t>(e.rows) : slot * e.slots();
  return matrix + vector_bytes(p) * (static_cast<offset_t>(e.cols) + e.rows) * k;
}
template offset_t ell_product_bytes(const Ell&, bool, int, Precision);
template offset_t ell_product_bytes(const EllFloat&, bool, int, Precision);

std::unique_ptr<Plan> make_ell_plan(const CsrView& a, const PlanOptions& opt, bool skip_padding) {
  return std::make_unique<OmpEll>(a, opt, skip_padding);
}

void register_omp_ell() {
  for (const bool skip : {false, true})
    add_kernel({.name = skip ? "ell-rowlen" : "ell",
                .backend = Backend::Omp,
                .format = "ell",
                .description = skip ? "OpenMP row-major ELLPACK, static rows (or dynamic chunks of chunk_rows), "
                                      "each row stops at its true length; column-major SpMM native or via "
                                      "row-major copies by a timed trial"
                                    : "OpenMP row-major ELLPACK, static rows (or dynamic chunks of chunk_rows), "
                                      "padded slots multiplied; column-major SpMM native or via row-major copies "
                                      "by a timed trial",
                .spmm = true,
                .precisions = {Precision::Double, Precision::Single, Precision::Mixed},
                .params = {"threads", "chunk_rows"},
                .variants = ell_variants(skip),
                .make = [skip](const CsrView& a, const PlanOptions& o) -> std::unique_ptr<Plan> {
                  return make_ell_plan(a, o, skip);
                }});
}

}  // namespace spmv::cpu
