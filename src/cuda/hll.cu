// Hacked ELLPACK (sliced ELL) on the GPU. Each hack is a column-major block of `hack` rows padded
// to its longest row, addressed through the hack offsets; each row's length is kept beside, so a
// thread stops at its row's end: padding is never read (nor written), and a short row in a wide
// hack costs nothing but its idle lanes. `lanes` threads share a row (1 to 32, from the mean row
// length unless PlanOptions::kernel.subwarp names it): a warp works on 32 / lanes consecutive rows, lane
// l taking every lanes-th entry, so each load is still a few runs of consecutive slots, and long
// rows get more threads in flight. SpMM (row-major X, Y): padded_spmm.cuh, lanes of a row along K.
// The layout (row lengths, hack widths, offsets) and the slots are made on the device from a
// device CSR; only the slot count comes back to the host, for the memory check.
#include <spmv/formats/hll.hpp>
#include <spmv/formats/limits.hpp>

#include <bit>
#include <cub/device/device_scan.cuh>

#include "cuda/csr_device.cuh"
#include "cuda/cuda_kernels.hpp"
#include "cuda/padded_spmm.cuh"
#include "core/register.hpp"

namespace spmv::cuda {

namespace {

// Row r's slots: its hack's are column-major, `stride` rows per column (the last hack may be short).
struct HllRow {
  long long base;
  index_t stride;
  __device__ long long slot(index_t j) const { return base + static_cast<long long>(j) * stride; }
};

__device__ __forceinline__ HllRow hll_row(index_t rows, int hack, const long long* __restrict__ hack_offset,
                                          index_t r) {
  const index_t h = r / hack, lr = r - h * hack;
  return {hack_offset[h] + lr, min(hack, rows - h * hack)};
}

// A lane's entries four at a time (padded_row_sum), every Lanes-th entry of its row. MV: the
// values' type, VV: x's, y's and the sums'.
template <int Lanes, class MV, class VV>
__global__ void hll_kernel(index_t rows, int hack, const long long* __restrict__ hack_offset,
                           const index_t* __restrict__ len, const index_t* __restrict__ col, const MV* __restrict__ val,
                           const VV* __restrict__ x, VV* __restrict__ y, Epilogue<VV> ep) {
  constexpr int kRowsPerWarp = 32 / Lanes;
  const long long t = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int lane = static_cast<int>(threadIdx.x % 32);
  const long long r = t / 32 * kRowsPerWarp + lane % kRowsPerWarp;
  VV s = 0;
  if (r < rows) {
    const HllRow row = hll_row(rows, hack, hack_offset, static_cast<index_t>(r));
    s = padded_row_sum(
        lane / kRowsPerWarp, len[r], Lanes, [=](index_t j) { return row.slot(j); }, col, val, x);
  }
  for (int off = 16; off >= kRowsPerWarp; off /= 2) s += __shfl_xor_sync(0xffffffffu, s, off);
  if (r < rows && lane < kRowsPerWarp) ep.put(y, r, s);
}

// Rows for padded_spmm_kernel: a row's own length, so padding is never read.
struct HllRows {
  index_t rows;
  int hack;
  const long long* hack_offset;
  const index_t* len;
  __device__ PaddedRow row(index_t r) const {
    const HllRow h = hll_row(rows, hack, hack_offset, r);
    return {h.base, h.stride, len[r]};
  }
};

// The layout on the device: row lengths (a thread per row), then each hack's slots, its longest
// row times its rows (a thread per hack), which an exclusive scan turns into offsets.
__global__ void hll_hack_slots(index_t rows, int hack, long long hacks, const index_t* __restrict__ len,
                               long long* __restrict__ slots) {
  const long long h = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (h >= hacks) return;
  const long long first = h * hack, last = min(first + hack, static_cast<long long>(rows));
  index_t w = 0;
  for (long long r = first; r < last; ++r) w = max(w, len[r]);
  slots[h] = static_cast<long long>(w) * (last - first);
}

// A thread per row copies its entries to its slots (coalesced across the warp); padding is left
// unwritten: no product reads it. MV: the values' type (the device CSR's, already the plan's).
template <class MV, typename RpT>
__global__ void csr_to_hll_kernel(index_t rows, int hack, const RpT* __restrict__ rp, const index_t* __restrict__ col,
                                  const MV* __restrict__ val, const long long* __restrict__ hack_offset,
                                  index_t* __restrict__ hcol, MV* __restrict__ hval) {
  const long long r = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  const HllRow row = hll_row(rows, hack, hack_offset, static_cast<index_t>(r));
  const RpT b = rp[r];
  const index_t n = static_cast<index_t>(rp[r + 1] - b);
  for (index_t j = 0; j < n; ++j) {
    const long long p = row.slot(j);
    hcol[p] = col[b + j];
    hval[p] = val[b + j];
  }
}

// Threads per row when the options leave it open (tuning::hll_lanes of the mean row length).
int choose_lanes(const CsrView& a) {
  const double mean = a.rows ? static_cast<double>(a.nnz()) / a.rows : 0.0;
  return tuning::hll_lanes(mean);
}

class HllPlan final : public PaddedSpmmPlan {
 public:
  HllPlan(const CsrView& a, const PlanOptions& opt, SharedDeviceCsr dev)
      : PaddedSpmmPlan(a.rows, a.cols, opt, vectors_of(checked_for(dev, opt.precision), opt)),
        block_(checked_block_size(opt)),
        hack_(opt.kernel.hack),
        lanes_(opt.kernel.subwarp ? opt.kernel.subwarp : choose_lanes(a)) {
    if (hack_ < 1) throw Unsupported("HLL hack size must be positive, got " + std::to_string(hack_));
    if (lanes_ < 1 || lanes_ > 32 || !std::has_single_bit(static_cast<unsigned>(lanes_)))
      throw Unsupported("HLL threads per row must be 1, 2, 4, 8, 16 or 32, got " + std::to_string(lanes_));
    const auto t0 = std::chrono::steady_clock::now();
    if (!dev) dev = upload_csr(a, opt.precision, &setup_seconds);  // the CSR it converts from; freed after
    const long long hacks = (static_cast<long long>(rows_) + hack_ - 1) / hack_;
    if (rows_ > 0) {
      if (dev->wide)
        layout(dev->rp64.data(), hacks);
      else
        layout(dev->rp32.data(), hacks);
    }
    const int vb = value_bytes(prec_);
    check_format_memory("HLL (hack " + std::to_string(hack_) + ")",
                        (4.0 + vb) * static_cast<double>(slots_) + 4.0 * rows_ + 8.0 * static_cast<double>(hacks + 1),
                        a, convert_options(opt));
    col_.resize(slots_);
    val_.resize(slots_, float_values(prec_));
    if (slots_ > 0)
      with_types(prec_, [&]<class MV, class VV>() {
        const unsigned grid = grid_for(rows_, tuning::setup_block);
        const MV* val = dev->val.data<MV>();
        MV* hval = val_.get<MV>().data();
        if (dev->wide)
          csr_to_hll_kernel<<<grid, tuning::setup_block>>>(rows_, hack_, dev->rp64.data(), dev->col.data(), val,
                                                           offset_, col_.data(), hval);
        else
          csr_to_hll_kernel<<<grid, tuning::setup_block>>>(rows_, hack_, dev->rp32.data(), dev->col.data(), val,
                                                           offset_, col_.data(), hval);
        SPMV_CUDA_CHECK_LAUNCH();
      });
    SPMV_CUDA_CHECK(cudaDeviceSynchronize());
    convert_seconds = seconds_since(t0) - setup_seconds;
    stored_entries = slots_;
    bytes_per_product = (4 + vb) * a.nnz() + 4 * static_cast<offset_t>(rows_) + 8 * static_cast<offset_t>(hacks) +
                        vector_bytes(prec_) * (static_cast<offset_t>(a.cols) + a.rows) * k_;
    detail = "hack=" + std::to_string(hack_) + " lanes=" + std::to_string(k_ == 1 ? lanes_ : 1) + " device-conversion";
    choose_column_major(opt);
  }

