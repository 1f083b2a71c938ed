// ELLPACK on the GPU: column-major slots (slot (r, j) at j*rows + r), one thread per row, so a warp
// reads 32 consecutive values and columns per step. Padding holds value 0 and a column the row
// already touched, so no branch is needed. Width and slots made on the device from a device CSR.
// Variant lengths (002's MAXNZ(1:M)): the rows' lengths kept too, each thread stopping at its row's
// (SpMV; SpMM reads the padded width).
// SpMM: padded_spmm.cuh (lanes of a row along K, X and Y row-major on the device).
#include <spmv/formats/ell.hpp>

#include "cuda/csr_device.cuh"
#include "cuda/cuda_kernels.hpp"
#include "cuda/padded_spmm.cuh"
#include "core/register.hpp"

namespace spmv::cuda {

namespace {

// A thread per row, its entries four at a time (padded_row_sum). MV: the values' type, VV: x's,
// y's and the sums'.
template <class MV, class VV>
__global__ void ell_kernel(index_t rows, index_t width, const index_t* __restrict__ col, const MV* __restrict__ val,
                           const VV* __restrict__ x, VV* __restrict__ y, Epilogue<VV> ep) {
  const index_t r = static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  ep.put(y, r,
         padded_row_sum(
             0, width, 1, [=](index_t j) { return static_cast<long long>(j) * rows + r; }, col, val, x));
}

// The same stopping at each row's length (len[r]): the padding is never read.
template <class MV, class VV>
__global__ void ell_lengths_kernel(index_t rows, const index_t* __restrict__ len, const index_t* __restrict__ col,
                                   const MV* __restrict__ val, const VV* __restrict__ x, VV* __restrict__ y,
                                   Epilogue<VV> ep) {
  const index_t r = static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  ep.put(y, r,
         padded_row_sum(
             0, len[r], 1, [=](index_t j) { return static_cast<long long>(j) * rows + r; }, col, val, x));
}

const std::vector<VariantGroup>& ell_variants() {
  static const std::vector<VariantGroup> v = [] {
    std::vector<VariantGroup> g = padded_variants();
    g.push_back({"rows",
                 {"padded", "lengths"},
                 "SpMV: every row read to the width, or each to its length (002's MAXNZ(1:M), kept on the device)"});
    return g;
  }();
  return v;
}

// Rows for padded_spmm_kernel: every row has width slots, column-major.
struct EllRows {
  index_t rows, width;
  __device__ PaddedRow row(index_t r) const { return {r, rows, width}; }
};

// Device conversion: thread r writes row r's slots (coalesced across the warp). Padding holds
// value 0 and the row's last column (column 0 for an empty row), so x is read where the row
// already reads. MV: the values' type (the device CSR's, already the plan's).
template <class MV, typename OffT>
__global__ void csr_to_ell_kernel(index_t rows, index_t width, const OffT* __restrict__ rp,
                                  const index_t* __restrict__ col, const MV* __restrict__ val,
                                  index_t* __restrict__ ecol, MV* __restrict__ eval) {
  const index_t r = static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  const OffT b = rp[r];
  const index_t len = static_cast<index_t>(rp[r + 1] - b);
  const index_t pad = len > 0 ? col[b + len - 1] : 0;
  for (index_t j = 0; j < width; ++j) {
    const long long p = static_cast<long long>(j) * rows + r;
    ecol[p] = j < len ? col[b + j] : pad;
    eval[p] = j < len ? val[b + j] : MV(0);
  }
}

// The width (the longest row) from the device CSR: a warp's maximum, then one atomic per warp.
template <typename OffT>
__global__ void ell_width_kernel(index_t rows, const OffT* __restrict__ rp, int* __restrict__ width) {
  const long long r = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  int len = r < rows ? static_cast<int>(rp[r + 1] - rp[r]) : 0;
  for (int off = 16; off > 0; off /= 2) len = max(len, __shfl_xor_sync(0xffffffffu, len, off));
  if (threadIdx.x % 32 == 0 && len > 0) atomicMax(width, len);
}

class EllPlan final : public PaddedSpmmPlan {
 public:
  EllPlan(const CsrView& a, const PlanOptions& opt, SharedDeviceCsr dev)
      : PaddedSpmmPlan(a.rows, a.cols, opt, vectors_of(checked_for(dev, opt.precision), opt)),
        block_(checked_block_size(opt)),
        lengths_(k_ == 1 && parse_variant("ell", ell_variants(), opt.kernel.variant)["rows"] == "lengths") {
    const auto t0 = std::chrono::steady_clock::now();
    if (!dev) dev = upload_csr(a, opt.precision, &setup_seconds);  // the CSR it converts from; freed after
    if (a.rows > 0) {  // on the device: a host pass over the rows cost more than the conversion
      DeviceBuffer<int> w(1);
      SPMV_CUDA_CHECK(cudaMemsetAsync(w.data(), 0, sizeof(int)));
      if (dev->wide)
        ell_width_kernel<<<grid_for(a.rows, tuning::setup_block), tuning::setup_block>>>(a.rows, dev->rp64.data(),
                                                                                         w.data());
      else
        ell_width_kernel<<<grid_for(a.rows, tuning::setup_block), tuning::setup_block>>>(a.rows, dev->rp32.data(),
                                                                                         w.data());
      SPMV_CUDA_CHECK_LAUNCH();
      SPMV_CUDA_CHECK(cudaMemcpy(&width_, w.data(), sizeof(int), cudaMemcpyDeviceToHost));
    }
    const offset_t slots = static_cast<offset_t>(a.rows) * width_;
    check_format_memory("ELL", ell_bytes(a.rows, width_, value_bytes(prec_)), a, convert_options(opt));
    col_.resize(slots);
    val_.resize(slots, float_values(prec_));
    if (slots > 0)
      with_types(prec_, [&]<class MV, class VV>() {
        const unsigned grid = grid_for(a.rows, tuning::setup_block);
        const MV* val = dev->val.data<MV>();
        MV* eval = val_.get<MV>().data();
        if (dev->wide)
          csr_to_ell_kernel<<<grid, tuning::setup_block>>>(a.rows, width_, dev->rp64.data(), dev->col.data(), val,
                                                           col_.data(), eval);
        else
          csr_to_ell_kernel<<<grid, tuning::setup_block>>>(a.rows, width_, dev->rp32.data(), dev->col.data(), val,
                                                           col_.data(), eval);
        SPMV_CUDA_CHECK_LAUNCH();
      });
    if (lengths_ && a.rows > 0) {
      len_.resize(static_cast<std::size_t>(a.rows));
      const unsigned grid = grid_for(a.rows, tuning::setup_block);
      if (dev->wide)
        row_lengths_kernel<<<grid, tuning::setup_block>>>(a.rows, dev->rp64.data(), len_.data());
      else
        row_lengths_kernel<<<grid, tuning::setup_block>>>(a.rows, dev->rp32.data(), len_.data());
      SPMV_CUDA_CHECK_LAUNCH();
    }
    SPMV_CUDA_CHECK(cudaDeviceSynchronize());
    convert_seconds = seconds_since(t0) - setup_seconds;
    stored_entries = slots;
    // lengths: the entries and each row's length are read, not the padding
    bytes_per_product =
        (lengths_ ? (4 + value_bytes(prec_)) * a.nnz() + 4 * offset_t{a.rows} : (4 + value_bytes(prec_)) * slots) +
        vector_bytes(prec_) * (static_cast<offset_t>(a.cols) + a.rows) * k_;
    detail = "width=" + std::to_string(width_) + (lengths_ ? " rows=lengths" : "") + " device-conversion";
    choose_column_major(opt, ell_variants());
  }

