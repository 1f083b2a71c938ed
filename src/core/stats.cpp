#include <spmv/stats.hpp>
#include <spmv/formats/hll.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>

namespace spmv {

MatrixStats compute_stats(const Csr& a) {
  MatrixStats s;
  s.rows = a.rows;
  s.cols = a.cols;
  s.nnz = a.nnz();
  if (a.rows == 0) return s;
  s.row_nnz_min = a.row_length(0);
  double sum = 0, sum2 = 0;
  for (index_t r = 0; r < a.rows; ++r) {
    const offset_t len = a.row_length(r);
    s.row_nnz_min = std::min(s.row_nnz_min, len);
    s.row_nnz_max = std::max(s.row_nnz_max, len);
    s.empty_rows += len == 0;
    sum += static_cast<double>(len);
    sum2 += static_cast<double>(len) * static_cast<double>(len);
    for (offset_t p = a.row_ptr[r]; p < a.row_ptr[r + 1]; ++p)
      s.bandwidth = std::max(s.bandwidth, static_cast<index_t>(std::abs(r - a.col[p])));
  }
  s.row_nnz_mean = sum / a.rows;
  // Population standard deviation, as the seed suite's table uses.
  s.row_nnz_std = std::sqrt(std::max(0.0, sum2 / a.rows - s.row_nnz_mean * s.row_nnz_mean));

  // Pattern symmetry: every (i,j) has a (j,i); rows are sorted, so binary search the mirror.
  s.pattern_symmetric = a.rows == a.cols;
  for (index_t r = 0; r < a.rows && s.pattern_symmetric; ++r)
    for (offset_t p = a.row_ptr[r]; p < a.row_ptr[r + 1]; ++p) {
      const index_t c = a.col[p];
      const auto b = a.col.begin() + a.row_ptr[c], e = a.col.begin() + a.row_ptr[c + 1];
      if (!std::binary_search(b, e, r)) {
        s.pattern_symmetric = false;
        break;
      }
    }

  const double nnz = std::max<double>(1.0, static_cast<double>(s.nnz));
  s.ell_padding_ratio = static_cast<double>(a.rows) * static_cast<double>(s.row_nnz_max) / nnz;
  const int hacks[3] = {16, 32, 64};
  for (int i = 0; i < 3; ++i) s.hll_padding_ratio[i] = static_cast<double>(hll_slots(a, hacks[i])) / nnz;
  return s;
}

bool cuda_csr_prefers_adaptive(offset_t max_row_nnz, double mean_row_nnz) {
  const double longest = static_cast<double>(max_row_nnz);
  return (max_row_nnz > 1024 && longest > 32.0 * mean_row_nnz) || (max_row_nnz >= 64 && longest > 6.0 * mean_row_nnz);
}

}  // namespace spmv
