#pragma once
// Matrices that stress CSR5's tile bookkeeping; shared by the CPU and the GPU tests.

#include "test_util.hpp"

namespace spmv::test {

inline std::vector<std::pair<std::string, Csr>> csr5_adversarial_cases() {
  std::vector<std::pair<std::string, Csr>> v;
  // Rows much longer than a tile (4x16 = 64, 32x32 = 1024): a row spans many tiles and threads.
  v.emplace_back("rows_span_many_tiles", csr_from_lengths({1, 1000, 2, 3000, 0, 0, 5000, 1, 0, 2500, 3}, 6000, 11));
  // Single-entry rows separated by runs of empty rows: every tile is mostly row boundaries
  // preceded by empty rows (hinted tiles, empty_offset needed for every segment).
  {
    std::vector<offset_t> l;
    for (int r = 0; r < 3000; ++r) l.push_back(r % 4 == 0 ? 1 : 0);
    v.emplace_back("empty_row_boundaries", csr_from_lengths(l, 50, 12));
  }
  // Empty rows clustered right before tile boundaries and at both ends.
  {
    std::vector<offset_t> l(4000, 0);
    for (int r = 10; r < 3990; ++r) l[r] = r % 7 == 0 ? 0 : 1 + (r % 5);
    v.emplace_back("leading_trailing_empty", csr_from_lengths(l, 4000, 13));
  }
  // Every row exactly one CPU tile (64) or a divisor of it: rows begin exactly at tile starts.
  v.emplace_back("rows_equal_tile", csr_from_lengths(std::vector<offset_t>(300, 64), 500, 14));
  v.emplace_back("rows_of_16", csr_from_lengths(std::vector<offset_t>(777, 16), 500, 15));
  // nnz an exact multiple of 64 and 1024 with trailing empty rows: no tail, trailing zeros.
  {
    std::vector<offset_t> l(2048, 1);
    for (int i = 0; i < 100; ++i) l.push_back(0);
    v.emplace_back("no_tail_trailing_empty", csr_from_lengths(l, 100, 16));
  }
  // nnz not a multiple of the tile: a tail of 13 entries over several rows.
  {
    std::vector<offset_t> l(1024, 2);
    l.push_back(5);
    l.push_back(0);
    l.push_back(8);
    v.emplace_back("tail_13", csr_from_lengths(l, 100, 17));
  }
  v.emplace_back("smaller_than_tile", csr_from_lengths({3, 0, 4, 2, 1}, 10, 18));
  v.emplace_back("empty_matrix_0x0", csr_from_lengths({}, 0, 1));
  v.emplace_back("one_entry", csr_from_lengths({0, 0, 1, 0}, 4, 19));
  // Power-law rows (mean ~3, a few rows of thousands) with empty rows: webbase-like, small.
  {
    std::mt19937_64 g(20);
    std::vector<offset_t> l(20000);
    for (auto& x : l) {
      const double u = std::uniform_real_distribution<double>(0, 1)(g);
      x = static_cast<offset_t>(std::pow(1.0 - u, -1.0 / 1.6)) - 1;
      x = std::min<offset_t>(x, 8000);
    }
    v.emplace_back("power_law_20000", csr_from_lengths(l, 20000, 21));
  }
  return v;
}

// The generic edge cases, the adversarial ones above and a few random matrices: what every CSR5
// test (CPU and GPU) runs over.
inline std::vector<std::pair<std::string, Csr>> csr5_all_cases() {
  auto v = edge_cases();
  for (auto& c : csr5_adversarial_cases()) v.push_back(std::move(c));
  for (std::uint64_t seed = 1; seed <= 4; ++seed)
    v.emplace_back("random_" + std::to_string(seed), coo_to_csr(random_coo(50 + 37 * seed, 60, 0.05 * seed, seed)));
  return v;
}

}  // namespace spmv::test
