#pragma once
// Device CSR shared by the CSR kernels, plus small helpers every CUDA plan file uses.
// Row offsets go to the device as int32 when nnz < 2^31 (4 fewer bytes per row to move) and as
// int64 otherwise; kernels are templates on the offset type and plans dispatch on `wide`. Values go
// as double, or in float for single and mixed plans (half the bytes to upload): a float matrix's
// (CsrView::val_f32) as they are, a double one's rounded on the host.
#include <spmv/matrix.hpp>

#include <chrono>
#include <cstdint>
#include <cuda/atomic>
#include <limits>
#include <memory>

#include <spmv/timing.hpp>
#include "cuda/cuda_plan.cuh"
#include "cuda/tuning.hpp"

namespace spmv::cuda {

// Threads per block must be a whole number of warps in [32, 1024] (the shuffles and the
// per-warp reductions assume it); anything else is refused rather than silently changed. 0 asks for
// the kernel's own choice: tuning::default_block here, unless the plan picks another (CSR5 does).
inline int checked_block_size(const PlanOptions& opt) {
  const int b = opt.kernel.block_size == 0 ? tuning::default_block : opt.kernel.block_size;
  if (b < 32 || b > 1024 || b % 32 != 0)
    throw Unsupported("CUDA block size must be a multiple of 32 in [32, 1024], got " + std::to_string(b));
  return b;
}

// len[r] = row r's length, from a row pointer on the device (ELL's lengths, HLL's hack widths).
template <typename OffT>
__global__ void row_lengths_kernel(index_t rows, const OffT* __restrict__ rp, index_t* __restrict__ len) {
  const long long r = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (r < rows) len[r] = static_cast<index_t>(rp[r + 1] - rp[r]);
}

inline unsigned grid_for(offset_t work_items, int per_block) {
  return static_cast<unsigned>((work_items + per_block - 1) / per_block);
}

// A view's values to the device as T: from the type they are stored in (double, or a float
// matrix's val_f32), uploaded as they are where it is T, else converted on the host (float to
// double exactly; double to float rounded).
template <class T>
void upload_values(const CsrView& a, DeviceBuffer<T>& d) {
  if (a.values_in_float())
    upload_as(a.val_f32, d);
  else
    upload_as(a.val, d);
}

struct DeviceCsr {
  index_t rows = 0, cols = 0;
  offset_t nnz = 0;
  bool wide = false;  // int64 row offsets on the device
  bool f32 = false;   // values in float (for single and mixed plans): a float matrix's, or rounded on the host
  DeviceBuffer<int> rp32;
  DeviceBuffer<long long> rp64;
  DeviceBuffer<index_t> col;
  DeviceValues val;

