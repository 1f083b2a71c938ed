// The CUDA kernels in the registry; one register_* per kernel file.
#include "core/register.hpp"

namespace spmv::detail {

void register_cuda_kernels() {}

}  // namespace spmv::detail
