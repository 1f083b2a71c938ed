#pragma once
// Internal: splitmix64, a tiny counter-based generator. splitmix64(x) is its output for state x;
// adding kSplitmix64Gamma to the state gives the next state. A stream per row seeded from
// (seed, row) makes generated matrices independent of the thread count.
#include <cstdint>

namespace spmv {

inline constexpr std::uint64_t kSplitmix64Gamma = 0x9E3779B97F4A7C15ull;

constexpr std::uint64_t splitmix64(std::uint64_t x) {
  std::uint64_t z = x + kSplitmix64Gamma;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

}  // namespace spmv
