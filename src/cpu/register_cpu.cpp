#include "core/register.hpp"
#include "cpu/register_cpu.hpp"

namespace spmv::detail {

void register_serial_kernels() {
  cpu::register_serial_csr();
  cpu::register_serial_ell();
  cpu::register_serial_hll();
}

void register_omp_kernels() {
  cpu::register_omp_csr();
  cpu::register_omp_ell();
  cpu::register_omp_hll();
  cpu::register_eigen_baseline();
  cpu::register_csr5();
}

}  // namespace spmv::detail
