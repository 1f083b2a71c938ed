// Without the CUDA backend the device queries report "no device".
#ifndef SPMV_HAVE_CUDA
#include <spmv/device.hpp>

namespace spmv::device {
bool cuda_built() { return false; }
int cuda_device_count() { return 0; }
std::string cuda_unavailable_reason() { return "this build has no CUDA backend"; }
std::string cuda_device_name() { return {}; }
double cuda_copy_bandwidth() { return 0.0; }
double cuda_peak_bandwidth() { return 0.0; }
}  // namespace spmv::device
#endif
