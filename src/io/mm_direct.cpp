// A coordinate file straight into CSR: see mm_direct.hpp.
#include "io/mm_direct.hpp"

#include <spmv/matrix.hpp>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstdint>
#include <limits>
#include <numeric>
#include <omp.h>
#include <utility>
#include <vector>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "core/convert.hpp"
#include "io/arrays.hpp"
#include "io/fast_decimal.hpp"
#include "io/mm_chunks.hpp"
#include "io/mm_data.hpp"
#include "io/mm_repeats.hpp"
#include "io/mm_row_order.hpp"

namespace spmv::io::detail {

namespace {

// Pass 1's reading of an index: up to 16 digits after blanks (8 at a time where 16 bytes remain),
// s left after them; 0 for anything else. Pass 2's parser judges every line: where it takes a line
// this one did not count, the rows' counts disagree and the direct read is given up.
inline i64 leading_index(const char*& s, const char* e) {
  while (s < e && is_blank(*s)) ++s;
  const auto digit = [](char c) { return static_cast<unsigned char>(c - '0') < 10; };
  if (e - s >= 16) {
    std::uint64_t v = 0;
    const char* t = scan_digits(s, v, 16);
    if (!t) return 0;
    s = t;
    return t < e && digit(*t) ? 0 : static_cast<i64>(v);
  }
  const char* t = s;
  std::uint64_t u = 0;
  while (t < e && t - s < 16 && digit(*t)) u = u * 10 + static_cast<unsigned>(*t++ - '0');
  const bool whole = t > s && (t == e || !digit(*t));
  s = t;
  return whole ? static_cast<i64>(u) : 0;
}

template <bool Shared>
inline void add_to(offset_t& n, offset_t k) {
  if constexpr (Shared)
    std::atomic_ref<offset_t>(n).fetch_add(k, std::memory_order_relaxed);
  else
    n += k;
}

// Entries on each side of the diagonal (a symmetric file's), seen by pass 1.
struct Triangles {
  bool lower = false, upper = false;
};

// Bit i set where p[i] is '\n', for the 64 bytes at p.
inline std::uint64_t newline_mask(const char* p) {
#if defined(__SSE2__)
  const __m128i nl = _mm_set1_epi8('\n');
  std::uint64_t m = 0;
  for (int k = 0; k < 4; ++k) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * k));
    m |= static_cast<std::uint64_t>(static_cast<std::uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(v, nl)))) << (16 * k);
  }
  return m;
#else
  std::uint64_t m = 0;
  for (int i = 0; i < 64; ++i) m |= static_cast<std::uint64_t>(p[i] == '\n') << i;
  return m;
#endif
}

// Pass 1 over a chunk: row r's entries (1-based) counted in count[r], a symmetric file's mirrors in
// their rows too (off the diagonal). Line starts come from 64-byte newline masks; a run of lines in
// one row (a file in row order) is added at once.
template <bool Shared>
void count_rows(const char* p, const char* end, const MmHeader& h, offset_t* count, Triangles& tri) {
  const bool mirrored = h.symmetry != Symmetry::General;
  // Counts are added a batch at a time, their slots prefetched first: rows in no order (a file in
  // column order) then wait on many cache misses at once instead of one after another.
  constexpr int kBatch = 64;
  std::pair<i64, offset_t> batch[kBatch];
  int queued = 0;
  const auto flush = [&] {
    for (int i = 0; i < queued; ++i) __builtin_prefetch(count + batch[i].first, 1);
    for (int i = 0; i < queued; ++i) add_to<Shared>(count[batch[i].first], batch[i].second);
    queued = 0;
  };
  const auto add = [&](i64 r, offset_t k) {
    batch[queued++] = {r, k};
    if (queued == kBatch) flush();
  };
  i64 run_row = 0;
  offset_t run = 0;
  const auto line = [&](const char* s) {
    while (s < end && is_blank(*s)) ++s;
    if (s == end || *s == '%' || *s == '\n') return;
    const i64 r = leading_index(s, end);
    if (r < 1 || r > h.rows) return;
    if (r != run_row) {
      if (run) add(run_row, run);
      run_row = r;
      run = 0;
    }
    ++run;
    if (!mirrored) return;
    const i64 c = leading_index(s, end);
    if (c >= 1 && c <= h.cols && c != r) {
      add(c, 1);
      (r > c ? tri.lower : tri.upper) = true;
    }
  };
  if (p < end) line(p);
  const char* b = p;
  for (; end - b >= 64; b += 64)
    for (std::uint64_t m = newline_mask(b); m; m &= m - 1) {
      const char* q = b + std::countr_zero(m) + 1;
      if (q < end) line(q);
    }
  for (; b < end; ++b)
    if (*b == '\n' && b + 1 < end) line(b + 1);
  if (run) add(run_row, run);
  flush();
}

