// Kernel "auto" on CUDA: the planner's candidates share one device copy of the CSR matrix (uploaded
// once, on the first candidate that needs it); ELL, HLL and CSR5 convert from it on the device.
#include "core/register.hpp"
#include "cuda/csr_device.cuh"
#include "cuda/cuda_kernels.hpp"
#include "plan/auto_plan.hpp"

namespace spmv::cuda {

std::unique_ptr<Plan> make_sharing_upload(const Csr& a, const std::string& kernel, const PlanOptions& opt,
                                          SharedDeviceCsr& dev, double* upload_s) {
  using Factory = std::unique_ptr<Plan> (*)(const Csr&, const PlanOptions&, SharedDeviceCsr);
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
  if (!dev) {
    double s = 0;
    dev = upload_csr(a, &s);
    if (upload_s) *upload_s += s;
  }
  return f(a, opt, dev);
}

namespace {

std::unique_ptr<Plan> make_auto(const Csr& a, const PlanOptions& opt) {
  SharedDeviceCsr dev;
  return detail::plan_auto(a, Backend::Cuda, opt, [&](const Candidate& c, double& shared) -> std::unique_ptr<Plan> {
    auto p = make_sharing_upload(a, c.kernel, c.opt, dev, &shared);
    return p ? std::move(p) : make_plan(a, Backend::Cuda, c.kernel, c.opt);
  });
}

}  // namespace

void register_auto() {
  add_kernel({.name = "auto",
              .backend = Backend::Cuda,
              .format = "auto",
              .description = "the planner: format, kernel and settings chosen for the matrix by a model and a short "
                             "timed trial (the default)",
              .spmm = true,
              .params = {},
              .make = make_auto});
}

}  // namespace spmv::cuda
