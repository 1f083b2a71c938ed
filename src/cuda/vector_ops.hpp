#pragma once
// Internal: the vector operations a solver over MPI ranks needs on the device (src/distributed/mpi):
// dot products returned to the host (so the ranks can sum them), in a fixed order of additions.
#include <spmv/device.hpp>

#include <cstddef>

namespace spmv::cuda {

/// (x, y) over n values, queued on s and waited for; the same bits every run.
double dot(const double* x, const double* y, std::size_t n, CudaStream s);
/// y += a x
void axpy(double a, const double* x, double* y, std::size_t n, CudaStream s);
/// y = x + b y
void xpby(const double* x, double b, double* y, std::size_t n, CudaStream s);
/// y = x - y
void x_minus_y(const double* x, double* y, std::size_t n, CudaStream s);
/// y = x
void copy(const double* x, double* y, std::size_t n, CudaStream s);

}  // namespace spmv::cuda
