#pragma once
// Internal: how kernels enter the registry. One registration function per backend, each defined
// in that backend's folder, calls add_kernel for each of its kernels. (Explicit calls rather than
// static self-registration: a static library drops unreferenced objects, and their registrars
// with them.)
#include <spmv/plan.hpp>

namespace spmv {
/// Adds a kernel to the registry; its params must name settings of kernel_params() (logic_error).
void add_kernel(KernelSpec spec);
}  // namespace spmv

namespace spmv::detail {
void register_auto_kernels();    // the planner on the host backends: src/plan/auto_kernel.cpp
void register_serial_kernels();  // src/cpu/serial_*.cpp via src/cpu/register_cpu.cpp
void register_omp_kernels();     // src/cpu/omp_*.cpp via src/cpu/register_cpu.cpp
#ifdef SPMV_HAVE_CUDA
void register_cuda_auto_kernel();  // the planner on CUDA: src/plan/auto_cuda.cu
void register_cuda_kernels();      // src/cuda/register_cuda.cu
#endif
}  // namespace spmv::detail
