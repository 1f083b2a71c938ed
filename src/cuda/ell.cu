// ELLPACK on the GPU: column-major slots (slot (r, j) at j*rows + r), one thread per row, so a warp
// reads 32 consecutive values and columns per step. Padding holds value 0 and a column the row
// already touched, so no branch is needed.
#include <spmv/formats/ell.hpp>

#include "cuda/csr_device.cuh"
#include "cuda/cuda_kernels.hpp"

namespace spmv::cuda {

namespace {

__global__ void ell_kernel(index_t rows, index_t width, const index_t* __restrict__ col,
                           const double* __restrict__ val, const double* __restrict__ x,
                           double* __restrict__ y) {
  const index_t r = static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  double s = 0;
  for (index_t j = 0; j < width; ++j) {
    const long long p = static_cast<long long>(j) * rows + r;
    s += __ldg(val + p) * __ldg(x + __ldg(col + p));
  }
  y[r] = s;
}

class EllPlan final : public CudaPlan {
 public:
  EllPlan(const Csr& a, const PlanOptions& opt) : CudaPlan(a.rows, a.cols, opt), block_(checked_block_size(opt)) {
    auto t0 = std::chrono::steady_clock::now();
    const Ell e = csr_to_ell(a, Layout::ColMajor, host_conversion_options(opt));
    convert_seconds = seconds_since(t0);
    t0 = std::chrono::steady_clock::now();
    width_ = e.width;
    col_.upload(e.col);
    val_.upload(e.val);
    SPMV_CUDA_CHECK(cudaDeviceSynchronize());
    setup_seconds = seconds_since(t0);
    stored_entries = e.slots();
    bytes_per_product = 12 * e.slots() + 8 * static_cast<offset_t>(a.cols) + 8 * static_cast<offset_t>(a.rows);
    detail = "width=" + std::to_string(width_);
  }

 protected:
  void launch() override {
    if (rows_ == 0) return;
    if (width_ == 0) return zero_async(y_);
    ell_kernel<<<grid_for(rows_, block_), block_>>>(rows_, width_, col_.data(), val_.data(), x_.data(), y_.data());
    SPMV_CUDA_CHECK_LAUNCH();
  }
  int block_;
  index_t width_ = 0;
  DeviceBuffer<index_t> col_;
  DeviceBuffer<double> val_;
};

}  // namespace

void register_ell() {
  add_kernel({.name = "ell",
              .backend = Backend::Cuda,
              .format = "ell",
              .description = "ELLPACK, column-major, one thread per row (coalesced)",
              .params = {"block_size"},
              .make = [](const Csr& a, const PlanOptions& o) -> std::unique_ptr<Plan> {
                return std::make_unique<EllPlan>(a, o);
              }});
}

}  // namespace spmv::cuda