 private:
  // Row lengths, then hack offsets (the slot count, the only value the host reads back). Offsets,
  // lengths and the scan's scratch share one allocation: each cudaMalloc costs tens of microseconds.
  template <typename RpT>
  void layout(const RpT* rp, long long hacks) {
    std::size_t temp_bytes = 0;
    SPMV_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, temp_bytes, offset_, offset_, hacks + 1));
    const std::size_t off_bytes = align(8 * static_cast<std::size_t>(hacks + 1)),
                      len_bytes = align(4 * static_cast<std::size_t>(rows_));
    layout_.resize(off_bytes + len_bytes + temp_bytes);
    offset_ = reinterpret_cast<long long*>(layout_.data());
    len_ = reinterpret_cast<index_t*>(layout_.data() + off_bytes);
    row_lengths_kernel<<<grid_for(rows_, tuning::setup_block), tuning::setup_block>>>(rows_, rp, len_);
    SPMV_CUDA_CHECK_LAUNCH();
    SPMV_CUDA_CHECK(cudaMemsetAsync(offset_ + hacks, 0, sizeof(long long)));
    hll_hack_slots<<<grid_for(hacks, tuning::setup_block), tuning::setup_block>>>(rows_, hack_, hacks, len_, offset_);
    SPMV_CUDA_CHECK_LAUNCH();
    SPMV_CUDA_CHECK(
        cub::DeviceScan::ExclusiveSum(layout_.data() + off_bytes + len_bytes, temp_bytes, offset_, offset_, hacks + 1));
    long long slots = 0;
    SPMV_CUDA_CHECK(cudaMemcpy(&slots, offset_ + hacks, sizeof(long long), cudaMemcpyDeviceToHost));
    slots_ = slots;
  }
  static std::size_t align(std::size_t bytes) { return (bytes + 255) / 256 * 256; }
  template <int L, class MV, class VV>
  void go(const Launch& l) {
    const offset_t threads = (static_cast<offset_t>(rows_) + 32 / L - 1) / (32 / L) * 32;
    hll_kernel<L><<<grid_for(threads, block_), block_, 0, l.stream>>>(
        rows_, hack_, offset_, len_, col_.data(), val_.data<MV>(), l.xv<VV>(), l.yv<VV>(), l.ep<VV>());
  }