// Pass 1 over the data section: start[r + 1] = row r's entries (mirrors included). False when a
// block cannot be formed (a line over kMaxLine: the read through the COO names its line).
bool count_all_rows(TextBlocks& text, const MmHeader& h, int threads, const ParseTuning& tune, Array<offset_t>& start,
                    Triangles& tri) {
  try {
    for (;;) {
      const std::string_view block = text.next_block(h.data_first_line);
      if (block.empty()) return true;
      const std::vector<Chunk> chunks = split_into_chunks(block, 0, threads, tune.min_chunk);
      const int t = std::min<int>(threads, static_cast<int>(chunks.size()));
      bool lower = false, upper = false;
#pragma omp parallel for num_threads(t) schedule(dynamic, 1) reduction(|| : lower, upper)
      for (std::size_t i = 0; i < chunks.size(); ++i) {
        Triangles mine;
        const char* b = block.data() + chunks[i].begin;
        const char* e = block.data() + chunks[i].end;
        if (t > 1)
          count_rows<true>(b, e, h, start.data(), mine);
        else
          count_rows<false>(b, e, h, start.data(), mine);
        lower = lower || mine.lower;
        upper = upper || mine.upper;
      }
      tri.lower |= lower;
      tri.upper |= upper;
    }
  } catch (const ParseError&) {
    return false;
  }
}

// The CSR being filled: row r's entries go to [start[r], start[r + 1]), filled[r] of them placed.
template <class V>
struct RowSlots {
  const offset_t* start;
  std::uint32_t* filled;
  index_t* col;
  V* val;
  V* imag;  // null unless complex

  // False when row r is full: pass 1 counted it otherwise.
  bool put(index_t r, index_t c, V v, V im) const {
    const offset_t p = start[r] + filled[r];
    if (p >= start[r + 1]) return false;
    ++filled[r];
    col[p] = c;
    val[p] = v;
    if (imag) imag[p] = im;
    return true;
  }
};

// Pass 2's placement of a block's n entries (and their mirrors), in file order within each row:
// thread t places the rows [bound[t], bound[t + 1]), each thread reading the whole block. Its
// entries are first sorted (stably, by counting) into kStageBuckets buckets of consecutive rows in
// a staging copy, a slice of the block at a time, then placed bucket by bucket: a file in column
// order scatters its entries over the whole CSR, a bucket's over a few hundred KiB of it, which
// stay in cache.
constexpr std::uint32_t kStageBuckets = 1024;
constexpr std::size_t kAhead = 16;  // staged entries whose row's start and count are prefetched
// Entries of a block staged at a time: a thread's staging holds at most twice as many (mirrors),
// 12 MiB, whichever thread the mirrors of a symmetric file's block fall to.
constexpr i64 kStageSlice = i64{1} << 18;

template <class V>
struct Staged {
  index_t r, c;
  V v, im;
};

// A row range's staging: the bucket offsets and the entries, allocated before the threads start
// (an allocation failing inside a parallel region would end the process).
template <class V>
struct Stage {
  std::vector<offset_t> at;
  std::vector<Staged<V>> entries;
};

