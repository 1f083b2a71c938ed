// Without the CUDA backend the device queries report "no device" and device arrays cannot be made.
#ifndef SPMV_HAVE_CUDA
#include <spmv/device.hpp>

namespace spmv {

namespace {
[[noreturn]] void no_cuda() { throw Unsupported("DeviceVector: this build has no CUDA backend"); }
}  // namespace

template <class T>
DeviceVector<T>::DeviceVector(std::size_t) {
  no_cuda();
}
template <class T>
DeviceVector<T>::DeviceVector(std::span<const T>) {
  no_cuda();
}
template <class T>
DeviceVector<T>::DeviceVector(DeviceVector&& o) noexcept : data_(o.data_), size_(o.size_) {}
template <class T>
DeviceVector<T>& DeviceVector<T>::operator=(DeviceVector&&) noexcept {
  return *this;
}
template <class T>
DeviceVector<T>::~DeviceVector() = default;
template <class T>
void DeviceVector<T>::upload(std::span<const T>) {
  no_cuda();
}
template <class T>
void DeviceVector<T>::download(std::span<T>) const {
  no_cuda();
}
template <class T>
std::vector<T> DeviceVector<T>::to_host() const {
  no_cuda();
}
template <class T>
void DeviceVector<T>::fill(T) {
  no_cuda();
}
template class DeviceVector<float>;
template class DeviceVector<double>;

PinnedHost::PinnedHost(const void*, std::size_t) {}
PinnedHost::~PinnedHost() = default;

}  // namespace spmv

namespace spmv::device {
bool cuda_built() { return false; }
int cuda_device_count() { return 0; }
std::string cuda_unavailable_reason() { return "this build has no CUDA backend"; }
std::string cuda_device_name() { return {}; }
double cuda_copy_bandwidth() { return 0.0; }
double cuda_peak_bandwidth() { return 0.0; }
HostLink cuda_host_bandwidth() { return {}; }
double cuda_host_copies_seconds(std::size_t, std::size_t) { return 0.0; }
void synchronize(CudaStream) {}
}  // namespace spmv::device
#endif
