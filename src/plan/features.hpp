#pragma once
// Internal: the row-length sums behind MatrixFeatures, computed where the matrix lives (the host:
// features.cpp; CUDA: on the device, features_cuda.cu) with the rest shared.
#include <spmv/planner.hpp>

#include <cstdint>
#include <memory>

namespace spmv::detail {

// Over the rows, in groups of 64 rows (HLL's hacks 16, 32 and 64 each pad to their longest row).
struct RowLengthSums {
  std::uint64_t sum2 = 0;  // sum of squared lengths (at most nnz^2: exact below 4e9 nonzeros)
  offset_t max_row = 0, empty = 0;
  offset_t slots[3] = {0, 0, 0};  // padded slots with hacks 16, 32, 64
};

MatrixFeatures features_from(index_t rows, index_t cols, offset_t nnz, const RowLengthSums& s);
/// f.values_sampled and f.sampled_distinct from a's host values (matrices above large_nnz).
void sample_values(const CsrView& a, MatrixFeatures& f);

}  // namespace spmv::detail

#ifdef SPMV_HAVE_CUDA
namespace spmv::cuda {
struct DeviceCsr;
using SharedDeviceCsr = std::shared_ptr<DeviceCsr>;
// The features of `a` computed on the device from the shared upload `dev` (made, and its seconds
// added to *upload_s, when dev is empty). Equal to analyze(a).
MatrixFeatures analyze_on_device(const CsrView& a, SharedDeviceCsr& dev, double* upload_s = nullptr);
}  // namespace spmv::cuda
#endif
