// Serial hacked ELLPACK: hacks of `hack` rows, each column-major, one flat buffer. The OpenMP plan
// at one thread has a single part and runs no parallel region, so this is that plan pinned to 1.
#include "cpu/row_kernels.hpp"
#include "core/register.hpp"

namespace spmv::cpu {

void register_serial_hll() {
  add_kernel({.name = "hll",
              .backend = Backend::Serial,
              .format = "hll",
              .description = "serial hacked ELLPACK (hacks column-major, one flat buffer)",
              .spmm = true,
              .precisions = {Precision::Double, Precision::Single, Precision::Mixed},
              .params = {"hack"},
              .variants = row_variants(false),
              .make = [](const CsrView& a, const PlanOptions& o) -> std::unique_ptr<Plan> {
                PlanOptions serial = o;
                serial.threads = 1;
                return make_hll_plan(a, serial);
              }});
}

}  // namespace spmv::cpu
