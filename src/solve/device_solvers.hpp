#pragma once
// The solvers on device vectors (src/cuda/solvers.cu), called by spmv/solvers.hpp's device
// overloads once the arguments are checked (solvers.cpp).
#include <spmv/solvers.hpp>

namespace spmv::cuda {

SolverResult device_cg(Plan& plan, DeviceSpan<const double> b, DeviceSpan<double> x, const SolverOptions& opt,
                       DeviceSpan<const double> inv_diag, CudaStream stream);
SolverResult device_bicgstab(Plan& plan, DeviceSpan<const double> b, DeviceSpan<double> x, const SolverOptions& opt,
                             DeviceSpan<const double> inv_diag, CudaStream stream);
SolverResult device_cgls(Plan& a, Plan& at, DeviceSpan<const double> b, DeviceSpan<double> x, const SolverOptions& opt,
                         CudaStream stream);

}  // namespace spmv::cuda
