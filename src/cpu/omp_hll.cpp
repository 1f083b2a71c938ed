// OpenMP hacked ELLPACK: hacks are split into one contiguous range per thread holding about the
// same number of stored (padded) slots (or, split=hacks, the same number of hacks: 001's static
// partition); the split is computed once when the plan is made. padding=skip tests each value and
// skips zeros in the SpMV loop (001's), instead of multiplying the padding.
#include <spmv/formats/hll.hpp>

#include <omp.h>

#include "cpu/cpu_plan.hpp"
#include "cpu/row_kernels.hpp"
#include "core/register.hpp"

namespace spmv::cpu {

// The row kernels' words and HLL's own: split slots|hacks, padding multiply|skip.
std::vector<VariantGroup> hll_variants();

namespace {

class OmpHll final : public CpuPlan {
 public:
  OmpHll(const CsrView& a, const PlanOptions& opt)
      : CpuPlan(a.rows, a.cols, opt), float_values_(opt.precision != Precision::Double) {
    const int threads = plan_threads(opt);
    const VariantChoice choice = parse_variant("hll", hll_variants(), opt.kernel.variant);
    split_hacks_ = choice["split"] == "hacks";
    skip_zeros_ = choice["padding"] == "skip";
    const auto t0 = std::chrono::steady_clock::now();
    if (float_values_)
      hf_ = csr_to_hll<float>(a, opt.kernel.hack, convert_options(opt));
    else
      h_ = csr_to_hll(a, opt.kernel.hack, convert_options(opt));
    convert_seconds = seconds_since(t0);

    const auto t1 = std::chrono::steady_clock::now();
    const auto layout = [&](const auto& h) {
      stored_entries = h.slots();
      bytes_per_product = hll_product_bytes(h, opt.k, opt.precision);
      // A hack costs its slots plus one unit per row (the y stores), so empty hacks are not free.
      const offset_t* off = h.hack_offset.data();
      const offset_t hack = h.hack;
      n_hacks_ = h.n_hacks();
      // No more parts than hacks: each part's thread keeps a scratch of a hack's rows.
      const int parts = std::max(1, std::min<int>(threads, h.n_hacks()));
      if (split_hacks_)
        bounds_ = balanced_bounds(h.n_hacks(), parts, [](index_t i) { return offset_t{i}; });
      else
        bounds_ = balanced_bounds(h.n_hacks(), parts, [off, hack](index_t i) { return off[i] + hack * i; });
      // A hack's rows, at most the matrix's (a hack size past them pads nothing); +8: no false sharing.
      scratch_stride_ = static_cast<std::size_t>(std::min<offset_t>(h.hack, std::max<offset_t>(h.rows, 1))) + 8;
      detail =
          fmt::format("hack={} padding_ratio={:.3f}", h.hack, h.nnz > 0 ? static_cast<double>(h.slots()) / h.nnz : 1.0);
    };
    if (float_values_)
      layout(hf_);
    else
      layout(h_);
    if (single_)
      scratchf_.resize(scratch_stride_ * (bounds_.size() - 1));
    else
      scratch_.resize(scratch_stride_ * (bounds_.size() - 1));
    const RowVariant v = row_variant(choice);
    if (split_hacks_) detail += " split=hacks";
    if (k_ == 1 && skip_zeros_) {  // the loop that tests each value
      simd_ = false;
      detail += " inner=scalar padding=skip";
    } else if (k_ == 1) {  // SpMV: keep the faster of the simd (gather) and scalar hack loops
      choose_inner(
          v.inner, [this](bool s) { simd_ = s; }, [this] { product(); });
      detail += fmt::format(" inner={}", simd_ ? "simd" : "scalar");
    } else if (transpose_possible()) {  // column-major SpMM: native or through row-major copies
      if (v.via != 0) make_transpose_scratch(threads);
      std::string trial;
      choose_via(
          v.via, [this](bool t) { via_transpose_ = t; }, [this] { product(); }, trial);
      release_unused_transpose_scratch();
      detail += fmt::format(" {}{}", via_detail(), trial);
    }
    setup_seconds = seconds_since(t1);
    note_fewer_threads(detail, busy_parts(bounds_), threads,
                       fmt::format("{} hack{}", n_hacks_, n_hacks_ == 1 ? "" : "s"));
  }

