#pragma once
// Shared plumbing of CPU plans. A product runs on the caller's x and y (multiply, when they are of
// the plan's vector type) or on the plan's own (run, the benchmark's resident products; and
// multiply's conversions from the other type). Vectors are double, or float for precision single;
// a plan's kernels read the product's pair of their type (vec_x<VV>() / vec_y<VV>(); for_vectors
// picks it from the matrix's value type and the precision) and store through scale<VV>() (y =
// alpha * sum + beta * y).
#include <spmv/formats/storage.hpp>
#include <spmv/plan.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <fmt/format.h>
#include <memory>
#include <span>
#include <string>
#include <type_traits>
#if defined(_OPENMP)
#include <omp.h>
#endif

#include <spmv/timing.hpp>

#include "core/float_range.hpp"
#include "core/values.hpp"
#include "cpu/row_kernels.hpp"
#include "cpu/tuning.hpp"

namespace spmv::cpu {

// Without zeroing, so that a parallel loop makes the first touch: page faults spread over the
// threads (one thread zeroing a large plan's x and y was most of its making), pages placed near them.
template <typename T>
using HostArray = std::vector<T, UninitAllocator<T>>;

// n zeros, written by every core OpenMP offers when n is large.
template <typename T>
HostArray<T> parallel_zeros(std::size_t n) {
  HostArray<T> v(n);
#pragma omp parallel for schedule(static) if (n > static_cast <std::size_t>(tuning::parallel_fill_min))
  for (std::size_t i = 0; i < n; ++i) v[i] = T{};
  return v;
}

// The matrix's values in float (single and mixed plans), on the plan's threads: double values
// rounded, float ones (CsrView::val_f32) copied as they are. The CSR plans borrow float values
// instead (float_values_of).
inline HostArray<float> float_values(const CsrView& a, int threads) {
  const std::size_t n = static_cast<std::size_t>(a.nnz());
  HostArray<float> f(n);
  spmv::detail::visit_values(a, [&](const auto* v) {
#pragma omp parallel for schedule(static) \
    num_threads(std::max(threads, 1)) if (threads > 1 && n > static_cast <std::size_t>(tuning::parallel_fill_min))
    for (std::size_t i = 0; i < n; ++i) f[i] = static_cast<float>(v[i]);
  });
  return f;
}

// The float values a single or mixed CSR plan runs on: a float matrix's own (borrowed, like its
// col and row_ptr: nothing is copied, `copy` stays empty), else the double ones rounded into
// `copy` on the plan's threads.
inline const float* float_values_of(const CsrView& a, int threads, HostArray<float>& copy) {
  if (a.values_in_float()) return a.val_f32.data();
  copy = float_values(a, threads);
  return copy.data();
}

// The team OpenMP gives a parallel region that asks for `asked` threads: fewer under
// OMP_THREAD_LIMIT, OMP_DYNAMIC or inside another parallel region; 1 where asked <= 1.
inline int granted_threads(int asked) {
  if (asked <= 1) return 1;
  int team = 1;
#if defined(_OPENMP)
#pragma omp parallel num_threads(asked)
  {
#pragma omp single
    team = omp_get_num_threads();
  }
#endif
  return team;
}

// The threads a product planned on `planned` parts runs on: the team OpenMP grants, at most one a part.
inline int threads_running(int planned) { return planned <= 1 ? 1 : std::min(granted_threads(planned), planned); }

// Of `parts` parts with these bounds, those that hold something (a part of an empty range runs
// nothing: its thread only waits).
inline int busy_parts(std::span<const index_t> bounds) {
  int n = 0;
  for (std::size_t p = 0; p + 1 < bounds.size(); ++p) n += bounds[p + 1] > bounds[p];
  return std::max(n, 1);
}

// Where a plan's product runs on fewer threads than it was given, its detail ends with
// "runs on U of T threads: WHY" (after "; " where the detail says something before).
inline void note_fewer_threads(std::string& detail, int used, int given, const std::string& why) {
  if (used >= given) return;
  detail += fmt::format("{}runs on {} of {} threads: {}", detail.empty() ? "" : "; ", used, given, why);
}

class CpuPlan : public Plan {
 public:
  CpuPlan(index_t rows, index_t cols, const PlanOptions& opt)
      : rows_(rows), cols_(cols), k_(opt.k), layout_(opt.layout), single_(opt.precision == Precision::Single) {
    const std::size_t nx = static_cast<std::size_t>(cols) * opt.k, ny = static_cast<std::size_t>(rows) * opt.k;
    if (single_) {
      xf_ = parallel_zeros<float>(nx);
      yf_ = parallel_zeros<float>(ny);
    } else {
      x_ = parallel_zeros<double>(nx);
      y_ = parallel_zeros<double>(ny);
    }
    use_own(1.0, 0.0);  // the plans' trials run product() on these
  }

