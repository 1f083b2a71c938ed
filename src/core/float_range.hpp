#pragma once
// x given in double to a plan that keeps it in float (precision single): a finite value beyond
// float's range would become infinite, so it is refused (CPU and CUDA plans alike; no fmt here,
// which nvcc's CUDA translation units cannot compile).
#include <spmv/types.hpp>

#include <cmath>
#include <cstdio>
#include <limits>
#include <span>

namespace spmv::detail {

// A finite double that would round to infinity in float: float's one rule for "beyond its range"
// (the reader, the caches, the plans and x alike). Float's largest value and whatever rounds to it
// fit.
inline bool beyond_float(double v) { return std::isfinite(v) && std::isinf(static_cast<float>(v)); }

inline void require_x_in_float_range(std::span<const double> x) {
  constexpr double top = std::numeric_limits<float>::max();
  for (std::size_t i = 0; i < x.size(); ++i)
    if (beyond_float(x[i])) {
      char buf[160];
      std::snprintf(buf, sizeof buf, "x[%zu] = %.17g does not fit in single precision (largest %.7g)", i, x[i], top);
      throw Error(buf);
    }
}

}  // namespace spmv::detail
