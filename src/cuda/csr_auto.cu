// "csr" on CUDA: picks the CSR kernel for the matrix from its row statistics, and the CSR SpMM
// kernel for k > 1. Irregular rows (a row far longer than the mean: tuning::csr_prefers_adaptive) go
// to CSR-adaptive, which batches short rows and cuts long ones into pieces of a block each; regular
// ones to CSR-vector with its sub-warp chosen from the mean row length.
#include <spmv/stats.hpp>

#include "cuda/csr_device.cuh"
#include "cuda/tuning.hpp"
#include "cuda/cuda_kernels.hpp"
#include "core/register.hpp"

namespace spmv::cuda {

namespace {

std::unique_ptr<Plan> make_auto(const CsrView& a, const PlanOptions& opt) {
  if (opt.k > 1) return make_csr_spmm(a, opt);
  offset_t max_len = 0;
  for (index_t r = 0; r < a.rows; ++r) max_len = std::max(max_len, a.row_length(r));
  const double mean = a.rows ? static_cast<double>(a.nnz()) / a.rows : 0.0;
  const bool irregular = tuning::csr_prefers_adaptive(max_len, mean);
  auto plan = irregular ? make_csr_adaptive(a, opt) : make_csr_vector(a, opt);
  plan->detail = std::string("kernel=") + (irregular ? "csr-adaptive " : "csr-vector ") + plan->detail;
  return plan;
}

}  // namespace

void register_csr_auto() {
  add_kernel({.name = "csr",
              .backend = Backend::Cuda,
              .format = "csr",
              .description = "CSR, kernel chosen from the row lengths (vector or adaptive); SpMM for k > 1",
              .spmm = true,
              .precisions = {Precision::Double, Precision::Single, Precision::Mixed},
              .params = {"block_size"},
              .variants = csr_spmm_variants(),
              .make = make_auto});
}

}  // namespace spmv::cuda
