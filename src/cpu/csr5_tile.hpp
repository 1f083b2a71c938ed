#pragma once
// One CSR5 tile's product on the CPU in plain C++, for any omega (the compiler vectorises the lane
// loops) and for builds without AVX2; the hand-written omega = 4 tile is in csr5_tile_avx2.hpp.
//
// One tile (omega x sigma, default 4 x 32 on AVX2 for short rows, the paper's 4 x 16 otherwise;
// omega = 4 is one AVX2 register of doubles per step):
//  1. A branch-free segmented scan down the lanes: per step, x is gathered for the omega lanes,
//     the lanes whose flag bit opens a row there are reset (a blend by the step's flag bits, moved
//     to the sign bit), and the product is added; the running sums of every step go to a small
//     per-thread buffer T (row 0 zero). No branch per step or per segment: those cost more than
//     the products.
//  2. The segments from T: the k-th flag of the tile in CSR order closes segment k-1, whose part in
//     that lane is T just before the flag; the sum at the bottom of each lane goes to the segment
//     open there (y_offset of the next lane - 1). This stands in for the paper's seg_offset walk
//     and is a scan reset at row starts, never a difference of prefix sums (which loses a short
//     row's precision next to big neighbours). For 4 x 16 the 64 flags are one word in CSR order
//     (4 x 32: two words), the lane bottoms are carried inside T to the closing that needs them
//     (finish4), and the segments go straight into y; other shapes go through a segment buffer.
#include <spmv/formats/csr5.hpp>

#include <algorithm>
#include "cpu/row_kernels.hpp"
#include <bit>
#include <cstdint>

