#pragma once
#include <spmv/matrix.hpp>

namespace spmv {

struct MatrixStats {
  index_t rows = 0, cols = 0;
  offset_t nnz = 0;
  offset_t row_nnz_min = 0, row_nnz_max = 0;
  double row_nnz_mean = 0, row_nnz_std = 0;
  index_t empty_rows = 0;
  index_t bandwidth = 0;                    ///< max |i - j| over stored entries
  bool pattern_symmetric = false;           ///< square and (i,j) stored iff (j,i) stored
  double ell_padding_ratio = 0;             ///< stored slots / nnz for ELLPACK (rows * max_row_nnz / nnz)
  double hll_padding_ratio[3] = {0, 0, 0};  ///< the same for HLL with hack 16, 32, 64
};

MatrixStats compute_stats(const CsrView& a);

}  // namespace spmv
