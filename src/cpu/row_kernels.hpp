#pragma once
// Inner loops shared by the serial and OpenMP CPU kernels. Every row-wise format (CSR, row-major
// ELL, ELL with row lengths) is described by a small "row view" functor returning the row's
// column indices, values and length; HLL has its own hack loop. A loop processes a row range
// [r0, r1) for all k right-hand sides, so the serial plans call it once and the OpenMP plans once
// per partition or chunk.
//
// SpMM: the k columns of X are processed in blocks of KB = 16, 8, 4, 2, 1 (templates, so the
// per-row accumulators live in registers); k = 1 goes straight to the SpMV loop.
#include <spmv/formats/ell.hpp>
#include <spmv/formats/hll.hpp>
#include <spmv/plan.hpp>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <fmt/format.h>
#include <string>
#include <vector>

#include <spmv/timing.hpp>

#include "cpu/tuning.hpp"

namespace spmv::cpu {

struct RowRef {
  const index_t* col;
  const double* val;
  offset_t len;
};

// Row views. RP is the row-pointer element type (a 32-bit copy is used when nnz < 2^31).
template <class RP>
struct CsrRows {
  const RP* rp;
  const index_t* col;
  const double* val;
  RowRef operator()(index_t r) const {
    const offset_t b = rp[r];
    return {col + b, val + b, static_cast<offset_t>(rp[r + 1]) - b};
  }
};

// Row-major ELL, full width: padded slots (value 0, a column already loaded) are multiplied.
struct EllRows {
  const index_t* col;
  const double* val;
  index_t width;
  RowRef operator()(index_t r) const {
    const offset_t b = static_cast<offset_t>(r) * width;
    return {col + b, val + b, width};
  }
};

// Row-major ELL reading each row's true length: padding is skipped.
struct EllRowLenRows {
  const index_t* col;
  const double* val;
  const index_t* len;
  index_t width;
  RowRef operator()(index_t r) const {
    const offset_t b = static_cast<offset_t>(r) * width;
    return {col + b, val + b, len[r]};
  }
};

// Dot product of one sparse row with a unit-stride x. The simd reduction lets the compiler gather
// x and keep several partial sums; the order differs from the serial loop only within rounding.
inline double row_dot(const RowRef& row, const double* x) {
  const index_t* c = row.col;
  const double* v = row.val;
  double s = 0;
#pragma omp simd reduction(+ : s)
  for (offset_t p = 0; p < row.len; ++p) s += v[p] * x[c[p]];
  return s;
}

// The same without simd: one sequential sum, no gathers. Which of the two is faster depends on the
// CPU (gather throughput) and the row lengths, so the OpenMP CSR plan times both.
inline double row_dot_scalar(const RowRef& row, const double* x) {
  double s = 0;
  for (offset_t p = 0; p < row.len; ++p) s += row.val[p] * x[row.col[p]];
  return s;
}

// Layout of the dense multivectors: X(j, c) at x[j*ldx + c] (row-major) or x[c*ldx + j].
template <int KB, bool RowMajor, class Rows>
void rows_block(const Rows& rows, index_t r0, index_t r1, const double* x, std::size_t ldx,
                double* y, std::size_t ldy) {
  for (index_t r = r0; r < r1; ++r) {
    const RowRef row = rows(r);
    double acc[KB] = {};
    for (offset_t p = 0; p < row.len; ++p) {
      const double a = row.val[p];
      const std::size_t j = static_cast<std::size_t>(row.col[p]);
      if constexpr (RowMajor) {
        const double* xr = x + j * ldx;
#pragma omp simd
        for (int c = 0; c < KB; ++c) acc[c] += a * xr[c];
      } else {
        for (int c = 0; c < KB; ++c) acc[c] += a * x[c * ldx + j];
      }
    }
    for (int c = 0; c < KB; ++c) {
      if constexpr (RowMajor)
        y[static_cast<std::size_t>(r) * ldy + c] = acc[c];
      else
        y[c * ldy + static_cast<std::size_t>(r)] = acc[c];
    }
  }
}

template <bool RowMajor, class Rows>
void rows_spmm(const Rows& rows, index_t r0, index_t r1, const double* x, double* y, index_t n_rows,
               index_t n_cols, int k) {
  const std::size_t ldx = RowMajor ? k : n_cols, ldy = RowMajor ? k : n_rows;
  for (int c0 = 0; c0 < k;) {
    // Column block c0 starts at x + c0 (row-major) or x + c0*cols (column-major).
    const double* xb = x + (RowMajor ? c0 : static_cast<std::size_t>(c0) * n_cols);
    double* yb = y + (RowMajor ? c0 : static_cast<std::size_t>(c0) * n_rows);
    // Column-major X: each column of a block is a separate stream of cache lines; more than 8 at a
    // time thrash the caches, so column-major blocks stop at 8.
    const int left = RowMajor ? k - c0 : std::min(k - c0, 8);
    if (left >= 16) {
      rows_block<16, RowMajor>(rows, r0, r1, xb, ldx, yb, ldy);
      c0 += 16;
    } else if (left >= 8) {
      rows_block<8, RowMajor>(rows, r0, r1, xb, ldx, yb, ldy);
      c0 += 8;
    } else if (left >= 4) {
      rows_block<4, RowMajor>(rows, r0, r1, xb, ldx, yb, ldy);
      c0 += 4;
    } else if (left >= 2) {
      rows_block<2, RowMajor>(rows, r0, r1, xb, ldx, yb, ldy);
      c0 += 2;
    } else {
      rows_block<1, RowMajor>(rows, r0, r1, xb, ldx, yb, ldy);
      c0 += 1;
    }
  }
}

// y rows [r0, r1) = A rows [r0, r1) * x for k right-hand sides. Simd picks the SpMV inner loop.
template <bool Simd = true, class Rows>
void rows_product(const Rows& rows, index_t r0, index_t r1, const double* x, double* y,
                  index_t n_rows, index_t n_cols, int k, Layout layout) {
  if (k == 1) {
    const Rows local = rows;  // by value: a store to y cannot alias the view's pointers
    if constexpr (Simd)
      for (index_t r = r0; r < r1; ++r) y[r] = row_dot(local(r), x);
    else
      for (index_t r = r0; r < r1; ++r) y[r] = row_dot_scalar(local(r), x);
  } else if (layout == Layout::RowMajor) {
    rows_spmm<true>(rows, r0, r1, x, y, n_rows, n_cols, k);
  } else {
    rows_spmm<false>(rows, r0, r1, x, y, n_rows, n_cols, k);
  }
}

// ---- HLL: hacks stored column-major, so the inner loop runs across the hack's rows. ----

struct HllView {
  const offset_t* hack_offset;
  const index_t* hack_width;
  const index_t* col;
  const double* val;
  index_t rows;
  int hack;
  index_t hack_rows(index_t h) const {
    const offset_t first = static_cast<offset_t>(h) * hack;
    return static_cast<index_t>(std::min<offset_t>(hack, rows - first));
  }
};

// acc[i] += v[i] * x[c[i]] without simd gathers (the compiler would otherwise vectorise it).
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((optimize("no-tree-vectorize")))
#endif
inline void hll_column_scalar(double* acc, const double* v, const index_t* c, const double* x, index_t n) {
#if defined(__clang__)
#pragma clang loop vectorize(disable)
#endif
  for (index_t i = 0; i < n; ++i) acc[i] += v[i] * x[c[i]];
}

template <int KB, bool RowMajor, bool Simd = true>
void hll_block(const HllView& m, index_t h0, index_t h1, const double* x, std::size_t ldx,
               double* y, std::size_t ldy, double* acc) {
  for (index_t h = h0; h < h1; ++h) {
    const index_t hr = m.hack_rows(h), w = m.hack_width[h];
    const std::size_t first = static_cast<std::size_t>(h) * m.hack;
    std::fill(acc, acc + static_cast<std::size_t>(hr) * KB, 0.0);
    for (index_t j = 0; j < w; ++j) {
      const offset_t s = m.hack_offset[h] + static_cast<offset_t>(j) * hr;
      const index_t* c = m.col + s;
      const double* v = m.val + s;
      if constexpr (KB == 1 && Simd) {
#pragma omp simd
        for (index_t lr = 0; lr < hr; ++lr) acc[lr] += v[lr] * x[static_cast<std::size_t>(c[lr]) * (RowMajor ? ldx : 1)];
      } else if constexpr (KB == 1 && !RowMajor) {
        hll_column_scalar(acc, v, c, x, hr);
      } else {
        for (index_t lr = 0; lr < hr; ++lr) {
          const double a = v[lr];
          const std::size_t jx = static_cast<std::size_t>(c[lr]);
          double* ar = acc + static_cast<std::size_t>(lr) * KB;
          if constexpr (RowMajor) {
            const double* xr = x + jx * ldx;
#pragma omp simd
            for (int q = 0; q < KB; ++q) ar[q] += a * xr[q];
          } else {
            for (int q = 0; q < KB; ++q) ar[q] += a * x[q * ldx + jx];
          }
        }
      }
    }
    for (index_t lr = 0; lr < hr; ++lr)
      for (int q = 0; q < KB; ++q) {
        const double s = acc[static_cast<std::size_t>(lr) * KB + q];
        if constexpr (RowMajor)
          y[(first + lr) * ldy + q] = s;
        else
          y[q * ldy + first + lr] = s;
      }
  }
}

// Hacks [h0, h1) for k right-hand sides. `scratch` holds hack*16 doubles (one per thread).
// Simd picks the SpMV inner loop (gathers across the hack's rows, or scalar).
template <bool Simd = true>
void hll_product(const HllView& m, index_t h0, index_t h1, const double* x, double* y,
                 index_t n_cols, int k, Layout layout, double* scratch) {
  if (k == 1) {
    hll_block<1, false, Simd>(m, h0, h1, x, 1, y, 1, scratch);
    return;
  }
  const bool rm = layout == Layout::RowMajor;
  const std::size_t ldx = rm ? k : n_cols, ldy = rm ? k : m.rows;
  for (int c0 = 0; c0 < k;) {
    const double* xb = x + (rm ? c0 : static_cast<std::size_t>(c0) * n_cols);
    double* yb = y + (rm ? c0 : static_cast<std::size_t>(c0) * m.rows);
    const int left = rm ? k - c0 : std::min(k - c0, 8);  // as in rows_spmm
    const int kb = left >= 16 ? 16 : left >= 8 ? 8 : left >= 4 ? 4 : left >= 2 ? 2 : 1;
    auto go = [&]<int KB>() {
      if (rm)
        hll_block<KB, true>(m, h0, h1, xb, ldx, yb, ldy, scratch);
      else
        hll_block<KB, false>(m, h0, h1, xb, ldx, yb, ldy, scratch);
    };
    switch (kb) {
      case 16: go.template operator()<16>(); break;
      case 8: go.template operator()<8>(); break;
      case 4: go.template operator()<4>(); break;
      case 2: go.template operator()<2>(); break;
      default: go.template operator()<1>(); break;
    }
    c0 += kb;
  }
}

// Times n equivalent ways of doing the product when a plan is made: apply(c) switches the plan to
// candidate c, run() does one product. Candidates are timed round-robin (tuning::trial_timing:
// rounds of ~0.1 ms or at least one run each, after a warm-up), so drifting clock speed or
// background load hits all alike; returns the fastest single run of each. Tiny products get many
// runs, so microsecond noise does not decide.
template <class Apply, class Run>
std::vector<double> trial_candidates(int n, Apply apply, Run run) {
  const auto& timing = tuning::trial_timing;
  std::vector<double> best(static_cast<std::size_t>(n), 1e300);
  for (int round = 0; round < timing.rounds; ++round)
    for (int c = 0; c < n; ++c) {
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
struct Variant {
  std::string schedule = "auto";
  int inner = -1;  // -1: trial, 0: scalar, 1: simd
};
inline Variant parse_variant(const std::string& text, bool has_schedule, const std::string& kernel) {
  Variant v;
  std::size_t b = 0;
  while (b <= text.size()) {
    const std::size_t e = std::min(text.find(':', b), text.size());
    const std::string t = text.substr(b, e - b);
    if (t == "simd" || t == "scalar")
      v.inner = t == "simd";
    else if (t == "auto" || (has_schedule && (t == "dynamic" || t == "balanced")))
      v.schedule = t;
    else
      throw Unsupported(fmt::format("kernel '{}': unknown variant '{}' (use {}simd or scalar, joined by ':')", kernel,
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

// Views and byte counts of the formats' products (defined in omp_ell.cpp / omp_hll.cpp).
HllView hll_view(const Hll& h);
offset_t ell_product_bytes(const Ell& e, bool skip_padding, int k);
offset_t hll_product_bytes(const Hll& h, int k);

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
