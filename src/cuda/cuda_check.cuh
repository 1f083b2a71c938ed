#pragma once
// Checked CUDA calls and RAII device memory, shared by every CUDA file.
// CUDA files do not include fmt: nvcc rejects its compile-time format checks.
#include <spmv/types.hpp>

#include <cuda_runtime.h>
#include <cusparse.h>

#include <algorithm>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace spmv::cuda {

[[noreturn]] void fail(const char* what, const char* file, int line, const std::string& detail);

#define SPMV_CUDA_CHECK(call)                                                        \
  do {                                                                               \
    cudaError_t spmv_err_ = (call);                                                  \
    if (spmv_err_ != cudaSuccess) {                                                  \
      cudaGetLastError(); /* clear it, so the next check does not report it again */ \
      ::spmv::cuda::fail(#call, __FILE__, __LINE__, cudaGetErrorString(spmv_err_));  \
    }                                                                                \
  } while (0)

#define SPMV_CUSPARSE_CHECK(call)                                                      \
  do {                                                                                 \
    cusparseStatus_t spmv_st_ = (call);                                                \
    if (spmv_st_ != CUSPARSE_STATUS_SUCCESS)                                           \
      ::spmv::cuda::fail(#call, __FILE__, __LINE__, cusparseGetErrorString(spmv_st_)); \
  } while (0)

// After every kernel launch: catches bad launch configurations at once.
#define SPMV_CUDA_CHECK_LAUNCH() SPMV_CUDA_CHECK(cudaGetLastError())

// Device memory from the device's stream-ordered pool (src/cuda/device.cu), which keeps freed memory
// for the next allocation: a plan's arrays cost tens of microseconds a cudaMalloc, several per plan,
// and the planner makes and frees a few plans per matrix. cudaMalloc where pools are unsupported.
void* device_alloc(std::size_t bytes);
void device_free(void* p) noexcept;

// Owning device array; uploaded once, reused across calls.
template <typename T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t n) { resize(n); }
  explicit DeviceBuffer(const std::vector<T>& host) { upload(host); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& o) noexcept : ptr_(std::exchange(o.ptr_, nullptr)), n_(std::exchange(o.n_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
      release();
      ptr_ = std::exchange(o.ptr_, nullptr);
      n_ = std::exchange(o.n_, 0);
    }
    return *this;
  }
  ~DeviceBuffer() { release(); }
  void swap(DeviceBuffer& o) noexcept {
    std::swap(ptr_, o.ptr_);
    std::swap(n_, o.n_);
  }

  void resize(std::size_t n) {
    if (n == n_ && ptr_) return;
    release();
    // Always allocate at least one element so empty matrices still get valid pointers.
    ptr_ = static_cast<T*>(device_alloc(std::max<std::size_t>(n, 1) * sizeof(T)));
    n_ = n;
  }
  void upload(const T* host, std::size_t n) {
    resize(n);
    if (n) SPMV_CUDA_CHECK(cudaMemcpy(ptr_, host, n * sizeof(T), cudaMemcpyHostToDevice));
  }
  void upload(std::span<const T> host) { upload(host.data(), host.size()); }
  void download(T* host, std::size_t n) const {
    if (n) SPMV_CUDA_CHECK(cudaMemcpy(host, ptr_, n * sizeof(T), cudaMemcpyDeviceToHost));
  }
  std::vector<T> download() const {
    std::vector<T> h(n_);
    download(h.data(), n_);
    return h;
  }
  T* data() { return ptr_; }
  const T* data() const { return ptr_; }
  std::size_t size() const { return n_; }

 private:
  void release() {
    if (ptr_) device_free(ptr_);  // never throws from a destructor
    ptr_ = nullptr;
    n_ = 0;
  }
  T* ptr_ = nullptr;
  std::size_t n_ = 0;
};

}  // namespace spmv::cuda
