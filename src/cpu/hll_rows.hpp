#pragma once
// HLL's products: hacks stored column-major, so the SpMV inner loop runs across the hack's rows;
// SpMM through rows_spmm on a hack's rows as strided rows.
#include <spmv/formats/hll.hpp>
#include <spmv/plan.hpp>

#include <vector>

#include "cpu/spmm_rows.hpp"

namespace spmv::cpu {

// ---- HLL: hacks stored column-major, so the inner loop runs across the hack's rows. ----

template <class V>
struct HllView {
  using value_type = V;
  const offset_t* hack_offset;
  const index_t* hack_width;
  const index_t* col;
  const V* val;
  index_t rows;
  int hack;
  index_t hack_rows(index_t h) const {
    const offset_t first = static_cast<offset_t>(h) * hack;
    return static_cast<index_t>(std::min<offset_t>(hack, rows - first));
  }
};

// acc[i] += v[i] * x[c[i]] without simd gathers (the compiler would otherwise vectorise it).
template <class V, class VV>
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((optimize("no-tree-vectorize")))
#endif
inline void
hll_column_scalar(VV* acc, const V* v, const index_t* c, const VV* x, index_t n) {
#if defined(__clang__)
#pragma clang loop vectorize(disable)
#endif
  for (index_t i = 0; i < n; ++i) acc[i] += static_cast<VV>(v[i]) * x[c[i]];
}

// Row r of an HLL matrix as a strided row: its hack's slots j = 0..width, hack_rows apart. SpMM
// runs row by row through rows_spmm (register accumulators, Y written once per row) and multiplies
// the padding (value 0) as ELL does; the hack's slots are in L1/L2 while its rows are done.
template <class V>
struct HllRows {
  using value_type = V;
  HllView<V> m;
  StridedRowRef<V> operator()(index_t r) const {
    const index_t h = r / m.hack, lr = r - h * m.hack, hr = m.hack_rows(h);
    return {m.col + m.hack_offset[h] + lr, m.val + m.hack_offset[h] + lr, m.hack_width[h], hr};
  }
};

// acc[i] += v[i] * x[c[i]] where v[i] is not zero: padding (and stored zeros) skipped by a test, as
// the course report 001's HLL loop does.
template <class V, class VV>
inline void hll_column_skipping_zeros(VV* acc, const V* v, const index_t* c, const VV* x, index_t n) {
  for (index_t i = 0; i < n; ++i)
    if (v[i] != V{0}) acc[i] += static_cast<VV>(v[i]) * x[c[i]];
}

// SpMV over hacks [h0, h1): acc (hack doubles) holds the hack's rows while its slots are added.
// skip_zeros: the scalar loop that tests each value (Simd ignored).
template <bool Simd = true, class V, class VV>
void hll_spmv(const HllView<V>& m, index_t h0, index_t h1, const VV* x, VV* y, VV* acc, const Scale<VV>& sc,
              bool skip_zeros = false) {
  for (index_t h = h0; h < h1; ++h) {
    const index_t hr = m.hack_rows(h), w = m.hack_width[h];
    const std::size_t first = static_cast<std::size_t>(h) * m.hack;
    std::fill(acc, acc + hr, VV{0});
    for (index_t j = 0; j < w; ++j) {
      const offset_t s = m.hack_offset[h] + static_cast<offset_t>(j) * hr;
      const index_t* c = m.col + s;
      const V* v = m.val + s;
      if (skip_zeros) {
        hll_column_skipping_zeros(acc, v, c, x, hr);
      } else if constexpr (Simd) {
#pragma omp simd
        for (index_t lr = 0; lr < hr; ++lr) acc[lr] += static_cast<VV>(v[lr]) * x[c[lr]];
      } else {
        hll_column_scalar(acc, v, c, x, hr);
      }
    }
    for (index_t lr = 0; lr < hr; ++lr) sc.put(y[first + static_cast<std::size_t>(lr)], acc[lr]);
  }
}

// The first row of hack h (rows when h is the end).
template <class V>
inline index_t hll_first_row(const HllView<V>& m, index_t h) {
  return static_cast<index_t>(std::min<offset_t>(static_cast<offset_t>(h) * m.hack, m.rows));
}

// Hacks [h0, h1) for k right-hand sides. `scratch` holds hack doubles (one per thread; SpMV only).
// Simd picks the SpMV inner loop (gathers across the hack's rows, or scalar); skip_zeros the SpMV
// loop that tests each value.
template <bool Simd = true, class V, class VV>
void hll_product(const HllView<V>& m, index_t h0, index_t h1, const VV* x, VV* y, index_t n_cols, int k, Layout layout,
                 VV* scratch, const Scale<VV>& sc, bool skip_zeros = false) {
  if (k == 1) {
    hll_spmv<Simd>(m, h0, h1, x, y, scratch, sc, skip_zeros);
    return;
  }
  const index_t r0 = hll_first_row(m, h0), r1 = hll_first_row(m, h1);
  if (layout == Layout::RowMajor)
    rows_spmm<true>(HllRows<V>{m}, r0, r1, x, y, m.rows, n_cols, k, sc);
  else
    rows_spmm<false>(HllRows<V>{m}, r0, r1, x, y, m.rows, n_cols, k, sc);
}

}  // namespace spmv::cpu
