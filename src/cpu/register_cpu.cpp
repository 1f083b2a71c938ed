#include "core/register.hpp"
#include "cpu/register_cpu.hpp"

namespace spmv::detail {

void register_serial_kernels() { cpu::register_serial_csr(); }

void register_omp_kernels() {
  cpu::register_csr5();
}

}  // namespace spmv::detail
