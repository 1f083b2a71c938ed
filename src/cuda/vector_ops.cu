// Device vector operations for solvers over MPI ranks (src/cuda/vector_ops.hpp).
#include "cuda/cuda_check.cuh"
#include "cuda/vector_ops.hpp"

namespace spmv::cuda {
namespace {

constexpr int kThreads = 256;
constexpr int kBlocks = 1024;

// Each block's partial sum of x.y (grid-stride), then one block adds the partials in order.
__global__ void dot_partials(const double* __restrict__ x, const double* __restrict__ y, std::size_t n,
                             double* __restrict__ partial) {
  __shared__ double s[kThreads];
  double v = 0;
  for (std::size_t i = blockIdx.x * std::size_t{kThreads} + threadIdx.x; i < n; i += std::size_t{gridDim.x} * kThreads)
    v += x[i] * y[i];
  s[threadIdx.x] = v;
  __syncthreads();
  for (int w = kThreads / 2; w > 0; w /= 2) {
    if (threadIdx.x < w) s[threadIdx.x] += s[threadIdx.x + w];
    __syncthreads();
  }
  if (threadIdx.x == 0) partial[blockIdx.x] = s[0];
}

__global__ void sum_partials(double* partial, int n) {
  __shared__ double s[kThreads];
  double v = 0;
  for (int i = threadIdx.x; i < n; i += kThreads) v += partial[i];
  s[threadIdx.x] = v;
  __syncthreads();
  for (int w = kThreads / 2; w > 0; w /= 2) {
    if (threadIdx.x < w) s[threadIdx.x] += s[threadIdx.x + w];
    __syncthreads();
  }
  if (threadIdx.x == 0) partial[0] = s[0];
}

__global__ void axpy_kernel(double a, const double* __restrict__ x, double* __restrict__ y, std::size_t n) {
  for (std::size_t i = blockIdx.x * std::size_t{kThreads} + threadIdx.x; i < n; i += std::size_t{gridDim.x} * kThreads)
    y[i] += a * x[i];
}
__global__ void xpby_kernel(const double* __restrict__ x, double b, double* __restrict__ y, std::size_t n) {
  for (std::size_t i = blockIdx.x * std::size_t{kThreads} + threadIdx.x; i < n; i += std::size_t{gridDim.x} * kThreads)
    y[i] = x[i] + b * y[i];
}

unsigned blocks_for(std::size_t n) {
  return static_cast<unsigned>(std::max<std::size_t>(1, std::min<std::size_t>((n + kThreads - 1) / kThreads, kBlocks)));
}

}  // namespace

double dot(const double* x, const double* y, std::size_t n, CudaStream s) {
  static thread_local DeviceBuffer<double> partial;
  if (partial.size() < kBlocks) partial.resize(kBlocks);
  const unsigned b = blocks_for(n);
  double out = 0;
  if (n == 0) return out;
  dot_partials<<<b, kThreads, 0, s>>>(x, y, n, partial.data());
  SPMV_CUDA_CHECK_LAUNCH();
  sum_partials<<<1, kThreads, 0, s>>>(partial.data(), static_cast<int>(b));
  SPMV_CUDA_CHECK_LAUNCH();
  SPMV_CUDA_CHECK(cudaMemcpyAsync(&out, partial.data(), sizeof out, cudaMemcpyDeviceToHost, s));
  SPMV_CUDA_CHECK(cudaStreamSynchronize(s));
  return out;
}

void axpy(double a, const double* x, double* y, std::size_t n, CudaStream s) {
  if (n == 0) return;
  axpy_kernel<<<blocks_for(n), kThreads, 0, s>>>(a, x, y, n);
  SPMV_CUDA_CHECK_LAUNCH();
}

void xpby(const double* x, double b, double* y, std::size_t n, CudaStream s) {
  if (n == 0) return;
  xpby_kernel<<<blocks_for(n), kThreads, 0, s>>>(x, b, y, n);
  SPMV_CUDA_CHECK_LAUNCH();
}

void x_minus_y(const double* x, double* y, std::size_t n, CudaStream s) { xpby(x, -1.0, y, n, s); }

void copy(const double* x, double* y, std::size_t n, CudaStream s) {
  if (n) SPMV_CUDA_CHECK(cudaMemcpyAsync(y, x, n * sizeof(double), cudaMemcpyDeviceToDevice, s));
}

}  // namespace spmv::cuda
