#pragma once
// Device CSR shared by the CSR kernels, plus small helpers every CUDA plan file uses.
// Row offsets go to the device as int32 when nnz < 2^31 (4 fewer bytes per row to move) and as
// int64 otherwise; kernels are templates on the offset type and plans dispatch on `wide`.
#include <spmv/matrix.hpp>

#include <chrono>
#include <cstdint>
#include <cuda/atomic>
#include <limits>
#include <memory>

#include <spmv/timing.hpp>
#include "cuda/cuda_plan.cuh"
#include "cuda/tuning.cuh"

namespace spmv::cuda {

// Threads per block must be a whole number of warps in [32, 1024] (the shuffles and the
// per-warp reductions assume it); anything else is refused rather than silently changed. 0 asks for
// the kernel's own choice: tuning::default_block here, unless the plan picks another (CSR5 does).
inline int checked_block_size(const PlanOptions& opt) {
  const int b = opt.block_size == 0 ? tuning::default_block : opt.block_size;
  if (b < 32 || b > 1024 || b % 32 != 0)
    throw Unsupported("CUDA block size must be a multiple of 32 in [32, 1024], got " + std::to_string(b));
  return b;
}

inline unsigned grid_for(offset_t work_items, int per_block) {
  return static_cast<unsigned>((work_items + per_block - 1) / per_block);
}

struct DeviceCsr {
  index_t rows = 0, cols = 0;
  offset_t nnz = 0;
  bool wide = false;  // int64 row offsets on the device
  DeviceBuffer<int> rp32;
  DeviceBuffer<long long> rp64;
  DeviceBuffer<index_t> col;
  DeviceBuffer<double> val;

  explicit DeviceCsr(const CsrView& a) : rows(a.rows), cols(a.cols), nnz(a.nnz()) {
    wide = nnz >= std::numeric_limits<int>::max();
    if (wide) {
      std::vector<long long> rp(a.row_ptr.begin(), a.row_ptr.end());
      rp64.upload(rp);
    } else {
      std::vector<int> rp(a.row_ptr.size());
      for (std::size_t i = 0; i < rp.size(); ++i) rp[i] = static_cast<int>(a.row_ptr[i]);
      rp32.upload(rp);
    }
    col.upload(a.col);
    val.upload(a.val);
  }
  // x and y for plans of this matrix with k right-hand sides, shared by them (the planner's
  // candidates share this matrix, so they share these too).
  SharedVectors vectors(int k) {
    const std::size_t nx = static_cast<std::size_t>(cols) * k, ny = static_cast<std::size_t>(rows) * k;
    if (!shared_vectors || shared_vectors->x.size() != nx || shared_vectors->y.size() != ny)
      shared_vectors = std::make_shared<DeviceVectors>(nx, ny);
    return shared_vectors;
  }
  SharedVectors shared_vectors;
  offset_t offset_bytes() const { return wide ? 8 : 4; }
  // What one product must move: values + columns once, row offsets once, x and y once.
  offset_t product_bytes(int k) const {
    return 12 * nnz + offset_bytes() * (static_cast<offset_t>(rows) + 1) +
           8 * static_cast<offset_t>(cols) * k + 8 * static_cast<offset_t>(rows) * k;
  }
};

// One device copy of a CSR matrix can serve several plans (the planner's candidates).
using SharedDeviceCsr = std::shared_ptr<DeviceCsr>;

// The x and y a plan made from `dev` shares with its other plans; nullptr (the plan allocates its
// own) without one.
inline SharedVectors vectors_of(const SharedDeviceCsr& dev, int k) { return dev ? dev->vectors(k) : nullptr; }

// Uploads the matrix; `seconds` gets the host time of the upload (after a device synchronisation).
inline SharedDeviceCsr upload_csr(const CsrView& a, double* seconds = nullptr) {
  const auto t0 = std::chrono::steady_clock::now();
  auto m = std::make_shared<DeviceCsr>(a);
  SPMV_CUDA_CHECK(cudaDeviceSynchronize());
  if (seconds) *seconds = seconds_since(t0);
  return m;
}

// The upload plans share: made on the first call (its seconds added to *upload_s), then reused.
inline const SharedDeviceCsr& shared_upload(const CsrView& a, SharedDeviceCsr& dev, double* upload_s) {
  if (!dev) {
    double s = 0;
    dev = upload_csr(a, &s);
    if (upload_s) *upload_s += s;
  }
  return dev;
}

// Base of the CSR plans: the matrix uploaded once, or shared with other plans (then its upload is
// not this plan's); setup_seconds covers an own upload; subclasses add their preprocessing to it.
class CsrDevicePlan : public CudaPlan {
 public:
  CsrDevicePlan(const CsrView& a, const PlanOptions& opt, SharedDeviceCsr dev = nullptr)
      : CudaPlan(a.rows, a.cols, opt, vectors_of(dev, opt.k)), block_(checked_block_size(opt)),
        dev_(dev ? std::move(dev) : upload_csr(a, &setup_seconds)), m_(*dev_) {
    bytes_per_product = m_.product_bytes(opt.k);
    stored_entries = a.nnz();
  }

 protected:
  // Nothing to launch: y is empty or all zeros.
  bool trivial() const { return rows_ == 0 || m_.nnz == 0; }
  int block_;
  SharedDeviceCsr dev_;
  DeviceCsr& m_;
};

// Sets y = 0 without a kernel (matrices with no stored entries).
inline void zero_async(DeviceBuffer<double>& y) {
  if (y.size()) SPMV_CUDA_CHECK(cudaMemsetAsync(y.data(), 0, y.size() * sizeof(double)));
}

// Sum of val[slot(j)] * x[col[slot(j)]] over j = first, first + step, ... < n, the entries of a
// row in a padded (column-major) layout, four at a time: four column and value loads issued
// together (clamped to the row's last entry, so no branch), then the four loads of x: an entry at a
// time would leave one chain of dependent loads per thread, bound by latency. The
// matrix is read with the last-use hint (no product reads it again), so that x keeps the caches.
template <class Slot>
__device__ __forceinline__ double padded_row_sum(index_t first, index_t n, index_t step, Slot slot,
                                                 const index_t* __restrict__ col, const double* __restrict__ val,
                                                 const double* __restrict__ x) {
  constexpr int U = 4;
  double s = 0;
  for (index_t j0 = first; j0 < n; j0 += U * step) {
    index_t c[U];
    double v[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const index_t j = j0 + u * step;
      const long long p = slot(min(j, n - 1));
      c[u] = __ldlu(col + p);
      v[u] = j < n ? __ldlu(val + p) : 0.0;
    }
#pragma unroll
    for (int u = 0; u < U; ++u) s += v[u] * __ldg(x + c[u]);
  }
  return s;
}

// Warp-level sum over aligned groups of `width` lanes (a power of two <= 32); every lane of the
// warp must call it.
__device__ __forceinline__ double group_sum(double v, int width) {
  for (int off = width / 2; off > 0; off /= 2) v += __shfl_xor_sync(0xffffffffu, v, off);
  return v;
}

// Counts one arrival at a device-wide counter and returns the count before it. Acquire-release:
// the caller's earlier writes are visible to whoever counts after it, and the last to count sees
// everyone's; cheaper than a __threadfence (sequentially consistent) before a relaxed atomicAdd.
template <typename T>
__device__ __forceinline__ T count_arrival(T& counter) {
  return ::cuda::atomic_ref<T, ::cuda::thread_scope_device>(counter).fetch_add(T{1}, ::cuda::memory_order_acq_rel);
}

}  // namespace spmv::cuda
