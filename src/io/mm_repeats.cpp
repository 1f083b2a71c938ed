// Summing repeated positions while reading: see mm_repeats.hpp.
#include "io/mm_repeats.hpp"

#include <algorithm>
#include <type_traits>

#include "core/float_range.hpp"

namespace spmv::io::detail {

namespace {

// Keys sampled from the entries read since the last sample.
constexpr std::size_t kSample = std::size_t{1} << 14;

inline std::uint64_t key_of(index_t r, index_t c) {
  return static_cast<std::uint64_t>(static_cast<std::uint32_t>(r)) << 32 | static_cast<std::uint32_t>(c);
}

inline std::size_t hash_of(std::uint64_t key, std::size_t mask) {
  return static_cast<std::size_t>((key * 0x9E3779B97F4A7C15ULL) >> 17) & mask;
}

}  // namespace

// Most of the sample repeats: at most a quarter of the sampled keys are distinct.
template <class V>
bool RepeatMerger<V>::sample_repeats(const BasicCoo<V>& coo, i64 stored) const {
  const i64 from = checked_;
  const auto n = static_cast<std::size_t>(stored - from);
  const std::size_t s = std::min(n, kSample);
  if (s < 4) return false;
  std::vector<std::uint64_t> keys(s);
  for (std::size_t j = 0; j < s; ++j) {
    const auto i = static_cast<std::size_t>(from) + j * n / s;
    keys[j] = key_of(coo.row[i], coo.col[i]);
  }
  std::sort(keys.begin(), keys.end());
  const auto distinct = static_cast<std::size_t>(std::unique(keys.begin(), keys.end()) - keys.begin());
  return distinct * 4 <= s;
}

template <class V>
typename RepeatMerger<V>::Bucket& RepeatMerger<V>::find(std::uint64_t key) {
  const std::size_t mask = table_.size() - 1;
  for (std::size_t h = hash_of(key, mask);; h = (h + 1) & mask)
    if (table_[h].key == key || table_[h].key == kEmpty) return table_[h];
}

template <class V>
void RepeatMerger<V>::grow_table() {
  std::vector<Bucket> old = std::move(table_);
  table_.assign(std::max<std::size_t>(old.size() * 2, 1024), Bucket{});
  for (const Bucket& b : old)
    if (b.key != kEmpty) find(b.key) = b;
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
    Bucket& b = find(key);
    if (b.key == key) {  // a repeat: summed into the position's first occurrence, in file order
      const auto s = static_cast<std::size_t>(b.slot);
      if constexpr (std::is_same_v<V, double>) coo.val[s] += coo.val[u];
      else sum_[s] += coo.val[u];
      if (complex) coo.imag[s] += coo.imag[u];
      ++hits;
      continue;
    }
    const auto k = static_cast<std::size_t>(kept_);
    b.key = key;
    b.slot = kept_;
    coo.row[k] = coo.row[u];
    coo.col[k] = coo.col[u];
    coo.val[k] = coo.val[u];
    if (complex) coo.imag[k] = coo.imag[u];
    if constexpr (!std::is_same_v<V, double>) sum_.push_back(coo.val[u]);
    if (track_origin_) origin_[k] = origin_[u];
    if (static_cast<std::size_t>(++kept_) * 2 > table_.size()) grow_table();
  }
  removed_ += to - kept_;
  if (track_origin_) origin_.resize(static_cast<std::size_t>(kept_));
  return hits;
}

template <class V>
i64 RepeatMerger<V>::write_back(BasicCoo<V>& coo) {
  i64 overflow = -1;
  if constexpr (!std::is_same_v<V, double>) {
    for (std::size_t s = 0; s < sum_.size(); ++s) {
      if (overflow < 0 && spmv::detail::beyond_float(sum_[s])) overflow = static_cast<i64>(s);
      coo.val[s] = static_cast<V>(sum_[s]);
    }
  } else {
    (void)coo;
  }
  sum_ = {};
  table_ = {};
  active_ = false;
  return overflow;
}

template <class V>
i64 RepeatMerger<V>::after_block(BasicCoo<V>& coo, i64 stored, i64 fresh) {
  if (active_) {
    const i64 hits = merge(coo, fresh, stored);
    if (hits * 2 >= stored - fresh) return kept_;
    // Most of the block was new: the file no longer repeats; back to keeping entries as read.
    const i64 at = kept_;
    if (const i64 o = write_back(coo); o >= 0) overflow_ = overflow_ < 0 ? o : overflow_;
    checked_ = at;
    next_check_ = 2 * at;
    return at;
  }
  if (stored < next_check_) return stored;
  if (!sample_repeats(coo, stored)) {
    checked_ = stored;
    next_check_ = 2 * stored;
    return stored;
  }
  // Start: every entry held goes through the table (those of an earlier stretch are distinct and
  // keep their slots).
  active_ = true;
  kept_ = 0;
  table_.assign(1024, Bucket{});
  sum_.clear();
  merge(coo, 0, stored);
  return kept_;
}

template <class V>
i64 RepeatMerger<V>::finish(BasicCoo<V>& coo) {
  if (active_)
    if (const i64 o = write_back(coo); o >= 0 && overflow_ < 0) overflow_ = o;
  return overflow_;
}

template class RepeatMerger<double>;
template class RepeatMerger<float>;

}  // namespace spmv::io::detail
