#pragma once
// Internal: CSR5 conversion on the GPU (CUDA builds only; defined in src/cuda/csr5_convert.cu). The csr5
// CUDA plan converts this way; this entry point downloads the result so tests can compare it with
// the host conversion csr_to_csr5 bit for bit.
#include <spmv/formats/csr5.hpp>

namespace spmv::cuda {

/// Same layout and contents as csr_to_csr5<V>(a, 32, sigma, opt), built by CUDA kernels from the
/// uploaded CSR, then downloaded. V: double, or float (the values rounded on the host, as the
/// single and mixed precision plans upload them).
template <class V = double>
BasicCsr5<V> csr_to_csr5_on_device(const CsrView& a, int sigma, const ConvertOptions& opt = {});

}  // namespace spmv::cuda
