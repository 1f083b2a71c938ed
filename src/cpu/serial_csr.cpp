// Serial CSR: the plain loop every speedup is measured against, and its SpMM form.
#include "cpu/cpu_plan.hpp"
#include "cpu/register_cpu.hpp"

namespace spmv::cpu {

namespace {

class SerialCsr final : public CpuPlan {
 public:
  SerialCsr(const CsrView& a, const PlanOptions& opt) : CpuPlan(a.rows, a.cols, opt), a_(a) {
    bytes_per_product = csr_product_bytes(a, opt.k);
    stored_entries = a.nnz();
  }

 protected:
  void product() override {
    const offset_t* rp = a_.row_ptr.data();
    const index_t* ci = a_.col.data();
    const double* v = a_.val.data();
    const double* x = x_.data();
    double* y = y_.data();
    if (k_ == 1) {
      for (index_t r = 0; r < rows_; ++r) {
        double s = 0;
        for (offset_t p = rp[r]; p < rp[r + 1]; ++p) s += v[p] * x[ci[p]];
        y[r] = s;
      }
    } else if (layout_ == Layout::RowMajor) {
      for (index_t r = 0; r < rows_; ++r) {
        double* yr = y + static_cast<std::size_t>(r) * k_;
        std::fill(yr, yr + k_, 0.0);
        for (offset_t p = rp[r]; p < rp[r + 1]; ++p) {
          const double* xr = x + static_cast<std::size_t>(ci[p]) * k_;
          for (int c = 0; c < k_; ++c) yr[c] += v[p] * xr[c];
        }
      }
    } else {
      for (int c = 0; c < k_; ++c) {
        const double* xc = x + static_cast<std::size_t>(c) * cols_;
        double* yc = y + static_cast<std::size_t>(c) * rows_;
        for (index_t r = 0; r < rows_; ++r) {
          double s = 0;
          for (offset_t p = rp[r]; p < rp[r + 1]; ++p) s += v[p] * xc[ci[p]];
          yc[r] = s;
        }
      }
    }
  }

 private:
  CsrView a_;  // CSR needs no conversion: the plan borrows the caller's matrix
};

}  // namespace

void register_serial_csr() {
  add_kernel({.name = "csr",
              .backend = Backend::Serial,
              .format = "csr",
              .description = "serial CSR, one row at a time (the speedup baseline)",
              .spmm = true,
              .params = {},
              .make = [](const CsrView& a, const PlanOptions& o) -> std::unique_ptr<Plan> {
                return std::make_unique<SerialCsr>(a, o);
              }});
}

}  // namespace spmv::cpu
