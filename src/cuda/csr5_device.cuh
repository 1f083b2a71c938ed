#pragma once
// CSR5 on CUDA, the parts its files share: the device view of the format (DevCsr5), the per-tile
// helpers of both product modes, the device arrays (DeviceCsr5, built by csr5_convert.cu) and the
// entries to the single-pass kernel (csr5_single.cu) and to the SpMM plan (csr5_spmm.cu).
// Precision: the view and the helpers are templates on the matrix's value type MV and
// the vectors' and sums' type VV, as the other CUDA kernels (cuda_plan.cuh); the device arrays hold
// float values for single and mixed plans.
#include <spmv/formats/csr5.hpp>

#include "cuda/csr_device.cuh"
#include "cuda/cuda_kernels.hpp"

namespace spmv::cuda::csr5 {

constexpr unsigned long long kHint = 1ull << 63;
constexpr unsigned kFull = 0xffffffffu;

template <class MV>
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
  const MV* val;
};

// Empty rows just before row r that starts at `start` (hinted tiles only).
template <class MV, class VV>
__device__ __forceinline__ void zero_empty_before(const DevCsr5<MV>& m, index_t r, long long start, VV* y,
                                                  const Epilogue<VV>& ep) {
  for (index_t e = r - 1; e >= 0 && m.rp[e] == start; --e) ep.empty(y, e);
}

// Entry q's product a_q * x[col_q], in VV (the value widened first in mixed precision).
template <class MV, class VV>
__device__ __forceinline__ VV entry_product(const DevCsr5<MV>& m, const VV* __restrict__ x, long long q) {
  return static_cast<VV>(__ldg(m.val + q)) * __ldg(x + __ldg(m.col + q));
}

// Lane's column descriptor of tile t (one or two 32-bit words).
template <class MV>
__device__ __forceinline__ unsigned long long load_desc(const DevCsr5<MV>& m, long long t, int lane) {
  unsigned long long d = m.desc[t * m.desc_words * 32 + lane];
  if (m.desc_words == 2) d |= static_cast<unsigned long long>(m.desc[(t * m.desc_words + 1) * 32 + lane]) << 32;
  return d;
}

// Lane's column of tile t, decoded: the tile's first row and hint, whether lane 0's first entry
// starts row0 (begins), the flags (bit i: step i opens a segment; lane 0's step 0 always does), the
// segment opened at the first flag minus one (seg) and the flag-free columns right of it (seg_off).
struct TileColumn {
  index_t row0;
  bool hinted, begins;
  unsigned long long flags;
  int seg;
  unsigned seg_off;
};
template <class MV>
__device__ __forceinline__ TileColumn tile_column(const DevCsr5<MV>& m, long long t, int lane) {
  const unsigned long long tp = m.tile_ptr[t];
  const unsigned long long d = load_desc(m, t, lane);
  const unsigned long long raw = d >> (m.y_bits + m.seg_bits);
  return {static_cast<index_t>(tp & ~kHint),
          (tp & kHint) != 0,
          (raw & 1) != 0,
          raw | (lane == 0 ? 1ull : 0ull),
          static_cast<int>(d & ((1ull << m.y_bits) - 1)) - 1,
          static_cast<unsigned>((d >> m.y_bits) & ((1ull << m.seg_bits) - 1))};
}

// Products of steps i0 .. i0+kBatch-1 of this lane's column (v, ci: the column's first entry; step i
// of all lanes is one coalesced load), 0 past sigma: kBatch independent x gathers in flight.
template <int kBatch, class MV, class VV>
__device__ __forceinline__ void batch_products(const MV* v, const index_t* ci, const VV* __restrict__ x, int i0,
                                               int sigma, VV (&p)[kBatch]) {
#pragma unroll
  for (int j = 0; j < kBatch; ++j) {
    const int i = i0 + j;
    p[j] = i < sigma ? static_cast<VV>(__ldg(v + i * 32)) * __ldg(x + __ldg(ci + i * 32)) : VV(0);
  }
}

// Segmented suffix scan of the columns' leading parts ("red": the end of a segment opened to the
// left): the sum of the red parts of the flag-free columns after this lane and of the next column
// with a flag, i.e. what ends this lane's last segment (0 for lane 31). Adds only values of one
// row: no cancellation between rows as with the paper's prefix-sum differences.
template <class VV>
__device__ __forceinline__ VV right_of_column(VV red, bool has_flag, int lane) {
  VV acc = red;
  int stop = has_flag || lane == 31;
  for (int off = 1; off < 32; off *= 2) {
    const VV a = __shfl_down_sync(kFull, acc, off);
    const int s = __shfl_down_sync(kFull, stop, off);
    if (lane + off < 32 && !stop) {
      acc += a;
      stop = s;
    }
  }
  const VV right = __shfl_down_sync(kFull, acc, 1);
  return lane == 31 ? VV(0) : right;
}

