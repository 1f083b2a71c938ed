#pragma once
// Internal: the row-length sums behind MatrixFeatures, so that a backend can compute them where
// the matrix lives (CUDA: on the device, src/cuda/features.cu) and share the rest.
#include <spmv/planner.hpp>

#include <cstdint>

namespace spmv::detail {

// Over the rows, in groups of 64 rows (HLL's hacks 16, 32 and 64 each pad to their longest row).
struct RowLengthSums {
  std::uint64_t sum2 = 0;  // sum of squared lengths (at most nnz^2: exact below 4e9 nonzeros)
  offset_t max_row = 0, empty = 0;
  offset_t slots[3] = {0, 0, 0};  // padded slots with hacks 16, 32, 64
};

MatrixFeatures features_from(index_t rows, index_t cols, offset_t nnz, const RowLengthSums& s);

}  // namespace spmv::detail