template <class V>
bool place_block(const BasicCoo<V>& buf, i64 n, Symmetry sym, const RowSlots<V>& slots,
                 const std::vector<index_t>& bound, std::vector<Stage<V>>& stage) {
  const int ranges = static_cast<int>(bound.size()) - 1;
  const V sign = sym == Symmetry::SkewSymmetric ? V{-1} : V{1};
  const V imag_sign = sym == Symmetry::Hermitian ? V{-1} : sign;
  const bool mirrored = sym != Symmetry::General;
  const index_t* row = buf.row.data();
  const index_t* col = buf.col.data();
  const V* val = buf.val.data();
  const V* imag = slots.imag ? buf.imag.data() : nullptr;
  stage.resize(static_cast<std::size_t>(ranges));
  for (Stage<V>& st : stage) {  // a slice's entries and their mirrors at most
    st.at.resize(kStageBuckets + 1);
    st.entries.reserve(static_cast<std::size_t>(2 * std::min(n, kStageSlice)));
  }
  bool ok = true;
  // Range t on thread t, or t, t + T, ... where OpenMP gives fewer threads than asked.
#pragma omp parallel num_threads(ranges) if (ranges > 1) reduction(&& : ok)
  for (int t = omp_get_thread_num(); t < ranges; t += omp_get_num_threads()) {
    const auto lo = static_cast<std::uint32_t>(bound[t]);
    const auto span = static_cast<std::uint32_t>(bound[t + 1] - bound[t]);
    const int shift =
        std::max(0, static_cast<int>(std::bit_width(span)) - static_cast<int>(std::bit_width(kStageBuckets - 1)));
    const auto mine = [&](index_t r) { return static_cast<std::uint32_t>(r) - lo < span; };
    const auto bucket = [&](index_t r) { return (static_cast<std::uint32_t>(r) - lo) >> shift; };
    std::vector<offset_t>& at = stage[static_cast<std::size_t>(t)].at;
    std::vector<Staged<V>>& staged = stage[static_cast<std::size_t>(t)].entries;
    for (i64 from = 0; from < n && ok; from += kStageSlice) {  // a slice at a time: the staging stays small
      const i64 to = std::min(n, from + kStageSlice);
      std::fill(at.begin(), at.end(), 0);
      for (i64 e = from; e < to; ++e) {
        if (mine(row[e])) ++at[bucket(row[e]) + 1];
        if (mirrored && col[e] != row[e] && mine(col[e])) ++at[bucket(col[e]) + 1];
      }
      std::partial_sum(at.begin(), at.end(), at.begin());
      staged.resize(static_cast<std::size_t>(at[kStageBuckets]));  // within the capacity reserved
      for (i64 e = from; e < to; ++e) {
        const index_t r = row[e], c = col[e];
        const V im = imag ? imag[e] : V{0};
        if (mine(r)) staged[static_cast<std::size_t>(at[bucket(r)]++)] = {r, c, val[e], im};
        if (mirrored && c != r && mine(c))
          staged[static_cast<std::size_t>(at[bucket(c)]++)] = {c, r, sign * val[e], imag_sign * im};
      }
      const std::size_t m = staged.size();
      for (std::size_t i = 0; i < m && ok; ++i) {
        if (i + kAhead < m) {  // a bucket's rows are too many to stay in cache from slice to slice
          __builtin_prefetch(slots.start + staged[i + kAhead].r);
          __builtin_prefetch(slots.filled + staged[i + kAhead].r, 1);
        }
        const Staged<V>& x = staged[i];
        ok = slots.put(x.r, x.c, x.v, x.im);
      }
    }
  }
  return ok;
}

// Why a pass stopped before the end of the data.
enum class Stop { None, OutOfOrder, GiveUp };

// A pass over the data section: each block parsed into one block's buffer and handed to place(buf,
// n), which may stop the pass; a file that mostly repeats positions stops it too (GiveUp).
template <class V, class Place>
Stop each_block(TextBlocks& text, const MmHeader& h, int threads, const ParseTuning& tune, const std::string& name,
                Place place) {
  BasicCoo<V> buf;
  buf.field = h.field;
  DataCursor at{h.data_first_line, 0};
  RepeatCheckpoints repeats(tune.repeat_check);
  for (;;) {
    const i64 n = parse_next_block(text, h, threads, tune, name, at, nullptr, buf, at.seen);
    if (n < 0) break;
    // The test the read through the COO starts merging on, on this block's entries at doubling
    // checkpoints (the COO's samples span the entries since its last check: where the two differ
    // for a float read, a sum past float's range is refused by the COO's read, which names its line).
    if (repeats.block_repeats(buf.row.data(), buf.col.data(), n, at.seen)) return Stop::GiveUp;
    if (const Stop s = place(buf, n); s != Stop::None) return s;
  }
  check_entry_count(at, h, name);
  return Stop::None;
}

}  // namespace

