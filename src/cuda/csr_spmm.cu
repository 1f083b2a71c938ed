// CSR SpMM, Y = A*X with K right-hand sides, X and Y row-major: a warp per row, its lanes split
// into KT = min(K, 32) lanes along the right-hand sides (consecutive entries of X and Y) times
// 32/KT groups along the row's entries, joined by warp shuffles. K = 1 never comes here: the
// "csr" kernel runs its SpMV choice instead, so one right-hand side costs what SpMV costs.
#include "cuda/csr_device.cuh"
#include "cuda/cuda_kernels.hpp"

namespace spmv::cuda {

namespace {

template <typename OffT>
__global__ void csr_spmm_kernel(index_t rows, int k, int kt, const OffT* __restrict__ rp,
                                const index_t* __restrict__ col, const double* __restrict__ val,
                                const double* __restrict__ x, double* __restrict__ y) {
  const long long warp = (static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x) >> 5;
  const int lane = threadIdx.x & 31, kl = lane % kt, g = lane / kt, ng = 32 / kt;
  if (warp >= rows) return;  // whole warps leave together
  const OffT b = rp[warp], e = rp[warp + 1];
  for (int c0 = 0; c0 < k; c0 += kt) {
    const int c = c0 + kl;
    double acc = 0;
    if (c < k)
      for (OffT p = b + g; p < e; p += ng)
        acc += __ldg(val + p) * __ldg(x + static_cast<long long>(__ldg(col + p)) * k + c);
    for (int off = kt; off < 32; off *= 2) acc += __shfl_xor_sync(0xffffffffu, acc, off);
    if (g == 0 && c < k) y[warp * k + c] = acc;
  }
}

class CsrSpmm final : public CsrDevicePlan {
 public:
  CsrSpmm(const Csr& a, const PlanOptions& opt) : CsrDevicePlan(a, opt) {
    require_row_major(opt, "csr");
    kt_ = 1;
    while (kt_ < 32 && kt_ < k_) kt_ *= 2;
    detail = "kernel=csr-spmm lanes_per_rhs_group=" + std::to_string(kt_);
  }

 protected:
  void launch() override {
    if (trivial()) return zero_async(y_);
    const unsigned grid = grid_for(static_cast<offset_t>(rows_) * 32, block_);
    if (m_.wide)
      csr_spmm_kernel<<<grid, block_>>>(rows_, k_, kt_, m_.rp64.data(), m_.col.data(), m_.val.data(), x_.data(),
                                        y_.data());
    else
      csr_spmm_kernel<<<grid, block_>>>(rows_, k_, kt_, m_.rp32.data(), m_.col.data(), m_.val.data(), x_.data(),
                                        y_.data());
    SPMV_CUDA_CHECK_LAUNCH();
  }
  int kt_ = 1;
};

}  // namespace

std::unique_ptr<Plan> make_csr_spmm(const Csr& a, const PlanOptions& opt) {
  return std::make_unique<CsrSpmm>(a, opt);
}

}  // namespace spmv::cuda
