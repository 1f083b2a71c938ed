#pragma once
// Inner loops shared by the serial and OpenMP CPU kernels. Every row-wise format (CSR, row-major
// ELL, ELL with row lengths) is described by a small "row view" functor returning the row's
// column indices, values and length; HLL has its own hack loop. A loop processes a row range
// [r0, r1) for all k right-hand sides, so the serial plans call it once and the OpenMP plans once
// per partition or chunk.
//
// SpMM (k > 1): one templated row kernel for every format (rows_spmm; HLL and CSR5 as rows with
// strided entries), vectorised across blocks of the k columns; k = 1 goes straight to the SpMV loop.
//
// Precision: a row view's value type V is the matrix's (double, or float for single and mixed
// plans); x, y and the sums have the vector type VV (float for single, else double), deduced from
// the x and y pointers. Each value is widened to VV before its product.
#include <spmv/formats/ell.hpp>
#include <spmv/formats/hll.hpp>
#include <spmv/plan.hpp>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cstring>
#include <cstddef>
#include <fmt/format.h>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <spmv/timing.hpp>

#include "cpu/tuning.hpp"

namespace spmv::cpu {

// The store of every CPU kernel: y = alpha * s + beta * y (VV: the vectors' type). put() stores a
// row's sum; beta == 0 does not read y, so NaN there is overwritten. add() adds a further part of
// a row already put (CSR5's rows across tiles); prescale() is put(0), for rows that parts are then
// added to.
template <class VV>
struct Scale {
  VV alpha = 1, beta = 0;
  void put(VV& y, VV s) const { y = beta == VV(0) ? alpha * s : alpha * s + beta * y; }
  void add(VV& y, VV s) const { y += alpha * s; }
  void prescale(VV& y) const { y = beta == VV(0) ? VV(0) : beta * y; }
};

template <class V>
struct RowRef {
  const index_t* col;
  const V* val;
  offset_t len;
};

// Row views. RP is the row-pointer element type (a 32-bit copy is used when nnz < 2^31).
template <class RP, class V>
struct CsrRows {
  using value_type = V;
  const RP* rp;
  const index_t* col;
  const V* val;
  RowRef<V> operator()(index_t r) const {
    const offset_t b = rp[r];
    return {col + b, val + b, static_cast<offset_t>(rp[r + 1]) - b};
  }
};

// Row-major ELL, full width: padded slots (value 0, a column already loaded) are multiplied.
template <class V>
struct EllRows {
  using value_type = V;
  const index_t* col;
  const V* val;
  index_t width;
  RowRef<V> operator()(index_t r) const {
    const offset_t b = static_cast<offset_t>(r) * width;
    return {col + b, val + b, width};
  }
};

// Row-major ELL reading each row's true length: padding is skipped.
template <class V>
struct EllRowLenRows {
  using value_type = V;
  const index_t* col;
  const V* val;
  const index_t* len;
  index_t width;
  RowRef<V> operator()(index_t r) const {
    const offset_t b = static_cast<offset_t>(r) * width;
    return {col + b, val + b, len[r]};
  }
};

// Dot product of one sparse row with a unit-stride x. The simd reduction lets the compiler gather
// x and keep several partial sums; the order differs from the serial loop only within rounding.
template <class V, class VV>
inline VV row_dot(const RowRef<V>& row, const VV* x) {
  const index_t* c = row.col;
  const V* v = row.val;
  VV s = 0;
#pragma omp simd reduction(+ : s)
  for (offset_t p = 0; p < row.len; ++p) s += static_cast<VV>(v[p]) * x[c[p]];
  return s;
}

// The same without simd: one sequential sum, no gathers. Which of the two is faster depends on the
// CPU (gather throughput) and the row lengths, so the OpenMP CSR plan times both.
template <class V, class VV>
inline VV row_dot_scalar(const RowRef<V>& row, const VV* x) {
  VV s = 0;
  for (offset_t p = 0; p < row.len; ++p) s += static_cast<VV>(row.val[p]) * x[row.col[p]];
  return s;
}

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

// A row with its entries `stride` apart (HLL's column-major hacks, CSR5's transposed tiles).
template <class V>
struct StridedRowRef {
  const index_t* col;
  const V* val;
  offset_t len;
  offset_t stride;
};
template <class V>
inline std::size_t entry_col(const RowRef<V>& r, offset_t p) { return static_cast<std::size_t>(r.col[p]); }
template <class V>
inline V entry_val(const RowRef<V>& r, offset_t p) { return r.val[p]; }
template <class V>
inline std::size_t entry_col(const StridedRowRef<V>& r, offset_t p) { return static_cast<std::size_t>(r.col[p * r.stride]); }
template <class V>
inline V entry_val(const StridedRowRef<V>& r, offset_t p) { return r.val[p * r.stride]; }

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
  }(std::make_integer_sequence<int, std::bit_width(static_cast<unsigned>(B)) - 1>{});
}

