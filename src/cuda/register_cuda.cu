// The CUDA kernels in the registry: one register_* per kernel file, declared and called here (a new
// kernel adds its two lines here and nowhere else).
#include "core/register.hpp"

namespace spmv::cuda {
void register_csr_scalar();
void register_csr_vector();
void register_csr_adaptive();
void register_csr_merge();
void register_ell();
void register_hll_compact();  // src/cuda/hll_compact.cu
void register_hll();
void register_cusparse();       // CSR and COO algorithms
void register_cusparse_sell();  // src/cuda/cusparse_sell.cu
void register_csr_auto();
void register_csr5();  // src/cuda/csr5.cu
void register_csr_scatter();
}  // namespace spmv::cuda

namespace spmv::detail {

void register_cuda_kernels() {
  cuda::register_csr_auto();
  cuda::register_csr_scalar();
  cuda::register_csr_vector();
  cuda::register_csr_adaptive();
  cuda::register_csr_merge();
  cuda::register_ell();
  cuda::register_hll_compact();
  cuda::register_hll();
  cuda::register_cusparse();
  cuda::register_cusparse_sell();
  cuda::register_csr5();
  cuda::register_csr_scatter();
}

}  // namespace spmv::detail