namespace spmv::cpu::csr5 {

// F: the format (BasicCsr5<V>, V its values' type); VV: x, y and the sums (float for single
// precision, else double). Each value is widened to VV before its product. Stores go through sc
// (y = alpha * sum + beta * y): a row's first part is put, later parts added (omp_csr5.cpp).

// Stores the complete sum of segment k >= 1 of tile t, zeroing the empty rows just before it.
template <class F, class VV>
inline void store_segment(const F& f, offset_t t, index_t row0, unsigned k, VV s, VV* y, const Scale<VV>& sc) {
  if (!f.hinted(t)) {
    sc.put(y[row0 + k], s);
    return;
  }
  const index_t* eo = f.empty_offset.data() + f.empty_offset_ptr[t];
  const index_t row = row0 + eo[k];
  for (index_t r = row0 + eo[k - 1] + 1; r < row; ++r) sc.prescale(y[r]);
  sc.put(y[row], s);
}

// seg + 1 holds the closed part of segments 0 .. nseg-2; adds the lane bottoms and stores.
template <int W, class F, class VV>
inline VV store_segments(const F& f, offset_t t, index_t row0, int sigma, int nseg, const unsigned* yend_in,
                         const VV* T, VV* seg, VV* y, const Scale<VV>& sc) {
  VV* out = seg + 1;
  out[nseg - 1] = 0;  // the last segment is never closed inside the tile
  const VV* bottom = T + static_cast<std::size_t>(sigma) * W;
  for (int c = 0; c < W - 1; ++c) out[yend_in[c] - 1] += bottom[c];
  out[nseg - 1] += bottom[W - 1];
  VV* yr = y + row0;
  if (!f.hinted(t)) {
    for (int j = 1; j < nseg; ++j) sc.put(yr[j], out[j]);
  } else if (nseg > 1) {
    // Every row between the tile's first and last segment rows is a segment's or an empty one:
    // prescale them all (zero where beta = 0), then add the segments (no per-segment loop over the gaps).
    const index_t* eo = f.empty_offset.data() + f.empty_offset_ptr[t];
    for (index_t r = 1; r <= eo[nseg - 1]; ++r) sc.prescale(yr[r]);
    for (int j = 1; j < nseg; ++j) sc.add(yr[eo[j]], out[j]);
  }
  return out[0];
}

// The segments of one tile from T (running sums reset at row starts) and the flags: stores every
// segment except segment 0, whose sum it returns.
//  - flag (i, c) closes the previous segment; that segment's part in lane c is T[i*W + c] (the
//    running sum before step i; T's zero row 0 when the flag is at the top of the lane). The
//    flags are visited lane by lane, i.e. in CSR order, so the k-th flag closes segment k-1.
//  - the sum at the bottom of lane c (T[sigma*W + c]) belongs to the segment open there,
//    yend[c] - 1 (yend[c] = segments opened in lanes <= c = y_offset of lane c+1): added last.
//    This replaces the paper's seg_offset walk: a segment crossing lanes collects one bottom sum
//    per lane it leaves.
template <int W, class F, class VV>
inline VV finish_tile(const F& f, offset_t t, index_t row0, int sigma, const std::uint64_t* flags,
                      const unsigned* yend_in, const VV* T, VV* seg, VV* y, const Scale<VV>& sc) {
  int k = 0;  // seg[k] = the closing of the k-th flag; seg[0] (before the forced flag) is unused
  for (int c = 0; c < W; ++c)
    for (std::uint64_t fl = flags[c]; fl; fl &= fl - 1) seg[k++] = T[std::countr_zero(fl) * W + c];
  return store_segments<W>(f, t, row0, sigma, k, yend_in, T, seg, y, sc);
}

// One full tile, the omega lanes advancing together (any W, sigma; the compiler vectorises the
// lane loop): a segmented scan per lane, sum = (flag ? 0 : sum) + val * x[col], without branches.
template <int W, class F, class VV>
inline VV tile(const F& f, offset_t t, const VV* x, VV* y, VV* T, VV* seg, const Scale<VV>& sc) {
  const int sigma = f.sigma;
  const offset_t base = t * f.tile_entries();
  const index_t row0 = F::row_of(f.tile_ptr[t]);
  std::uint64_t flags[W];
  unsigned yend[W];
  for (int c = 0; c < W; ++c) {
    const std::uint64_t d = f.descriptor(t, c);
    flags[c] = f.bit_flag(d);
    if (c > 0) yend[c - 1] = f.y_offset(d);
  }
  flags[0] |= 1;  // segment 0 always opens at the tile's first entry
  const auto* v = f.val.data() + base;
  const index_t* ci = f.col.data() + base;
  VV sum[W] = {};
  for (int i = 0; i < sigma; ++i) {
    const auto* vi = v + static_cast<offset_t>(i) * W;
    const index_t* ii = ci + static_cast<offset_t>(i) * W;
    VV* Ti = T + static_cast<std::size_t>(i + 1) * W;
#pragma omp simd
    for (int c = 0; c < W; ++c) {
      const VV s = ((flags[c] >> i) & 1) ? VV{0} : sum[c];
      sum[c] = s + static_cast<VV>(vi[c]) * x[ii[c]];
      Ti[c] = sum[c];
    }
  }
  return finish_tile<W>(f, t, row0, sigma, flags, yend, T, seg, y, sc);
}

// The same result as tile(), one column at a time: the flag bits of a column cut its sigma
// entries (stride W in the transposed storage) into runs summed by tight scalar loops.
template <int W, class F, class VV>
inline VV tile_lanes(const F& f, offset_t t, const VV* x, VV* y, const Scale<VV>& sc) {
  const int sigma = f.sigma;
  const offset_t base = t * f.tile_entries();
  const index_t row0 = F::row_of(f.tile_ptr[t]);
  const auto* v = f.val.data() + base;
  const index_t* ci = f.col.data() + base;
  VV red[W], blue[W];
  unsigned open[W], off[W];
  bool seen[W];
  VV first = 0;
  for (int c = 0; c < W; ++c) {
    const std::uint64_t d = f.descriptor(t, c);
    std::uint64_t fl = f.bit_flag(d) | (c == 0 ? 1u : 0u);
    off[c] = f.seg_offset(d);
    const auto* vc = v + c;
    const index_t* cc = ci + c;
    auto run = [&](int a, int b) {
      VV s = 0;
      for (int i = a; i < b; ++i)
        s += static_cast<VV>(vc[static_cast<offset_t>(i) * W]) * x[cc[static_cast<offset_t>(i) * W]];
      return s;
    };
    if (fl == 0) {
      red[c] = run(0, sigma);
      seen[c] = false;
      continue;
    }
    int pos = std::countr_zero(fl);
    red[c] = run(0, pos);
    unsigned k = f.y_offset(d);  // the segment opened at the first flag
    fl &= fl - 1;
    while (fl) {
      const int next = std::countr_zero(fl);
      const VV s = run(pos, next);
      if (k == 0)
        first = s;
      else
        store_segment(f, t, row0, k, s, y, sc);
      ++k;
      pos = next;
      fl &= fl - 1;
    }
    blue[c] = run(pos, sigma);
    open[c] = k;
    seen[c] = true;
  }
  for (int c = 0; c < W; ++c) {
    if (!seen[c]) continue;
    VV s = blue[c];
    const int last = std::min<int>(c + 1 + static_cast<int>(off[c]), W - 1);
    for (int j = c + 1; j <= last; ++j) s += red[j];
    if (open[c] == 0)
      first = s;
    else
      store_segment(f, t, row0, open[c], s, y, sc);
  }
  return first;
}

}  // namespace spmv::cpu::csr5
