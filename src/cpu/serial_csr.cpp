// Serial CSR: the plain loop every speedup is measured against, and its SpMM form; in every
// precision (single and mixed: a float matrix's values as they are, borrowed like its indices; a
// double one's rounded into the plan's own float copy when it is made).
#include "cpu/cpu_plan.hpp"
#include "core/register.hpp"

namespace spmv::cpu {

namespace {

class SerialCsr final : public CpuPlan {
 public:
  SerialCsr(const CsrView& a, const PlanOptions& opt)
      : CpuPlan(a.rows, a.cols, opt), a_(a), float_values_(opt.precision != Precision::Double) {
    if (float_values_) {
      const auto t0 = std::chrono::steady_clock::now();
      vf_ = float_values_of(a, 1, valf_);
      if (!a.values_in_float()) convert_seconds = seconds_since(t0);
    }
    bytes_per_product = csr_product_bytes(a, opt.k, opt.precision);
    stored_entries = a.nnz();
  }

  int threads_used() const override { return 1; }

 protected:
  void product() override {
    if (float_values_)
      product_as(vf_);
    else
      product_as(a_.val.data());
  }

 private:
  template <class V>
  void product_as(const V* v) {
    for_vectors<V>([&]<class VV>() { product_as(v, vec_x<VV>(), vec_y<VV>(), scale<VV>()); });
  }
  template <class V, class VV>
  void product_as(const V* v, const VV* x, VV* y, const Scale<VV>& sc) {
    const offset_t* rp = a_.row_ptr.data();
    const index_t* ci = a_.col.data();
    if (k_ == 1) {
      for (index_t r = 0; r < rows_; ++r) {
        VV s = 0;
        for (offset_t p = rp[r]; p < rp[r + 1]; ++p) s += static_cast<VV>(v[p]) * x[ci[p]];
        sc.put(y[r], s);
      }
    } else if (layout_ == Layout::RowMajor) {
      std::vector<VV> acc(static_cast<std::size_t>(k_));
      for (index_t r = 0; r < rows_; ++r) {
        VV* yr = y + static_cast<std::size_t>(r) * k_;
        std::fill(acc.begin(), acc.end(), VV{0});
        for (offset_t p = rp[r]; p < rp[r + 1]; ++p) {
          const VV* xr = x + static_cast<std::size_t>(ci[p]) * k_;
          const VV a = static_cast<VV>(v[p]);
          for (int c = 0; c < k_; ++c) acc[c] += a * xr[c];
        }
        for (int c = 0; c < k_; ++c) sc.put(yr[c], acc[c]);
      }
    } else {
      for (int c = 0; c < k_; ++c) {
        const VV* xc = x + static_cast<std::size_t>(c) * cols_;
        VV* yc = y + static_cast<std::size_t>(c) * rows_;
        for (index_t r = 0; r < rows_; ++r) {
          VV s = 0;
          for (offset_t p = rp[r]; p < rp[r + 1]; ++p) s += static_cast<VV>(v[p]) * xc[ci[p]];
          sc.put(yc[r], s);
        }
      }
    }
  }

  CsrView a_;                  // CSR needs no conversion: the plan borrows the caller's matrix
  bool float_values_;          // single and mixed: the product reads vf_
  const float* vf_ = nullptr;  // ... the values in float: a float matrix's own, or valf_
  HostArray<float> valf_;      // ... a double matrix's values rounded (empty for a float matrix)
};

}  // namespace

void register_serial_csr() {
  add_kernel({.name = "csr",
              .backend = Backend::Serial,
              .format = "csr",
              .description = "serial CSR, one row at a time (the speedup baseline)",
              .spmm = true,
              .precisions = {Precision::Double, Precision::Single, Precision::Mixed},
              .params = {},
              .make = [](const CsrView& a, const PlanOptions& o) -> std::unique_ptr<Plan> {
                return std::make_unique<SerialCsr>(a, o);
              }});
}

}  // namespace spmv::cpu
