// CSR-vector: a sub-warp of S = 1..32 lanes per row (1: csr-scalar's thread per row, through the same code), S chosen from the mean row length, partial
// sums reduced with warp shuffles. Lanes of a sub-warp read consecutive entries (coalesced).
#include "cuda/csr_device.cuh"
#include "cuda/cuda_kernels.hpp"

#include <bit>
#include "core/register.hpp"

namespace spmv::cuda {

namespace {

template <int S, class MV, class VV, typename OffT>
__global__ void csr_vector_kernel(index_t rows, const OffT* __restrict__ rp, const index_t* __restrict__ col,
                                  const MV* __restrict__ val, const VV* __restrict__ x, VV* __restrict__ y,
                                  Epilogue<VV> ep) {
  const long long t = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  const long long r = t / S;
  const int lane = static_cast<int>(t % S);
  VV s = 0;
  if (r < rows) {
    const OffT e = rp[r + 1];
    for (OffT p = rp[r] + lane; p < e; p += S) s += static_cast<VV>(__ldg(val + p)) * __ldg(x + __ldg(col + p));
  }
  // Every lane takes part in the shuffles, including those past the last row.
  s = group_sum(s, S);
  if (r < rows && lane == 0) ep.put(y, r, s);
}

class CsrVector final : public CsrDevicePlan {
 public:
  CsrVector(const CsrView& a, const PlanOptions& opt, SharedDeviceCsr dev = nullptr)
      : CsrDevicePlan(a, opt, std::move(dev)) {
    subwarp_ = opt.kernel.subwarp ? opt.kernel.subwarp : choose_subwarp(a);
    if (subwarp_ < 1 || subwarp_ > 32 || !std::has_single_bit(static_cast<unsigned>(subwarp_)))
      throw Unsupported("CSR-vector sub-warp must be 1, 2, 4, 8, 16 or 32, got " + std::to_string(subwarp_));
    detail = "subwarp=" + std::to_string(subwarp_);
  }

 protected:
  template <int S, class MV, class VV, typename OffT>
  void go(const OffT* rp, const Launch& l) {
    const unsigned grid = grid_for(static_cast<offset_t>(rows_) * S, block_);
    csr_vector_kernel<S><<<grid, block_, 0, l.stream>>>(rows_, rp, m_.col.data(), m_.val.data<MV>(), l.xv<VV>(),
                                                        l.yv<VV>(), l.ep<VV>());
  }
  template <class MV, class VV, typename OffT>
  void dispatch(const OffT* rp, const Launch& l) {
    switch (subwarp_) {
      case 1: go<1, MV, VV>(rp, l); break;
      case 2: go<2, MV, VV>(rp, l); break;
      case 4: go<4, MV, VV>(rp, l); break;
      case 8: go<8, MV, VV>(rp, l); break;
      case 16: go<16, MV, VV>(rp, l); break;
      default: go<32, MV, VV>(rp, l); break;
    }
  }
  void launch(const Launch& l) override {
    if (trivial()) return zero_y(l);
    with_types(prec_, [&]<class MV, class VV>() {
      if (m_.wide)
        dispatch<MV, VV>(m_.rp64.data(), l);
      else
        dispatch<MV, VV>(m_.rp32.data(), l);
    });
    SPMV_CUDA_CHECK_LAUNCH();
  }
  int subwarp_ = 32;
};

}  // namespace

// The sub-warp for the matrix's mean row length (tuning::csr_vector_subwarp).
int choose_subwarp(const CsrView& a) {
  const double mean = a.rows ? static_cast<double>(a.nnz()) / a.rows : 0.0;
  return tuning::csr_vector_subwarp(mean);
}

std::unique_ptr<Plan> make_csr_vector(const CsrView& a, const PlanOptions& opt, SharedDeviceCsr dev) {
  return std::make_unique<CsrVector>(a, opt, std::move(dev));
}

void register_csr_vector() {
  add_kernel({.name = "csr-vector",
              .backend = Backend::Cuda,
              .format = "csr",
              .description = "CSR, a sub-warp of 1..32 lanes per row (width from the mean row length)",
              .precisions = {Precision::Double, Precision::Single, Precision::Mixed},
              .params = {"block_size", "subwarp"},
              .make = [](const CsrView& a, const PlanOptions& o) { return make_csr_vector(a, o, nullptr); }});
}

}  // namespace spmv::cuda