  int threads_used() const override {
    const int planned = busy_parts(bounds_);
    return planned <= 1 ? 1 : std::min(granted_threads(static_cast<int>(bounds_.size()) - 1), planned);
  }

 protected:
  void product() override {
    if (float_values_)
      product_format(hf_);
    else
      product_format(h_);
  }

 private:
  template <class V>
  void product_format(const BasicHll<V>& h) {
    for_vectors<V>([&]<class VV>() {
      VV* scratch;
      if constexpr (std::is_same_v<VV, float>)
        scratch = scratchf_.data();
      else
        scratch = scratch_.data();
      with_flag(simd_, [&](auto simd) {
        product_with<decltype(simd)::value>(hll_view(h), h.n_hacks(), vec_x<VV>(), vec_y<VV>(), scratch);
      });
    });
  }

  template <bool Simd, class V, class VV>
  void product_with(const HllView<V>& m, index_t n_hacks, const VV* x, VV* y, VV* scratch) {
    const Scale<VV> sc = scale<VV>();
    const int parts = static_cast<int>(bounds_.size()) - 1;
    // Hacks [h0, h1) on thread `me`: the rows of HLL's SpMM through row-major copies, else hll_product.
    auto hacks = [&](index_t h0, index_t h1, int me) {
      if (via_transpose_)
        transposed_part(HllRows<V>{m}, hll_first_row(m, h0), hll_first_row(m, h1), me);
      else
        hll_product<Simd>(m, h0, h1, x, y, cols_, k_, layout_, scratch + scratch_stride_ * me, sc, skip_zeros_);
    };
    if (via_transpose_) transpose_x(parts);
    if (parts == 1) {
      hacks(0, n_hacks, 0);
      return;
    }
#pragma omp parallel num_threads(parts)
    {
      const int nt = omp_get_num_threads(), me = omp_get_thread_num();
      for (int p = me; p < parts; p += nt) hacks(bounds_[p], bounds_[p + 1], me);
    }
  }

  bool float_values_;  // single and mixed: hf_ holds the matrix, else h_
  Hll h_;
  HllFloat hf_;
  bool simd_ = true;
  bool split_hacks_ = false, skip_zeros_ = false;
  std::vector<index_t> bounds_;
  index_t n_hacks_ = 0;
  std::vector<double> scratch_;
  std::vector<float> scratchf_;
  std::size_t scratch_stride_ = 0;
};

}  // namespace

std::vector<VariantGroup> hll_variants() {
  std::vector<VariantGroup> g = row_variants(false);
  g.push_back({"split", {"slots", "hacks"}, "threads' ranges of hacks: equal stored slots, or equal hacks (001's)"});
  g.push_back({"padding",
               {"multiply", "skip"},
               "SpMV: padding multiplied by its zero, or values tested and zeros "
               "skipped (001's; the scalar loop)"});
  return g;
}

template <class V>
offset_t hll_product_bytes(const BasicHll<V>& h, int k, Precision p) {
  // Every padded slot (an index and a value), each hack's offset (8) and width (4), x and y.
  return (4 + static_cast<offset_t>(sizeof(V))) * h.slots() + 12 * static_cast<offset_t>(h.n_hacks()) +
         vector_bytes(p) * (static_cast<offset_t>(h.cols) + h.rows) * k;
}
template offset_t hll_product_bytes(const Hll&, int, Precision);
template offset_t hll_product_bytes(const HllFloat&, int, Precision);

std::unique_ptr<Plan> make_hll_plan(const CsrView& a, const PlanOptions& opt) {
  return std::make_unique<OmpHll>(a, opt);
}

void register_omp_hll() {
  add_kernel(
      {.name = "hll",
       .backend = Backend::Omp,
       .format = "hll",
       .description = "OpenMP hacked ELLPACK, hacks split evenly by stored slots (or by count); column-major SpMM "
                      "native or via row-major copies by a timed trial",
       .spmm = true,
       .precisions = {Precision::Double, Precision::Single, Precision::Mixed},
       .params = {"threads", "hack"},
       .variants = hll_variants(),
       .make = [](const CsrView& a, const PlanOptions& o) -> std::unique_ptr<Plan> { return make_hll_plan(a, o); }});
}

}  // namespace spmv::cpu
