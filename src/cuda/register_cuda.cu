// The CUDA kernels in the registry; one register_* per kernel file.
#include "core/register.hpp"
#include "cuda/cuda_kernels.hpp"

namespace spmv::detail {

void register_cuda_kernels() {
  cuda::register_csr_auto();
  cuda::register_csr_scalar();
  cuda::register_csr_vector();
  cuda::register_csr_adaptive();
  cuda::register_csr_merge();
  cuda::register_ell();
  cuda::register_hll();
  cuda::register_cusparse();
  cuda::register_cusparse_sell();
  cuda::register_csr5();
}

}  // namespace spmv::detail
