#pragma once
// One function per CPU kernel file; register_cpu.cpp calls them in the order listed there.
namespace spmv::cpu {
void register_serial_csr();
}  // namespace spmv::cpu
