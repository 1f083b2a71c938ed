// The CUDA plan factories by kernel name, sharing one device upload (make_sharing_upload), whose
// values are of the candidates' precision (they all have the same).
#include "cuda/csr_device.cuh"
#include "cuda/cuda_kernels.hpp"

namespace spmv::cuda {

std::unique_ptr<Plan> make_sharing_upload(const CsrView& a, const std::string& kernel, const PlanOptions& opt,
                                          SharedDeviceCsr& dev, double* upload_s) {
  using Factory = std::unique_ptr<Plan> (*)(const CsrView&, const PlanOptions&, SharedDeviceCsr);
  const Factory f = kernel == "csr-vector"     ? make_csr_vector
                    : kernel == "csr-adaptive" ? make_csr_adaptive
                    : kernel == "csr-merge"    ? make_csr_merge
                    : kernel == "csr-scalar"   ? make_csr_scalar
                    : kernel == "csr"          ? make_csr_spmm
                    : kernel == "ell"          ? make_ell
                    : kernel == "hll"          ? make_hll
                    : kernel == "csr5"         ? make_csr5
                                               : nullptr;
  if (!f) return nullptr;
  return f(a, opt, shared_upload(a, dev, opt.precision, upload_s));
}

}  // namespace spmv::cuda