// Row of a hinted tile's segment at empty_offset `offset`, the segment before it being at `before`;
// zeroes the empty rows between them.
template <class VV>
__device__ __forceinline__ index_t row_after_empties(index_t row0, index_t before, index_t offset, VV* __restrict__ y,
                                                     const Epilogue<VV>& ep) {
  const index_t row = row0 + offset;
  for (index_t r = row0 + before + 1; r < row; ++r) ep.empty(y, r);
  return row;
}
// Row of segment k >= 1 of a tile; in a hinted tile (eo: its empty_offset entries, else null) also
// zeroes the empty rows just before it.
template <class VV>
__device__ __forceinline__ index_t segment_row(const index_t* eo, index_t row0, int k, VV* __restrict__ y,
                                               const Epilogue<VV>& ep) {
  return eo ? row_after_empties(row0, eo[k - 1], eo[k], y, ep) : row0 + k;
}

// The fix-up's thread t in [0, tiles]: r, the row of tile t's segment 0 (starting at `start`), has
// its carries summed by t (own) when t is the first tile whose base is at or after r's start, over
// tiles t..b; assign: r starts exactly at t's base (stored, not added; empty rows before it zeroed
// where the tile is hinted).
struct CarryOwner {
  bool own = false, assign = false, hinted = false;
  long long b = 0, start = 0;
  index_t r = 0;
};
template <class MV>
__device__ __forceinline__ CarryOwner carry_owner(const DevCsr5<MV>& m, long long t) {
  CarryOwner c;
  if (t > m.tiles) return c;
  const long long base = t * m.te;
  if (base >= m.nnz) return c;
  const unsigned long long tp = m.tile_ptr[t];
  c.r = static_cast<index_t>(tp & ~kHint);
  c.hinted = (tp & kHint) != 0;
  c.start = m.rp[c.r];
  const long long end = m.rp[c.r + 1];
  c.own = c.start > base - m.te;
  c.assign = c.start == base;
  if (c.assign && (t == m.tiles || end < base + m.te)) c.own = false;  // the tile or the tail stored it
  c.b = min((end - 1) / m.te, m.tiles);
  return c;
}

// CSR5 arrays on the device; the host struct keeps only the scalars (and nothing else). Converted
// from `shared` (the planner's device CSR, whose values must be of p's type) where given, else from
// an upload of its own; values in double for double plans, in float (rounded on the host, as the
// device CSR's) for single and mixed ones.
struct DeviceCsr5 {
  Csr5 meta;  // scalars only (its arrays stay empty, whatever the values' type)
  Precision prec;
  DeviceBuffer<unsigned long long> tile_ptr;
  DeviceBuffer<unsigned> desc;
  DeviceBuffer<long long> eo_ptr;
  DeviceBuffer<index_t> eo;
  DeviceBuffer<long long> rp;
  DeviceBuffer<index_t> col;
  DeviceValues val;
  double upload_seconds = 0, convert_seconds = 0;

  DeviceCsr5(const CsrView& a, int sigma, const ConvertOptions& opt, Precision p, const DeviceCsr* shared = nullptr);
  // The kernels' view (MV: the values' type, the precision's); rb: the first row starting at or
  // after the tail, which begins at tb.
  template <class MV>
  DevCsr5<MV> view(index_t rows, index_t rb, long long tb) const {
    return {meta.sigma,
            meta.y_bits,
            meta.seg_bits,
            meta.desc_words,
            meta.tiles,
            meta.tile_entries(),
            meta.nnz,
            rows,
            rb,
            tb,
            tile_ptr.data(),
            desc.data(),
            eo_ptr.data(),
            eo.data(),
            rp.data(),
            col.data(),
            val.data<MV>()};
  }
  // A product's bytes: CSR's with K right-hand sides in the precision (its value and vector sizes),
  // plus the tile pointers and descriptors.
  offset_t product_bytes(const CsrView& a, int k) const {
    return csr_product_bytes(a, k, prec) + static_cast<offset_t>(desc.size()) * 4 +
           static_cast<offset_t>(tile_ptr.size()) * 8;
  }

 private:
  // The upload (without `shared`) and the conversion, values of type MV (csr5_convert.cu).
  template <class MV>
  void convert(const CsrView& a, const DeviceCsr* shared);
};

// The SpMM plan (k > 1) of tile height sigma (csr5_spmm.cu).
std::unique_ptr<Plan> make_csr5_spmm(const CsrView& a, const PlanOptions& opt, const SharedDeviceCsr& dev, int sigma);

// The single-pass kernel for a load batch and tile height (csr5_single.cu), for the values' type MV
// and the vectors' VV (instantiated for the three precisions there).
struct Parts;
template <class MV, class VV>
using SingleKernel = void (*)(DevCsr5<MV>, const VV*, VV*, Parts, Epilogue<VV>);
template <class MV, class VV>
SingleKernel<MV, VV> single_kernel(int batch, int sigma);

}  // namespace spmv::cuda::csr5
