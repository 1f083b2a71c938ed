// Hacked ELLPACK on the GPU: each hack is a column-major ELL block of `hack` rows (32 by default:
// one warp per hack, a thread per row, coalesced), addressed through the hack offsets, so a long
// row pads only its own hack. SpMM (row-major X, Y): a thread per (row, right-hand side), the K
// threads of a row sharing each value and column and reading K consecutive entries of X. Converted
// from a device CSR on the device.
#include <spmv/formats/hll.hpp>

#include "cuda/csr_device.cuh"
#include "cuda/cuda_kernels.hpp"

namespace spmv::cuda {

namespace {

// Row r's place in the HLL arrays: its hack is a column-major block of `stride` rows (the last hack
// may be short) and `width` columns; entry j of the row is at slot(j).
template <typename OffT>
struct HllRow {
  OffT base;
  index_t width, stride;
  __device__ OffT slot(index_t j) const { return base + static_cast<OffT>(j) * stride; }
};

template <typename OffT>
__device__ __forceinline__ HllRow<OffT> hll_row(index_t rows, int hack, const OffT* __restrict__ hack_offset,
                                               const index_t* __restrict__ hack_width, index_t r) {
  const index_t h = r / hack, lr = r - h * hack;
  return {hack_offset[h] + lr, hack_width[h], min(hack, rows - h * hack)};
}

template <typename OffT>
__global__ void hll_kernel(index_t rows, int hack, const OffT* __restrict__ hack_offset,
                           const index_t* __restrict__ hack_width, const index_t* __restrict__ col,
                           const double* __restrict__ val, const double* __restrict__ x,
                           double* __restrict__ y) {
  const index_t r = static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  const HllRow<OffT> row = hll_row(rows, hack, hack_offset, hack_width, r);
  double s = 0;
  for (index_t j = 0; j < row.width; ++j) {
    const OffT p = row.slot(j);
    s += __ldg(val + p) * __ldg(x + __ldg(col + p));
  }
  y[r] = s;
}

template <typename OffT>
__global__ void hll_spmm_kernel(index_t rows, int k, int hack, const OffT* __restrict__ hack_offset,
                                const index_t* __restrict__ hack_width, const index_t* __restrict__ col,
                                const double* __restrict__ val, const double* __restrict__ x,
                                double* __restrict__ y) {
  const long long t = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  const long long r = t / k;
  const int c = static_cast<int>(t - r * k);
  if (r >= rows) return;
  const HllRow<OffT> row = hll_row(rows, hack, hack_offset, hack_width, static_cast<index_t>(r));
  double s = 0;
  for (index_t j = 0; j < row.width; ++j) {
    const OffT p = row.slot(j);
    s += __ldg(val + p) * __ldg(x + static_cast<long long>(__ldg(col + p)) * k + c);
  }
  y[r * k + c] = s;
}

// Device conversion: thread r writes row r's slots of its hack (coalesced across the warp);
// padding as in ELL (value 0, the row's last column).
template <typename RpT, typename OffT>
__global__ void csr_to_hll_kernel(index_t rows, int hack, const RpT* __restrict__ rp, const index_t* __restrict__ col,
                                  const double* __restrict__ val, const OffT* __restrict__ hack_offset,
                                  const index_t* __restrict__ hack_width, index_t* __restrict__ hcol,
                                  double* __restrict__ hval) {
  const index_t r = static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  const HllRow<OffT> row = hll_row(rows, hack, hack_offset, hack_width, r);
  const RpT b = rp[r];
  const index_t len = static_cast<index_t>(rp[r + 1] - b);
  const index_t pad = len > 0 ? col[b + len - 1] : 0;
  for (index_t j = 0; j < row.width; ++j) {
    const OffT p = row.slot(j);
    hcol[p] = j < len ? col[b + j] : pad;
    hval[p] = j < len ? val[b + j] : 0.0;
  }
}

class HllPlan final : public CudaPlan {
 public:
  HllPlan(const Csr& a, const PlanOptions& opt, SharedDeviceCsr dev)
      : CudaPlan(a.rows, a.cols, opt, dev ? dev->vectors(opt.k) : nullptr), block_(checked_block_size(opt)),
        hack_(opt.hack) {
    const auto t0 = std::chrono::steady_clock::now();
    // Hack widths and offsets on the host (O(rows), parallel), the slots on the device.
    const HllLayout layout = hll_layout(a, hack_);
    const auto& off = layout.offset;
    const index_t n_hacks = static_cast<index_t>(layout.width.size());
    slots_ = layout.slots();
    check_format_memory("HLL (hack " + std::to_string(hack_) + ")", layout.bytes(), a, opt);
    if (!dev) dev = upload_csr(a, &setup_seconds);  // the CSR it converts from; freed after
    wide_ = slots_ >= std::numeric_limits<int>::max();
    if (wide_) off64_.upload(std::vector<long long>(off.begin(), off.end()));
    else off32_.upload(std::vector<int>(off.begin(), off.end()));
    width_.upload(layout.width);
    col_.resize(slots_);
    val_.resize(slots_);
    if (slots_ > 0) {
      if (wide_) convert(*dev, off64_.data());
      else convert(*dev, off32_.data());
    }
    SPMV_CUDA_CHECK(cudaDeviceSynchronize());
    convert_seconds = seconds_since(t0) - setup_seconds;
    stored_entries = slots_;
    bytes_per_product = 12 * slots_ + (4 + (wide_ ? 8 : 4)) * static_cast<offset_t>(n_hacks) +
                        8 * static_cast<offset_t>(a.cols) * k_ + 8 * static_cast<offset_t>(a.rows) * k_;
    detail = "hack=" + std::to_string(hack_) + " device-conversion";
  }