template <class V>
std::optional<BasicCsr<V>> read_csr_direct(TextBlocks& text, const MmHeader& h, i64 entries_max, int threads,
                                           const ParseTuning& tune, const std::string& name, bool two_passes,
                                           bool* out_of_order) {
  const std::size_t data_offset = text.consumed();
  const auto rows = static_cast<index_t>(h.rows);
  const auto cols = static_cast<index_t>(h.cols);
  const bool mirrored = h.symmetry != Symmetry::General;
  const bool cplx = h.field == Field::Complex;

  // A general file first in one pass, as though in row order, until a row decreases.
  if (!mirrored) {
    InRowOrder<V> o(rows, entries_max, cplx);
    const Stop s = each_block<V>(text, h, threads, tune, name, [&](const BasicCoo<V>& buf, i64 n) {
      return o.append(buf, n, threads) ? Stop::None : Stop::OutOfOrder;
    });
    if (s == Stop::GiveUp) return std::nullopt;
    if (s == Stop::None) return o.to_csr(h);
    if (!two_passes) {
      if (out_of_order) *out_of_order = true;
      return std::nullopt;
    }
    text.rewind(data_offset);  // out of order: two passes
  }
  if (!two_passes) return std::nullopt;

  // Pass 1.
  Array<offset_t> start = zeros_on_huge_pages<offset_t>(static_cast<std::size_t>(rows) + 1);
  Triangles tri;
  if (!count_all_rows(text, h, threads, tune, start, tri) || (tri.lower && tri.upper)) return std::nullopt;
  offset_t longest = 0;
  for (index_t r = 0; r < rows; ++r) longest = std::max(longest, start[r + 1]);
  std::partial_sum(start.begin(), start.end(), start.begin());
  const offset_t m = start[rows];
  if (m > with_mirrors(h, entries_max) || longest > std::numeric_limits<std::uint32_t>::max()) return std::nullopt;

  // The CSR's arrays, at their final size: the entries land all over them.
  CsrEntries<V> a(m, cplx);
  a.grow_to(static_cast<std::size_t>(m), threads);
  Array<std::uint32_t> filled = zeros_on_huge_pages<std::uint32_t>(static_cast<std::size_t>(rows));
  const RowSlots<V> slots{start.data(), filled.data(), a.col.data(), a.val.data(), cplx ? a.imag.data() : nullptr};
  const std::vector<index_t> bound = spmv::detail::rows_of_equal_entries(start, threads);  // a thread's rows

  // Pass 2.
  text.rewind(data_offset);
  std::vector<Stage<V>> stage;  // a row range's share of a block
  const Stop s = each_block<V>(text, h, threads, tune, name, [&](const BasicCoo<V>& buf, i64 n) {
    return place_block(buf, n, h.symmetry, slots, bound, stage) ? Stop::None : Stop::GiveUp;
  });
  if (s != Stop::None) return std::nullopt;
  for (index_t r = 0; r < rows; ++r)
    if (start[r] + filled[r] != start[r + 1]) return std::nullopt;
  Array<std::uint32_t>().swap(filled);
  return spmv::detail::csr_from_rows(std::move(start), cols, h.field, h.symmetry, std::move(a.col), std::move(a.val),
                                     std::move(a.imag));
}

template std::optional<Csr> read_csr_direct(TextBlocks&, const MmHeader&, i64, int, const ParseTuning&,
                                            const std::string&, bool, bool*);
template std::optional<CsrF32> read_csr_direct(TextBlocks&, const MmHeader&, i64, int, const ParseTuning&,
                                               const std::string&, bool, bool*);

}  // namespace spmv::io::detail
