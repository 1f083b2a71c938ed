#pragma once
// Internal: the generator's per-row random streams. Seeding splitmix64 with a hash of
// (seed, row, stream) gives every row an independent, reproducible stream.
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "gen/splitmix64.hpp"

namespace spmv::gen::detail {

struct Rng {
  std::uint64_t s;
  std::uint64_t next() {
    const std::uint64_t out = splitmix64(s);
    s += kSplitmix64Gamma;
    return out;
  }
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }  // [0, 1)
  double normal() {                                                           // Box-Muller
    const double u1 = std::max(uniform(), 1e-300), u2 = uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }
  std::uint64_t below(std::uint64_t n) { return n ? next() % n : 0; }
};

inline Rng row_rng(std::uint64_t seed, std::int64_t row, std::uint64_t stream) {
  Rng r{seed * 0xD1B54A32D192ED03ull ^ (static_cast<std::uint64_t>(row) + 1) * 0x9E3779B97F4A7C15ull ^
        stream * 0xA24BAED4963EE407ull};
  r.next();
  return r;
}

}  // namespace spmv::gen::detail
