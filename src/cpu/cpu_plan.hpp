#pragma once
// Shared plumbing of CPU plans: x and y live in host vectors owned by the plan, so run() touches
// only the product.
#include <spmv/formats/storage.hpp>
#include <spmv/plan.hpp>

#include <algorithm>
#include <chrono>
#include <fmt/format.h>
#include <memory>
#include <string>
#if defined(_OPENMP)
#include <omp.h>
#endif

#include <spmv/timing.hpp>

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
#pragma omp parallel for schedule(static) if (n > static_cast<std::size_t>(tuning::parallel_fill_min))
  for (std::size_t i = 0; i < n; ++i) v[i] = T{};
  return v;
}

class CpuPlan : public Plan {
 public:
  CpuPlan(index_t rows, index_t cols, const PlanOptions& opt)
      : rows_(rows), cols_(cols), k_(opt.k), layout_(opt.layout),
        x_(parallel_zeros<double>(static_cast<std::size_t>(cols) * opt.k)),
        y_(parallel_zeros<double>(static_cast<std::size_t>(rows) * opt.k)) {}

  void set_x(std::span<const double> x) override {
    if (x.size() != x_.size())
      throw Error(fmt::format("x has {} values, expected {}", x.size(), x_.size()));
    std::copy(x.begin(), x.end(), x_.begin());
  }
  void get_y(std::span<double> y) override {
    if (y.size() != y_.size())
      throw Error(fmt::format("y has room for {} values, expected {}", y.size(), y_.size()));
    std::copy(y_.begin(), y_.end(), y.begin());
  }
  void run(int times) override {
    for (int t = 0; t < times; ++t) product();
  }

 protected:
  virtual void product() = 0;  // y_ = A * x_

  // ---- Column-major SpMM through row-major copies (rows_spmm_transposed), inside product() ----
  // Whether a plan may take that path: column-major with k > 1.
  bool transpose_possible() const { return layout_ == Layout::ColMajor && k_ > 1; }
  // Allocates xt_ (X row-major) and one tile per thread, once; `threads`: the most the plan runs.
  void make_transpose_scratch(int threads) {
    if (!xt_.empty() || !transpose_possible()) return;
    xt_ = parallel_zeros<double>(x_.size());
    tile_rows_ = spmm_tile_rows(k_);
    tile_stride_ = static_cast<std::size_t>(tile_rows_) * k_ + 8;  // +8: no false sharing between threads
    tiles_ = HostArray<double>(tile_stride_ * std::max(threads, 1));  // first touched by each thread
  }
  // After the choice: the native path keeps no copies (xt_ is as large as X).
  void release_unused_transpose_scratch() {
    if (via_transpose_) return;
    xt_ = {};
    tiles_ = {};
  }
  // xt_ = X row-major, on `threads` threads (static blocks of rows, as xt_'s first touch).
  void transpose_x(int threads) {
    const index_t n = cols_;
    const int t = std::max(threads, 1);
    const double* x = x_.data();
    double* xt = xt_.data();
    const std::size_t total = x_.size();
#pragma omp parallel num_threads(t) if (t > 1 && total > static_cast<std::size_t>(tuning::parallel_fill_min))
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
    rows_spmm_transposed(rows, r0, r1, xt_.data(), y_.data(), rows_, k_, tiles_.data() + tile_stride_ * thread,
                         tile_rows_);
  }
  // Rows [r0, r1) of Y on thread `thread` of the product: the plan's chosen path.
  template <bool Simd, class Rows>
  void rows_part(const Rows& rows, index_t r0, index_t r1, int thread) {
    if (via_transpose_)
      transposed_part(rows, r0, r1, thread);
    else
      rows_product<Simd>(rows, r0, r1, x_.data(), y_.data(), rows_, cols_, k_, layout_);
  }
  // "layout=col via=native|transpose" for column-major SpMM, else "".
  std::string via_detail() const {
    return transpose_possible() ? fmt::format("layout=col via={}", via_transpose_ ? "transpose" : "native") : "";
  }

  index_t rows_, cols_;
  int k_;
  Layout layout_;
  HostArray<double> x_, y_;
  bool via_transpose_ = false;
  HostArray<double> xt_, tiles_;
  index_t tile_rows_ = 0;
  std::size_t tile_stride_ = 0;
};

}  // namespace spmv::cpu
