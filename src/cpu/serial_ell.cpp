// Serial ELLPACK (row-major, the CPU layout): "ell" multiplies every padded slot, "ell-rowlen"
// stops at each row's true length. The OpenMP plan at one thread takes its serial path (no
// parallel region), so the serial kernels are that plan with the thread count pinned to 1.
#include "cpu/row_kernels.hpp"
#include "core/register.hpp"

namespace spmv::cpu {

void register_serial_ell() {
  for (const bool skip : {false, true})
    add_kernel({.name = skip ? "ell-rowlen" : "ell",
                .backend = Backend::Serial,
                .format = "ell",
                .description = skip ? "serial row-major ELLPACK, each row stops at its true length"
                                    : "serial row-major ELLPACK, padded slots multiplied",
                .spmm = true,
                .precisions = {Precision::Double, Precision::Single, Precision::Mixed},
                .params = {},
                .variants = row_variants(false),
                .make = [skip](const CsrView& a, const PlanOptions& o) -> std::unique_ptr<Plan> {
                  PlanOptions serial = o;
                  serial.threads = 1;
                  return make_ell_plan(a, serial, skip);
                }});
}

}  // namespace spmv::cpu
