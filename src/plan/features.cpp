// The planner's structure features: one parallel pass over the row pointer (row lengths, and the
// padded slots of ELL and HLL with hacks 16/32/64 from the same 64-row groups); O(rows), never
// O(nnz); and, on large matrices, a sample of the values.
#include "plan/features.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <string>
#include <unordered_set>

#include "plan/model_tuning.hpp"

namespace spmv {

namespace {
// A format's padding as the stats give it: 1 without nonzeros (nothing stored, nothing padded).
double f_padding(double padding, double nnz) { return nnz > 0 ? padding : 1.0; }
}  // namespace

namespace detail {

MatrixFeatures features_from(index_t rows, index_t cols, offset_t nnz, const RowLengthSums& s) {
  MatrixFeatures f;
  f.rows = rows;
  f.cols = cols;
  f.nnz = nnz;
  f.csr_bytes = 12.0 * static_cast<double>(nnz) + 4.0 * (rows + 1.0) + 8.0 * cols + 8.0 * rows;
  if (rows == 0) return f;
  f.mean = static_cast<double>(nnz) / rows;
  f.std = std::sqrt(std::max(0.0, static_cast<double>(s.sum2) / rows - f.mean * f.mean));
  f.max_row = s.max_row;
  f.empty_rows = static_cast<index_t>(s.empty);
  const double n = std::max(1.0, static_cast<double>(nnz));
  f.ell_padding = static_cast<double>(rows) * static_cast<double>(s.max_row) / n;
  for (int h = 0; h < 3; ++h) f.hll_padding[h] = static_cast<double>(s.slots[h]) / n;
  return f;
}

void sample_values(const CsrView& a, MatrixFeatures& f) {
  const offset_t nnz = a.nnz();
  if (nnz <= tuning::large_nnz) return;
  const int n = tuning::value_samples;
  std::unordered_set<std::uint64_t> seen;
  for (int i = 0; i < n; ++i) {
    const offset_t q = nnz / n * i + (nnz % n) * i / n;
    const double v = a.values_in_float() ? static_cast<double>(a.val_f32[q]) : a.val[q];
    seen.insert(std::bit_cast<std::uint64_t>(v));
  }
  f.values_sampled = n;
  f.sampled_distinct = static_cast<int>(seen.size());
}

}  // namespace detail

std::vector<FormatStorage> format_storage(const MatrixFeatures& f) {
  const double nnz = static_cast<double>(f.nnz);
  const auto with = [nnz](std::string name, std::string format, int hack, double padding) {
    return FormatStorage{std::move(name), std::move(format), hack, padding * nnz, f_padding(padding, nnz)};
  };
  std::vector<FormatStorage> v = {with("csr", "csr", 0, 1), with("ell", "ell", 0, f.ell_padding)};
  for (int h = 0; h < 3; ++h) v.push_back(with("hll" + std::to_string(16 << h), "hll", 16 << h, f.hll_padding[h]));
  v.push_back(with("csr5", "csr5", 0, 1));
  for (FormatStorage& s : v) s.pads = s.format == "ell" || s.format == "hll";
  return v;
}

MatrixFeatures analyze(const CsrView& a) {
  const offset_t* rp = a.row_ptr.data();
  const offset_t rows = a.rows, groups = (rows + 63) / 64;
  // Unsigned integer sums, so that the 16-row loops below vectorise.
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
  MatrixFeatures f =
      detail::features_from(a.rows, a.cols, a.nnz(), {sum2, max_row, empty, {slots16, slots32, slots64}});
  detail::sample_values(a, f);
  return f;
}

}  // namespace spmv