  void set_x(std::span<const double> x) override { single_ ? copy_in(x, xf_) : copy_in(x, x_); }
  void set_x(std::span<const float> x) override { single_ ? copy_in(x, xf_) : copy_in(x, x_); }
  void get_y(std::span<double> y) override { single_ ? copy_out(yf_, y) : copy_out(y_, y); }
  void get_y(std::span<float> y) override { single_ ? copy_out(yf_, y) : copy_out(y_, y); }
  void run(int times) override {
    use_own(1.0, 0.0);
    for (int t = 0; t < times; ++t) product();
  }

 protected:
  // f(std::true_type{}) or f(std::false_type{}) for a run-time flag: a kernel's loop chosen at
  // compile time (the SIMD inner loop or the scalar one).
  template <class F>
  static void with_flag(bool flag, F&& f) {
    if (flag)
      f(std::true_type{});
    else
      f(std::false_type{});
  }
  virtual void product() = 0;  // y = alpha * A*x + beta * y on the product's vectors (io_)

  // multiply(): the caller's vectors where they have the plan's type, else the plan's own, converted.
  void apply(const Operands& o) override {
    if (o.device)
      throw Error(
          "multiply: x and y are device memory (DeviceSpan), but this plan runs on the CPU: pass host vectors "
          "(std::span), or make the plan on backend cuda");
    const std::size_t nx = static_cast<std::size_t>(cols_) * k_, ny = static_cast<std::size_t>(rows_) * k_;
    if (o.nx != nx) throw Error(fmt::format("x has {} values, expected {}", o.nx, nx));
    if (o.ny != ny) throw Error(fmt::format("y has room for {} values, expected {}", o.ny, ny));
    if (o.single == single_) {
      io_ = {o.x, o.y, o.alpha, o.beta};
      product();
      use_own(1.0, 0.0);  // no caller's pointer kept past the call
      return;
    }
    // The other type: through the plan's own vectors (y only where beta reads it).
    if (o.single) {
      set_x(std::span<const float>(static_cast<const float*>(o.x), nx));
      if (o.beta != 0) std::copy_n(static_cast<const float*>(o.y), ny, y_.begin());
    } else {
      set_x(std::span<const double>(static_cast<const double*>(o.x), nx));
      if (o.beta != 0)
        std::transform(static_cast<const double*>(o.y), static_cast<const double*>(o.y) + ny, yf_.begin(),
                       [](double v) { return static_cast<float>(v); });
    }
    use_own(o.alpha, o.beta);
    product();
    use_own(1.0, 0.0);
    if (o.single)
      get_y(std::span<float>(static_cast<float*>(o.y), ny));
    else
      get_y(std::span<double>(static_cast<double*>(o.y), ny));
  }

  // The product's x and y, of type VV (float: precision single; double otherwise).
  template <class VV>
  const VV* vec_x() const {
    return static_cast<const VV*>(io_.x);
  }
  template <class VV>
  VV* vec_y() const {
    return static_cast<VV*>(io_.y);
  }
  // The product's alpha and beta in the vectors' type.
  template <class VV>
  Scale<VV> scale() const {
    return {static_cast<VV>(io_.alpha), static_cast<VV>(io_.beta)};
  }
  // f.template operator()<VV>() with the vector type of a product over values of type V: double
  // values run in double; float values in float (single) or double (mixed). Only the pairs a
  // precision has are instantiated.
  template <class V, class F>
  void for_vectors(F&& f) {
    if constexpr (std::is_same_v<V, double>)
      f.template operator()<double>();
    else if (single_)
      f.template operator()<float>();
    else
      f.template operator()<double>();
  }

