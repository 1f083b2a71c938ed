// Serial hacked ELLPACK: hacks of `hack` rows, each column-major, one flat buffer.
#include <spmv/formats/hll.hpp>

#include "cpu/cpu_plan.hpp"
#include "cpu/register_cpu.hpp"
#include "cpu/row_kernels.hpp"

namespace spmv::cpu {

namespace {

class SerialHll final : public CpuPlan {
 public:
  SerialHll(const Csr& a, const PlanOptions& opt) : CpuPlan(a.rows, a.cols, opt) {
    const auto t0 = std::chrono::steady_clock::now();
    h_ = csr_to_hll(a, opt.hack, opt);
    convert_seconds = seconds_since(t0);
    stored_entries = h_.slots();
    bytes_per_product = hll_product_bytes(h_, opt.k);
    scratch_.resize(static_cast<std::size_t>(h_.hack) * 16);
    detail = fmt::format("hack={}", h_.hack);
    const Variant v = parse_variant(opt.variant, false, "hll");
    if (k_ == 1) {  // SpMV: keep the faster of the simd (gather) and scalar hack loops
      choose_inner(v.inner, [this](bool s) { simd_ = s; }, [this] { product(); });
      detail += fmt::format(" inner={}", simd_ ? "simd" : "scalar");
    }
  }

 protected:
  void product() override {
    if (simd_)
      hll_product<true>(hll_view(h_), 0, h_.n_hacks(), x_.data(), y_.data(), cols_, k_, layout_, scratch_.data());
    else
      hll_product<false>(hll_view(h_), 0, h_.n_hacks(), x_.data(), y_.data(), cols_, k_, layout_, scratch_.data());
  }

 private:
  bool simd_ = true;
  Hll h_;
  std::vector<double> scratch_;
};

}  // namespace

HllView hll_view(const Hll& h) {
  return {h.hack_offset.data(), h.hack_width.data(), h.col.data(), h.val.data(), h.rows, h.hack};
}

offset_t hll_product_bytes(const Hll& h, int k) {
  // Every padded slot (12 bytes), each hack's offset (8) and width (4), x and y.
  return 12 * h.slots() + 12 * static_cast<offset_t>(h.n_hacks()) +
         8 * static_cast<offset_t>(h.cols) * k + 8 * static_cast<offset_t>(h.rows) * k;
}

void register_serial_hll() {
  add_kernel({.name = "hll",
              .backend = Backend::Serial,
              .format = "hll",
              .description = "serial hacked ELLPACK (hacks column-major, one flat buffer)",
              .spmm = true,
              .params = {"hack", "variant"},
              .make = [](const Csr& a, const PlanOptions& o) -> std::unique_ptr<Plan> {
                return std::make_unique<SerialHll>(a, o);
              }});
}

}  // namespace spmv::cpu
