// Serial ELLPACK (row-major, the CPU layout): "ell" multiplies every padded slot, "ell-rowlen"
// stops at each row's true length. Conversion from CSR is timed into convert_seconds.
#include <spmv/formats/ell.hpp>

#include "cpu/cpu_plan.hpp"
#include "cpu/register_cpu.hpp"
#include "cpu/row_kernels.hpp"

namespace spmv::cpu {

namespace {

class SerialEll final : public CpuPlan {
 public:
  SerialEll(const Csr& a, const PlanOptions& opt, bool skip_padding)
      : CpuPlan(a.rows, a.cols, opt), skip_padding_(skip_padding) {
    const auto t0 = std::chrono::steady_clock::now();
    e_ = csr_to_ell(a, Layout::RowMajor, opt);
    convert_seconds = seconds_since(t0);
    stored_entries = e_.slots();
    bytes_per_product = ell_product_bytes(e_, skip_padding, opt.k);
    pick_inner_loop(opt);
  }

 protected:
  void product() override {
    if (skip_padding_)
      product_with(EllRowLenRows{e_.col.data(), e_.val.data(), e_.row_len.data(), e_.width});
    else
      product_with(EllRows{e_.col.data(), e_.val.data(), e_.width});
  }

 private:
  template <class Rows>
  void product_with(const Rows& rows) {
    if (simd_)
      rows_product<true>(rows, 0, rows_, x_.data(), y_.data(), rows_, cols_, k_, layout_);
    else
      rows_product<false>(rows, 0, rows_, x_.data(), y_.data(), rows_, cols_, k_, layout_);
  }

  // SpMV: keep the faster of the simd and scalar row loops (gather speed differs between CPUs).
  void pick_inner_loop(const PlanOptions& opt) {
    const Variant v = parse_variant(opt.variant, false, skip_padding_ ? "ell-rowlen" : "ell");
    if (k_ != 1) return;
    choose_inner(v.inner, [this](bool s) { simd_ = s; }, [this] { product(); });
    detail = fmt::format("inner={}", simd_ ? "simd" : "scalar");
  }

  bool simd_ = true;
  Ell e_;
  bool skip_padding_;
};

}  // namespace

offset_t ell_product_bytes(const Ell& e, bool skip_padding, int k) {
  // Padded ELL moves every slot (12 bytes each), so padding shows as wasted bandwidth; the
  // rowlen variant reads the true entries plus the 4-byte length of each row.
  const offset_t matrix = skip_padding ? 12 * e.nnz + 4 * static_cast<offset_t>(e.rows) : 12 * e.slots();
  return matrix + 8 * static_cast<offset_t>(e.cols) * k + 8 * static_cast<offset_t>(e.rows) * k;
}

void register_serial_ell() {
  for (const bool skip : {false, true})
    add_kernel({.name = skip ? "ell-rowlen" : "ell",
                .backend = Backend::Serial,
                .format = skip ? "ell-rowlen" : "ell",
                .description = skip ? "serial row-major ELLPACK, each row stops at its true length"
                                    : "serial row-major ELLPACK, padded slots multiplied",
                .spmm = true,
                .params = {"variant"},
                .make = [skip](const Csr& a, const PlanOptions& o) -> std::unique_ptr<Plan> {
                  return std::make_unique<SerialEll>(a, o, skip);
                }});
}

}  // namespace spmv::cpu
