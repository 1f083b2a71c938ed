// Device queries for host code (spmv/device.hpp), the user's device arrays (DeviceVector), and
// device memory (cuda_check.cuh).
#include <spmv/device.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <utility>

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
  if (use_pool())
    SPMV_CUDA_CHECK(cudaMallocAsync(&p, bytes, 0));
  else
    SPMV_CUDA_CHECK(cudaMalloc(&p, bytes));
  return p;
}

void device_free(void* p) noexcept {
  if (use_pool())
    cudaFreeAsync(p, 0);
  else
    cudaFree(p);
}

namespace {

template <class T>
__global__ void fill_kernel(T* __restrict__ p, std::size_t n, T v) {
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    p[i] = v;
}

void require_gpu(const char* what) {
  if (device::cuda_device_count() == 0)
    throw Unsupported(std::string(what) + ": no usable GPU (" + device::cuda_unavailable_reason() + ")");
}

}  // namespace

}  // namespace spmv::cuda

namespace spmv {

// Plain cudaMalloc (not the stream-ordered pool of our plans' arrays): the user may use the array on
// any stream at once.
template <class T>
DeviceVector<T>::DeviceVector(std::size_t n) {
  cuda::require_gpu("DeviceVector");
  if (n) SPMV_CUDA_CHECK(cudaMalloc(&data_, n * sizeof(T)));
  size_ = n;
  if (n) {
    SPMV_CUDA_CHECK(cudaMemset(data_, 0, n * sizeof(T)));
    SPMV_CUDA_CHECK(cudaStreamSynchronize(nullptr));
  }
}
template <class T>
DeviceVector<T>::DeviceVector(std::span<const T> host) : DeviceVector(host.size()) {
  upload(host);
}
template <class T>
DeviceVector<T>::DeviceVector(DeviceVector&& o) noexcept
    : data_(std::exchange(o.data_, nullptr)), size_(std::exchange(o.size_, 0)) {}
template <class T>
DeviceVector<T>& DeviceVector<T>::operator=(DeviceVector&& o) noexcept {
  if (this != &o) {
    if (data_) cudaFree(data_);
    data_ = std::exchange(o.data_, nullptr);
    size_ = std::exchange(o.size_, 0);
  }
  return *this;
}
template <class T>
DeviceVector<T>::~DeviceVector() {
  if (data_) cudaFree(data_);
}
template <class T>
void DeviceVector<T>::upload(std::span<const T> host) {
  if (host.size() != size_)
    throw Error("DeviceVector::upload: " + std::to_string(host.size()) + " values for a vector of " +
                std::to_string(size_));
  if (size_) SPMV_CUDA_CHECK(cudaMemcpy(data_, host.data(), size_ * sizeof(T), cudaMemcpyHostToDevice));
}
template <class T>
void DeviceVector<T>::download(std::span<T> host) const {
  if (host.size() != size_)
    throw Error("DeviceVector::download: room for " + std::to_string(host.size()) + " values, the vector has " +
                std::to_string(size_));
  if (size_) SPMV_CUDA_CHECK(cudaMemcpy(host.data(), data_, size_ * sizeof(T), cudaMemcpyDeviceToHost));
}
template <class T>
std::vector<T> DeviceVector<T>::to_host() const {
  std::vector<T> h(size_);
  download(h);
  return h;
}
template <class T>
void DeviceVector<T>::fill(T value) {
  if (size_ == 0) return;
  const unsigned grid = static_cast<unsigned>(std::min<std::size_t>((size_ + 255) / 256, 65535));
  cuda::fill_kernel<<<grid, 256>>>(data_, size_, value);
  SPMV_CUDA_CHECK_LAUNCH();
}
template class DeviceVector<float>;
template class DeviceVector<double>;

PinnedHost::PinnedHost(const void* data, std::size_t bytes) {
  if (bytes == 0 || device::cuda_device_count() == 0) return;
  SPMV_CUDA_CHECK(cudaHostRegister(const_cast<void*>(data), bytes, cudaHostRegisterDefault));
  data_ = const_cast<void*>(data);
}
PinnedHost::~PinnedHost() {
  if (data_) cudaHostUnregister(data_);
}

}  // namespace spmv

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
    // The runtime says "driver version is insufficient" also where there is no driver at all.
    int driver = 0, runtime = 0;
    cudaDriverGetVersion(&driver);
    cudaRuntimeGetVersion(&runtime);
    if (driver == 0) return "no NVIDIA driver on this machine";
    if (e == cudaErrorInsufficientDriver)
      return "the NVIDIA driver supports CUDA " + std::to_string(driver / 1000) + "." +
             std::to_string(driver % 1000 / 10) + ", older than this build's " + std::to_string(runtime / 1000) + "." +
             std::to_string(runtime % 1000 / 10);
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

HostLink cuda_host_bandwidth() {
  if (cuda_device_count() == 0) return {};
  const std::size_t bytes = std::size_t{256} << 20;
  void* host = nullptr;
  SPMV_CUDA_CHECK(cudaMallocHost(&host, bytes));
  std::memset(host, 1, bytes);  // touched: no first-touch faults inside the timed copies
  cuda::DeviceBuffer<char> dev(bytes);
  cudaEvent_t e0, e1;
  SPMV_CUDA_CHECK(cudaEventCreate(&e0));
  SPMV_CUDA_CHECK(cudaEventCreate(&e1));
  const auto rate = [&](bool to_device) {
    std::vector<float> ms;
    for (int i = 0; i < 6; ++i) {
      SPMV_CUDA_CHECK(cudaEventRecord(e0));
      if (to_device)
        SPMV_CUDA_CHECK(cudaMemcpyAsync(dev.data(), host, bytes, cudaMemcpyHostToDevice));
      else
        SPMV_CUDA_CHECK(cudaMemcpyAsync(host, dev.data(), bytes, cudaMemcpyDeviceToHost));
      SPMV_CUDA_CHECK(cudaEventRecord(e1));
      SPMV_CUDA_CHECK(cudaEventSynchronize(e1));
      float t = 0;
      SPMV_CUDA_CHECK(cudaEventElapsedTime(&t, e0, e1));
      if (i > 0) ms.push_back(t);  // the first is a warm-up
    }
    std::sort(ms.begin(), ms.end());
    return static_cast<double>(bytes) / (ms[ms.size() / 2] * 1e-3);
  };
  HostLink r;
  r.to_device = rate(true);
  r.to_host = rate(false);
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  cudaFreeHost(host);
  return r;
}

double cuda_host_copies_seconds(std::size_t to_device, std::size_t to_host) {
  if (cuda_device_count() == 0) return 0.0;
  const std::size_t bytes = std::max<std::size_t>({to_device, to_host, 1});
  void* host = nullptr;
  SPMV_CUDA_CHECK(cudaMallocHost(&host, bytes));
  std::memset(host, 0, bytes);
  cuda::DeviceBuffer<char> dev(bytes);
  std::vector<double> t;
  for (int i = 0; i < 8; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    if (to_device) SPMV_CUDA_CHECK(cudaMemcpy(dev.data(), host, to_device, cudaMemcpyHostToDevice));
    if (to_host) SPMV_CUDA_CHECK(cudaMemcpy(host, dev.data(), to_host, cudaMemcpyDeviceToHost));
    if (i > 0) t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  cudaFreeHost(host);
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

void synchronize(CudaStream stream) {
  if (cuda_device_count() == 0) return;
  SPMV_CUDA_CHECK(cudaStreamSynchronize(stream));
}

}  // namespace spmv::device
