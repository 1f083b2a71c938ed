#pragma once
// Shared plumbing of CPU plans: x and y live in host vectors owned by the plan, so run() touches
// only the product.
#include <spmv/formats/storage.hpp>
#include <spmv/plan.hpp>

#include <algorithm>
#include <chrono>
#include <fmt/format.h>
#include <memory>

#include <spmv/timing.hpp>

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
  index_t rows_, cols_;
  int k_;
  Layout layout_;
  HostArray<double> x_, y_;
};

}  // namespace spmv::cpu
