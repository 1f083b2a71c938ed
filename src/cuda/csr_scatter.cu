// CSR scatter on CUDA: y = alpha * A^T x + beta * y from A as stored (KernelSpec::scatters). y is
// scaled by beta first (zeroed where beta = 0); then each warp takes a run of kRun consecutive
// nonzeros (balanced however long the rows are; column and value loads coalesced), each lane finds
// its entry's row by binary search within the run's rows, and adds alpha * a_ij * x_i into y_j with
// atomicAdd. X and Y in either layout, read and written in place. The adds land in any order, so
// the bits can differ between runs (KernelSpec::repeatable is false). No copy of A is made: against
// A^T made once it pays for a few products, or where A^T does not fit.
#include "cuda/csr_device.cuh"
#include "core/register.hpp"

namespace spmv::cuda {

namespace {

constexpr int kRun = 32 * 8;  // nonzeros per warp: eight per lane

// The last row r in [lo, hi] with rp[r] <= p (the row holding entry p, given rp[lo] <= p).
template <typename OffT>
__device__ __forceinline__ index_t row_of(const OffT* __restrict__ rp, index_t lo, index_t hi, long long p) {
  while (lo < hi) {
    const index_t mid = lo + (hi - lo + 1) / 2;
    if (static_cast<long long>(__ldg(rp + mid)) <= p)
      lo = mid;
    else
      hi = mid - 1;
  }
  return lo;
}

// rows, nnz: A's; X has `rows` rows and Y A's `cols` rows (k columns each, column-major where
// col_major).
template <class MV, class VV, typename OffT>
__global__ void scatter_kernel(index_t rows, index_t cols, long long nnz, const OffT* __restrict__ rp,
                               const index_t* __restrict__ col, const MV* __restrict__ val, const VV* __restrict__ x,
                               VV* __restrict__ y, VV alpha, int k, bool col_major) {
  const long long warp = (static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const int lane = static_cast<int>(threadIdx.x & 31);
  const long long s0 = warp * kRun;
  if (s0 >= nnz) return;
  const long long s1 = min(s0 + kRun, nnz);
  index_t r = row_of(rp, 0, rows - 1, s0);
  const index_t last = row_of(rp, r, rows - 1, s1 - 1);
  for (long long p = s0 + lane; p < s1; p += 32) {
    r = row_of(rp, r, last, p);
    const VV v = alpha * static_cast<VV>(__ldg(val + p));
    const long long j = __ldg(col + p);
    if (k == 1) {
      atomicAdd(y + j, v * __ldg(x + r));
    } else if (col_major) {
      for (int c = 0; c < k; ++c)
        atomicAdd(y + static_cast<long long>(c) * cols + j, v * __ldg(x + static_cast<long long>(c) * rows + r));
    } else {
      for (int c = 0; c < k; ++c) atomicAdd(y + j * k + c, v * __ldg(x + static_cast<long long>(r) * k + c));
    }
  }
}

class CsrScatter final : public CsrDevicePlan {
 public:
  // Always given the operation A^T (make_plan gives a plan of A x the matrix A^T).
  CsrScatter(const CsrView& a, const PlanOptions& opt) : CsrDevicePlan(a, opt) {
    device_transpose_ = false;  // both layouts in place
    const offset_t ny = static_cast<offset_t>(rows_) * k_;
    bytes_per_product += vector_bytes(opt.precision) * ny;  // y read by the scaling, then added into
    detail = "rows scattered into y with atomics";
  }

 protected:
  void launch(const Launch& l) override {
    zero_y(l);  // y = beta * y: the adds go on top
    if (trivial()) return;
    const unsigned grid = grid_for((m_.nnz + kRun - 1) / kRun * 32, block_);
    const bool cm = layout_ == Layout::ColMajor && k_ > 1;
    with_types(prec_, [&]<class MV, class VV>() {
      const MV* val = m_.val.data<MV>();
      const VV alpha = static_cast<VV>(l.alpha);
      if (m_.wide)
        scatter_kernel<<<grid, block_, 0, l.stream>>>(mat_rows_, mat_cols_, m_.nnz, m_.rp64.data(), m_.col.data(), val,
                                                      l.xv<VV>(), l.yv<VV>(), alpha, k_, cm);
      else
        scatter_kernel<<<grid, block_, 0, l.stream>>>(mat_rows_, mat_cols_, m_.nnz, m_.rp32.data(), m_.col.data(), val,
                                                      l.xv<VV>(), l.yv<VV>(), alpha, k_, cm);
    });
    SPMV_CUDA_CHECK_LAUNCH();
  }
};

}  // namespace

void register_csr_scatter() {
  add_kernel({.name = "csr-scatter",
              .backend = Backend::Cuda,
              .format = "csr",
              .description = "A^T x from A as stored: runs of nonzeros scattered into y with atomics (no transpose "
                             "made; not bit-repeatable)",
              .spmm = true,
              .precisions = {Precision::Double, Precision::Single, Precision::Mixed},
              .params = {"block_size"},
              .scatters = true,
              .repeatable = false,
              .make = [](const CsrView& a, const PlanOptions& o) { return std::make_unique<CsrScatter>(a, o); }});
}

}  // namespace spmv::cuda
