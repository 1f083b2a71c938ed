// Kernel "auto" on the host backends: candidates made through the registry.
#include "core/register.hpp"
#include "plan/auto_plan.hpp"

namespace spmv::detail {

void register_auto_kernels() {
  for (const Backend b : {Backend::Serial, Backend::Omp})
    add_kernel({.name = "auto",
                .backend = b,
                .format = "auto",
                .description = "the planner: format, kernel and settings chosen for the matrix by a model and a "
                               "short timed trial (the default)",
                .spmm = true,
                .precisions = {Precision::Double, Precision::Single, Precision::Mixed},
                .params = {},
                .make = [b](const CsrView& a, const PlanOptions& o) {
                  return plan_auto(a, b, o,
                                   [&a, b](const Candidate& c, double&) { return make_plan(a, b, c.kernel, c.opt); });
                }});
}

}  // namespace spmv::detail
