// Summing repeated positions while reading: see mm_repeats.hpp.
#include "io/mm_repeats.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <type_traits>

#include "core/float_range.hpp"

namespace spmv::io::detail {

namespace {

// Keys sampled: the last kSample entries read, their distinct positions counted exactly (sorted);
// then, where those are mostly distinct, the last kWideSample by an estimate, so that a file cycling
// through up to kWideSample / 4 positions (not only a gzip window's worth of lines) is seen too.
constexpr std::size_t kSample = std::size_t{1} << 14;
constexpr std::size_t kWideSample = std::size_t{1} << 18;

inline std::uint64_t key_of(index_t r, index_t c) {
  return static_cast<std::uint64_t>(static_cast<std::uint32_t>(r)) << 32 | static_cast<std::uint32_t>(c);
}

// MurmurHash3's finalizer: every bit of the key moves every bit of the hash.
inline std::uint64_t mix64(std::uint64_t k) {
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdULL;
  k ^= k >> 33;
  k *= 0xc4ceb9fe1a85ec53ULL;
  return k ^ (k >> 33);
}

// Distinct positions among n entries, estimated by HyperLogLog (Flajolet et al. 2007) with 2^12
// one-byte registers (a standard error of about 1.6%), by linear counting where that is small.
double distinct_estimate(const index_t* row, const index_t* col, std::size_t n) {
  constexpr int kBits = 12;
  constexpr std::size_t m = std::size_t{1} << kBits;
  std::array<std::uint8_t, m> reg{};
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t h = mix64(key_of(row[i], col[i]));
    const auto rank = static_cast<std::uint8_t>(std::countl_zero((h << kBits) | (std::uint64_t{1} << (kBits - 1))) + 1);
    std::uint8_t& r = reg[h >> (64 - kBits)];
    r = std::max(r, rank);
  }
  double sum = 0;
  std::size_t zeros = 0;
  for (const std::uint8_t r : reg) {
    sum += std::ldexp(1.0, -r);
    zeros += r == 0;
  }
  const double md = static_cast<double>(m);
  const double raw = 0.7213 / (1 + 1.079 / md) * md * md / sum;
  return raw <= 2.5 * md && zeros ? md * std::log(md / static_cast<double>(zeros)) : raw;
}

}  // namespace

bool mostly_repeats(const index_t* row, const index_t* col, std::size_t n) {
  const std::size_t s = std::min(n, kSample);
  if (s < 4) return false;
  std::vector<std::uint64_t> keys(s);
  const std::size_t from = n - s;
  for (std::size_t j = 0; j < s; ++j) keys[j] = key_of(row[from + j], col[from + j]);
  std::sort(keys.begin(), keys.end());
  const auto distinct = static_cast<std::size_t>(std::unique(keys.begin(), keys.end()) - keys.begin());
  if (distinct * 4 <= s) return true;
  if (n <= kSample) return false;
  const std::size_t w = std::min(n, kWideSample);
  return distinct_estimate(row + (n - w), col + (n - w), w) * 4 <= static_cast<double>(w);
}

template <class V>
bool RepeatMerger<V>::sample_repeats(const BasicCoo<V>& coo, i64 stored) const {
  const auto n = static_cast<std::size_t>(stored - checked_);
  const std::size_t from = static_cast<std::size_t>(stored) - n;
  return mostly_repeats(coo.row.data() + from, coo.col.data() + from, n);
}

// Fibonacci hashing: the product's top bits depend on every bit of the key (row and column alike).
inline std::size_t home_bucket(std::uint64_t key, int bits) {
  return static_cast<std::size_t>((key * 0x9E3779B97F4A7C15ULL) >> (64 - bits));
}

template <class V>
std::uint32_t& RepeatMerger<V>::find(const BasicCoo<V>& coo, std::uint64_t key) {
  const std::size_t mask = table_.size() - 1;
  for (std::size_t h = home_bucket(key, bits_);; h = (h + 1) & mask) {
    const std::uint32_t b = table_[h];
    if (b == 0 || key_of(coo.row[b - 1], coo.col[b - 1]) == key) return table_[h];
  }
}

