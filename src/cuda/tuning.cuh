#pragma once
// The CUDA backend's rules and constants that are not a kernel's own code (host-side, plain C++:
// the CPU-only tests check them too).
#include <spmv/matrix.hpp>

#include <algorithm>
#include <cmath>

namespace spmv::cuda::tuning {

// Whether the CUDA "csr" kernel should run CSR-adaptive rather than CSR-vector: a row much longer
// than the mean. With the longest row at least 64 and over 6 times the mean (or over 1024 and 32
// times the mean), CSR-vector's sub-warp, sized for the mean, walks the long rows alone (the fit
// and its evaluation: bench/results/cuda_csr_auto_h200_3a94b9c.txt).
inline bool csr_prefers_adaptive(offset_t max_row_nnz, double mean_row_nnz) {
  const double longest = static_cast<double>(max_row_nnz);
  return (max_row_nnz > 1024 && longest > 32.0 * mean_row_nnz) || (max_row_nnz >= 64 && longest > 6.0 * mean_row_nnz);
}

// CSR5's omega on CUDA: the warp.
inline constexpr int csr5_omega = 32;

// The CSR5 paper's sigma on GPUs, from nonzeros per row with bounds <r, s, t, u> = <4, 32, 256, 4>:
// r if nnz/row <= r, nnz/row up to s, s up to t, u beyond (the CPU's is a fixed 16).
inline int csr5_sigma_paper(double nnz_per_row) {
  constexpr int r = 4, s = 32, t = 256, u = 4;
  if (!(nnz_per_row > r)) return r;  // also NaN (0 rows)
  if (nnz_per_row <= s) return static_cast<int>(nnz_per_row);
  if (nnz_per_row <= t) return s;
  return u;
}

// Our default CSR5 sigma: 8 (the kernel loads 8 entries per lane at a time) unless the rows are
// regular (row-length std, sampled from at most 4096 rows, not above the mean) and 12 or longer
// on average; then 16 (bench/results/README.md, CSR5 tuning history).
inline int csr5_sigma(const Csr& a) {
  if (a.rows <= 0) return 8;
  const double mean = static_cast<double>(a.nnz()) / a.rows;
  const index_t step = std::max<index_t>(1, a.rows / 4096);
  double s = 0, s2 = 0, n = 0;
  for (index_t r = 0; r < a.rows; r += step) {
    const double len = static_cast<double>(a.row_ptr[r + 1] - a.row_ptr[r]);
    s += len;
    s2 += len * len;
    ++n;
  }
  const double m = s / n, sd = std::sqrt(std::max(0.0, s2 / n - m * m));
  if (mean < 12 || sd > mean) return 8;
  return 16;
}

}  // namespace spmv::cuda::tuning
