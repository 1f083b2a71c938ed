// The planner's structure features: one parallel pass over the row pointer (row lengths, and the
// padded slots of ELL and HLL with hacks 16/32/64 from the same 64-row groups); O(rows), never
// O(nnz).
#include <spmv/planner.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace spmv {

MatrixFeatures analyze(const Csr& a) {
  MatrixFeatures f;
  f.rows = a.rows;
  f.cols = a.cols;
  f.nnz = a.nnz();
  f.csr_bytes = 12.0 * static_cast<double>(f.nnz) + 4.0 * (a.rows + 1.0) + 8.0 * a.cols + 8.0 * a.rows;
  if (a.rows == 0) return f;
  const offset_t* rp = a.row_ptr.data();
  const offset_t rows = a.rows, groups = (rows + 63) / 64;
  // The sum of squares in unsigned integers (at most nnz^2: exact below 4e9 nonzeros), so that the
  // 16-row loops below vectorise.
  std::uint64_t sum2 = 0;
  offset_t max_row = 0, slots16 = 0, slots32 = 0, slots64 = 0, empty = 0;
#pragma omp parallel for schedule(static) reduction(+ : sum2, slots16, slots32, slots64, empty) \
    reduction(max : max_row) if (rows > (1 << 16))
  for (offset_t g = 0; g < groups; ++g) {
    const offset_t first = g * 64, last = std::min<offset_t>(first + 64, rows);
    offset_t w16[4] = {0, 0, 0, 0};
    for (offset_t q = 0; q < 4; ++q) {
      const offset_t lo = std::min(first + 16 * q, last), hi = std::min(lo + 16, last);
      offset_t w = 0, e = 0;
      std::uint64_t s2 = 0;
      for (offset_t r = lo; r < hi; ++r) {
        const offset_t len = rp[r + 1] - rp[r];
        w = std::max(w, len);
        s2 += static_cast<std::uint64_t>(len) * static_cast<std::uint64_t>(len);
        e += len == 0;
      }
      w16[q] = w;
      sum2 += s2;
      empty += e;
      slots16 += w * (hi - lo);
    }
    const offset_t w32[2] = {std::max(w16[0], w16[1]), std::max(w16[2], w16[3])};
    const offset_t w64 = std::max(w32[0], w32[1]);
    max_row = std::max(max_row, w64);
    for (offset_t q = 0; q < 2; ++q) slots32 += w32[q] * std::clamp<offset_t>(last - first - 32 * q, 0, 32);
    slots64 += w64 * (last - first);
  }
  f.mean = static_cast<double>(f.nnz) / a.rows;
  f.std = std::sqrt(std::max(0.0, static_cast<double>(sum2) / a.rows - f.mean * f.mean));
  f.max_row = max_row;
  f.empty_rows = static_cast<index_t>(empty);
  const double nnz = std::max(1.0, static_cast<double>(f.nnz));
  f.ell_padding = static_cast<double>(a.rows) * static_cast<double>(max_row) / nnz;
  f.hll_padding[0] = static_cast<double>(slots16) / nnz;
  f.hll_padding[1] = static_cast<double>(slots32) / nnz;
  f.hll_padding[2] = static_cast<double>(slots64) / nnz;
  return f;
}

}  // namespace spmv
