#pragma once
// One function per CPU kernel file; register_cpu.cpp calls them in the order listed there.
namespace spmv::cpu {
void register_serial_csr();
void register_serial_ell();
void register_serial_hll();
void register_omp_csr();
void register_omp_ell();
void register_omp_hll();
void register_eigen_baseline();
void register_csr5();  // serial + omp, src/cpu/omp_csr5.cpp
}  // namespace spmv::cpu
