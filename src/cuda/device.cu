// Device queries for host code (spmv/device.hpp), and device memory (cuda_check.cuh).
#include <spmv/device.hpp>

#include <algorithm>
#include <cstdint>

#include "cuda/cuda_check.cuh"

namespace spmv::cuda {

namespace {

// The current device's default pool, set once to keep up to 8 GiB of freed memory (the default
// returns it to the driver at every synchronisation); false where pools are unsupported.
bool use_pool() {
  static const bool pool = [] {
    int dev = 0, supported = 0;
    cudaMemPool_t p{};
    std::uint64_t keep = std::uint64_t{8} << 30;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&supported, cudaDevAttrMemoryPoolsSupported, dev) != cudaSuccess || !supported ||
        cudaDeviceGetDefaultMemPool(&p, dev) != cudaSuccess ||
        cudaMemPoolSetAttribute(p, cudaMemPoolAttrReleaseThreshold, &keep) != cudaSuccess) {
      cudaGetLastError();
      return false;
    }
    return true;
  }();
  return pool;
}

}  // namespace

// On the default stream, where every kernel and copy of ours runs.
void* device_alloc(std::size_t bytes) {
  void* p = nullptr;
  if (use_pool()) SPMV_CUDA_CHECK(cudaMallocAsync(&p, bytes, 0));
  else SPMV_CUDA_CHECK(cudaMalloc(&p, bytes));
  return p;
}

void device_free(void* p) noexcept {
  if (use_pool()) cudaFreeAsync(p, 0);
  else cudaFree(p);
}

}  // namespace spmv::cuda

namespace spmv::device {

bool cuda_built() { return true; }

int cuda_device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky "no driver" error so later checks start clean
    return 0;
  }
  return n;
}

std::string cuda_unavailable_reason() {
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    cudaGetLastError();
    return cudaGetErrorString(e);
  }
  return n > 0 ? "" : "no CUDA device found";
}

std::string cuda_device_name() {
  if (cuda_device_count() == 0) return {};
  cudaDeviceProp p{};
  SPMV_CUDA_CHECK(cudaGetDeviceProperties(&p, 0));
  return p.name;
}

double cuda_peak_bandwidth() {
  if (cuda_device_count() == 0) return 0.0;
  int khz = 0, bits = 0;
  SPMV_CUDA_CHECK(cudaDeviceGetAttribute(&khz, cudaDevAttrMemoryClockRate, 0));
  SPMV_CUDA_CHECK(cudaDeviceGetAttribute(&bits, cudaDevAttrGlobalMemoryBusWidth, 0));
  return 2.0 * khz * 1e3 * bits / 8.0;
}

double cuda_copy_bandwidth() {
  if (cuda_device_count() == 0) return 0.0;
  // 1 GiB copied device-to-device several times; bytes read + written over the median time.
  const std::size_t n = std::size_t{1} << 27;  // doubles
  cuda::DeviceBuffer<double> a(n), b(n);
  SPMV_CUDA_CHECK(cudaMemset(a.data(), 0, n * sizeof(double)));
  cudaEvent_t e0, e1;
  SPMV_CUDA_CHECK(cudaEventCreate(&e0));
  SPMV_CUDA_CHECK(cudaEventCreate(&e1));
  std::vector<float> ms;
  for (int i = 0; i < 7; ++i) {
    SPMV_CUDA_CHECK(cudaEventRecord(e0));
    SPMV_CUDA_CHECK(cudaMemcpyAsync(b.data(), a.data(), n * sizeof(double), cudaMemcpyDeviceToDevice));
    SPMV_CUDA_CHECK(cudaEventRecord(e1));
    SPMV_CUDA_CHECK(cudaEventSynchronize(e1));
    float t = 0;
    SPMV_CUDA_CHECK(cudaEventElapsedTime(&t, e0, e1));
    if (i > 0) ms.push_back(t);  // first copy is warm-up
  }
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  std::sort(ms.begin(), ms.end());
  const double sec = ms[ms.size() / 2] * 1e-3;
  return 2.0 * static_cast<double>(n * sizeof(double)) / sec;
}

}  // namespace spmv::device
