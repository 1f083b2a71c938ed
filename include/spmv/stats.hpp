#pragma once
#include <spmv/matrix.hpp>

namespace spmv {

struct MatrixStats {
  index_t rows = 0, cols = 0;
  offset_t nnz = 0;
  offset_t row_nnz_min = 0, row_nnz_max = 0;
  double row_nnz_mean = 0, row_nnz_std = 0;
  index_t empty_rows = 0;
  index_t bandwidth = 0;            // max |i - j| over stored entries
  bool pattern_symmetric = false;  // square and (i,j) stored iff (j,i) stored
  double ell_padding_ratio = 0;     // stored slots / nnz for ELLPACK (rows * max_row_nnz / nnz)
  double hll_padding_ratio[3] = {0, 0, 0};  // the same for HLL with hack 16, 32, 64
};

MatrixStats compute_stats(const Csr& a);

// Whether the CUDA "csr" kernel should run CSR-adaptive rather than CSR-vector: a row much longer
// than the mean. With the longest row at least 64 and over 6 times the mean (or over 1024 and 32
// times the mean), CSR-vector's sub-warp, sized for the mean, walks the long rows alone. Fitted to
// the default-suite run on the H200 (bench/results/h200_default_suite.csv, block 256): over the 76
// real matrices it gets within 0.7% of the better of the two on geometric mean (worst 0.87x, a
// 14-row matrix) where the former rule (1024 and 32 times) was 7% off, worst 0.27x (Chem97Zt).
bool cuda_csr_prefers_adaptive(offset_t max_row_nnz, double mean_row_nnz);

}  // namespace spmv