  // ---- Column-major SpMM through row-major copies (rows_spmm_transposed), inside product() ----
  // Whether a plan may take that path: column-major with k > 1.
  bool transpose_possible() const { return layout_ == Layout::ColMajor && k_ > 1; }
  // Allocates xt_ (X row-major) and one tile per thread, once; `threads`: the most the plan runs.
  void make_transpose_scratch(int threads) {
    if (!xt_.empty() || !xtf_.empty() || !transpose_possible()) return;
    tile_rows_ = spmm_tile_rows(k_);
    tile_stride_ = static_cast<std::size_t>(tile_rows_) * k_ + 8;   // +8: no false sharing between threads
    const std::size_t tiles = tile_stride_ * std::max(threads, 1);  // first touched by each thread
    if (single_) {
      xtf_ = parallel_zeros<float>(xf_.size());
      tilesf_ = HostArray<float>(tiles);
    } else {
      xt_ = parallel_zeros<double>(x_.size());
      tiles_ = HostArray<double>(tiles);
    }
  }
  // After the choice: the native path keeps no copies (xt_ is as large as X).
  void release_unused_transpose_scratch() {
    if (via_transpose_) return;
    xt_ = {};
    tiles_ = {};
    xtf_ = {};
    tilesf_ = {};
  }
  // xt_ = X row-major, on `threads` threads (static blocks of rows, as xt_'s first touch).
  void transpose_x(int threads) {
    if (single_)
      transpose_x(threads, vec_x<float>(), xtf_.data(), xtf_.size());
    else
      transpose_x(threads, vec_x<double>(), xt_.data(), xt_.size());
  }
  template <class T>
  void transpose_x(int threads, const T* x, T* xt, std::size_t total) {
    const index_t n = cols_;
    const int t = std::max(threads, 1);
#pragma omp parallel num_threads(t) if (t > 1 && total > static_cast <std::size_t>(tuning::parallel_fill_min))
    {
#if defined(_OPENMP)
      const int nt = omp_get_num_threads(), me = omp_get_thread_num();
#else
      const int nt = 1, me = 0;
#endif
      const index_t j0 = static_cast<index_t>(static_cast<offset_t>(n) * me / nt);
      const index_t j1 = static_cast<index_t>(static_cast<offset_t>(n) * (me + 1) / nt);
      col_to_row_major(x, static_cast<std::size_t>(n), k_, j0, j1, xt);
    }
  }
  // Rows [r0, r1) of Y through row-major copies, on thread `thread` of the product (after transpose_x).
  template <class Rows>
  void transposed_part(const Rows& rows, index_t r0, index_t r1, int thread) {
    for_vectors<typename Rows::value_type>([&]<class VV>() {
      if constexpr (std::is_same_v<VV, float>)
        rows_spmm_transposed(rows, r0, r1, xtf_.data(), vec_y<float>(), rows_, k_,
                             tilesf_.data() + tile_stride_ * thread, tile_rows_, scale<float>());
      else
        rows_spmm_transposed(rows, r0, r1, xt_.data(), vec_y<double>(), rows_, k_,
                             tiles_.data() + tile_stride_ * thread, tile_rows_, scale<double>());
    });
  }
  // Rows [r0, r1) of Y on thread `thread` of the product: the plan's chosen path.
  template <bool Simd, class Rows>
  void rows_part(const Rows& rows, index_t r0, index_t r1, int thread) {
    if (via_transpose_)
      transposed_part(rows, r0, r1, thread);
    else
      for_vectors<typename Rows::value_type>([&]<class VV>() {
        rows_product<Simd>(rows, r0, r1, vec_x<VV>(), vec_y<VV>(), rows_, cols_, k_, layout_, scale<VV>());
      });
  }
  // Every row in chunks of `chunk` rows over `threads` threads: handed out as threads free up
  // (dynamic), or round-robin under a static schedule.
  template <bool Simd, class Rows>
  void chunked_rows(const Rows& rows, index_t chunk, int threads, bool dynamic) {
    const offset_t c = chunk, n = (offset_t{rows_} + c - 1) / c;
    const auto one = [&](offset_t i) {
      rows_part<Simd>(rows, static_cast<index_t>(i * c), static_cast<index_t>(std::min<offset_t>(i * c + c, rows_)),
                      omp_get_thread_num());
    };
    if (dynamic) {
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
      for (offset_t i = 0; i < n; ++i) one(i);
    } else {
#pragma omp parallel for schedule(static, 1) num_threads(threads)
      for (offset_t i = 0; i < n; ++i) one(i);
    }
  }
  // "layout=col via=native|transpose" for column-major SpMM, else "".
  std::string via_detail() const {
    return transpose_possible() ? fmt::format("layout=col via={}", via_transpose_ ? "transpose" : "native") : "";
  }

  index_t rows_, cols_;
  int k_;
  Layout layout_;
  bool single_;  // x and y in float
  HostArray<double> x_, y_;
  HostArray<float> xf_, yf_;
  bool via_transpose_ = false;
  HostArray<double> xt_, tiles_;
  HostArray<float> xtf_, tilesf_;
  index_t tile_rows_ = 0;
  std::size_t tile_stride_ = 0;

 private:
  // The vectors of the product product() runs: x, y (the plan's vector type) and alpha, beta.
  struct Io {
    const void* x = nullptr;
    void* y = nullptr;
    double alpha = 1.0, beta = 0.0;
  };
  Io io_;
  void use_own(double alpha, double beta) {
    if (single_)
      io_ = {xf_.data(), yf_.data(), alpha, beta};
    else
      io_ = {x_.data(), y_.data(), alpha, beta};
  }

  // Double x into a single plan is rounded; a finite value beyond float's range is refused (it
  // would become infinite).
  template <class From, class To>
  static void copy_in(std::span<const From> x, HostArray<To>& to) {
    if (x.size() != to.size()) throw Error(fmt::format("x has {} values, expected {}", x.size(), to.size()));
    if constexpr (sizeof(To) < sizeof(From)) spmv::detail::require_x_in_float_range(x);
    std::transform(x.begin(), x.end(), to.begin(), [](From v) { return static_cast<To>(v); });
  }
  template <class From, class To>
  static void copy_out(const HostArray<From>& from, std::span<To> y) {
    if (y.size() != from.size())
      throw Error(fmt::format("y has room for {} values, expected {}", y.size(), from.size()));
    std::transform(from.begin(), from.end(), y.begin(), [](From v) { return static_cast<To>(v); });
  }
};

}  // namespace spmv::cpu
