#pragma once
// Internal: what the compact formats (cpu/omp_csr_compact.cpp, cuda/hll_compact.cu) share: their
// variant words and a matrix's distinct values.
#include <spmv/matrix.hpp>
#include <spmv/params.hpp>

#include <omp.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <type_traits>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace spmv::detail {

/// Past this many distinct values they stay in place: a 2-byte index holds no more.
constexpr std::size_t kMaxSharedValues = 65536;
/// A row's (CPU) or a slice's (GPU) columns within this span of their smallest are kept as 2-byte
/// offsets from it.
constexpr index_t kNarrowSpan = 65536;

/// The compact formats' variant groups: column indices narrow (2-byte offsets where they fit, 4
/// bytes elsewhere) or wide (4 bytes), values shared (a 1- or 2-byte index into the matrix's
/// distinct values, where there are at most 65536) or plain. Not given: the matrix decides.
inline std::vector<VariantGroup> compact_variants() {
  return {{"index", {"narrow", "wide"}, "column indices: 2-byte offsets where they fit, or 4 bytes"},
          {"values", {"shared", "plain"}, "values: an index into the distinct values, or in place"}};
}
/// -1: the matrix decides; else the word given (1: narrow / shared).
struct CompactChoice {
  int narrow = -1, shared = -1;
};
inline CompactChoice compact_choice(const VariantChoice& c) {
  CompactChoice k;
  if (c.given("index")) k.narrow = c["index"] == "narrow";
  if (c.given("values")) k.shared = c["values"] == "shared";
  return k;
}

/// Entry q's value in V (the plan's value type), from a double or a float matrix.
template <class V>
V entry_value(const CsrView& a, offset_t q) {
  return static_cast<V>(a.values_in_float() ? static_cast<double>(a.val_f32[q]) : a.val[q]);
}

/// Values told apart by their bits (-0.0 and 0.0, and each NaN, are distinct), each with its index
/// in `table`.
template <class V>
struct DistinctValues {
  using Bits = std::conditional_t<sizeof(V) == 8, std::uint64_t, std::uint32_t>;
  std::vector<V> table;
  std::unordered_map<Bits, std::uint32_t> index;
  bool over = false;  // more than the cap asked for: table and index left empty

  std::uint32_t index_of(V v) const { return index.at(std::bit_cast<Bits>(v)); }
  /// v's index, v appended to the table where it is new.
  std::uint32_t add(V v) {
    const auto [it, fresh] = index.emplace(std::bit_cast<Bits>(v), static_cast<std::uint32_t>(table.size()));
    if (fresh) table.push_back(v);
    return it->second;
  }
};

/// The distinct values of a's entries in V, the table sorted by their bits; `over` where there are
/// more than `cap` (each thread stops collecting past it). On `threads` threads.
template <class V>
DistinctValues<V> distinct_values(const CsrView& a, std::size_t cap, int threads) {
  using Bits = typename DistinctValues<V>::Bits;
  const offset_t nnz = a.nnz();
  std::unordered_set<Bits> seen;
  bool over = false;
#pragma omp parallel num_threads(threads)
  {
    std::unordered_set<Bits> mine;
#pragma omp for schedule(static) nowait
    for (offset_t q = 0; q < nnz; ++q)
      if (mine.size() <= cap) mine.insert(std::bit_cast<Bits>(entry_value<V>(a, q)));
#pragma omp critical
    {
      if (!over) seen.insert(mine.begin(), mine.end());
      if (seen.size() > cap) over = true;
    }
  }
  DistinctValues<V> d;
  d.over = over;
  if (over) return d;
  std::vector<Bits> bits(seen.begin(), seen.end());
  std::sort(bits.begin(), bits.end());
  for (const Bits b : bits) d.add(std::bit_cast<V>(b));
  return d;
}

}  // namespace spmv::detail
