// The planner's structure features on the device, from the row pointer the candidates share: a
// warp per 64-row group (coalesced loads, shuffles for each 16-row quarter's longest row), one
// set of 64-bit atomics per block, one copy back. The host's pass (src/plan/features.cpp) first
// wakes idle OpenMP threads, slower than this.
#include "cuda/csr_device.cuh"
#include "cuda/cuda_kernels.hpp"
#include "plan/features.hpp"

#include <algorithm>
#include <mutex>

namespace spmv::cuda {

namespace {

using u64 = unsigned long long;

__device__ __forceinline__ u64 umax(u64 a, u64 b) { return a > b ? a : b; }

constexpr int kWarps = 8;  // per block

__device__ u64 g_sums[6];

// out: sum of squared lengths, longest row, empty rows, padded slots with hacks 16, 32, 64.
template <typename OffT>
__global__ void row_length_sums_kernel(const OffT* __restrict__ rp, long long rows, u64* __restrict__ out) {
  constexpr unsigned full = 0xffffffffu;
  const int lane = threadIdx.x & 31;
  const long long warps = (static_cast<long long>(gridDim.x) * blockDim.x) >> 5;
  u64 s2 = 0, empty = 0, slots16 = 0, slots32 = 0, slots64 = 0, longest = 0;
  for (long long g = (static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x) >> 5; g * 64 < rows; g += warps) {
    // Lane i holds rows first + i (a) and first + 32 + i (b).
    const long long ra = g * 64 + lane, rb = ra + 32;
    const u64 la = ra < rows ? static_cast<u64>(rp[ra + 1] - rp[ra]) : 0;
    const u64 lb = rb < rows ? static_cast<u64>(rp[rb + 1] - rp[rb]) : 0;
    s2 += la * la + lb * lb;
    empty += (ra < rows && la == 0) + (rb < rows && lb == 0);
    const unsigned va = __ballot_sync(full, ra < rows), vb = __ballot_sync(full, rb < rows);
    u64 wa = la, wb = lb;  // each 16-lane half: a quarter of the group
    for (int off = 8; off > 0; off /= 2) {
      wa = umax(wa, __shfl_xor_sync(full, wa, off));
      wb = umax(wb, __shfl_xor_sync(full, wb, off));
    }
    if ((lane & 15) == 0) {
      const int shift = lane;  // 0 or 16
      slots16 += wa * __popc((va >> shift) & 0xffffu) + wb * __popc((vb >> shift) & 0xffffu);
    }
    const u64 w32a = umax(wa, __shfl_xor_sync(full, wa, 16)), w32b = umax(wb, __shfl_xor_sync(full, wb, 16));
    if (lane == 0) {
      const u64 na = __popc(va), nb = __popc(vb), w64 = umax(w32a, w32b);
      slots32 += w32a * na + w32b * nb;
      slots64 += w64 * (na + nb);
      longest = umax(longest, w64);
    }
  }
  for (int off = 16; off > 0; off /= 2) {
    s2 += __shfl_down_sync(full, s2, off);
    empty += __shfl_down_sync(full, empty, off);
    slots16 += __shfl_down_sync(full, slots16, off);
  }
  // The block's warps, then one set of atomics per block (one set per warp contends on millions
  // of rows).
  __shared__ u64 part[kWarps][6];
  const int warp = threadIdx.x >> 5;
  if (lane == 0) {
    part[warp][0] = s2, part[warp][1] = longest, part[warp][2] = empty;
    part[warp][3] = slots16, part[warp][4] = slots32, part[warp][5] = slots64;
  }
  __syncthreads();
  if (threadIdx.x < 6) {
    u64 v = 0;
    for (int w = 0; w < kWarps; ++w) v = threadIdx.x == 1 ? umax(v, part[w][1]) : v + part[w][threadIdx.x];
    if (v == 0) return;
    if (threadIdx.x == 1)
      atomicMax(out + 1, v);
    else
      atomicAdd(out + threadIdx.x, v);
  }
}

}  // namespace

// Only the row offsets are read: the planner uploads the matrix first with its precision's values
// (auto_cuda.cu); without an upload, a double one is made.
MatrixFeatures analyze_on_device(const CsrView& a, SharedDeviceCsr& dev, double* upload_s) {
  const DeviceCsr& m = dev ? *dev : *shared_upload(a, dev, Precision::Double, upload_s);
  u64 h[6] = {0, 0, 0, 0, 0, 0};
  if (m.rows > 0) {
    // The sums in a static device array: an allocation right after the upload would grow the
    // memory pool. One analysis at a time.
    static std::mutex busy;
    const std::lock_guard<std::mutex> lock(busy);
    u64* acc = nullptr;
    SPMV_CUDA_CHECK(cudaGetSymbolAddress(reinterpret_cast<void**>(&acc), g_sums));
    SPMV_CUDA_CHECK(cudaMemsetAsync(acc, 0, 6 * sizeof(u64)));
    const long long groups = (static_cast<long long>(m.rows) + 63) / 64;
    const unsigned blocks = static_cast<unsigned>(std::min<long long>((groups + kWarps - 1) / kWarps, 1024));
    if (m.wide)
      row_length_sums_kernel<<<blocks, 32 * kWarps>>>(m.rp64.data(), m.rows, acc);
    else
      row_length_sums_kernel<<<blocks, 32 * kWarps>>>(m.rp32.data(), m.rows, acc);
    SPMV_CUDA_CHECK_LAUNCH();
    SPMV_CUDA_CHECK(cudaMemcpy(h, acc, sizeof(h), cudaMemcpyDeviceToHost));
  }
  const auto o = [](u64 v) { return static_cast<offset_t>(v); };
  MatrixFeatures f =
      detail::features_from(m.rows, m.cols, m.nnz, {h[0], o(h[1]), o(h[2]), {o(h[3]), o(h[4]), o(h[5])}});
  detail::sample_values(a, f);
  return f;
}

}  // namespace spmv::cuda