template <class V>
void RepeatMerger<V>::grow_table(const BasicCoo<V>& coo) {
  table_ = {};
  bits_ = std::max(bits_ + 1, 10);
  try {
    table_ = ZeroPages<std::uint32_t>(std::size_t{1} << bits_);
  } catch (...) {  // no table: merging stops, as if it never began, before the error goes up
    drop_table();
    inserting_ = false;
    throw;
  }
  const std::size_t mask = table_.size() - 1;
  for (i64 s = 0; s < in_table_; ++s) {  // distinct positions: the first empty bucket from home
    const auto u = static_cast<std::size_t>(s);
    std::size_t h = home_bucket(key_of(coo.row[u], coo.col[u]), bits_);
    while (table_[h] != 0) h = (h + 1) & mask;
    table_[h] = static_cast<std::uint32_t>(s + 1);
  }
}

template <class V>
void RepeatMerger<V>::drop_table() {
  table_ = {};
  bits_ = 0;
  in_table_ = 0;
}

template <class V>
i64 RepeatMerger<V>::merge(BasicCoo<V>& coo, i64 from, i64 to) {
  if (track_origin_)
    for (auto i = static_cast<i64>(origin_.size()); i < to; ++i) origin_.push_back(i + removed_);
  const bool complex = coo.field == Field::Complex;
  i64 hits = 0;
  for (i64 i = from; i < to; ++i) {
    const auto u = static_cast<std::size_t>(i);
    const std::uint64_t key = key_of(coo.row[u], coo.col[u]);
    std::uint32_t& b = find(coo, key);
    if (b != 0) {  // a repeat: summed into the position's first occurrence, in file order
      const std::size_t s = b - 1;
      if constexpr (std::is_same_v<V, double>)
        coo.val[s] += coo.val[u];
      else
        sum_[s] += coo.val[u];
      if (complex) coo.imag[s] += coo.imag[u];
      ++hits;
      continue;
    }
    const auto k = static_cast<std::size_t>(kept_);
    coo.row[k] = coo.row[u];
    coo.col[k] = coo.col[u];
    coo.val[k] = coo.val[u];
    if (complex) coo.imag[k] = coo.imag[u];
    if (track_origin_) origin_[k] = origin_[u];
    ++kept_;
    if (!inserting_ || in_table_ == kMaxSlots) continue;  // (past 2^32 - 1 slots, new positions are kept unmerged)
    b = static_cast<std::uint32_t>(++in_table_);  // slot k + 1: while inserting, every slot held is in the table
    if constexpr (!std::is_same_v<V, double>) sum_.push_back(coo.val[k]);
    if (static_cast<std::size_t>(in_table_) * 2 > table_.size()) grow_table(coo);
  }
  removed_ += to - kept_;
  if (track_origin_) origin_.resize(static_cast<std::size_t>(kept_));
  return hits;
}

template <class V>
i64 RepeatMerger<V>::after_block(BasicCoo<V>& coo, i64 stored, i64 fresh) {
  if (inserting_) {
    const i64 hits = merge(coo, fresh, stored);
    if (hits * 4 >= (stored - fresh) * 3) return kept_;
    // More than a quarter of the block was new: the file no longer repeats much. Double: back to
    // keeping entries as read (coo_to_csr sums what repeats later, exactly as merging would);
    // float: the table stays to fold later repeats into the double sums, without new positions.
    inserting_ = false;
    if constexpr (std::is_same_v<V, double>) drop_table();
    checked_ = kept_;
    next_check_ = 2 * kept_;
    return kept_;
  }
  if (!table_.empty()) {  // float, not inserting: repeats of the positions in the table still folded
    kept_ = fresh;
    merge(coo, fresh, stored);
    stored = kept_;
  }
  if (stored < next_check_) return stored;
  if (!sample_repeats(coo, stored)) {
    checked_ = stored;
    next_check_ = 2 * stored;
    return stored;
  }
  // Start (or start again): the entries held beyond the table go through it, new positions entered.
  inserting_ = true;
  if (table_.empty()) grow_table(coo);
  kept_ = in_table_;
  merge(coo, in_table_, stored);
  return kept_;
}

template <class V>
i64 RepeatMerger<V>::finish(BasicCoo<V>& coo) {
  i64 overflow = -1;
  if constexpr (!std::is_same_v<V, double>) {
    for (std::size_t s = 0; s < sum_.size(); ++s) {
      if (overflow < 0 && spmv::detail::beyond_float(sum_[s])) overflow = static_cast<i64>(s);
      coo.val[s] = static_cast<V>(sum_[s]);
    }
    sum_ = {};
  } else {
    (void)coo;
  }
  drop_table();
  inserting_ = false;
  return overflow;
}

template class RepeatMerger<double>;
template class RepeatMerger<float>;

}  // namespace spmv::io::detail