  // The values in the type plans of precision p store (float_values).
  DeviceCsr(const CsrView& a, Precision p) : rows(a.rows), cols(a.cols), nnz(a.nnz()), f32(float_values(p)) {
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
    if (f32)
      upload_values(a, val.f32);
    else
      upload_values(a, val.f64);
  }
  // Whether plans of precision p can use it (values of p's type).
  bool serves(Precision p) const { return f32 == float_values(p); }
  // x and y for plans of this matrix with k right-hand sides in precision p, shared by them (the
  // planner's candidates share this matrix, so they share these too).
  SharedVectors vectors(int k, Precision p) {
    const std::size_t nx = static_cast<std::size_t>(cols) * k, ny = static_cast<std::size_t>(rows) * k;
    const bool single = p == Precision::Single;
    const auto& v = shared_vectors;
    if (!v || v->single != single || (single ? v->xf.size() : v->x.size()) != nx ||
        (single ? v->yf.size() : v->y.size()) != ny)
      shared_vectors = std::make_shared<DeviceVectors>(nx, ny, p);
    return shared_vectors;
  }
  SharedVectors shared_vectors;
  offset_t offset_bytes() const { return wide ? 8 : 4; }
  // What one product in precision p must move: values + columns once, row offsets once, x and y once.
  offset_t product_bytes(int k, Precision p) const {
    return (4 + value_bytes(p)) * nnz + offset_bytes() * (static_cast<offset_t>(rows) + 1) +
           vector_bytes(p) * (static_cast<offset_t>(cols) + rows) * k;
  }
};

// One device copy of a CSR matrix can serve several plans (the planner's candidates).
using SharedDeviceCsr = std::shared_ptr<DeviceCsr>;

// The x and y a plan made from `dev` shares with its other plans; nullptr (the plan allocates its
// own) without one.
inline SharedVectors vectors_of(const SharedDeviceCsr& dev, const PlanOptions& opt) {
  return dev ? dev->vectors(opt.k, opt.precision) : nullptr;
}

// Uploads the matrix with the values of precision p; `seconds` gets the host time of the upload
// (rounding to float included, after a device synchronisation).
inline SharedDeviceCsr upload_csr(const CsrView& a, Precision p, double* seconds = nullptr) {
  const auto t0 = std::chrono::steady_clock::now();
  auto m = std::make_shared<DeviceCsr>(a, p);
  SPMV_CUDA_CHECK(cudaDeviceSynchronize());
  if (seconds) *seconds = seconds_since(t0);
  return m;
}

// A shared upload a plan of precision p is given: refused (an internal error) if its values are of
// another type.
inline SharedDeviceCsr checked_for(SharedDeviceCsr dev, Precision p) {
  if (dev && !dev->serves(p))
    throw Error(std::string("CUDA plan: the shared device matrix has no ") + to_string(p) + " values");
  return dev;
}

// The upload plans of precision p share: made on the first call (its seconds added to *upload_s),
// then reused.
inline const SharedDeviceCsr& shared_upload(const CsrView& a, SharedDeviceCsr& dev, Precision p, double* upload_s) {
  if (!dev) {
    double s = 0;
    dev = upload_csr(a, p, &s);
    if (upload_s) *upload_s += s;
  }
  checked_for(dev, p);
  return dev;
}

// Base of the CSR plans: the matrix uploaded once, or shared with other plans (then its upload is
// not this plan's); setup_seconds covers an own upload; subclasses add their preprocessing to it.
class CsrDevicePlan : public CudaPlan {
 public:
  // A kernel that does A^T x itself (KernelSpec::transposes) is given opt.operation: its x has A's
  // rows and its y A's columns (rows_ and cols_ are the operation's; mat_rows_, mat_cols_ A's).
  CsrDevicePlan(const CsrView& a, const PlanOptions& opt, SharedDeviceCsr dev = nullptr)
      : CudaPlan(transposes(opt) ? a.cols : a.rows, transposes(opt) ? a.rows : a.cols, opt,
                 vectors_of(checked_for(dev, opt.precision), opt)),
        mat_rows_(a.rows),
        mat_cols_(a.cols),
        block_(checked_block_size(opt)),
        dev_(dev ? std::move(dev) : upload_csr(a, opt.precision, &setup_seconds)),
        m_(*dev_) {
    bytes_per_product = m_.product_bytes(opt.k, opt.precision);
    stored_entries = a.nnz();
  }

 protected:
  // Nothing to launch: y is empty or all zeros.
  bool trivial() const { return rows_ == 0 || m_.nnz == 0; }
  static bool transposes(const PlanOptions& opt) { return opt.operation == Operation::Transpose; }
  index_t mat_rows_, mat_cols_;
  int block_;
  SharedDeviceCsr dev_;
  DeviceCsr& m_;
};

// Sum (in VV) of val[slot(j)] * x[col[slot(j)]] over j = first, first + step, ... < n, the entries
// of a row in a padded (column-major) layout, four at a time: four column and value loads issued
// together (clamped to the row's last entry, so no branch), then the four loads of x: an entry at a
// time would leave one chain of dependent loads per thread, bound by latency. The
// matrix is read with the last-use hint (no product reads it again), so that x keeps the caches.
template <class MV, class VV, class Slot>
__device__ __forceinline__ VV padded_row_sum(index_t first, index_t n, index_t step, Slot slot,
                                             const index_t* __restrict__ col, const MV* __restrict__ val,
                                             const VV* __restrict__ x) {
  constexpr int U = 4;
  VV s = 0;
  for (index_t j0 = first; j0 < n; j0 += U * step) {
    index_t c[U];
    MV v[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const index_t j = j0 + u * step;
      const long long p = slot(min(j, n - 1));
      c[u] = __ldlu(col + p);
      v[u] = j < n ? __ldlu(val + p) : MV(0);
    }
#pragma unroll
    for (int u = 0; u < U; ++u) s += static_cast<VV>(v[u]) * __ldg(x + c[u]);
  }
  return s;
}

// The block's dynamic shared memory as an array of T (double or float): one extern declaration per
// type (an extern __shared__ array of a template's T would be declared with several types), so the
// double kernels see the double array they always had.
template <class T>
__device__ __forceinline__ T* dynamic_shared() {
  if constexpr (std::is_same_v<T, float>) {
    extern __shared__ float dynamic_shared_f32[];
    return dynamic_shared_f32;
  } else {
    extern __shared__ double dynamic_shared_f64[];
    return dynamic_shared_f64;
  }
}

// Warp-level sum over aligned groups of `width` lanes (a power of two <= 32); every lane of the
// warp must call it.
template <class T>
__device__ __forceinline__ T group_sum(T v, int width) {
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