 protected:
  void launch(const Launch& l) override {
    if (rows_ == 0) return;
    if (width_ == 0) return zero_y(l);
    with_types(prec_, [&]<class MV, class VV>() {
      const MV* val = val_.data<MV>();
      if (k_ > 1)
        launch_padded_spmm<VV>(EllRows{rows_, width_}, k_, block_, col_.data(), val, l, x_rows(), mapping());
      else if (lengths_)
        ell_lengths_kernel<<<grid_for(rows_, block_), block_, 0, l.stream>>>(rows_, len_.data(), col_.data(), val,
                                                                             l.xv<VV>(), l.yv<VV>(), l.ep<VV>());
      else
        ell_kernel<<<grid_for(rows_, block_), block_, 0, l.stream>>>(rows_, width_, col_.data(), val, l.xv<VV>(),
                                                                     l.yv<VV>(), l.ep<VV>());
    });
    SPMV_CUDA_CHECK_LAUNCH();
  }
  int block_;
  bool lengths_;  // SpMV stops at each row's length (len_)
  index_t width_ = 0;
  DeviceBuffer<index_t> col_, len_;
  DeviceValues val_;
};

}  // namespace

std::unique_ptr<Plan> make_ell(const CsrView& a, const PlanOptions& opt, SharedDeviceCsr dev) {
  return std::make_unique<EllPlan>(a, opt, std::move(dev));
}

void register_ell() {
  add_kernel({.name = "ell",
              .backend = Backend::Cuda,
              .format = "ell",
              .description = "ELLPACK, column-major, one thread per row (coalesced), to the width or (rows=lengths) "
                             "each row's length; converted on the device; SpMM (lanes along K; column-major X and "
                             "Y in place or transposed, by a trial)",
              .spmm = true,
              .precisions = {Precision::Double, Precision::Single, Precision::Mixed},
              .params = {"block_size"},
              .variants = ell_variants(),
              .make = [](const CsrView& a, const PlanOptions& o) { return make_ell(a, o, nullptr); }});
}

}  // namespace spmv::cuda
