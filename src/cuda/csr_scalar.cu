// CSR-scalar: one thread per row. Simple and launch-cheap; uncoalesced on long rows, so it is the
// reference point the other CSR kernels are measured against.
#include "cuda/csr_device.cuh"
#include "cuda/cuda_kernels.hpp"

namespace spmv::cuda {

namespace {

template <typename OffT>
__global__ void csr_scalar_kernel(index_t rows, const OffT* __restrict__ rp, const index_t* __restrict__ col,
                                  const double* __restrict__ val, const double* __restrict__ x,
                                  double* __restrict__ y) {
  const index_t r = static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  double s = 0;
  for (OffT p = rp[r], e = rp[r + 1]; p < e; ++p) s += __ldg(val + p) * __ldg(x + __ldg(col + p));
  y[r] = s;
}

class CsrScalar final : public CsrDevicePlan {
 public:
  CsrScalar(const CsrView& a, const PlanOptions& opt, SharedDeviceCsr dev = nullptr)
      : CsrDevicePlan(a, opt, std::move(dev)) {}

 protected:
  void launch() override {
    if (trivial()) return zero_async(y_);
    const unsigned grid = grid_for(rows_, block_);
    if (m_.wide)
      csr_scalar_kernel<<<grid, block_>>>(rows_, m_.rp64.data(), m_.col.data(), m_.val.data(), x_.data(), y_.data());
    else
      csr_scalar_kernel<<<grid, block_>>>(rows_, m_.rp32.data(), m_.col.data(), m_.val.data(), x_.data(), y_.data());
    SPMV_CUDA_CHECK_LAUNCH();
  }
};

}  // namespace

std::unique_ptr<Plan> make_csr_scalar(const CsrView& a, const PlanOptions& opt, SharedDeviceCsr dev) {
  return std::make_unique<CsrScalar>(a, opt, std::move(dev));
}

void register_csr_scalar() {
  add_kernel({.name = "csr-scalar",
              .backend = Backend::Cuda,
              .format = "csr",
              .description = "CSR, one thread per row",
              .params = {"block_size"},
              .make = [](const CsrView& a, const PlanOptions& o) { return make_csr_scalar(a, o, nullptr); }});
}

}  // namespace spmv::cuda
