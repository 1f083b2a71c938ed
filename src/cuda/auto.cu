// Kernel "auto" on CUDA: the planner's candidates share one device copy of the CSR matrix (uploaded
// once, on the first candidate that needs it); ELL and HLL convert from it on the device.
#include "core/register.hpp"
#include "cuda/csr_device.cuh"
#include "cuda/cuda_kernels.hpp"
#include "plan/auto_plan.hpp"

namespace spmv::cuda {

namespace {

std::unique_ptr<Plan> make_auto(const Csr& a, const PlanOptions& opt) {
  SharedDeviceCsr dev;
  return detail::plan_auto(a, Backend::Cuda, opt, [&](const Candidate& c, double& shared) -> std::unique_ptr<Plan> {
    using Factory = std::unique_ptr<Plan> (*)(const Csr&, const PlanOptions&, SharedDeviceCsr);
    Factory f = c.kernel == "csr-vector"     ? make_csr_vector
                : c.kernel == "csr-adaptive" ? make_csr_adaptive
                : c.kernel == "csr-merge"    ? make_csr_merge
                : c.kernel == "csr-scalar"   ? make_csr_scalar
                : c.kernel == "csr"          ? make_csr_spmm
                : c.kernel == "ell"          ? make_ell
                : c.kernel == "hll"          ? make_hll
                                             : nullptr;
    if (!f) return make_plan(a, Backend::Cuda, c.kernel, c.opt);  // CSR5 converts from its own upload
    if (!dev) {
      double s = 0;
      dev = upload_csr(a, &s);
      shared += s;
    }
    return f(a, c.opt, dev);
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
