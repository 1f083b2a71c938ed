#pragma once
// SpMM (k > 1): one templated row kernel for every row view (rows_spmm), vectorised across blocks
// of the k columns; column-major through row-major copies (rows_spmm_transposed); rows_product
// sends k = 1 to the SpMV loop.
#include <spmv/plan.hpp>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <type_traits>

#include "cpu/row_views.hpp"
#include "cpu/tuning.hpp"

namespace spmv::cpu {

// ---- SpMM: one templated kernel for every format, vectorised across the k columns ----
//
// Layout of the dense multivectors: X(j, c) at x[j*ldx + c] (row-major) or x[c*ldx + j].
// A row's product is done for a block of KB columns at a time, the KB sums held in registers and
// Y's block written once per row (never read):
//  - row-major: per nonzero, acc[0..KB) += a * X(j, 0..KB), one contiguous row of X, the simd
//    lanes across the columns. Blocks of kRowMajorBlock = 32 columns (four AVX-512 or eight AVX2
//    registers), then the remainder as 16 + 8 + 4 + 2 + 1 blocks, all inside the row loop, so the
//    row's indices and values come from memory once (the later blocks read them from L1).
//  - column-major: per nonzero, the KB columns' values X(j, c) are scalar loads from KB separate
//    columns; blocks of kColMajorBlock = 8 (more columns at a time are more streams of cache
//    lines than the caches keep), so A is read once per 8 columns rather than once per column.
// Narrow blocks would be one dependent chain of adds per column (the add's latency a nonzero):
// U independent sets of accumulators take alternate nonzeros and are summed at the row's end.
inline constexpr int kRowMajorBlock = 32;
inline constexpr int kColMajorBlock = 8;

// SIMD packs for the row-major blocks: GCC/Clang vector types of the target's widest vector
// (AVX-512: 64 bytes, AVX: 32, else 16: 8, 4 or 2 doubles, twice as many floats), narrower for
// narrow blocks, a plain scalar for one column. Explicit vectors keep the accumulators in
// registers: with plain arrays and `omp simd`, GCC 12 vectorised across nonzeros instead (gathers)
// and kept the sums on the stack.
#if defined(__AVX512F__)
inline constexpr int kVecBytes = 64;
#elif defined(__AVX__)
inline constexpr int kVecBytes = 32;
#else
inline constexpr int kVecBytes = 16;
#endif
template <class T, int W>
struct PackOf {
  typedef T type __attribute__((vector_size(W * sizeof(T))));
};
template <class T>
struct PackOf<T, 1> {
  using type = T;
};
template <class T, int W>
using Pack = typename PackOf<T, W>::type;
template <class T, int KB>
inline constexpr int kPackWidth = std::min<int>(KB, kVecBytes / static_cast<int>(sizeof(T)));
template <int W, class T>
inline Pack<T, W> load_pack(const T* p) {
  Pack<T, W> v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
template <int W, class T>
inline void store_pack(T* p, const Pack<T, W>& v) {
  std::memcpy(p, &v, sizeof v);
}

// Independent accumulator sets for a block of KB columns (about 32 row-major values in flight,
// 16 column-major scalars; at least 1 and at most 4 sets).
template <int KB, bool RowMajor>
inline constexpr int kAccSets = std::clamp((RowMajor ? 32 : 16) / KB, 1, 4);

// fma(u, p) for every entry p < len: runs of U consecutive entries to accumulator sets 0..U-1 (U
// independent chains of adds), the remainder to set 0.
template <int U, class F>
inline void over_entries(offset_t len, F&& fma) {
  offset_t p = 0;
  if constexpr (U > 1)
    for (; p + U <= len; p += U)
#pragma GCC unroll 4
      for (int u = 0; u < U; ++u) fma(u, p + u);
  for (; p < len; ++p) fma(0, p);
}

// out[0..KB) += the row's entries times X(col, 0..KB) (x already offset to the block's first column).
template <int KB, bool RowMajor, class Ref, class VV>
inline void accumulate_row(const Ref& row, const VV* __restrict x, std::size_t ldx, VV* __restrict out) {
  constexpr int U = kAccSets<KB, RowMajor>;
  if constexpr (RowMajor) {
    constexpr int W = kPackWidth<VV, KB>, NV = KB / W;
    Pack<VV, W> acc[U][NV];
#pragma GCC unroll 4
    for (int u = 0; u < U; ++u)
#pragma GCC unroll 32
      for (int i = 0; i < NV; ++i) acc[u][i] = Pack<VV, W>{};
    over_entries<U>(row.len, [&](int u, offset_t p) {
      const VV v = static_cast<VV>(entry_val(row, p));
      const VV* xr = x + entry_col(row, p) * ldx;
#pragma GCC unroll 32
      for (int i = 0; i < NV; ++i) acc[u][i] += v * load_pack<W>(xr + i * W);
    });
#pragma GCC unroll 32
    for (int i = 0; i < NV; ++i) {
#pragma GCC unroll 4
      for (int u = 1; u < U; ++u) acc[0][i] += acc[u][i];
      store_pack<W>(out + i * W, load_pack<W>(out + i * W) + acc[0][i]);
    }
  } else {
    VV acc[U][KB] = {};
    over_entries<U>(row.len, [&](int u, offset_t p) {
      const VV v = static_cast<VV>(entry_val(row, p));
      const std::size_t j = entry_col(row, p);
#pragma GCC unroll 32
      for (int c = 0; c < KB; ++c) acc[u][c] += v * x[c * ldx + j];
    });
#pragma GCC unroll 32
    for (int c = 0; c < KB; ++c) {
#pragma GCC unroll 4
      for (int u = 1; u < U; ++u) acc[0][c] += acc[u][c];
      out[c] += acc[0][c];
    }
  }
}

// Y(r, 0..KB) = the row times X(:, 0..KB) (through sc), x and y already offset to the block's first
// column.
template <int KB, bool RowMajor, class Ref, class VV>
inline void row_block(const Ref& row, index_t r, const VV* x, std::size_t ldx, VV* y, std::size_t ldy,
                      const Scale<VV>& sc) {
  VV acc[KB] = {};
  accumulate_row<KB, RowMajor>(row, x, ldx, acc);
  if constexpr (RowMajor) {
    VV* yr = y + static_cast<std::size_t>(r) * ldy;
    if (sc.beta == VV(0)) {
#pragma omp simd
      for (int c = 0; c < KB; ++c) yr[c] = sc.alpha * acc[c];
    } else {
#pragma omp simd
      for (int c = 0; c < KB; ++c) yr[c] = sc.alpha * acc[c] + sc.beta * yr[c];
    }
  } else {
    for (int c = 0; c < KB; ++c) sc.put(y[c * ldy + static_cast<std::size_t>(r)], acc[c]);
  }
}

// Calls f.template operator()<KB>(c0) for the column blocks of [0, k): full blocks of B, then the
// remainder in blocks of B/2, B/4, .., 1 (B a power of two), so every width is a template.
template <int B, class F>
inline void for_column_blocks(int k, F&& f) {
  int c0 = 0;
  for (; c0 + B <= k; c0 += B) f.template operator()<B>(c0);
  [&]<int... I>(std::integer_sequence<int, I...>) {
    ((((k - c0) & (B >> (I + 1))) ? (f.template operator()<(B >> (I + 1))>(c0), c0 += B >> (I + 1)) : 0), ...);
  }
  (std::make_integer_sequence<int, std::bit_width(static_cast<unsigned>(B)) - 1>{});
}

// Row-major: every row does all k columns (its entries read from memory once). Column-major:
// every block of columns runs over all rows (the block's columns of X stay in cache).
template <bool RowMajor, class Rows, class VV>
void rows_spmm(const Rows& rows, index_t r0, index_t r1, const VV* x, VV* y, index_t n_rows, index_t n_cols, int k,
               const Scale<VV>& sc) {
  if constexpr (RowMajor) {
    const std::size_t ld = static_cast<std::size_t>(k);
    for (index_t r = r0; r < r1; ++r) {
      const auto row = rows(r);
      for_column_blocks<kRowMajorBlock>(
          k, [&]<int KB>(int c0) { row_block<KB, true>(row, r, x + c0, ld, y + c0, ld, sc); });
    }
  } else {
    for_column_blocks<kColMajorBlock>(k, [&]<int KB>(int c0) {
      const VV* xb = x + static_cast<std::size_t>(c0) * n_cols;
      VV* yb = y + static_cast<std::size_t>(c0) * n_rows;
      for (index_t r = r0; r < r1; ++r) row_block<KB, false>(rows(r), r, xb, n_cols, yb, n_rows, sc);
    });
  }
}

// ---- Column-major SpMM through row-major copies ("via=transpose") ----
//
// Column-major X gathers KB scattered scalars per nonzero and A is read once per kColMajorBlock
// columns; where the columns of A scatter that is far slower than the row-major kernel. Instead
// X is copied row-major (xt, cols x k) at the start of the product, and each thread computes
// blocks of rows with the row-major kernel into its own row-major tile (tile_rows x k, in L1/L2),
// written to Y's columns while still in cache: Y never needs a full row-major copy.

// dst(j, c) = X(j, c) for rows [j0, j1): X column-major (ld n), dst row-major (ld k). Blocks of
// 8 columns x 256 rows, so that each pass reads 8 streams and writes whole 64-byte lines of dst.
template <class T>
inline void col_to_row_major(const T* __restrict x, std::size_t n, int k, index_t j0, index_t j1, T* __restrict dst) {
  const std::size_t ld = static_cast<std::size_t>(k);
  constexpr index_t J = 256;
  for (index_t jb = j0; jb < j1; jb += J) {
    const index_t je = std::min<index_t>(jb + J, j1);
    int c0 = 0;
    for (; c0 + 8 <= k; c0 += 8)
      for (index_t j = jb; j < je; ++j) {
        T* d = dst + static_cast<std::size_t>(j) * ld + c0;
#pragma GCC unroll 8
        for (int c = 0; c < 8; ++c) d[c] = x[static_cast<std::size_t>(c0 + c) * n + static_cast<std::size_t>(j)];
      }
    for (index_t j = jb; j < je; ++j)
      for (int c = c0; c < k; ++c)
        dst[static_cast<std::size_t>(j) * ld + c] = x[static_cast<std::size_t>(c) * n + static_cast<std::size_t>(j)];
  }
}

// Rows of a tile per block: about tuning::spmm_tile_doubles values, at least 8 rows (64 bytes of
// every Y column per write).
inline index_t spmm_tile_rows(int k) {
  return std::max<index_t>(8, static_cast<index_t>(tuning::spmm_tile_doubles / std::max(k, 1)));
}

// Column-major Y rows [r0, r1) = A rows [r0, r1) * X, from xt (X row-major): blocks of tile_rows
// rows through `tile` (tile_rows * k doubles, the calling thread's own).
template <class Rows, class VV>
void rows_spmm_transposed(const Rows& rows, index_t r0, index_t r1, const VV* xt, VV* y, index_t n_rows, int k,
                          VV* __restrict tile, index_t tile_rows, const Scale<VV>& sc) {
  const std::size_t ld = static_cast<std::size_t>(k), ldy = static_cast<std::size_t>(n_rows);
  for (index_t b = r0; b < r1; b += tile_rows) {
    const index_t e = std::min<index_t>(b + tile_rows, r1);
    for (index_t r = b; r < e; ++r) {
      const auto row = rows(r);
      for_column_blocks<kRowMajorBlock>(
          k, [&]<int KB>(int c0) { row_block<KB, true>(row, r - b, xt + c0, ld, tile + c0, ld, Scale<VV>{}); });
    }
    const index_t nr = e - b;
    for (int c = 0; c < k; ++c) {
      VV* __restrict yc = y + static_cast<std::size_t>(c) * ldy + static_cast<std::size_t>(b);
      const VV* t = tile + c;
      for (index_t i = 0; i < nr; ++i) sc.put(yc[i], t[static_cast<std::size_t>(i) * ld]);
    }
  }
}

// y rows [r0, r1) = A rows [r0, r1) * x for k right-hand sides. Simd picks the SpMV inner loop.
template <bool Simd = true, class Rows, class VV>
void rows_product(const Rows& rows, index_t r0, index_t r1, const VV* x, VV* y, index_t n_rows, index_t n_cols, int k,
                  Layout layout, const Scale<VV>& sc) {
  if (k == 1) {
    const Rows local = rows;  // by value: a store to y cannot alias the view's pointers
    const Scale<VV> s = sc;
    if constexpr (Simd)
      for (index_t r = r0; r < r1; ++r) s.put(y[r], row_dot(local(r), x));
    else
      for (index_t r = r0; r < r1; ++r) s.put(y[r], row_dot_scalar(local(r), x));
  } else if (layout == Layout::RowMajor) {
    rows_spmm<true>(rows, r0, r1, x, y, n_rows, n_cols, k, sc);
  } else {
    rows_spmm<false>(rows, r0, r1, x, y, n_rows, n_cols, k, sc);
  }
}

}  // namespace spmv::cpu
