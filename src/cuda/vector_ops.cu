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

namespace {

template <class T, bool Scatter>
__global__ void permute_kernel(const T* __restrict__ in, T* __restrict__ out, const index_t* __restrict__ order,
                               std::size_t n, int k, bool col_major) {
  for (std::size_t i = blockIdx.x * std::size_t{kThreads} + threadIdx.x; i < n * k;
       i += std::size_t{gridDim.x} * kThreads) {
    const std::size_t e = col_major ? i % n : i / k, j = col_major ? i / n : i % k;
    const std::size_t o = static_cast<std::size_t>(order[e]);
    const std::size_t at = col_major ? j * n + e : e * k + j, from = col_major ? j * n + o : o * k + j;
    if (Scatter)
      out[from] = in[at];
    else
      out[at] = in[from];
  }
}

}  // namespace

struct DeviceOrder::Impl {
  DeviceBuffer<index_t> order;
  std::size_t n;
};

DeviceOrder::DeviceOrder(std::span<const index_t> order) : impl_(std::make_unique<Impl>()) {
  impl_->order.upload(order);
  impl_->n = order.size();
  SPMV_CUDA_CHECK(cudaDeviceSynchronize());  // allocated and filled on the default stream; read on any
}
DeviceOrder::~DeviceOrder() = default;

template <class T>
void DeviceOrder::gather(const T* x, T* out, int k, bool col_major, CudaStream s) const {
  const std::size_t n = impl_->n;
  if (n == 0) return;
  permute_kernel<T, false><<<blocks_for(n * k), kThreads, 0, s>>>(x, out, impl_->order.data(), n, k, col_major);
  SPMV_CUDA_CHECK_LAUNCH();
}

template <class T>
void DeviceOrder::scatter(const T* in, T* y, int k, bool col_major, CudaStream s) const {
  const std::size_t n = impl_->n;
  if (n == 0) return;
  permute_kernel<T, true><<<blocks_for(n * k), kThreads, 0, s>>>(in, y, impl_->order.data(), n, k, col_major);
  SPMV_CUDA_CHECK_LAUNCH();
}

template void DeviceOrder::gather<float>(const float*, float*, int, bool, CudaStream) const;
template void DeviceOrder::gather<double>(const double*, double*, int, bool, CudaStream) const;
template void DeviceOrder::scatter<float>(const float*, float*, int, bool, CudaStream) const;
template void DeviceOrder::scatter<double>(const double*, double*, int, bool, CudaStream) const;

void copy(const double* x, double* y, std::size_t n, CudaStream s) {
  if (n) SPMV_CUDA_CHECK(cudaMemcpyAsync(y, x, n * sizeof(double), cudaMemcpyDeviceToDevice, s));
}

}  // namespace spmv::cuda
