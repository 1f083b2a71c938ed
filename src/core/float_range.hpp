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

inline void require_x_in_float_range(std::span<const double> x) {
  constexpr double top = std::numeric_limits<float>::max();
  for (std::size_t i = 0; i < x.size(); ++i)
    if (std::isfinite(x[i]) && std::fabs(x[i]) > top) {
      char buf[160];
      std::snprintf(buf, sizeof buf, "x[%zu] = %.17g does not fit in single precision (largest %.7g)", i, x[i], top);
      throw Error(buf);
    }
}

}  // namespace spmv::detail
