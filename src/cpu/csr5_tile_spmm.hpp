#pragma once
// One CSR5 tile's SpMM product on the CPU (Y = A*X, K right-hand sides): csr5_tile.hpp's lane walk
// (each tile column on its own, segment by segment from its flag bits) with K-wide sums, so the
// vector loop runs across K (contiguous in row-major X and Y) instead of across the tile's columns.
#include <spmv/formats/csr5.hpp>

#include <algorithm>
#include "cpu/row_kernels.hpp"
#include <bit>
#include <cstdint>

namespace spmv::cpu::csr5 {

// Dense X or Y of VV (float for single precision, else double; const for X): element (i, c) at
// p[i * k + c] (row-major, RM) or p[i + c * n] (column-major).
template <bool RM, class VV>
struct DenseK {
  VV* p;
  offset_t n;
  int k;
  VV& at(offset_t i, int c) const { return RM ? p[i * k + c] : p[i + static_cast<offset_t>(c) * n]; }
};

// s (K values) = the sum of entries a..b-1 of one tile column times their rows of X (entry i at
// v[i * W], its column index at ci[i * W]; W = 1: a run of CSR entries).
template <int W, bool RM, class V, class XV, class VV>
inline void column_run(const V* v, const index_t* ci, int a, int b, const DenseK<RM, XV>& x, VV* s) {
  std::fill(s, s + x.k, VV{0});
  for (int i = a; i < b; ++i) {
    const VV a_i = static_cast<VV>(v[static_cast<offset_t>(i) * W]);
    const index_t col = ci[static_cast<offset_t>(i) * W];
    if constexpr (RM) {
      const VV* xr = x.p + static_cast<offset_t>(col) * x.k;
#pragma omp simd
      for (int c = 0; c < x.k; ++c) s[c] += a_i * xr[c];
    } else {
      for (int c = 0; c < x.k; ++c) s[c] += a_i * x.at(col, c);
    }
  }
}

template <bool RM, class VV>
inline void put_row(const DenseK<RM, VV>& y, index_t r, const VV* s, const Scale<VV>& sc) {
  for (int c = 0; c < y.k; ++c) sc.put(y.at(r, c), s[c]);
}
// Rows [from, to) put as empty (y = beta * y, zero where beta = 0).
template <bool RM, class VV>
inline void zero_rows(const DenseK<RM, VV>& y, index_t from, index_t to, const Scale<VV>& sc) {
  for (index_t r = from; r < to; ++r)
    for (int c = 0; c < y.k; ++c) sc.prescale(y.at(r, c));
}

// Stores segment k >= 1 of tile t (K sums), zeroing the empty rows just before it.
template <bool RM, class F, class VV>
inline void store_segment_k(const F& f, offset_t t, index_t row0, unsigned k, const VV* s, const DenseK<RM, VV>& y,
                            const Scale<VV>& sc) {
  if (!f.hinted(t)) return put_row(y, row0 + static_cast<index_t>(k), s, sc);
  const index_t* eo = f.empty_offset.data() + f.empty_offset_ptr[t];
  zero_rows(y, row0 + eo[k - 1] + 1, row0 + eo[k], sc);
  put_row(y, row0 + eo[k], s, sc);
}

// Tile t: stores every segment but segment 0, whose K sums go to `first`. scratch: (2W + 1) * K
// values (each column's leading part "red" and trailing part "blue", and one run).
template <int W, bool RM, class F, class VV>
inline void tile_lanes_k(const F& f, offset_t t, const DenseK<RM, const VV>& x, const DenseK<RM, VV>& y, VV* scratch,
                         VV* first, const Scale<VV>& sc) {
  const int sigma = f.sigma, k = x.k;
  const offset_t base = t * f.tile_entries();
  const index_t row0 = F::row_of(f.tile_ptr[t]);
  const auto* v = f.val.data() + base;
  const index_t* ci = f.col.data() + base;
  VV* red = scratch;
  VV* blue = red + W * k;
  VV* run = blue + W * k;
  unsigned open[W], off[W];
  bool seen[W];
  std::fill(first, first + k, VV{0});
  for (int c = 0; c < W; ++c) {
    const std::uint64_t d = f.descriptor(t, c);
    std::uint64_t fl = f.bit_flag(d) | (c == 0 ? 1u : 0u);
    off[c] = f.seg_offset(d);
    seen[c] = fl != 0;
    const int pos0 = fl ? std::countr_zero(fl) : sigma;
    column_run<W>(v + c, ci + c, 0, pos0, x, red + c * k);
    if (!fl) continue;
    int pos = pos0;
    unsigned seg = f.y_offset(d);  // the segment opened at the first flag
    fl &= fl - 1;
    for (; fl; fl &= fl - 1) {
      const int next = std::countr_zero(fl);
      column_run<W>(v + c, ci + c, pos, next, x, run);
      if (seg == 0)
        std::copy(run, run + k, first);
      else
        store_segment_k(f, t, row0, seg, run, y, sc);
      ++seg;
      pos = next;
    }
    column_run<W>(v + c, ci + c, pos, sigma, x, blue + c * k);
    open[c] = seg;
  }
  // A column's last segment goes on through the columns right of it without a flag and ends in the
  // leading part of the next column with one.
  for (int c = 0; c < W; ++c) {
    if (!seen[c]) continue;
    std::copy(blue + c * k, blue + (c + 1) * k, run);
    const int last = std::min<int>(c + 1 + static_cast<int>(off[c]), W - 1);
    for (int j = c + 1; j <= last; ++j)
      for (int q = 0; q < k; ++q) run[q] += red[j * k + q];
    if (open[c] == 0)
      std::copy(run, run + k, first);
    else
      store_segment_k(f, t, row0, open[c], run, y, sc);
  }
}

}  // namespace spmv::cpu::csr5