 private:
  template <typename OffT>
  void convert(DeviceCsr& d, const OffT* off) {
    const unsigned grid = grid_for(rows_, 256);
    if (d.wide)
      csr_to_hll_kernel<<<grid, 256>>>(rows_, hack_, d.rp64.data(), d.col.data(), d.val.data(), off, width_.data(),
                                       col_.data(), val_.data());
    else
      csr_to_hll_kernel<<<grid, 256>>>(rows_, hack_, d.rp32.data(), d.col.data(), d.val.data(), off, width_.data(),
                                       col_.data(), val_.data());
    SPMV_CUDA_CHECK_LAUNCH();
  }

 protected:
  template <typename OffT>
  void go(const OffT* off) {
    if (k_ == 1)
      hll_kernel<<<grid_for(rows_, block_), block_>>>(rows_, hack_, off, width_.data(), col_.data(), val_.data(),
                                                      x_.data(), y_.data());
    else
      hll_spmm_kernel<<<grid_for(static_cast<offset_t>(rows_) * k_, block_), block_>>>(
          rows_, k_, hack_, off, width_.data(), col_.data(), val_.data(), x_.data(), y_.data());
  }
  void launch() override {
    if (rows_ == 0) return;
    if (slots_ == 0) return zero_async(y_);
    if (wide_) go(off64_.data());
    else go(off32_.data());
    SPMV_CUDA_CHECK_LAUNCH();
  }
  int block_, hack_ = 32;
  bool wide_ = false;
  offset_t slots_ = 0;
  DeviceBuffer<int> off32_;
  DeviceBuffer<long long> off64_;
  DeviceBuffer<index_t> width_, col_;
  DeviceBuffer<double> val_;
};

}  // namespace

std::unique_ptr<Plan> make_hll(const Csr& a, const PlanOptions& opt, SharedDeviceCsr dev) {
  return std::make_unique<HllPlan>(a, opt, std::move(dev));
}

void register_hll() {
  add_kernel({.name = "hll",
              .backend = Backend::Cuda,
              .format = "hll",
              .description = "Hacked ELLPACK, column-major hacks, a warp per 32-row hack, converted on the device; SpMM (X, Y row-major on the device)",
              .spmm = true,
              .params = {"block_size", "hack"},
              .make = [](const Csr& a, const PlanOptions& o) { return make_hll(a, o, nullptr); }});
}

}  // namespace spmv::cuda
