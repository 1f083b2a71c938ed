// The cuSPARSE sliced-ELL baseline (CUSPARSE_SPMV_SELL_ALG1), converted from our device CSR on the
// device. cuSPARSE's layout: slices of kSlice consecutive rows (the last one padded with empty rows
// up to kSlice), each stored column-major and padded to its longest row; entry j of local row l of
// slice s at sellSliceOffsets[s] + j * kSlice + l; padding holds column -1 and value 0.
#include <spmv/formats/limits.hpp>

#include <cub/device/device_scan.cuh>
#include <limits>

#include "cuda/cuda_kernels.hpp"
#include "cuda/cusparse.cuh"
#include "core/register.hpp"

namespace spmv::cuda {

namespace {

constexpr int kSlice = 32;  // cuSPARSE's recommended slice size; one warp per slice below

// A warp per slice, a lane per row: slots[s] = kSlice * the slice's longest row.
__global__ void sell_slice_slots(index_t rows, long long slices, const int* __restrict__ rp,
                                 long long* __restrict__ slots) {
  const long long t = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  const long long s = t / kSlice;
  int w = t < rows ? rp[t + 1] - rp[t] : 0;
  for (int off = kSlice / 2; off > 0; off /= 2) w = max(w, __shfl_xor_sync(0xffffffffu, w, off));
  if (s < slices && t % kSlice == 0) slots[s] = static_cast<long long>(w) * kSlice;
}

// A thread per row (padding rows of the last slice included): its entries, then padding, down its
// column of slots; lane 0 of each slice writes the 32-bit slice offset. MV: the values' type.
template <class MV>
__global__ void sell_fill(index_t rows, long long slices, const int* __restrict__ rp, const index_t* __restrict__ col,
                          const MV* __restrict__ val, const long long* __restrict__ off, int* __restrict__ off32,
                          index_t* __restrict__ scol, MV* __restrict__ sval) {
  const long long t = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  const long long s = t / kSlice;
  if (s >= slices) return;
  const int lane = static_cast<int>(t % kSlice);
  const long long base = off[s], width = (off[s + 1] - base) / kSlice;
  if (lane == 0) off32[s] = static_cast<int>(base);
  if (lane == 0 && s == slices - 1) off32[slices] = static_cast<int>(off[slices]);
  const int b = t < rows ? rp[t] : 0, len = t < rows ? rp[t + 1] - b : 0;
  for (long long j = 0; j < width; ++j) {
    const long long p = base + j * kSlice + lane;
    scol[p] = j < len ? col[b + j] : -1;
    sval[p] = j < len ? val[b + j] : MV(0);
  }
}

class SellCusparse final : public CusparsePlan {
 public:
  SellCusparse(const CsrView& a, const PlanOptions& opt, cusparseSpMVAlg_t alg, const char* name)
      : CusparsePlan(int32_addressable(a, "sliced ELL"), opt, alg, name) {
    detail = std::string(name) + " slice=" + std::to_string(kSlice);
    const long long slices = (static_cast<long long>(rows_) + kSlice - 1) / kSlice;
    long long slots = 0;
    if (!trivial()) {
      const auto t0 = std::chrono::steady_clock::now();
      constexpr int block = tuning::setup_block;
      const unsigned grid = grid_for(slices * kSlice, block);
      // Slice offsets: an exclusive prefix sum over the slices' slot counts, the total last.
      DeviceBuffer<long long> off(static_cast<std::size_t>(slices) + 1);
      SPMV_CUDA_CHECK(cudaMemsetAsync(off.data() + slices, 0, sizeof(long long)));
      sell_slice_slots<<<grid, block>>>(rows_, slices, m_.rp32.data(), off.data());
      SPMV_CUDA_CHECK_LAUNCH();
      std::size_t temp_bytes = 0;
      SPMV_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, temp_bytes, off.data(), off.data(), slices + 1));
      DeviceBuffer<unsigned char> temp(temp_bytes);
      SPMV_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(temp.data(), temp_bytes, off.data(), off.data(), slices + 1));
      SPMV_CUDA_CHECK(cudaMemcpy(&slots, off.data() + slices, sizeof(long long), cudaMemcpyDeviceToHost));
      if (slots >= std::numeric_limits<int>::max())
        throw Unsupported("cuSPARSE sliced ELL would need " + std::to_string(slots) +
                          " slots; its 32-bit slice offsets address fewer than 2^31");
      check_format_memory(
          "sliced ELL", (4.0 + value_bytes(prec_)) * static_cast<double>(slots) + 4.0 * static_cast<double>(slices + 1),
          a, convert_options(opt));
      off32_.resize(static_cast<std::size_t>(slices) + 1);
      col_.resize(static_cast<std::size_t>(slots));
      val_.resize(static_cast<std::size_t>(slots), float_values(prec_));
      with_types(prec_, [&]<class MV, class VV>() {
        sell_fill<<<grid, block>>>(rows_, slices, m_.rp32.data(), m_.col.data(), m_.val.data<MV>(), off.data(),
                                   off32_.data(), col_.data(), val_.get<MV>().data());
      });
      SPMV_CUDA_CHECK_LAUNCH();
      SPMV_CUDA_CHECK(cudaDeviceSynchronize());
      convert_seconds = seconds_since(t0);
      // The products read only the sliced ELL: the device CSR it came from is released.
      m_.rp32 = DeviceBuffer<int>();
      m_.col = DeviceBuffer<index_t>();
      m_.val = DeviceValues();
      SPMV_CUSPARSE_CHECK(cusparseCreateSlicedEll(&mat_, rows_, cols_, m_.nnz, slots, kSlice, off32_.data(),
                                                  col_.data(), values(val_), CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                                                  CUSPARSE_INDEX_BASE_ZERO, type()));
    }
    stored_entries = slots;
    bytes_per_product = (4 + value_bytes(prec_)) * slots + (slots ? 4 * (slices + 1) : 0) +
                        vector_bytes(prec_) * (static_cast<offset_t>(cols_) + rows_);
    prepare();
  }

 private:
  DeviceBuffer<int> off32_;
  DeviceBuffer<index_t> col_;
  DeviceValues val_;
};

}  // namespace

void register_cusparse_sell() {
  add_kernel({.name = "cusparse-sell",
              .backend = Backend::Cuda,
              .format = "csr",
              .description = "cuSPARSE SpMV on sliced ELL (slices of 32 rows, column-major, converted from CSR on the "
                             "device), CUSPARSE_SPMV_SELL_ALG1",
              .baseline = true,
              .spmm = false,
              .precisions = {Precision::Double, Precision::Single},
              .params = {},
              .make = [](const CsrView& a, const PlanOptions& o) -> std::unique_ptr<Plan> {
                return std::make_unique<SellCusparse>(a, o, CUSPARSE_SPMV_SELL_ALG1, "cusparse-sell");
              }});
}

}  // namespace spmv::cuda
