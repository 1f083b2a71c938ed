#pragma once
/// @file
/// What the host code may know about the GPU, without including any CUDA header: the device
/// queries, the CUDA stream type, views of device memory (DeviceSpan) for products on the user's
/// own device arrays, and a device array of ours (DeviceVector). Without the CUDA backend the
/// queries report "no device" and DeviceVector refuses to be made (Unsupported).
#include <spmv/types.hpp>

#include <cstddef>
#include <iterator>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

/// CUDA's stream object; CudaStream below is the same pointer type as cudaStream_t.
struct CUstream_st;

namespace spmv {

/// A CUDA stream (cudaStream_t; pass one as it is). nullptr: the default stream.
using CudaStream = CUstream_st*;

/// A view of `size` elements of GPU memory at `data` (the user's cudaMalloc'd or managed memory,
/// or a DeviceVector's): what Plan::multiply takes for a product that stays on the device. Nothing
/// is owned or copied; a const T view converts from a T one, as std::span does.
template <class T>
class DeviceSpan {
 public:
  constexpr DeviceSpan() = default;
  constexpr DeviceSpan(T* data, std::size_t size) : data_(data), size_(size) {}
  template <class U>
  requires std::is_convertible_v<U (*)[], T (*)[]>
  constexpr DeviceSpan(DeviceSpan<U> other) : data_(other.data()), size_(other.size()) {}  // NOLINT: as std::span
  constexpr T* data() const { return data_; }
  constexpr std::size_t size() const { return size_; }
  constexpr bool empty() const { return size_ == 0; }
  /// The `count` elements from `offset` (a column of a column-major multivector, say).
  constexpr DeviceSpan subspan(std::size_t offset, std::size_t count) const { return {data_ + offset, count}; }

 private:
  T* data_ = nullptr;
  std::size_t size_ = 0;
};

/// An array of float or double in GPU memory, owned: allocated when made, freed when destroyed.
/// Converts to the DeviceSpan that Plan::multiply takes; copies to and from the host are explicit
/// (upload, download). Movable, not copyable. Without a usable GPU, making one throws Unsupported.
template <class T>
class DeviceVector {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>, "DeviceVector holds float or double");

 public:
  DeviceVector() = default;
  /// n zeros.
  explicit DeviceVector(std::size_t n);
  /// A copy of `host` on the device.
  explicit DeviceVector(std::span<const T> host);
  explicit DeviceVector(const std::vector<T>& host) : DeviceVector(std::span<const T>(host)) {}
  DeviceVector(const DeviceVector&) = delete;
  DeviceVector& operator=(const DeviceVector&) = delete;
  DeviceVector(DeviceVector&& o) noexcept;
  DeviceVector& operator=(DeviceVector&& o) noexcept;
  ~DeviceVector();

  /// Copies `host` (exactly size() values) to the device; returns when the copy is done.
  void upload(std::span<const T> host);
  /// Copies the values to `host` (room for exactly size()) once the work queued before on the
  /// default stream, and on blocking streams, is done.
  void download(std::span<T> host) const;
  std::vector<T> to_host() const;
  /// Sets every element to `value` (queued on the default stream).
  void fill(T value);

  T* data() { return data_; }
  const T* data() const { return data_; }
  std::size_t size() const { return size_; }
  DeviceSpan<T> span() { return {data_, size_}; }
  DeviceSpan<const T> span() const { return {data_, size_}; }
  operator DeviceSpan<T>() { return span(); }              // NOLINT: as a container to std::span
  operator DeviceSpan<const T>() const { return span(); }  // NOLINT

 private:
  T* data_ = nullptr;
  std::size_t size_ = 0;
};

extern template class DeviceVector<float>;
extern template class DeviceVector<double>;

/// Host memory pinned (page-locked, cudaHostRegister) for as long as this lives: a GPU plan's
/// products on host vectors in pinned memory copy straight to and from them at the bus's speed,
/// where pageable memory goes through the plan's staging buffers (each byte copied once more on the
/// host). Pin the vectors a loop reuses, once; unpinned when destroyed. Without a usable GPU it
/// does nothing.
class PinnedHost {
 public:
  PinnedHost(const void* data, std::size_t bytes);
  /// A container's elements (std::vector, std::span, ...).
  template <class C>
  explicit PinnedHost(C& c)
      : PinnedHost(static_cast<const void*>(std::data(c)), std::size(c) * sizeof(*std::data(c))) {}
  PinnedHost(const PinnedHost&) = delete;
  PinnedHost& operator=(const PinnedHost&) = delete;
  PinnedHost(PinnedHost&& o) noexcept : data_(o.data_) { o.data_ = nullptr; }
  PinnedHost& operator=(PinnedHost&&) = delete;
  ~PinnedHost();

 private:
  void* data_ = nullptr;  // registered with the driver (nullptr: nothing to undo)
};

}  // namespace spmv

namespace spmv::device {

bool cuda_built();               ///< the CUDA backend is compiled in
int cuda_device_count();         ///< 0 when none is usable (no driver, no GPU)
std::string cuda_device_name();  ///< "" when none
/// Why no CUDA device is usable (the runtime's own words, e.g. no driver or an old one); "" when one is.
std::string cuda_unavailable_reason();
/// Device-to-device copy bandwidth in bytes/s (bytes read + written), measured now; 0 without GPU.
double cuda_copy_bandwidth();
/// Theoretical peak memory bandwidth in bytes/s: memory clock x bus width / 8 x 2 (double data
/// rate), the course reports' formula (448 GB/s for their RTX 5000); 0 without GPU.
double cuda_peak_bandwidth();
/// Host-to-device and device-to-host bandwidth in bytes/s over the bus (PCIe or NVLink-C2C), from
/// and to pinned host memory, 256 MiB a copy, measured now (the medians of five); 0 without GPU.
struct HostLink {
  double to_device = 0, to_host = 0;
};
HostLink cuda_host_bandwidth();
/// Seconds of one copy of `to_device` bytes from pinned host memory to the device followed by one of
/// `to_host` bytes back (each waited for: latencies included), the median of 7 after a warm-up: what
/// a product on host vectors of those sizes must spend on the bus; 0 without GPU.
double cuda_host_copies_seconds(std::size_t to_device, std::size_t to_host);
/// Waits until the work queued on `stream` is done (cudaStreamSynchronize): what a loop of
/// device-resident products ends with before its results are read. Nothing without a GPU.
void synchronize(CudaStream stream = nullptr);

}  // namespace spmv::device
