// Symmetry expansion: a counting pass per block, then each block writes its mirrors at its offset.
#include "io/mm_symmetry.hpp"

#include "io/arrays.hpp"

#include <algorithm>
#include <cstdint>

namespace spmv::io::detail {

template <class V>
MirrorBlocks count_mirrors(const BasicCoo<V>& coo, int threads) {
  const i64 n = static_cast<i64>(coo.row.size());
  const int nb = n >= (1 << 16) ? threads : 1;
  MirrorBlocks mb;
  mb.blocks = nb;
  std::vector<i64>& off = mb.mirror_offset;
  off.assign(static_cast<std::size_t>(nb) + 1, 0);
  std::vector<char> has_lower(nb, 0), has_upper(nb, 0);
#pragma omp parallel for num_threads(nb) schedule(static, 1)
  for (int b = 0; b < nb; ++b) {
    const i64 lo = n * b / nb, hi = n * (b + 1) / nb;
    i64 cnt = 0;
    bool lw = false, up = false;
    for (i64 e = lo; e < hi; ++e) {
      lw |= coo.row[e] > coo.col[e];
      up |= coo.row[e] < coo.col[e];
      cnt += coo.row[e] != coo.col[e];
    }
    off[b + 1] = cnt;
    has_lower[b] = lw;
    has_upper[b] = up;
  }
  for (int b = 0; b < nb; ++b) off[b + 1] += off[b];
  mb.both_triangles =
      std::count(has_lower.begin(), has_lower.end(), 1) && std::count(has_upper.begin(), has_upper.end(), 1);
  return mb;
}

template <class V>
std::optional<std::pair<i64, i64>> find_mirrored_pair(const BasicCoo<V>& c) {
  const i64 n = static_cast<i64>(c.row.size());
  std::vector<std::pair<std::uint64_t, i64>> lower, upper;
  for (i64 e = 0; e < n; ++e) {
    const std::uint32_t r = static_cast<std::uint32_t>(c.row[e]), cl = static_cast<std::uint32_t>(c.col[e]);
    if (r > cl)
      lower.emplace_back((std::uint64_t{r} << 32) | cl, e);
    else if (r < cl)
      upper.emplace_back((std::uint64_t{cl} << 32) | r, e);
  }
  std::sort(lower.begin(), lower.end());
  std::sort(upper.begin(), upper.end());
  std::optional<std::pair<i64, i64>> best;
  std::size_t a = 0, b = 0;
  while (a < lower.size() && b < upper.size()) {
    if (lower[a].first < upper[b].first) {
      ++a;
      continue;
    }
    if (upper[b].first < lower[a].first) {
      ++b;
      continue;
    }
    // Same unordered pair in both triangles: a serial reader notices at the later of the first
    // occurrences (sorting put the smallest index of each key first).
    const i64 x = lower[a].second, y = upper[b].second;
    const std::pair<i64, i64> hit{std::min(x, y), std::max(x, y)};
    if (!best || hit.second < best->second) best = hit;
    const auto key = lower[a].first;
    while (a < lower.size() && lower[a].first == key) ++a;
    while (b < upper.size() && upper[b].first == key) ++b;
  }
  return best;
}

template <class V>
void append_mirrors(BasicCoo<V>& coo, const MirrorBlocks& mb) {
  const i64 n = static_cast<i64>(coo.row.size());
  const int nb = mb.blocks;
  const std::vector<i64>& off = mb.mirror_offset;
  const i64 m = off[nb];
  const bool cplx = coo.field == Field::Complex;
  const auto total = static_cast<std::size_t>(n + m);
  grow(coo.row, total, nb);
  grow(coo.col, total, nb);
  grow(coo.val, total, nb);
  if (cplx) grow(coo.imag, total, nb);
  const V vsign = coo.symmetry == Symmetry::SkewSymmetric ? V{-1} : V{1};
  // Skew mirrors -a (both parts); hermitian mirrors conj(a).
  const V isign = coo.symmetry == Symmetry::Symmetric ? V{1} : V{-1};
#pragma omp parallel for num_threads(nb) schedule(static, 1)
  for (int b = 0; b < nb; ++b) {
    const i64 lo = n * b / nb, hi = n * (b + 1) / nb;
    i64 w = n + off[b];
    for (i64 e = lo; e < hi; ++e) {
      if (coo.row[e] == coo.col[e]) continue;
      coo.row[w] = coo.col[e];
      coo.col[w] = coo.row[e];
      coo.val[w] = vsign * coo.val[e];
      if (cplx) coo.imag[w] = isign * coo.imag[e];
      ++w;
    }
  }
}

#define SPMV_MIRRORS(V)                                                               \
  template MirrorBlocks count_mirrors(const BasicCoo<V>&, int);                       \
  template std::optional<std::pair<i64, i64>> find_mirrored_pair(const BasicCoo<V>&); \
  template void append_mirrors(BasicCoo<V>&, const MirrorBlocks&);
SPMV_MIRRORS(double)
SPMV_MIRRORS(float)
#undef SPMV_MIRRORS

}  // namespace spmv::io::detail
