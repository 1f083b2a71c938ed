#pragma once
// The CUDA backend's rules and constants that are not a kernel's own code (host-side, plain C++:
// the CPU-only tests check them too).
#include <spmv/matrix.hpp>

#include <algorithm>
#include <cmath>

namespace spmv::cuda::tuning {

// Threads per block of the product kernels when PlanOptions::kernel.block_size is 0: 8 warps, enough
// blocks per SM to hide memory latency on small and large matrices alike.
inline constexpr int default_block = 256;

// Threads per block of the conversion and setup kernels (a thread per row, tile, hack or entry).
inline constexpr int setup_block = 256;

// CSR-vector's sub-warp from the mean row length: the largest power of two in [2, 32] not above
// mean / 6, so that each lane has about six entries and several independent loads in flight.
inline constexpr double csr_vector_entries_per_lane = 6.0;
inline int csr_vector_subwarp(double mean_row_nnz) {
  int s = 2;
  while (s < 32 && csr_vector_entries_per_lane * 2 * s <= mean_row_nnz) s *= 2;
  return s;
}

// HLL's threads per row from the mean row length: one up to 128 entries a row, then twice as many
// per doubling (up to 32); one lane per row is fastest until rows are that long.
inline constexpr double hll_entries_per_lane = 128.0;
inline int hll_lanes(double mean_row_nnz) {
  int l = 1;
  while (l < 32 && mean_row_nnz >= hll_entries_per_lane * l) l *= 2;
  return l;
}

// CSR-adaptive's row blocks.
struct CsrAdaptivePolicy {
  int max_nz_per_block = 6144;  // 48 KiB of doubles: the default dynamic shared memory of a block
  int nz_per_thread = 4;        // default nz_per_block: 4 entries per thread (capped by the above)
  int piece_per_thread = 8;     // a long row's pieces: at least 8 entries per thread, to keep blocks busy
  long long span_rows = 256;    // rows per span of the device block builder (at least the block size)
  int build_block = 128;        // threads per block of the block builder (a warp per span)
};
inline constexpr CsrAdaptivePolicy csr_adaptive{};

// CSR merge-path's items per thread: 7 up to 256 threads a block, else about 3072 items a tile (3
// to 8 per thread); tiles of about 1800-3000 items are best, larger ones leave SMs short of blocks.
inline int csr_merge_items_per_thread(int block) { return block <= 256 ? 7 : std::clamp(3072 / block, 3, 8); }

// CSR SpMM: rows longer than this go to the block-per-piece kernel (groups: lanes along a row's
// entries). Long: over 64 steps per lane and 8x the mean, or over 1024 entries, so that one row
// does not keep a warp busy long after the rest; under 4096 rows (too few warps to fill the device)
// every row over 64 steps.
inline int csr_spmm_long_row(int groups, index_t rows, double mean_row) {
  const double steps = 64.0 * groups;
  return static_cast<int>(std::min(1024.0, rows < 4096 ? steps : std::max(steps, 8.0 * mean_row)));
}
// CSR SpMM: a long row is cut into pieces of this many entries, one block of 1024 threads each;
// rows up to csr_spmm_short_rows entries into short pieces, one smaller block each (csr_spmm.cu).
inline constexpr int csr_spmm_piece = 2048;
// CSR SpMM, row-major kernel: entries a lane loads at once, 4 where a group of lanes has at least
// this many of a row on average (mean row / entry groups), else 2: 4 gains on long rows and loses on
// rows of a few entries a group (bench/results/README.md).
inline constexpr double csr_spmm_unroll4_entries = 8;
inline constexpr int csr_spmm_short_rows = 2048, csr_spmm_short_piece = 512;
// ... a short piece's block: this many groups of lanes along its entries (at least 128 threads);
// 32 groups left most lanes of a piece of a hundred entries idle (bench/results/README.md).
inline constexpr int csr_spmm_short_groups = 8;
// CSR SpMM: where the row lengths' standard deviation is over this many means, the shape trial
// also times its two best shapes on the rows longest first (a warp's rows then have about the same
// length; on the regular stencils and meshes the order only costs a load).
inline constexpr double csr_spmm_sort_spread = 1.0;
inline bool csr_spmm_sorts_rows(double spread) { return spread > csr_spmm_sort_spread; }
// ... sorted within windows of this many rows: one order over the whole matrix scattered the writes
// of column-major Y and the reads of X (bench/results/README.md).
inline constexpr int csr_spmm_sort_window = 4096;

// Whether the CUDA "csr" kernel should run CSR-adaptive rather than CSR-vector: a row much longer
// than the mean. With the longest row at least 64 and over 6 times the mean (or over 1024 and 32
// times the mean), CSR-vector's sub-warp, sized for the mean, walks the long rows alone.
inline bool csr_prefers_adaptive(offset_t max_row_nnz, double mean_row_nnz) {
  const double longest = static_cast<double>(max_row_nnz);
  return (max_row_nnz > 1024 && longest > 32.0 * mean_row_nnz) || (max_row_nnz >= 64 && longest > 6.0 * mean_row_nnz);
}

// CSR5's omega on CUDA: the warp.
inline constexpr int csr5_omega = 32;

// The CSR5 paper's sigma on GPUs, from nonzeros per row with bounds <r, s, t, u> = <4, 32, 256, 4>:
// r if nnz/row <= r, nnz/row up to s, s up to t, u beyond (the CPU's is a fixed 16).
inline int csr5_sigma_paper(double nnz_per_row) {
  constexpr int r = 4, s = 32, t = 256, u = 4;
  if (!(nnz_per_row > r)) return r;  // also NaN (0 rows)
  if (nnz_per_row <= s) return static_cast<int>(nnz_per_row);
  if (nnz_per_row <= t) return s;
  return u;
}

// Our default CSR5 sigma: 8 (the kernel loads 8 entries per lane at a time) unless the rows are
// regular (row-length std, sampled from at most 4096 rows, not above the mean) and 12 or longer
// on average; then 16, which beats 24 and 32 on regular rows at the kernel's register cap.
inline int csr5_sigma(const CsrView& a) {
  if (a.rows <= 0) return 8;
  const double mean = static_cast<double>(a.nnz()) / a.rows;
  const index_t step = std::max<index_t>(1, a.rows / 4096);
  double s = 0, s2 = 0, n = 0;
  for (index_t r = 0; r < a.rows; r += step) {
    const double len = static_cast<double>(a.row_ptr[r + 1] - a.row_ptr[r]);
    s += len;
    s2 += len * len;
    ++n;
  }
  const double m = s / n, sd = std::sqrt(std::max(0.0, s2 / n - m * m));
  if (mean < 12 || sd > mean) return 8;
  return 16;
}

// CSR5's default block: 128 threads (4 tiles) for tiles of height 8 or less (short rows), else
// default_block.
inline int csr5_block(int sigma) { return sigma <= 8 ? 128 : default_block; }
// CSR5: entries a lane loads at a time (the variant words b4 and b16 override): independent x gathers in flight.
inline constexpr int csr5_batch = 8;
// CSR5 single pass: rounds of 32 segment rows a hinted tile loads together with its entries.
inline constexpr int csr5_eo_rounds = 4;
// CSR5 single pass: a long row's parts loaded per lane per round (8 spills at the register cap).
inline constexpr int csr5_part_loads = 4;
// CSR5 single pass: the register cap of the compiled tile heights, low enough for 36 warps per SM
// without spills (-DSPMV_CSR5_MAXNREG=N to try another).
#ifndef SPMV_CSR5_MAXNREG
#define SPMV_CSR5_MAXNREG 56
#endif
inline constexpr int csr5_max_registers = SPMV_CSR5_MAXNREG;

}  // namespace spmv::cuda::tuning