// Row-major: every row does all k columns (its entries read from memory once). Column-major:
// every block of columns runs over all rows (the block's columns of X stay in cache).
template <bool RowMajor, class Rows, class VV>
void rows_spmm(const Rows& rows, index_t r0, index_t r1, const VV* x, VV* y, index_t n_rows,
               index_t n_cols, int k, const Scale<VV>& sc) {
  if constexpr (RowMajor) {
    const std::size_t ld = static_cast<std::size_t>(k);
    for (index_t r = r0; r < r1; ++r) {
      const auto row = rows(r);
      for_column_blocks<kRowMajorBlock>(k, [&]<int KB>(int c0) { row_block<KB, true>(row, r, x + c0, ld, y + c0, ld, sc); });
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
void rows_spmm_transposed(const Rows& rows, index_t r0, index_t r1, const VV* xt, VV* y, index_t n_rows,
                          int k, VV* __restrict tile, index_t tile_rows, const Scale<VV>& sc) {
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
void rows_product(const Rows& rows, index_t r0, index_t r1, const VV* x, VV* y,
                  index_t n_rows, index_t n_cols, int k, Layout layout, const Scale<VV>& sc) {
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
inline void hll_column_scalar(VV* acc, const V* v, const index_t* c, const VV* x, index_t n) {
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

// SpMV over hacks [h0, h1): acc (hack doubles) holds the hack's rows while its slots are added.
template <bool Simd = true, class V, class VV>
void hll_spmv(const HllView<V>& m, index_t h0, index_t h1, const VV* x, VV* y, VV* acc, const Scale<VV>& sc) {
  for (index_t h = h0; h < h1; ++h) {
    const index_t hr = m.hack_rows(h), w = m.hack_width[h];
    const std::size_t first = static_cast<std::size_t>(h) * m.hack;
    std::fill(acc, acc + hr, VV{0});
    for (index_t j = 0; j < w; ++j) {
      const offset_t s = m.hack_offset[h] + static_cast<offset_t>(j) * hr;
      const index_t* c = m.col + s;
      const V* v = m.val + s;
      if constexpr (Simd) {
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
// Simd picks the SpMV inner loop (gathers across the hack's rows, or scalar).
template <bool Simd = true, class V, class VV>
void hll_product(const HllView<V>& m, index_t h0, index_t h1, const VV* x, VV* y,
                 index_t n_cols, int k, Layout layout, VV* scratch, const Scale<VV>& sc) {
  if (k == 1) {
    hll_spmv<Simd>(m, h0, h1, x, y, scratch, sc);
    return;
  }
  const index_t r0 = hll_first_row(m, h0), r1 = hll_first_row(m, h1);
  if (layout == Layout::RowMajor)
    rows_spmm<true>(HllRows<V>{m}, r0, r1, x, y, m.rows, n_cols, k, sc);
  else
    rows_spmm<false>(HllRows<V>{m}, r0, r1, x, y, m.rows, n_cols, k, sc);
}

// Times n equivalent ways of doing the product when a plan is made: apply(c) switches the plan to
// candidate c, run() does one product. Candidates are timed round-robin (tuning::trial_timing:
// rounds of ~0.1 ms or at least one run each, after a warm-up), so drifting clock speed or
// background load hits all alike; returns the fastest single run of each. Tiny products get many
// runs, so microsecond noise does not decide. After the first round, candidates far slower than
// the fastest (drop_ratio) are left out.
template <class Apply, class Run>
std::vector<double> trial_candidates(int n, Apply apply, Run run) {
  const auto& timing = tuning::trial_timing;
  std::vector<double> best(static_cast<std::size_t>(n), 1e300);
  for (int round = 0; round < timing.rounds; ++round)
    for (int c = 0; c < n; ++c) {
      if (round > 0 && best[c] > timing.drop_ratio * *std::min_element(best.begin(), best.end())) continue;
      apply(c);
      if (round == 0) run();  // warm-up: first touch of y, caches, thread team of this size
      double spent = 0;
      for (int rep = 0; rep < timing.max_runs && (rep < 1 || spent < timing.min_seconds); ++rep) {
        const auto t0 = std::chrono::steady_clock::now();
        run();
        const double sec = seconds_since(t0);
        best[c] = std::min(best[c], sec);
        spent += sec;
      }
    }
  return best;
}

// PlanOptions::variant of the CPU kernels: tokens joined by ':' — a schedule ("auto", "dynamic",
// "balanced"; CSR only) and/or an SpMV inner loop ("simd", "scalar"). What is not given is chosen
// per matrix by a timed trial when the plan is made.
//
// Column-major SpMM (k > 1) also has "native" (rows_spmm<false>) and "transpose" (X copied row-major,
// the row-major kernel, Y written back from per-thread tiles: rows_spmm_transposed); row-major and
// k = 1 have only the one path, so there these tokens change nothing.
struct Variant {
  std::string schedule = "auto";
  int inner = -1;  // -1: trial, 0: scalar, 1: simd
  int via = -1;    // column-major SpMM: -1: trial, 0: native, 1: transpose
};
inline Variant parse_variant(const std::string& text, bool has_schedule, const std::string& kernel) {
  Variant v;
  std::size_t b = 0;
  while (b <= text.size()) {
    const std::size_t e = std::min(text.find(':', b), text.size());
    const std::string t = text.substr(b, e - b);
    if (t == "simd" || t == "scalar")
      v.inner = t == "simd";
    else if (t == "native" || t == "transpose")
      v.via = t == "transpose";
    else if (t == "auto" || (has_schedule && (t == "dynamic" || t == "balanced")))
      v.schedule = t;
    else
      throw Unsupported(fmt::format("kernel '{}': unknown variant '{}' (use {}simd or scalar, native or transpose, joined by ':')", kernel,
                                    text, has_schedule ? "auto, dynamic, balanced, " : "auto, "));
    b = e + 1;
  }
  return v;
}

// Chooses the SpMV inner loop: forced by the variant, else the faster of the two in a trial.
// `set(bool simd)` switches the plan, `run()` does one product. Returns the choice.
template <class Set, class Run>
bool choose_inner(int forced, Set set, Run run) {
  if (forced >= 0) {
    set(forced == 1);
    return forced == 1;
  }
  const auto t = trial_candidates(2, [&](int c) { set(c == 1); }, run);  // 0: scalar, 1: simd
  set(t[1] <= t[0]);
  return t[1] <= t[0];
}

// Chooses the column-major SpMM path: forced by the variant, else the faster in a trial.
// `set(bool transpose)` switches the plan, `run()` does one product. Returns the choice and fills
// `trial` with the timings (empty when forced).
template <class Set, class Run>
bool choose_via(int forced, Set set, Run run, std::string& trial) {
  if (forced >= 0) {
    set(forced == 1);
    return forced == 1;
  }
  const auto t = trial_candidates(2, [&](int c) { set(c == 1); }, run);  // 0: native, 1: transpose
  trial = fmt::format(" (trial us: native {:.1f}, transpose {:.1f})", t[0] * 1e6, t[1] * 1e6);
  set(t[1] < t[0]);
  return t[1] < t[0];
}

// Views and byte counts of the formats' products (defined in omp_ell.cpp / omp_hll.cpp).
template <class V>
HllView<V> hll_view(const BasicHll<V>& h) {
  return {h.hack_offset.data(), h.hack_width.data(), h.col.data(), h.val.data(), h.rows, h.hack};
}
template <class V>
offset_t ell_product_bytes(const BasicEll<V>& e, bool skip_padding, int k, Precision p);
template <class V>
offset_t hll_product_bytes(const BasicHll<V>& h, int k, Precision p);

// The ELL and HLL plans (omp_ell.cpp / omp_hll.cpp). At one thread they run no parallel region,
// so the serial kernels are these plans with opt.threads = 1.
std::unique_ptr<Plan> make_ell_plan(const CsrView& a, const PlanOptions& opt, bool skip_padding);
std::unique_ptr<Plan> make_hll_plan(const CsrView& a, const PlanOptions& opt);

// ---- Partitioning ----

// Splits [0, n) into `parts` ranges of about equal cost, where cost_prefix(i) is the
// (non-decreasing) cost of items [0, i). bounds has parts+1 entries, bounds[0] = 0, bounds[parts] = n.
// Each bound is found by binary search, so this is O(parts * log n).
template <class Prefix>
std::vector<index_t> balanced_bounds(index_t n, int parts, Prefix cost_prefix) {
  std::vector<index_t> b(static_cast<std::size_t>(parts) + 1, 0);
  const double total = static_cast<double>(cost_prefix(n));
  for (int t = 1; t < parts; ++t) {
    const double target = total * t / parts;
    index_t lo = b[t - 1], hi = n;  // first i with cost_prefix(i) >= target
    while (lo < hi) {
      const index_t mid = lo + (hi - lo) / 2;
      if (static_cast<double>(cost_prefix(mid)) < target)
        lo = mid + 1;
      else
        hi = mid;
    }
    b[t] = lo;
  }
  b[parts] = n;
  return b;
}

}  // namespace spmv::cpu
