// CSR5 SpMV on the GPU (omega = 32): a warp per full tile, a lane per tile column, the matrix
// converted to CSR5 on the device.
//
// Product: a warp per full tile. A lane loads its sigma entries in batches of kBatch (8 unless the
// variant says -b4 or -b16): step i of all lanes is one coalesced 256-byte load, and the batch keeps
// kBatch independent x gathers in flight per lane. A lane closes a segment at every row-start flag;
// the columns' leading parts ("red", the end of a segment opened to the left) are combined by a
// segmented suffix scan over the warp (5 shuffle steps). It adds only values of one row, so there is
// no cancellation between rows as with the paper's prefix-sum differences. Every segment inside the
// tile is stored straight into y; rows that cross tile boundaries are combined in one of three ways
// (PlanOptions::variant):
//  - single (default, deterministic): one kernel. A row shorter than a tile is finished by the tile
//    it starts in; for a longer one each tile publishes its part, stamped with the launch's number,
//    and the row's last tile sums the parts in a fixed order (see Parts). No atomics, no zeroing of
//    y, no second launch.
//  - two-pass (deterministic): the carries go to first[t]; a fix-up kernel, one thread per tile,
//    lets the first tile of each crossing row sum them in tile order (a warp for rows over 32 tiles).
//  - atomic (the paper's, not deterministic): y zeroed, carries added with atomicAdd.
// The incomplete last tile is done by CSR after the tiles (a warp for the part of the row straddling
// its start, a thread per later row).
//
// Conversion kernels: a warp per tile computes tile_ptr (binary search of row_ptr), each lane its
// column's bit_flag (the rows starting in its sigma entries), y_offset (warp prefix sum),
// seg_offset (ballot) and the in-tile transposition; the empty-row offsets of hinted tiles
// follow after a device prefix sum (CUB) of their counts, with no round trip to the host.
// Bit-identical to csr_to_csr5 (tested).
#include <spmv/formats/csr5.hpp>
#include <spmv/formats/csr5_cuda.hpp>

#include <algorithm>
#include <chrono>
#include <cub/device/device_scan.cuh>
#include <string>
#include <utility>

#include "cuda/csr_device.cuh"
#include "cuda/cuda_kernels.hpp"
#include "cuda/tuning.cuh"

