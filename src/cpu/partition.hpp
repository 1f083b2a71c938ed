#pragma once
// Partitioning a range into parts of about equal cost.
#include <spmv/types.hpp>

#include <vector>

namespace spmv::cpu {

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
