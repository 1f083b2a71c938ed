#pragma once
// Shared plumbing of CPU plans: x and y live in host vectors owned by the plan, so run() touches
// only the product.
#include <spmv/plan.hpp>

#include <algorithm>
#include <chrono>
#include <fmt/format.h>

namespace spmv::cpu {

class CpuPlan : public Plan {
 public:
  CpuPlan(index_t rows, index_t cols, const PlanOptions& opt)
      : rows_(rows), cols_(cols), k_(opt.k), layout_(opt.layout),
        x_(static_cast<std::size_t>(cols) * opt.k, 0.0),
        y_(static_cast<std::size_t>(rows) * opt.k, 0.0) {}

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
  std::vector<double> x_, y_;
};

// Seconds since `t0`, for timing conversions inside plan constructors.
inline double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace spmv::cpu
