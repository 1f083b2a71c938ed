#pragma once
// The CPU backends' rules and constants that are not a kernel's own code, one line of why each.
#include <spmv/types.hpp>

namespace spmv::cpu::tuning {

#if defined(__AVX2__) && defined(__FMA__)
inline constexpr bool kAvx2 = true;  // the hand-written 4 x 16 and 4 x 32 CSR5 tiles exist
#else
inline constexpr bool kAvx2 = false;
#endif

// Fills and copies of this many elements or fewer run on one thread: a parallel region costs more.
inline constexpr int parallel_fill_min = 1 << 16;

// How a plan times its candidates (trial_candidates): rounds over all candidates, and per round
// runs of each until min_seconds have passed (at least one, at most max_runs), so that tiny
// products are timed many times and microsecond noise does not decide. After the first round a
// candidate more than drop_ratio times slower than the fastest is not run again: it cannot win,
// and its runs may be long (a schedule that does not suit the matrix).
struct TrialTiming {
  int rounds = 3;
  int max_runs = 100;
  double min_seconds = 1e-4;
  double drop_ratio = 4.0;
};
inline constexpr TrialTiming trial_timing{};

// Column-major SpMM through row-major copies: each thread's row-major tile of Y holds about this
// many doubles (16 KB: stays in L1/L2 next to the rows of X being read) before going to Y's columns.
inline constexpr int spmm_tile_doubles = 2048;

// OpenMP CSR's dynamic schedule: chunks of about nz_per_chunk nonzeros, but at least
// min_chunks_per_thread chunks per thread, so that small matrices still feed every thread and can
// rebalance, and at most max_chunks_per_thread, so that rows nearly all empty do not make a chunk
// a row (a chunk grab a row costs more than the rows' work).
struct CsrChunks {
  offset_t nz_per_chunk = 8192;
  offset_t min_chunks_per_thread = 4;
  offset_t max_chunks_per_thread = 1024;
};
inline constexpr CsrChunks csr_chunks{};

// Small matrices, where fork/join weighs and the plan's trial also times fewer threads.
struct SmallMatrixTrial {
  offset_t csr_max_nnz = offset_t{1} << 21;   // CSR: nnz x k below this also tries 1 thread and...
  offset_t csr_nnz_per_thread = 32768;        // ...about one thread per this many nonzeros
  offset_t csr5_max_nnz = offset_t{1} << 18;  // CSR5: below this also tries a quarter of the threads and 1
  int csr5_thread_divisor = 4;
};
inline constexpr SmallMatrixTrial small_matrix_trial{};

// CSR5's tail (plain CSR over the rows after the last full tile) runs in parallel above this many
// rows; a few rows cost less than a parallel region.
inline constexpr index_t csr5_parallel_tail_rows = 100000;

// CSR5's omega on the CPU: the SIMD width in doubles (4 for AVX2), as the paper has it.
inline constexpr int csr5_omega = 4;

// CSR5's sigma for tiles omega wide: 32 for short rows (fewer than 16 nonzeros per row on average)
// when the hand-written 4-wide tiles are built, else the paper's 16. 4 x 32 tiles halve the
// per-tile work per nonzero (descriptors, lane bottoms, the tile loop), which weighs most where a
// tile holds many rows; long rows run slower with 32 from L3 and memory. Defined in the library (whether
// the AVX2 tiles exist is a property of its build, not of the caller's).
int csr5_sigma(double nnz_per_row, int omega);

}  // namespace spmv::cpu::tuning
