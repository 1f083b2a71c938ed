#pragma once
// Internal: wall-clock seconds since a steady_clock time point, for timing conversions and setups.
#include <chrono>

namespace spmv {

inline double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace spmv