namespace spmv::cuda {

namespace {

constexpr unsigned long long kHint = 1ull << 63;
constexpr unsigned kFull = 0xffffffffu;
constexpr int kEoRounds = 4;   // segments of a hinted tile whose rows are loaded early: 32 per round
constexpr int kPartLoads = 4;  // a long row's parts loaded per lane per round (8 spills at 56 registers)

struct DevCsr5 {
  int sigma, y_bits, seg_bits, desc_words;
  long long tiles, te, nnz;
  index_t rows, rb;  // rb: first row starting at or after the tail
  long long tb;      // tail begin
  const unsigned long long* tile_ptr;
  const unsigned* desc;
  const long long* eo_ptr;
  const index_t* eo;
  const long long* rp;
  const index_t* col;
  const double* val;
};

// Empty rows just before row r that starts at `start` (hinted tiles only).
__device__ __forceinline__ void zero_empty_before(const DevCsr5& m, index_t r, long long start, double* y) {
  for (index_t e = r - 1; e >= 0 && m.rp[e] == start; --e) y[e] = 0.0;
}

// Entry q's product a_q * x[col_q].
__device__ __forceinline__ double entry_product(const DevCsr5& m, const double* __restrict__ x, long long q) {
  return __ldg(m.val + q) * __ldg(x + __ldg(m.col + q));
}

// Lane's column descriptor of tile t (one or two 32-bit words).
__device__ __forceinline__ unsigned long long load_desc(const DevCsr5& m, long long t, int lane) {
  unsigned long long d = m.desc[t * m.desc_words * 32 + lane];
  if (m.desc_words == 2) d |= static_cast<unsigned long long>(m.desc[(t * m.desc_words + 1) * 32 + lane]) << 32;
  return d;
}

// Products of steps i0 .. i0+kBatch-1 of this lane's column (v, ci: the column's first entry; step i
// of all lanes is one coalesced load), 0 past sigma: kBatch independent x gathers in flight.
template <int kBatch>
__device__ __forceinline__ void batch_products(const double* v, const index_t* ci, const double* __restrict__ x,
                                               int i0, int sigma, double (&p)[kBatch]) {
#pragma unroll
  for (int j = 0; j < kBatch; ++j) {
    const int i = i0 + j;
    p[j] = i < sigma ? __ldg(v + i * 32) * __ldg(x + __ldg(ci + i * 32)) : 0.0;
  }
}

// Segmented suffix scan of the columns' leading parts ("red": the end of a segment opened to the
// left): the sum of the red parts of the flag-free columns after this lane and of the next column
// with a flag, i.e. what ends this lane's last segment (0 for lane 31). Adds only values of one
// row: no cancellation between rows as with the paper's prefix-sum differences.
__device__ __forceinline__ double right_of_column(double red, bool has_flag, int lane) {
  double acc = red;
  int stop = has_flag || lane == 31;
  for (int off = 1; off < 32; off *= 2) {
    const double a = __shfl_down_sync(kFull, acc, off);
    const int s = __shfl_down_sync(kFull, stop, off);
    if (lane + off < 32 && !stop) {
      acc += a;
      stop = s;
    }
  }
  const double right = __shfl_down_sync(kFull, acc, 1);
  return lane == 31 ? 0.0 : right;
}

// Row of a hinted tile's segment at empty_offset `offset`, the segment before it being at `before`;
// zeroes the empty rows between them.
__device__ __forceinline__ index_t row_after_empties(index_t row0, index_t before, index_t offset,
                                                     double* __restrict__ y) {
  const index_t row = row0 + offset;
  for (index_t r = row0 + before + 1; r < row; ++r) y[r] = 0.0;
  return row;
}
// Row of segment k >= 1 of a tile; in a hinted tile (eo: its empty_offset entries, else null) also
// zeroes the empty rows just before it.
__device__ __forceinline__ index_t segment_row(const index_t* eo, index_t row0, int k, double* __restrict__ y) {
  return eo ? row_after_empties(row0, eo[k - 1], eo[k], y) : row0 + k;
}

// Segment k of tile t has sum s. reaches_end: it may continue in tile t+1.
__device__ __forceinline__ void close_segment(const DevCsr5& m, long long t, index_t row0, bool hinted,
                                              bool begins, int k, double s, bool reaches_end, double* y,
                                              double* first, bool atomic) {
  if (k == 0) {
    if (begins && !reaches_end) {  // row0 lies wholly in this tile
      if (hinted && !atomic) zero_empty_before(m, row0, t * m.te, y);
      y[row0] = s;
    } else if (atomic) {
      atomicAdd(y + row0, s);
    } else {
      first[t] = s;
    }
    return;
  }
  // (In atomic mode y is already zero; zeroing its empty rows again races with nothing.)
  const index_t row = segment_row(hinted ? m.eo + m.eo_ptr[t] : nullptr, row0, k, y);
  if (atomic && reaches_end) atomicAdd(y + row, s);
  else y[row] = s;
}

// Tail item i: 0 = the part of row rb-1 inside the tail (the tail's carry); i >= 1 assigns row
// rb + i - 1 (rows starting at or after the tail, trailing empty rows too).
__device__ void tail_item(const DevCsr5& m, long long i, const double* __restrict__ x, double* __restrict__ y,
                          double* __restrict__ first, bool atomic) {
  if (i == 0) {
    double s = 0;
    if (m.rb > 0 && m.rp[m.rb] > m.tb) {
      for (long long p = m.tb; p < m.rp[m.rb]; ++p) s += entry_product(m, x, p);
      if (atomic) atomicAdd(y + m.rb - 1, s);
    }
    if (!atomic) first[m.tiles] = s;
    return;
  }
  const long long r = m.rb + i - 1;
  if (r >= m.rows) return;
  double s = 0;
  for (long long p = m.rp[r]; p < m.rp[r + 1]; ++p) s += entry_product(m, x, p);
  y[r] = s;
}

template <int kBatch>
__global__ void csr5_main(DevCsr5 m, const double* __restrict__ x, double* __restrict__ y,
                          double* __restrict__ first, bool atomic) {
  const long long t = (static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const int lane = threadIdx.x & 31;
  if (t >= m.tiles) {  // whole warps take this branch (blockDim is a multiple of 32)
    tail_item(m, (t - m.tiles) * 32 + lane, x, y, first, atomic);
    return;
  }
  const unsigned long long tp = m.tile_ptr[t];
  const index_t row0 = static_cast<index_t>(tp & ~kHint);
  const bool hinted = (tp & kHint) != 0;
  const unsigned long long d = load_desc(m, t, lane);
  const unsigned long long raw = d >> (m.y_bits + m.seg_bits);
  const bool begins = (raw & 1) != 0;  // lane 0: the tile's first entry starts row0
  const unsigned long long flags = raw | (lane == 0 ? 1ull : 0ull);  // segment 0 opens at entry 0
  int seg = static_cast<int>(d & ((1ull << m.y_bits) - 1)) - 1;
  const unsigned seg_off = static_cast<unsigned>((d >> m.y_bits) & ((1ull << m.seg_bits) - 1));
  double sum = 0, red = 0;
  bool seen = false;
  const long long base = t * m.te;
  const double* v = m.val + base + lane;
  const index_t* ci = m.col + base + lane;
  const int sigma = m.sigma;
  for (int i0 = 0; i0 < sigma; i0 += kBatch) {
    double p[kBatch];
    batch_products<kBatch>(v, ci, x, i0, sigma, p);
#pragma unroll
    for (int j = 0; j < kBatch; ++j) {
      const int i = i0 + j;
      if (i >= sigma) break;
      if ((flags >> i) & 1) {
        if (!seen) {
          red = sum;
          seen = true;
        } else {
          close_segment(m, t, row0, hinted, begins, seg, sum, false, y, first, atomic);
        }
        ++seg;
        sum = 0;
      }
      sum += p[j];
    }
  }
  if (!seen) red = sum;
  const double right = right_of_column(red, seen, lane);
  if (seen) {
    const bool reaches_end = lane + static_cast<int>(seg_off) >= 31;
    close_segment(m, t, row0, hinted, begins, seg, sum + right, reaches_end, y, first, atomic);
  }
}

// Deterministic carries. Thread t in [0, tiles]: r = the row of tile t's segment 0; the owner of
// r's carries is the first tile whose base is at or after row r's start.
__global__ void csr5_fixup(DevCsr5 m, const double* __restrict__ first, double* __restrict__ y) {
  const long long t = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int lane = threadIdx.x & 31;
  bool own = false, assign = false, hinted = false;
  long long b = 0, start = 0;
  index_t r = 0;
  if (t <= m.tiles) {
    const long long base = t * m.te;
    if (base < m.nnz) {
      const unsigned long long tp = m.tile_ptr[t];
      r = static_cast<index_t>(tp & ~kHint);
      hinted = (tp & kHint) != 0;
      start = m.rp[r];
      const long long end = m.rp[r + 1];
      own = start > base - m.te;
      assign = start == base;
      if (assign && (t == m.tiles || end < base + m.te)) own = false;  // the tile or the tail stored it
      b = min((end - 1) / m.te, m.tiles);
    }
  }
  const bool wide = own && b - t >= 32;
  if (own && !wide) {
    double s = 0;
#pragma unroll 4
    for (long long u = t; u <= b; ++u) s += first[u];
    if (assign) {
      if (hinted) zero_empty_before(m, r, start, y);
      y[r] = s;
    } else {
      y[r] += s;
    }
  }
  // Rows over 32 tiles: the warp sums their carries together, one row at a time.
  for (unsigned mask = __ballot_sync(kFull, wide); mask; mask &= mask - 1) {
    const int src = __ffs(mask) - 1;
    const long long a0 = __shfl_sync(kFull, t, src), b0 = __shfl_sync(kFull, b, src);
    double s = 0;
#pragma unroll 8  // independent loads in flight: a row of 600 tiles is 19 loads per lane
    for (long long u = a0 + lane; u <= b0; u += 32) s += first[u];
    s = group_sum(s, 32);
    if (lane == src) {
      if (assign) {
        if (hinted) zero_empty_before(m, r, start, y);
        y[r] = s;
      } else {
        y[r] += s;
      }
    }
  }
}

// A full tile's segment sums into seg_sum (its warp's shared buffer), at the segments' numbers:
// a lane's closed segments by a predicated store (no divergent branch per step), its last one
// completed by the segmented scan over the warp. nseg: the tile's segments (warp-uniform);
// begins: the tile's first entry starts a row.
struct TileSegments {
  int nseg;
  bool begins;
};
template <int kBatch, int kSigma = 0>
__device__ __forceinline__ TileSegments tile_segments(const DevCsr5& m, const double* __restrict__ x, long long base,
                                                      unsigned long long d, double* seg_sum, int lane) {
  const unsigned long long raw = d >> (m.y_bits + m.seg_bits);
  const unsigned long long flags = raw | (lane == 0 ? 1ull : 0ull);  // segment 0 opens at entry 0
  const int first_flag = flags ? __ffsll(static_cast<long long>(flags)) - 1 : 64;
  int seg = static_cast<int>(d & ((1ull << m.y_bits) - 1)) - 1;
  double sum = 0, red = 0;
  const double* v = m.val + base + lane;
  const index_t* ci = m.col + base + lane;
  const int sigma = kSigma > 0 ? kSigma : m.sigma;
#pragma unroll
  for (int i0 = 0; i0 < sigma; i0 += kBatch) {
    double pr[kBatch];
    batch_products<kBatch>(v, ci, x, i0, sigma, pr);
    const unsigned batch_flags = static_cast<unsigned>(flags >> i0);  // one 64-bit shift per batch
#pragma unroll
    for (int j = 0; j < kBatch; ++j) {
      const int i = i0 + j;
      const bool flag = i < sigma && ((batch_flags >> j) & 1) != 0;
      // At the column's first flag the running sum is the end of a segment opened to the left
      // ("red"); at later flags it is a whole segment of this column.
      if (flag && i != first_flag) seg_sum[seg] = sum;
      if (i == first_flag) red = sum;
      seg += flag;
      sum = flag ? pr[j] : sum + pr[j];
    }
  }
  const bool has_flag = first_flag != 64;
  if (!has_flag) red = sum;
  const double right = right_of_column(red, has_flag, lane);
  if (has_flag) seg_sum[seg] = sum + right;
  const int nseg = __shfl_sync(kFull, seg, 31) + 1;  // lane 31's last segment is the tile's last
  const bool begins = __shfl_sync(kFull, static_cast<unsigned>(raw & 1), 0) != 0;
  __syncwarp();
  return {nseg, begins};
}

// Rows starting at or after the tail (trailing empty rows too): warp i takes rows rb + 4i ..
// rb + 4i + 3, 8 lanes each.
__device__ __forceinline__ void tail_rows(const DevCsr5& m, const double* __restrict__ x, double* __restrict__ y,
                                          long long i, int lane) {
  const long long r = m.rb + i * 4 + lane / 8;
  double s = 0;
  if (r < m.rows)
    for (long long q = m.rp[r] + (lane & 7); q < m.rp[r + 1]; q += 8) s += entry_product(m, x, q);
  s = group_sum(s, 8);
  if ((lane & 7) == 0 && r < m.rows) y[r] = s;
}

// The tail's part of row rb - 1, the row that starts in a full tile and goes on into the tail
// (callers check that it does), summed by the warp.
__device__ __forceinline__ double tail_straddle(const DevCsr5& m, const double* __restrict__ x, int lane) {
  double s = 0;
  for (long long q = m.tb + lane; q < m.rp[m.rb]; q += 32) s += entry_product(m, x, q);
  return group_sum(s, 32);
}

// ---- single pass: the default deterministic mode ----
// A row crossing tile boundaries spans tiles a..b (a: where it starts, b: where it ends; the tail
// counts as tile `tiles`).
//  - b == a + 1 (a row shorter than a tile, the usual case): tile a computes it whole, reading the
//    row's first entries in tile b (transposed, or CSR order in the tail) with the whole warp;
//    tile b drops its segment 0.
//  - b >= a + 2 (a row longer than a tile): tiles a .. b-1 publish their parts (tile a its last
//    segment, later ones their segment 0, a whole tile for those in between) with one 16-byte store
//    of {part, launch number}; tile b waits until the launch's number shows on all of them and sums
//    them in a fixed order, so the same bits whichever tile finishes first. Only tile b waits, and
//    only on lower tiles, which run in blocks of lower index: blocks start in index order, so those
//    are running or done (the forward-progress assumption of CUB's decoupled look-back). It also
//    takes a 16-byte access of one thread to be seen whole, as CUB's tile status words of {status,
//    value} do (PTX's memory model promises it per 8-byte element only). Only the row's last tile
//    waits: no fence or atomic in the others (bench/results/README.md, CSR5 tuning history).
struct alignas(16) Part {
  double value;
  unsigned long long launch;  // number of the launch that stored `value`
};
struct Parts {
  Part* head;                // tiles + 1: a tile's segment 0 (or whole tile)
  Part* tail;                // tiles: a tile's last segment
  unsigned long long launch;  // this launch's number: never 0, never repeated by a plan
};

// One 16-byte relaxed store / load at device scope. Volatile asm: the intrinsics (__ldcv) are
// plain asm, which the compiler may hoist out of a polling loop.
__device__ __forceinline__ void publish(Part* p, double s, unsigned long long launch) {
  asm volatile("st.relaxed.gpu.global.v2.b64 [%0], {%1, %2};" ::"l"(p), "l"(__double_as_longlong(s)), "l"(launch));
}
__device__ __forceinline__ Part peek(const Part* p) {
  long long v;
  unsigned long long launch;
  asm volatile("ld.relaxed.gpu.global.v2.b64 {%0, %1}, [%2];" : "=l"(v), "=l"(launch) : "l"(p));
  return {__longlong_as_double(v), launch};
}

// Tile b's sum of a long row spanning tiles a..b (own: tile b's part, lane 0), by the whole warp:
// the parts in rounds of kParts loads per lane, each round repeated until all of its parts carry
// this launch's number, then added in a fixed order.
template <int kParts>
__device__ __forceinline__ double collect_row(const Parts& p, long long a, long long b, double own, int lane) {
  double s = 0;
  for (long long u0 = a; u0 < b; u0 += kParts * 32) {
    double part[kParts];
    bool ready;
    int polls = 0;
    do {
      // A part that never shows (a scheduling that breaks the assumption above) ends the kernel
      // with an error after about a second instead of hanging the process.
      if (++polls > (1 << 20)) __trap();
      ready = true;
#pragma unroll
      for (int j = 0; j < kParts; ++j) {
        const long long u = u0 + j * 32 + lane;
        part[j] = 0.0;
        if (u < b) {
          const Part r = peek(u == a ? p.tail + u : p.head + u);
          part[j] = r.value;
          ready &= r.launch == p.launch;
        }
      }
    } while (!__all_sync(kFull, ready));
#pragma unroll
    for (int j = 0; j < kParts; ++j) s += part[j];
  }
  s = group_sum(s, 32);
  return s + own;
}

// Lanes own the segments that open in their column; instead of storing into y at every row start
// (a divergent branch per step, and scattered 8-byte stores), a lane writes the closed sums into
// its warp's shared buffer at the segment's number (a predicated store), and the warp then copies
// the buffer to y with consecutive lanes on consecutive rows. The buffer holds a tile's segments:
// at most omega * sigma doubles per warp (the plan falls back to two-pass when that does not fit).
// Registers: at most 56 (overridable when building for experiments), so 36 warps per SM fit
// instead of 32 at 64, any block size still launches, and the compiled tile heights do not spill
// (the peak was the long-row sum's 16 loads per lane; it takes 8 now); the generic instance (other
// heights, other load batches) keeps 64 (launch bounds), where it spills least (measurements:
// bench/results/README.md, CSR5 tuning history).
#ifndef SPMV_CSR5_MAXNREG
#define SPMV_CSR5_MAXNREG 56
#endif
template <int kBatch, int kSigma>
__device__ __forceinline__ void single_tile(const DevCsr5& m, const double* __restrict__ x, double* __restrict__ y,
                                            const Parts& parts) {
  extern __shared__ double smem[];
  // Tile heights of the sigma rule are compiled in (constant tile size, unrolled steps).
  const int sigma = kSigma > 0 ? kSigma : m.sigma;
  const long long te = 32ll * sigma;
  const long long t = (static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const int lane = threadIdx.x & 31;
  if (t > m.tiles) {
    tail_rows(m, x, y, t - m.tiles - 1, lane);
    return;
  }
  bool head_ev = false;  // lane 0 holds a part of the long row row0
  double head_s = 0;
  index_t row0 = 0;
  long long a0 = 0, b0 = 0;  // first and last tile of row0
  if (t == m.tiles) {  // the tail's part of the row straddling its start, when that row is long
    if (m.rb > 0 && m.rp[m.rb] > m.tb && m.rp[m.rb - 1] < m.tb - te) {
      head_s = tail_straddle(m, x, lane);
      head_ev = lane == 0;
      row0 = m.rb - 1;
      a0 = m.rp[row0] / te;
      b0 = m.tiles;
    }
  } else {
    double* seg_sum = smem + static_cast<long long>(threadIdx.x / 32) * te;
    const long long base = t * te, end = base + te;
    const unsigned long long tp = m.tile_ptr[t];
    row0 = static_cast<index_t>(tp & ~kHint);
    const bool hinted = (tp & kHint) != 0;
    // The boundary rows' extents, loaded before the tile's entries so that their latency overlaps:
    // row0 (segment 0), and rn, the row holding the next tile's first entry.
    const index_t rn = static_cast<index_t>(m.tile_ptr[t + 1] & ~kHint);
    const long long r0s = m.rp[row0], r0e = m.rp[row0 + 1];
    const long long rn_s = rn < m.rows ? m.rp[rn] : end, rn_e = rn < m.rows ? m.rp[rn + 1] : end;
    // A hinted tile's empty_offset entries (the rows of its segments) for its first 32 * kEoRounds
    // segments, loaded with the tile's own entries instead of after them (their latency overlaps).
    long long eo_begin = 0;
    index_t eo_pre[kEoRounds];
    {  // (not under `if (hinted)`: that branch kept the tile's loads from starting early)
      eo_begin = m.eo_ptr[t];
      const long long eo_end = m.eo_ptr[t + 1];
#pragma unroll
      for (int i = 0; i < kEoRounds; ++i) {
        const long long q = eo_begin + 32 * i + lane;
        eo_pre[i] = q < eo_end ? m.eo[q] : 0;
      }
    }
    const TileSegments ts = tile_segments<kBatch, kSigma>(m, x, base, load_desc(m, t, lane), seg_sum, lane);
    const int nseg = ts.nseg;
    // Boundary rows: row0 (segment 0) when it began in an earlier tile, and the row of the last
    // segment when it goes on into the next tile.
    const bool begins = ts.begins;
    const bool crosses_end = rn_s < end;
    const long long rn_end = crosses_end ? rn_e : end;
    // Comparisons instead of 64-bit divisions by te (a software routine of ~70 instructions each):
    // a row "short" across a boundary ends in the tile after the one it starts in.
    const bool short_cross = crosses_end && (nseg > 1 || begins) && rn_end <= end + te;
    bool long_head = false;
    if (!begins) {
      long_head = r0s < base - te || r0e > end;
      if (long_head) {
        a0 = r0s / te;
        b0 = (r0e - 1) / te;
      }
    }
    // Parts of long rows (short ones are done by their first tile), published before the tile's
    // own stores so that the row's last tile sees them as early as possible.
    if (lane == 0) {
      head_ev = long_head;
      head_s = seg_sum[0];
      if (head_ev && t != b0) publish(parts.head + t, head_s, parts.launch);
      if (crosses_end && (nseg > 1 || begins) && !short_cross) publish(parts.tail + t, seg_sum[nseg - 1], parts.launch);
    }
    if (lane == 0 && begins && hinted) zero_empty_before(m, row0, base, y);
    // Segments that begin and end in this tile, consecutive lanes on consecutive segments; a
    // hinted tile's first rounds take their rows from eo_pre (segment k - 1's row from the lane
    // before, or from the last lane of the round before).
    const int last_inner = crosses_end ? nseg - 2 : nseg - 1;
    const auto store_inner = [&](int k, index_t row) {
      if ((k > 0 || begins) && k <= last_inner) y[row] = seg_sum[k];
    };
    int k_rest = lane;  // the segments left for the loop below
    if (hinted) {
#pragma unroll
      for (int i = 0; i < kEoRounds; ++i) {
        if (32 * i >= nseg) break;  // warp-uniform
        const index_t before = __shfl_up_sync(kFull, eo_pre[i], 1);
        const index_t round_before = __shfl_sync(kFull, eo_pre[i > 0 ? i - 1 : 0], 31);
        const int k = 32 * i + lane;
        if (k < nseg)
          store_inner(k, k > 0 ? row_after_empties(row0, lane > 0 ? before : round_before, eo_pre[i], y) : row0);
      }
      k_rest = 32 * kEoRounds + lane;
    }
    const index_t* eo = hinted ? m.eo + eo_begin : nullptr;
    for (int k = k_rest; k < nseg; k += 32) store_inner(k, k > 0 ? segment_row(eo, row0, k, y) : row0);
    // The rest of a short row crossing into the next tile: its CSR entries end .. rn_end-1,
    // transposed in a full tile, in CSR order in the tail.
    if (short_cross) {
      // Lane j takes the row's j-th entry there (one round of loads, not a loop per column): in a
      // full tile CSR entry j sits at column j / sigma, step j % sigma. (Rounds of 4 x 32 entries
      // with all loads in flight: no gain on rows of 50-100, 9-11% slower on Reuters911 and beacxc.)
      const int n = static_cast<int>(rn_end - end);
      const bool full = t + 1 < m.tiles;
      double s = 0;
      for (int j = lane; j < n; j += 32) {
        const int c = full ? j / sigma : 0;
        s += entry_product(m, x, full ? end + static_cast<long long>(j - c * sigma) * 32 + c : end + j);
      }
      s = group_sum(s, 32);
      if (lane == 0) y[rn] = seg_sum[nseg - 1] + s;
    }
  }
  // Tile b0 of a long row0 collects its parts (lane 0 holds its own).
  const bool collect = __shfl_sync(kFull, head_ev && t == b0, 0);
  if (collect) {
    const double s = collect_row<kPartLoads>(parts, __shfl_sync(kFull, a0, 0), t, head_s, lane);
    if (lane == 0) y[row0] = s;
  }
}

template <int kBatch, int kSigma>
__global__ void __maxnreg__(SPMV_CSR5_MAXNREG) csr5_single(DevCsr5 m, const double* __restrict__ x,
                                                          double* __restrict__ y, Parts parts) {
  single_tile<kBatch, kSigma>(m, x, y, parts);
}
template <int kBatch>
__global__ void __launch_bounds__(1024, 1) csr5_single_generic(DevCsr5 m, const double* __restrict__ x,
                                                                double* __restrict__ y, Parts parts) {
  single_tile<kBatch, 0>(m, x, y, parts);
}

// The single-pass instance for a load batch and tile height: the sigma rule's heights (8, 16, 24,
// 32) are compiled in for the default batch; anything else runs the generic instance.
using SingleKernel = void (*)(DevCsr5, const double*, double*, Parts);
SingleKernel single_kernel(int batch, int sigma) {
  if (batch == 4) return csr5_single_generic<4>;
  if (batch == 16) return csr5_single_generic<16>;
  switch (sigma) {
    case 8: return csr5_single<8, 8>;
    case 16: return csr5_single<8, 16>;
    case 24: return csr5_single<8, 24>;
    case 32: return csr5_single<8, 32>;
    default: return csr5_single_generic<8>;
  }
}

// ---- conversion ----

__device__ __forceinline__ long long lower_bound_dev(const long long* a, long long n, long long v) {
  long long lo = 0, hi = n;  // first i with a[i] >= v
  while (lo < hi) {
    const long long mid = (lo + hi) / 2;
    if (a[mid] < v) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
__device__ __forceinline__ long long upper_bound_dev(const long long* a, long long n, long long v) {
  long long lo = 0, hi = n;  // first i with a[i] > v
  while (lo < hi) {
    const long long mid = (lo + hi) / 2;
    if (a[mid] <= v) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

struct ConvArgs {
  int sigma, y_bits, seg_bits, desc_words;
  long long tiles, te, nnz;
  index_t rows;
  const long long* rp;
  const index_t* col_in;
  const double* val_in;
  unsigned long long* tile_ptr;
  unsigned* desc;
  long long* eo_count;
  index_t* col;
  double* val;
};

// Warp w in [0, tiles]: tile w's tile_ptr, descriptors, empty-offset count and transposition
// (warp `tiles` writes only tile_ptr[tiles]).
__global__ void csr5_convert_tiles(ConvArgs c) {
  const long long w = (static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const int lane = threadIdx.x & 31;
  if (w > c.tiles) return;
  const long long base = w * c.te;
  const long long n = static_cast<long long>(c.rows) + 1;
  unsigned long long tp = 0;
  if (lane == 0) {
    const long long r0 = upper_bound_dev(c.rp, n, base) - 1;
    tp = static_cast<unsigned long long>(r0 > 0 ? r0 : 0);
    if (w == c.tiles && base >= c.nnz) tp = static_cast<unsigned long long>(c.rows);
  }
  if (w == c.tiles) {
    if (lane == 0) c.tile_ptr[w] = tp;
    return;
  }
  const long long cb = base + static_cast<long long>(lane) * c.sigma, ce = cb + c.sigma;
  unsigned long long flags = 0;
  bool empty = false;
  for (long long r = lower_bound_dev(c.rp, n, cb); r < c.rows && c.rp[r] < ce; ++r) {
    if (c.rp[r] == c.rp[r + 1]) empty = true;
    else flags |= 1ull << (c.rp[r] - cb);
  }
  const bool any_empty = __any_sync(kFull, empty);
  const unsigned opened = __popcll(flags | (lane == 0 ? 1ull : 0ull));
  unsigned incl = opened;
  for (int off = 1; off < 32; off *= 2) {
    const unsigned o = __shfl_up_sync(kFull, incl, off);
    if (lane >= off) incl += o;
  }
  const unsigned total = __shfl_sync(kFull, incl, 31);
  const unsigned any = __ballot_sync(kFull, flags != 0 || lane == 0);
  const unsigned above = lane == 31 ? 0u : any >> (lane + 1);
  const unsigned seg = above ? static_cast<unsigned>(__ffs(above) - 1) : static_cast<unsigned>(31 - lane);
  const unsigned long long d = static_cast<unsigned long long>(incl - opened) |
                               (static_cast<unsigned long long>(seg) << c.y_bits) |
                               (flags << (c.y_bits + c.seg_bits));
  c.desc[(w * c.desc_words) * 32 + lane] = static_cast<unsigned>(d);
  if (c.desc_words == 2) c.desc[(w * c.desc_words + 1) * 32 + lane] = static_cast<unsigned>(d >> 32);
  if (lane == 0) {
    c.tile_ptr[w] = tp | (any_empty ? kHint : 0ull);
    c.eo_count[w] = any_empty ? total : 0;
  }
  for (int i = 0; i < c.sigma; ++i) {  // CSR entry base + lane*sigma + i -> base + i*32 + lane
    const long long dst = base + static_cast<long long>(i) * 32 + lane, src = cb + i;
    c.col[dst] = c.col_in[src];
    c.val[dst] = c.val_in[src];
  }
}

// Thread per hinted tile: segment 0 -> 0, segment k >= 1 -> the k-th non-empty row starting
// strictly after the tile's base, minus the tile's first row.
__global__ void csr5_convert_empty_offsets(ConvArgs c, const long long* eo_ptr, index_t* eo) {
  const long long t = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t >= c.tiles) return;
  const unsigned long long tp = c.tile_ptr[t];
  if (!(tp & kHint)) return;
  const index_t row0 = static_cast<index_t>(tp & ~kHint);
  const long long base = t * c.te, end = base + c.te;
  index_t* out = eo + eo_ptr[t];
  long long k = 0;
  out[k++] = 0;
  for (long long r = lower_bound_dev(c.rp, static_cast<long long>(c.rows) + 1, base + 1); r < c.rows && c.rp[r] < end; ++r)
    if (c.rp[r] != c.rp[r + 1]) out[k++] = static_cast<index_t>(r - row0);
}

int ceil_log2(long long v) {
  int b = 0;
  while ((1ll << b) < v) ++b;
  return b;
}

__global__ void widen_row_ptr(long long n, const int* __restrict__ in, long long* __restrict__ out) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i];
}

// CSR5 arrays on the device; the host struct keeps only the scalars (and nothing else). Converted
// from `shared` (the planner's device CSR) where given, else from an upload of its own.
struct DeviceCsr5 {
  Csr5 meta;
  DeviceBuffer<unsigned long long> tile_ptr;
  DeviceBuffer<unsigned> desc;
  DeviceBuffer<long long> eo_ptr;
  DeviceBuffer<index_t> eo;
  DeviceBuffer<long long> rp;
  DeviceBuffer<index_t> col;
  DeviceBuffer<double> val;
  double upload_seconds = 0, convert_seconds = 0;

  DeviceCsr5(const Csr& a, int sigma, const ConvertOptions& opt, const DeviceCsr* shared = nullptr) {
    constexpr int omega = 32;
    if (sigma < 1) throw Unsupported("CSR5 tile 32x" + std::to_string(sigma) + ": sigma must be at least 1");
    const int bits = csr5_descriptor_bits(omega, sigma);
    if (bits > 64)
      throw Unsupported("CSR5 tile 32x" + std::to_string(sigma) + ": a column descriptor would need " +
                        std::to_string(bits) + " bits (max 64)");
    // + the CSR input, + the bound on the empty-row lists
    check_format_memory("CSR5", csr5_bytes(a, omega, sigma) + 12.0 * a.nnz() + 4.0 * (a.rows + a.nnz() / (32.0 * sigma) + 1),
                        a, opt);
    Csr5& f = meta;
    f.omega = omega;
    f.sigma = sigma;
    f.rows = a.rows;
    f.cols = a.cols;
    f.nnz = a.nnz();
    f.y_bits = ceil_log2(static_cast<long long>(omega) * sigma);
    f.seg_bits = ceil_log2(omega);
    f.desc_words = bits <= 32 ? 1 : 2;
    f.tiles = f.nnz / f.tile_entries();

    auto t0 = std::chrono::steady_clock::now();
    DeviceBuffer<index_t> own_col;
    DeviceBuffer<double> own_val;
    const index_t* col_in = shared ? shared->col.data() : nullptr;
    const double* val_in = shared ? shared->val.data() : nullptr;
    if (!shared) {
      std::vector<long long> hrp(a.row_ptr.begin(), a.row_ptr.end());
      if (hrp.empty()) hrp.assign(1, 0);
      rp.upload(hrp);
      own_col.upload(a.col);
      own_val.upload(a.val);
      col_in = own_col.data(), val_in = own_val.data();
      SPMV_CUDA_CHECK(cudaDeviceSynchronize());
      upload_seconds = seconds_since(t0);
      t0 = std::chrono::steady_clock::now();
    } else {  // the kernels take 64-bit row offsets (a copy: the shared CSR is freed after planning)
      const auto n = static_cast<long long>(a.rows) + 1;
      rp.resize(static_cast<std::size_t>(n));
      if (a.row_ptr.empty())
        SPMV_CUDA_CHECK(cudaMemsetAsync(rp.data(), 0, sizeof(long long)));
      else if (shared->wide)
        SPMV_CUDA_CHECK(cudaMemcpyAsync(rp.data(), shared->rp64.data(), n * sizeof(long long), cudaMemcpyDeviceToDevice));
      else
        widen_row_ptr<<<grid_for(n, 256), 256>>>(n, shared->rp32.data(), rp.data());
      SPMV_CUDA_CHECK_LAUNCH();
    }
    const auto tiles = static_cast<std::size_t>(f.tiles);
    tile_ptr.resize(tiles + 1);
    desc.resize(tiles * f.desc_words * omega);
    col.resize(static_cast<std::size_t>(f.nnz));
    val.resize(static_cast<std::size_t>(f.nnz));
    // The empty-row lists are sized by a bound (hinted tiles have at most tiles + rows segments in
    // all), so the conversion never waits for the device: no count comes back to the host.
    eo_ptr.resize(tiles + 1);
    eo.resize(tiles + static_cast<std::size_t>(f.rows) + 1);
    const ConvArgs c{sigma, f.y_bits, f.seg_bits, f.desc_words, f.tiles, f.tile_entries(), f.nnz, f.rows,
                     rp.data(), col_in, val_in, tile_ptr.data(), desc.data(), eo_ptr.data() + 1,
                     col.data(), val.data()};
    constexpr int block = 256;
    csr5_convert_tiles<<<grid_for((f.tiles + 1) * 32, block), block>>>(c);
    SPMV_CUDA_CHECK_LAUNCH();
    const offset_t tb = f.tail_begin();
    if (f.nnz > tb) {
      SPMV_CUDA_CHECK(cudaMemcpyAsync(col.data() + tb, col_in + tb, (f.nnz - tb) * sizeof(index_t),
                                      cudaMemcpyDeviceToDevice));
      SPMV_CUDA_CHECK(cudaMemcpyAsync(val.data() + tb, val_in + tb, (f.nnz - tb) * sizeof(double),
                                      cudaMemcpyDeviceToDevice));
    }
    // Offsets of the empty-row lists: eo_ptr[0] = 0, then an in-place prefix sum of the per-tile
    // counts that the tile kernel wrote to eo_ptr[1..tiles] (CUB's device scan).
    SPMV_CUDA_CHECK(cudaMemsetAsync(eo_ptr.data(), 0, sizeof(long long)));
    if (tiles > 0) {
      std::size_t temp_bytes = 0;
      SPMV_CUDA_CHECK(cub::DeviceScan::InclusiveSum(nullptr, temp_bytes, eo_ptr.data() + 1, eo_ptr.data() + 1,
                                                    static_cast<long long>(tiles)));
      DeviceBuffer<unsigned char> temp(temp_bytes);
      SPMV_CUDA_CHECK(cub::DeviceScan::InclusiveSum(temp.data(), temp_bytes, eo_ptr.data() + 1, eo_ptr.data() + 1,
                                                    static_cast<long long>(tiles)));
      csr5_convert_empty_offsets<<<grid_for(f.tiles, block), block>>>(c, eo_ptr.data(), eo.data());
      SPMV_CUDA_CHECK_LAUNCH();
    }
    SPMV_CUDA_CHECK(cudaDeviceSynchronize());
    convert_seconds = seconds_since(t0);
  }
};

class Csr5Plan final : public CudaPlan {
 public:
  Csr5Plan(const Csr& a, const PlanOptions& opt, const SharedDeviceCsr& dev)
      : CudaPlan(a.rows, a.cols, opt, vectors_of(dev, opt.k)), block_(checked_block_size(opt)),
        v_(parse_variant(opt)), m_(a, chosen_sigma(a, opt), convert_options(opt), dev.get()) {
    convert_seconds = m_.convert_seconds;
    setup_seconds = m_.upload_seconds;
    const auto& f = m_.meta;
    // Default block: 128 threads for tiles of height 8 (the short-row case; 4 tiles per block), 256
    // for taller ones (measured per height: bench/results/README.md, CSR5 tuning history).
    if (opt.block_size == 0 && f.sigma <= 8) block_ = 128;
    tb_ = f.tail_begin();
    rb_ = static_cast<index_t>(std::lower_bound(a.row_ptr.begin(), a.row_ptr.end(), tb_) - a.row_ptr.begin());
    // The single-pass kernel keeps a tile's segment sums in shared memory (omega*sigma doubles per
    // warp); over the device's limit per block, the two-pass kernel does the product instead.
    if (v_.mode == Mode::Single) {
      smem_bytes_ = static_cast<std::size_t>(block_ / 32) * static_cast<std::size_t>(f.tile_entries()) * sizeof(double);
      int dev = 0, optin = 0;
      SPMV_CUDA_CHECK(cudaGetDevice(&dev));
      SPMV_CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
      if (smem_bytes_ > static_cast<std::size_t>(optin)) {
        fallback_ = " (single-pass would need " + std::to_string(smem_bytes_ >> 10) + " KiB of shared memory per block)";
        v_.mode = Mode::TwoPass;
      } else {
        SPMV_CUDA_CHECK(cudaFuncSetAttribute(single_kernel(v_.batch, f.sigma), cudaFuncAttributeMaxDynamicSharedMemorySize,
                                             static_cast<int>(smem_bytes_)));
      }
    }
    // One part or carry per tile and one for the tail.
    const auto n = static_cast<std::size_t>(f.tiles) + 1;
    if (v_.mode == Mode::Single) {
      head_parts_.resize(n);
      tail_parts_.resize(n);
      // Launch number 0 marks "never stored".
      SPMV_CUDA_CHECK(cudaMemset(head_parts_.data(), 0, n * sizeof(Part)));
      SPMV_CUDA_CHECK(cudaMemset(tail_parts_.data(), 0, n * sizeof(Part)));
    } else {
      first_.resize(n);
    }
    bytes_per_product = csr_product_bytes(a, 1) + static_cast<offset_t>(m_.desc.size()) * 4 +
                        static_cast<offset_t>(m_.tile_ptr.size()) * 8;
    stored_entries = a.nnz();
    detail = "omega=32 sigma=" + std::to_string(f.sigma) + " tiles=" + std::to_string(f.tiles) + " block=" +
             std::to_string(block_) + " batch=" +
             std::to_string(v_.batch) + " " + kModeName[static_cast<int>(v_.mode)] + fallback_ + " device-conversion";
  }

 protected:
  void launch() override {
    if (rows_ == 0) return;
    const auto& f = m_.meta;
    const DevCsr5 m{f.sigma, f.y_bits, f.seg_bits, f.desc_words, f.tiles, f.tile_entries(), f.nnz, rows_, rb_, tb_,
                    m_.tile_ptr.data(), m_.desc.data(), m_.eo_ptr.data(), m_.eo.data(), m_.rp.data(),
                    m_.col.data(), m_.val.data()};
    const offset_t tail_rows = static_cast<offset_t>(rows_) - rb_;
    const Parts p{head_parts_.data(), tail_parts_.data(), ++launches_};
    const int batch = v_.batch;
    if (v_.mode == Mode::Single) {
      const unsigned grid = grid_for((f.tiles + 1 + (tail_rows + 3) / 4) * 32, block_);
      single_kernel(batch, f.sigma)<<<grid, block_, smem_bytes_>>>(m, x_.data(), y_.data(), p);
      SPMV_CUDA_CHECK_LAUNCH();
      return;
    }
    const bool atomic = v_.mode == Mode::Atomic;
    const offset_t warps = f.tiles + (tail_rows + 1 + 31) / 32;
    if (atomic) zero_async(y_);
    const unsigned grid = grid_for(warps * 32, block_);
    if (batch == 4) csr5_main<4><<<grid, block_>>>(m, x_.data(), y_.data(), first_.data(), atomic);
    else if (batch == 16) csr5_main<16><<<grid, block_>>>(m, x_.data(), y_.data(), first_.data(), atomic);
    else csr5_main<8><<<grid, block_>>>(m, x_.data(), y_.data(), first_.data(), atomic);
    SPMV_CUDA_CHECK_LAUNCH();
    if (!atomic && f.tiles > 0) {
      csr5_fixup<<<grid_for(f.tiles + 1, block_), block_>>>(m, first_.data(), y_.data());
      SPMV_CUDA_CHECK_LAUNCH();
    }
  }

 private:
  enum class Mode { Single, TwoPass, Atomic };
  static constexpr const char* kModeName[] = {"single-pass", "two-pass", "atomic"};
  struct Variant {
    Mode mode = Mode::Single;
    int batch = 8;
  };

  // variant: "auto" or "single" (one kernel, deterministic), "two-pass" (main kernel + fix-up
  // kernel, deterministic), "atomic" (the paper's atomicAdd carries: y zeroed first, not
  // deterministic, so refused when PlanOptions::deterministic is set); an optional "-b4"/"-b8"/
  // "-b16" suffix (or "b4"... alone) sets the loads in flight per lane.
  static Variant parse_variant(const PlanOptions& opt) {
    const std::string& v = opt.variant;
    Variant r;
    std::string mode = v;
    for (int b : {4, 8, 16}) {
      const std::string suffix = "b" + std::to_string(b);
      if (mode == suffix) mode = "auto", r.batch = b;
      else if (mode.ends_with("-" + suffix)) mode = mode.substr(0, mode.size() - suffix.size() - 1), r.batch = b;
    }
    if (mode == "auto" || mode == "single") r.mode = Mode::Single;
    else if (mode == "two-pass") r.mode = Mode::TwoPass;
    else if (mode == "atomic") r.mode = Mode::Atomic;
    else
      throw Unsupported("csr5 on CUDA: variant must be auto, single, two-pass or atomic, optionally with -b4, -b8 "
                        "or -b16 (got " + v + ")");
    if (r.mode == Mode::Atomic && opt.deterministic)
      throw Unsupported("csr5 on CUDA: variant atomic is not deterministic; set deterministic=false for it");
    return r;
  }
  static int chosen_sigma(const Csr& a, const PlanOptions& opt) {
    const int omega = opt.csr5_omega > 0 ? opt.csr5_omega : tuning::csr5_omega;
    if (omega != 32) throw Unsupported("csr5 on CUDA: omega must be 32 (a warp), got " + std::to_string(omega));
    // Not the paper's rule (4-7 for short rows, 26 for stencil27): see tuning::csr5_sigma.
    return opt.csr5_sigma > 0 ? opt.csr5_sigma : tuning::csr5_sigma(a);
  }

  int block_;
  Variant v_;
  std::size_t smem_bytes_ = 0;
  std::string fallback_;
  DeviceCsr5 m_;
  offset_t tb_ = 0;
  index_t rb_ = 0;
  DeviceBuffer<Part> head_parts_, tail_parts_;  // single-pass: the long rows' parts
  unsigned long long launches_ = 0;              // single-pass: the launch number of the last product
  DeviceBuffer<double> first_;                   // two-pass and atomic: the carries
};

}  // namespace

std::unique_ptr<Plan> make_csr5(const Csr& a, const PlanOptions& opt, SharedDeviceCsr dev) {
  return std::make_unique<Csr5Plan>(a, opt, dev);
}

Csr5 csr_to_csr5_on_device(const Csr& a, int sigma, const ConvertOptions& opt) {
  DeviceCsr5 d(a, sigma, opt);
  Csr5 f = d.meta;
  f.tile_ptr.resize(d.tile_ptr.size());
  d.tile_ptr.download(reinterpret_cast<unsigned long long*>(f.tile_ptr.data()), f.tile_ptr.size());
  f.tile_desc = d.desc.download();
  f.empty_offset_ptr.resize(d.eo_ptr.size());
  d.eo_ptr.download(reinterpret_cast<long long*>(f.empty_offset_ptr.data()), f.empty_offset_ptr.size());
  f.empty_offset.resize(static_cast<std::size_t>(f.empty_offset_ptr.back()));  // eo is allocated by a bound
  d.eo.download(f.empty_offset.data(), f.empty_offset.size());
  f.row_ptr.assign(a.row_ptr.begin(), a.row_ptr.end());
  if (f.row_ptr.empty()) f.row_ptr.assign(1, 0);
  const auto col = d.col.download();
  const auto val = d.val.download();
  f.col.assign(col.begin(), col.end());
  f.val.assign(val.begin(), val.end());
  return f;
}

void register_csr5() {
  add_kernel({.name = "csr5",
              .backend = Backend::Cuda,
              .format = "csr5",
              .description = "CSR5 tiles (32 x sigma; sigma 8, or 16 for regular rows of 12 or more) "
                             "converted on the device, a warp per tile; rows across tiles combined in one pass "
                             "(deterministic), or variant two-pass / atomic",
              .params = {"block_size", "csr5_sigma", "deterministic", "variant"},
              .make = [](const Csr& a, const PlanOptions& o) { return make_csr5(a, o, nullptr); }});
}

}  // namespace spmv::cuda
