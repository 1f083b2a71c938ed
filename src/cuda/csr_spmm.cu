// CSR SpMM, Y = A*X with K right-hand sides, X and Y row-major: a warp per row, its lanes split
// into KT = min(K, 32) lanes along the right-hand sides (consecutive entries of X and Y) times
// 32/KT groups along the row's entries, joined by warp shuffles. K = 1 never comes here: the
// "csr" kernel runs its SpMV choice instead, so one right-hand side costs what SpMV costs.
#include <algorithm>

#include "cuda/csr_device.cuh"
#include "cuda/cuda_kernels.hpp"

namespace spmv::cuda {

namespace {

template <typename OffT>
__global__ void csr_spmm_kernel(index_t rows, int k, int kt, int long_row, const OffT* __restrict__ rp,
                                const index_t* __restrict__ col, const double* __restrict__ val,
                                const double* __restrict__ x, double* __restrict__ y) {
  const long long warp = (static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x) >> 5;
  const int lane = threadIdx.x & 31, kl = lane % kt, g = lane / kt, ng = 32 / kt;
  if (warp >= rows) return;  // whole warps leave together
  const OffT b = rp[warp], e = rp[warp + 1];
  if (e - b > long_row) return;  // done by csr_spmm_long_kernel
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

// Long rows are cut into pieces of kPiece entries (tuning::csr_spmm_piece), a block of 1024 threads per piece: KT lanes
// along the right-hand sides times 1024/KT groups along the entries; warps reduce by shuffles,
// then warp partials are added in warp order. A row of several pieces: each piece writes its
// partial row, and the last piece to finish adds them in piece order (deterministic, one launch).
constexpr int kPiece = tuning::csr_spmm_piece;

template <typename OffT>
__global__ void csr_spmm_long_kernel(const int4* __restrict__ desc, int k, int kt, const OffT* __restrict__ rp,
                                     const index_t* __restrict__ col, const double* __restrict__ val,
                                     const double* __restrict__ x, double* __restrict__ y,
                                     double* __restrict__ partial, int* __restrict__ arrived) {
  __shared__ double red[32 * 32];
  __shared__ bool last;
  const int4 d = desc[blockIdx.x];  // row, piece, pieces
  const index_t row = d.x;
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, nw = blockDim.x >> 5;
  const int kl = lane % kt, g = tid / kt, ng = blockDim.x / kt;
  const OffT e0 = rp[row + 1];
  const OffT b = rp[row] + static_cast<OffT>(d.y) * kPiece;
  const OffT e = min(e0, static_cast<OffT>(b + kPiece));
  double* out = d.z == 1 ? y + static_cast<long long>(row) * k : partial + static_cast<long long>(blockIdx.x) * k;
  for (int c0 = 0; c0 < k; c0 += kt) {
    const int c = c0 + kl;
    double acc = 0;
    if (c < k)
#pragma unroll 4
      for (OffT p = b + g; p < e; p += ng)
        acc += __ldg(val + p) * __ldg(x + static_cast<long long>(__ldg(col + p)) * k + c);
    for (int off = kt; off < 32; off *= 2) acc += __shfl_xor_sync(0xffffffffu, acc, off);
    if (lane < kt) red[warp * 32 + lane] = acc;
    __syncthreads();
    if (tid < kt && c0 + tid < k) {
      double s = 0;
      for (int w = 0; w < nw; ++w) s += red[w * 32 + tid];
      out[c0 + tid] = s;
    }
    __syncthreads();
  }
  if (d.z == 1) return;
  const unsigned first = blockIdx.x - d.y;
  // The partial row's writers passed the __syncthreads above; thread 0's acquire-release count
  // publishes their writes (release is cumulative) and, in the last piece, makes the other pieces'
  // visible to the block after the next __syncthreads (the pattern of a grid barrier, without a
  // sequentially consistent fence per thread).
  if (tid == 0) last = count_arrival(arrived[first]) == d.z - 1;
  __syncthreads();
  if (!last) return;
  for (int c = tid; c < k; c += blockDim.x) {
    double s = 0;
    for (int j = 0; j < d.z; ++j) s += __ldcg(partial + static_cast<long long>(first + j) * k + c);
    y[static_cast<long long>(row) * k + c] = s;
  }
  if (tid == 0) arrived[first] = 0;  // ready for the next product
}

class CsrSpmm final : public CsrDevicePlan {
 public:
  CsrSpmm(const CsrView& a, const PlanOptions& opt, SharedDeviceCsr dev = nullptr)
      : CsrDevicePlan(a, opt, std::move(dev)) {
    kt_ = 1;
    while (kt_ < 32 && kt_ < k_) kt_ *= 2;
    long_row_ = tuning::csr_spmm_long_row(kt_, a.rows, a.rows > 0 ? static_cast<double>(a.nnz()) / a.rows : 0.0);
    std::vector<int> desc;
    int n_rows = 0;
    for (index_t r = 0; r < a.rows; ++r)
      if (a.row_length(r) > long_row_) {
        const int pieces = static_cast<int>((a.row_length(r) + kPiece - 1) / kPiece);
        for (int p = 0; p < pieces; ++p) desc.insert(desc.end(), {r, p, pieces, 0});
        ++n_rows;
      }
    n_long_ = static_cast<unsigned>(desc.size() / 4);
    desc_.upload(desc);
    partial_.resize(static_cast<std::size_t>(n_long_) * k_);
    arrived_.resize(n_long_);
    if (n_long_) SPMV_CUDA_CHECK(cudaMemset(arrived_.data(), 0, n_long_ * sizeof(int)));
    detail = "kernel=csr-spmm lanes_per_rhs=" + std::to_string(kt_) + " long_rows=" + std::to_string(n_rows) +
             " (over " + std::to_string(long_row_) + ")" +
             " pieces=" + std::to_string(n_long_);
  }

 protected:
  void launch() override {
    if (trivial()) return zero_async(y_);
    const unsigned grid = grid_for(static_cast<offset_t>(rows_) * 32, block_);
    if (m_.wide)
      csr_spmm_kernel<<<grid, block_>>>(rows_, k_, kt_, long_row_, m_.rp64.data(), m_.col.data(), m_.val.data(), x_.data(),
                                        y_.data());
    else
      csr_spmm_kernel<<<grid, block_>>>(rows_, k_, kt_, long_row_, m_.rp32.data(), m_.col.data(), m_.val.data(), x_.data(),
                                        y_.data());
    SPMV_CUDA_CHECK_LAUNCH();
    if (n_long_ == 0) return;
    if (m_.wide)
      csr_spmm_long_kernel<<<n_long_, 1024>>>(desc(), k_, kt_, m_.rp64.data(), m_.col.data(), m_.val.data(),
                                              x_.data(), y_.data(), partial_.data(), arrived_.data());
    else
      csr_spmm_long_kernel<<<n_long_, 1024>>>(desc(), k_, kt_, m_.rp32.data(), m_.col.data(), m_.val.data(),
                                              x_.data(), y_.data(), partial_.data(), arrived_.data());
    SPMV_CUDA_CHECK_LAUNCH();
  }
  int kt_ = 1, long_row_ = 1024;
  const int4* desc() const { return reinterpret_cast<const int4*>(desc_.data()); }
  unsigned n_long_ = 0;  // blocks of the long-row kernel (pieces)
  DeviceBuffer<int> desc_;  // 4 ints per piece: row, piece, pieces, unused (int4 loads)
  DeviceBuffer<double> partial_;
  DeviceBuffer<int> arrived_;
};

}  // namespace

std::unique_ptr<Plan> make_csr_spmm(const CsrView& a, const PlanOptions& opt, SharedDeviceCsr dev) {
  return std::make_unique<CsrSpmm>(a, opt, std::move(dev));
}

}  // namespace spmv::cuda
