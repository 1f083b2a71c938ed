#include <spmv/stats.hpp>
#include <spmv/planner.hpp>

#include <algorithm>
#include <cstdlib>

namespace spmv {

double MatrixStats::padding(std::string_view name) const {
  for (const FormatStorage& f : storage)
    if (f.name == name) return f.padding;
  return 0;
}

MatrixStats compute_stats(const CsrView& a) {
  // The row-length figures and paddings are the planner's features (one O(rows) pass); the rest
  // needs the entries.
  const MatrixFeatures f = analyze(a);
  MatrixStats s;
  s.rows = a.rows;
  s.cols = a.cols;
  s.nnz = a.nnz();
  if (a.rows == 0) return s;
  s.row_nnz_max = f.max_row;
  s.row_nnz_mean = f.mean;
  s.row_nnz_std = f.std;  // population standard deviation, as the seed suite's table uses
  s.empty_rows = f.empty_rows;
  s.storage = format_storage(f);
  s.row_nnz_min = a.row_length(0);
  for (index_t r = 0; r < a.rows; ++r) {
    s.row_nnz_min = std::min(s.row_nnz_min, a.row_length(r));
    for (offset_t p = a.row_ptr[r]; p < a.row_ptr[r + 1]; ++p)
      s.bandwidth = std::max(s.bandwidth, static_cast<index_t>(std::abs(r - a.col[p])));
  }

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
  return s;
}

}  // namespace spmv
