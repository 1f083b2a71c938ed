// Device queries for host code (spmv/device.hpp) and the error helper.
#include <spmv/device.hpp>

#include <algorithm>

#include "cuda/cuda_check.cuh"

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

std::string cuda_device_name() {
  if (cuda_device_count() == 0) return {};
  cudaDeviceProp p{};
  SPMV_CUDA_CHECK(cudaGetDeviceProperties(&p, 0));
  return p.name;
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
