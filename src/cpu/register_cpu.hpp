#pragma once
// One function per CPU kernel file; register_cpu.cpp calls them in the order listed there.
namespace spmv::cpu {
void register_serial_csr();
void register_csr5();  // serial + omp, src/cpu/omp_csr5.cpp
}  // namespace spmv::cpu