 protected:
  void launch(const Launch& l) override {
    if (rows_ == 0) return;
    if (slots_ == 0) return zero_y(l);
    with_types(prec_, [&]<class MV, class VV>() {
      if (k_ > 1)
        launch_padded_spmm<VV>(HllRows{rows_, hack_, offset_, len_}, k_, block_, col_.data(), val_.data<MV>(), l,
                               x_rows(), mapping());
      else
        switch (lanes_) {
          case 1: go<1, MV, VV>(l); break;
          case 2: go<2, MV, VV>(l); break;
          case 4: go<4, MV, VV>(l); break;
          case 8: go<8, MV, VV>(l); break;
          case 16: go<16, MV, VV>(l); break;
          default: go<32, MV, VV>(l); break;
        }
    });
    SPMV_CUDA_CHECK_LAUNCH();
  }
  int block_, hack_, lanes_;
  offset_t slots_ = 0;
  DeviceBuffer<unsigned char> layout_;  // the hack offsets (hacks + 1), the row lengths, scratch
  long long* offset_ = nullptr;
  index_t* len_ = nullptr;
  DeviceBuffer<index_t> col_;
  DeviceValues val_;
};

}  // namespace

std::unique_ptr<Plan> make_hll(const CsrView& a, const PlanOptions& opt, SharedDeviceCsr dev) {
  return std::make_unique<HllPlan>(a, opt, std::move(dev));
}

void register_hll() {
  add_kernel(
      {.name = "hll",
       .backend = Backend::Cuda,
       .format = "hll",
       .description =
           "Hacked ELLPACK (sliced ELL), column-major hacks, row lengths so padding is never read, "
           "1-32 threads per row; converted on the device; SpMM (lanes along K; column-major X and Y in place or "
           "transposed, by a trial)",
       .spmm = true,
       .precisions = {Precision::Double, Precision::Single, Precision::Mixed},
       .params = {"block_size", "hack", "subwarp"},
       .variants = padded_variants(),
       .make = [](const CsrView& a, const PlanOptions& o) { return make_hll(a, o, nullptr); }});
}

}  // namespace spmv::cuda
