// The CPU kernels in the registry: one register_* per kernel file, declared and called here (a new
// kernel adds its two lines here and nowhere else).
#include "core/register.hpp"

namespace spmv::cpu {
void register_serial_csr();
void register_serial_ell();
void register_serial_hll();
void register_omp_csr();
void register_omp_ell();
void register_omp_csr_compact();  // src/cpu/omp_csr_compact.cpp
void register_omp_hll();
void register_eigen_baseline();
void register_csr5();         // serial + omp, src/cpu/omp_csr5.cpp
void register_csr_scatter();  // serial + omp, src/cpu/csr_scatter.cpp
}  // namespace spmv::cpu

namespace spmv::detail {

void register_serial_kernels() {
  cpu::register_serial_csr();
  cpu::register_serial_ell();
  cpu::register_serial_hll();
}

void register_omp_kernels() {
  cpu::register_omp_csr();
  cpu::register_omp_ell();
  cpu::register_omp_csr_compact();
  cpu::register_omp_hll();
  cpu::register_eigen_baseline();
  cpu::register_csr5();
  cpu::register_csr_scatter();
}

}  // namespace spmv::detail
