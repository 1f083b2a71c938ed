#pragma once
// Internal: the vector operations a solver over MPI ranks needs on the device (src/distributed/mpi):
// dot products returned to the host (so the ranks can sum them), in a fixed order of additions.
#include <spmv/device.hpp>

#include <spmv/types.hpp>

#include <cstddef>
#include <memory>
#include <span>

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

/// A permutation on the device (a reordered plan's): n entries of k values each, rows of a
/// row-major (n x k) or columns of a column-major array.
class DeviceOrder {
 public:
  explicit DeviceOrder(std::span<const index_t> order);
  ~DeviceOrder();
  DeviceOrder(const DeviceOrder&) = delete;
  DeviceOrder& operator=(const DeviceOrder&) = delete;
  /// out[i] = x[order[i]]
  template <class T>
  void gather(const T* x, T* out, int k, bool col_major, CudaStream s) const;
  /// y[order[i]] = in[i]
  template <class T>
  void scatter(const T* in, T* y, int k, bool col_major, CudaStream s) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace spmv::cuda
