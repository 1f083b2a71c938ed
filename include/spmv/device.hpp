#pragma once
/// @file
/// What the host code may know about the GPU, without including any CUDA header. Without the CUDA
/// backend these report "no device".
#include <string>

namespace spmv::device {

bool cuda_built();       ///< the CUDA backend is compiled in
int cuda_device_count(); ///< 0 when none is usable (no driver, no GPU)
std::string cuda_device_name();  ///< "" when none
/// Why no CUDA device is usable (the runtime's own words, e.g. no driver or an old one); "" when one is.
std::string cuda_unavailable_reason();
/// Device-to-device copy bandwidth in bytes/s (bytes read + written), measured now; 0 without GPU.
double cuda_copy_bandwidth();
/// Theoretical peak memory bandwidth in bytes/s: memory clock x bus width / 8 x 2 (double data
/// rate), the course reports' formula (448 GB/s for their RTX 5000); 0 without GPU.
double cuda_peak_bandwidth();

}  // namespace spmv::device
