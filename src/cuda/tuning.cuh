#pragma once
// The CUDA backend's rules and constants that are not a kernel's own code (host-side, plain C++:
// the CPU-only tests check them too).
#include <spmv/types.hpp>

namespace spmv::cuda::tuning {

// Whether the CUDA "csr" kernel should run CSR-adaptive rather than CSR-vector: a row much longer
// than the mean. With the longest row at least 64 and over 6 times the mean (or over 1024 and 32
// times the mean), CSR-vector's sub-warp, sized for the mean, walks the long rows alone (the fit
// and its evaluation: bench/results/cuda_csr_auto_h200.txt).
inline bool csr_prefers_adaptive(offset_t max_row_nnz, double mean_row_nnz) {
  const double longest = static_cast<double>(max_row_nnz);
  return (max_row_nnz > 1024 && longest > 32.0 * mean_row_nnz) || (max_row_nnz >= 64 && longest > 6.0 * mean_row_nnz);
}

}  // namespace spmv::cuda::tuning
