// CSR-scalar: one thread per row. Simple and launch-cheap; uncoalesced on long rows, so it is the
// reference point the other CSR kernels are measured against.
#include "cuda/csr_device.cuh"
#include "cuda/cuda_kernels.hpp"
#include "core/register.hpp"

namespace spmv::cuda {

namespace {

// MV: the matrix's value type, VV: x's, y's and the sum's.
template <class MV, class VV, typename OffT>
__global__ void csr_scalar_kernel(index_t rows, const OffT* __restrict__ rp, const index_t* __restrict__ col,
                                  const MV* __restrict__ val, const VV* __restrict__ x, VV* __restrict__ y,
                                  Epilogue<VV> ep) {
  const index_t r = static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  VV s = 0;
  for (OffT p = rp[r], e = rp[r + 1]; p < e; ++p) s += static_cast<VV>(__ldg(val + p)) * __ldg(x + __ldg(col + p));
  ep.put(y, r, s);
}

class CsrScalar final : public CsrDevicePlan {
 public:
  CsrScalar(const CsrView& a, const PlanOptions& opt, SharedDeviceCsr dev = nullptr)
      : CsrDevicePlan(a, opt, std::move(dev)) {}

 protected:
  void launch(const Launch& l) override {
    if (trivial()) return zero_y(l);
    const unsigned grid = grid_for(rows_, block_);
    with_types(prec_, [&]<class MV, class VV>() {
      const MV* val = m_.val.data<MV>();
      if (m_.wide)
        csr_scalar_kernel<<<grid, block_, 0, l.stream>>>(rows_, m_.rp64.data(), m_.col.data(), val, l.xv<VV>(),
                                                         l.yv<VV>(), l.ep<VV>());
      else
        csr_scalar_kernel<<<grid, block_, 0, l.stream>>>(rows_, m_.rp32.data(), m_.col.data(), val, l.xv<VV>(),
                                                         l.yv<VV>(), l.ep<VV>());
    });
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
              .precisions = {Precision::Double, Precision::Single, Precision::Mixed},
              .params = {"block_size"},
              .make = [](const CsrView& a, const PlanOptions& o) { return make_csr_scalar(a, o, nullptr); }});
}

}  // namespace spmv::cuda
