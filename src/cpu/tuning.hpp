#pragma once
// The CPU backends' rules and constants that are not a kernel's own code (the measurements behind
// them: bench/results/README.md).
#include <spmv/types.hpp>

namespace spmv::cpu::tuning {

#if defined(__AVX2__) && defined(__FMA__)
inline constexpr bool kAvx2 = true;  // the hand-written 4 x 16 and 4 x 32 CSR5 tiles exist
#else
inline constexpr bool kAvx2 = false;
#endif

// CSR5's omega on the CPU: the SIMD width in doubles (4 for AVX2), as the paper has it.
inline constexpr int csr5_omega = 4;

// CSR5's sigma for tiles omega wide: 32 for short rows (fewer than 16 nonzeros per row on average)
// when the hand-written 4-wide tiles are built, else the paper's 16. 4 x 32 tiles halve the
// per-tile work per nonzero (descriptors, lane bottoms, the tile loop), which weighs most where a
// tile holds many rows; long rows lost with 32 from L3 and memory. Defined in the library (whether
// the AVX2 tiles exist is a property of its build, not of the caller's).
int csr5_sigma(double nnz_per_row, int omega);

}  // namespace spmv::cpu::tuning
