// "csr" on CUDA: picks the CSR kernel for the matrix from its row statistics, and the CSR SpMM
// kernel for k > 1. Very irregular rows (a row far longer than the mean) go to merge-path, which
// is balanced by construction; everything else to CSR-adaptive.
#include <spmv/stats.hpp>

#include "cuda/csr_device.cuh"
#include "cuda/cuda_kernels.hpp"

namespace spmv::cuda {

namespace {

std::unique_ptr<Plan> make_auto(const Csr& a, const PlanOptions& opt) {
  if (opt.k > 1) return make_csr_spmm(a, opt);
  offset_t max_len = 0;
  for (index_t r = 0; r < a.rows; ++r) max_len = std::max(max_len, a.row_length(r));
  const double mean = a.rows ? static_cast<double>(a.nnz()) / a.rows : 0.0;
  const bool irregular = max_len > 4096 && static_cast<double>(max_len) > 64.0 * mean;
  auto plan = irregular ? make_csr_merge(a, opt) : make_csr_adaptive(a, opt);
  plan->detail = std::string("kernel=") + (irregular ? "csr-merge " : "csr-adaptive ") + plan->detail;
  return plan;
}

}  // namespace

void register_csr_auto() {
  add_kernel({.name = "csr",
              .backend = Backend::Cuda,
              .format = "csr",
              .description = "CSR, kernel chosen from the row lengths (adaptive or merge-path); SpMM for k > 1",
              .spmm = true,
              .params = {"block_size"},
              .make = make_auto});
}

}  // namespace spmv::cuda
