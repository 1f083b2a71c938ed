// A coordinate file read once straight into CSR: see mm_row_groups.hpp.
#include "io/mm_row_groups.hpp"

#include <spmv/types.hpp>

#include <algorithm>
#include <bit>
#include <fmt/format.h>
#include <new>
#include <numeric>
#include <omp.h>
#include <sys/mman.h>

#include "core/convert.hpp"
#include "io/arrays.hpp"
#include "io/mm_data.hpp"

namespace spmv::io::detail {

namespace {

// Chunks are cut from mappings of this size, each chunk's pages given back (madvise) once it is
// placed: one mapping per 64 MiB, where a mapping per chunk could pass the kernel's map count.
constexpr std::size_t kSlabBytes = std::size_t{64} << 20;

}  // namespace

template <class V>
RowGroups<V>::RowGroups(const MmHeader& h, i64 entries) : h_(h), cplx_(h.field == Field::Complex) {
  const std::size_t value_bytes = sizeof(V) * (cplx_ ? 2 : 1);
  const std::size_t per_entry = value_bytes + sizeof(std::uint32_t) + sizeof(std::uint16_t);
  const double m = std::max(1.0, static_cast<double>(with_mirrors(h, entries)));
  const double rows = std::max(1.0, static_cast<double>(h.rows));
  // Groups of about kGroupEntries expected entries (a power of two of rows, at most 65536).
  constexpr double kGroupEntries = 1 << 16;
  const auto span = static_cast<std::uint64_t>(std::clamp(rows * kGroupEntries / m, 1.0, 65536.0));
  bits_ = static_cast<int>(std::bit_width(span)) - 1;
  const std::size_t n_groups = (static_cast<std::size_t>(h.rows) + (std::size_t{1} << bits_) - 1) >> bits_;
  // A chunk about 1/32 of a group's expected entries (at most a thirty-second of the entries then
  // sits in the groups' last chunks, partly empty), whole pages from 16 KiB to 1 MiB.
  const double expected = m / static_cast<double>(std::max<std::size_t>(n_groups, 1));
  const std::size_t page = page_bytes();
  const auto want = static_cast<std::size_t>(std::min(expected * static_cast<double>(per_entry) / 32, double(1 << 20)));
  chunk_bytes_ = std::clamp<std::size_t>((want + page - 1) / page * page, std::max<std::size_t>(16 << 10, page),
                                         std::max<std::size_t>(1 << 20, page));
  capacity_ = static_cast<std::uint32_t>(chunk_bytes_ / per_entry);
  col_at_ = value_bytes * capacity_;
  offset_at_ = col_at_ + sizeof(std::uint32_t) * capacity_;
  groups_.resize(n_groups);
  for (Group& g : groups_) g.last = capacity_;  // full: the first entry opens a chunk
}

template <class V>
RowGroups<V>::~RowGroups() {
  for (const auto& [p, bytes] : slabs_) ::munmap(p, bytes);
}

template <class V>
char* RowGroups<V>::new_chunk(Slab& slab) {
  if (slab.left < chunk_bytes_) {
    const std::size_t bytes = std::max(kSlabBytes, chunk_bytes_);
    void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return nullptr;
    bool kept = true;
#pragma omp critical(spmv_row_groups_slabs)
    try {
      slabs_.emplace_back(static_cast<char*>(p), bytes);
    } catch (const std::bad_alloc&) {
      kept = false;
    }
    if (!kept) {
      ::munmap(p, bytes);
      return nullptr;
    }
    slab = {static_cast<char*>(p), bytes};
  }
  char* c = slab.at;
  slab.at += chunk_bytes_;
  slab.left -= chunk_bytes_;
  return c;
}

template <class V>
void RowGroups<V>::give_back(char* chunk) const {
  advise(chunk, chunk_bytes_, MADV_DONTNEED);
}

template <class V>
template <bool Count>
inline bool RowGroups<V>::put(Slab& slab, std::uint32_t r, std::uint32_t c, V v, V im) {
  Group& g = groups_[r >> bits_];
  if (g.last == capacity_) {
    char* chunk = new_chunk(slab);
    if (!chunk) return false;
    try {
      g.chunks.push_back(chunk);
    } catch (const std::bad_alloc&) {
      return false;
    }
    g.last = 0;
  }
  char* b = g.chunks.back();
  const std::uint32_t i = g.last++;
  vals(b)[i] = v;
  if (cplx_) imags(b)[i] = im;
  cols(b)[i] = c;
  offsets(b)[i] = static_cast<std::uint16_t>(r & ((std::uint32_t{1} << bits_) - 1));
  if constexpr (Count) ++count_[r + 1];
  return true;
}

template <class V>
template <bool Count>
void RowGroups<V>::add(const index_t* row, const index_t* col, const V* val, const V* imag, i64 n, int threads) {
  if (Count && count_.empty()) count_ = zeros_on_huge_pages<offset_t>(static_cast<std::size_t>(h_.rows) + 1);
  const bool mirrored = h_.symmetry != Symmetry::General;
  const V sign = h_.symmetry == Symmetry::SkewSymmetric ? V{-1} : V{1};
  const V imag_sign = h_.symmetry == Symmetry::Hermitian ? V{-1} : sign;
  const int t = threads > 1 && n >= (i64{1} << 16) ? std::min(threads, 1 << 16) : 1;
  if (slab_.size() < static_cast<std::size_t>(t)) slab_.resize(static_cast<std::size_t>(t));
  constexpr i64 kAhead = 32;  // entries whose row counts are prefetched: rows in no order miss the cache
  offset_t* count = count_.data();
  bool ok = true, lower = false, upper = false;
  // Each thread keeps the groups g with g % T == its number, in file order (T: the threads OpenMP
  // gives, which may be fewer than asked).
#pragma omp parallel num_threads(t) if (t > 1) reduction(&& : ok) reduction(|| : lower, upper)
  {
    const int all = omp_get_num_threads(), me = omp_get_thread_num();
    const auto mine = [&](std::uint32_t r) {
      return all == 1 || static_cast<int>((r >> bits_) % static_cast<std::uint32_t>(all)) == me;
    };
    Slab& slab = slab_[static_cast<std::size_t>(me)];
    for (i64 e = 0; e < n && ok; ++e) {
      if (Count && e + kAhead < n) {
        if (mine(static_cast<std::uint32_t>(row[e + kAhead]))) __builtin_prefetch(count + row[e + kAhead] + 1, 1);
        if (mirrored && mine(static_cast<std::uint32_t>(col[e + kAhead])))
          __builtin_prefetch(count + col[e + kAhead] + 1, 1);
      }
      const auto r = static_cast<std::uint32_t>(row[e]), c = static_cast<std::uint32_t>(col[e]);
      const V im = imag ? imag[e] : V{0};
      if (mine(r)) ok = put<Count>(slab, r, c, val[e], im);
      if (mirrored && r != c) {
        if (mine(c) && ok) ok = put<Count>(slab, c, r | kMirror, sign * val[e], imag_sign * im);
        (r > c ? lower : upper) = true;
      }
    }
  }
  if (!ok) throw std::bad_alloc();
  lower_ = lower_ || lower;
  upper_ = upper_ || upper;
}

template <class V>
void RowGroups<V>::add(const BasicCoo<V>& buf, i64 n, int threads) {
  add<true>(buf.row.data(), buf.col.data(), buf.val.data(), cplx_ ? buf.imag.data() : nullptr, n, threads);
}

namespace {

// Page boundaries at or above / at or below an address.
std::uintptr_t page_up(const void* p) {
  const std::size_t page = page_bytes();
  return (reinterpret_cast<std::uintptr_t>(p) + page - 1) / page * page;
}
std::uintptr_t page_down(const void* p) { return reinterpret_cast<std::uintptr_t>(p) / page_bytes() * page_bytes(); }

// The whole pages of `a` below element `to`, from `done` (a page boundary, then moved up), given back.
template <class T>
void give_back_below(const T* a, offset_t to, std::uintptr_t& done) {
  const std::uintptr_t e = page_down(a + to);
  if (e > done) advise(reinterpret_cast<const void*>(done), e - done, MADV_DONTNEED);
  done = std::max(done, e);
}

// A file's entry (r, c) and its entry (c, r) in a symmetric file: in row r, column c both unflagged
// and flagged `mirror`. The column of row r that is both (`mirror` where none), sorting a copy of
// the row in `in_row`: the file's entries first, then the mirrors.
std::uint32_t mirrored_column(const Array<index_t>& col, const Array<offset_t>& start, std::size_t r,
                              std::vector<std::uint32_t>& in_row, std::uint32_t mirror) {
  in_row.assign(col.begin() + start[r], col.begin() + start[r + 1]);
  std::sort(in_row.begin(), in_row.end());
  const auto mirrors = std::lower_bound(in_row.begin(), in_row.end(), mirror);
  for (auto x = mirrors; x != in_row.end(); ++x)
    if (std::binary_search(in_row.begin(), mirrors, *x & ~mirror)) return *x & ~mirror;
  return mirror;
}

// The first row holding such a pair (rows checked in parallel on t threads, each sorting a copy of
// a row at a time); `rows` where there is none.
std::size_t first_mirrored_row(const Array<index_t>& col, const Array<offset_t>& start, std::size_t rows, int t,
                               std::uint32_t mirror) {
  std::size_t found = rows;
  bool fits = true;
#pragma omp parallel num_threads(t) reduction(min : found) reduction(&& : fits)
  {
    std::vector<std::uint32_t> in_row;
#pragma omp for schedule(dynamic, 4096)
    for (std::size_t r = 0; r < rows; ++r) {
      if (r > found || !fits) continue;
      try {
        if (mirrored_column(col, start, r, in_row, mirror) != mirror) found = std::min(found, r);
      } catch (const std::bad_alloc&) {
        fits = false;
      }
    }
  }
  if (!fits) throw std::bad_alloc();
  return found;
}

}  // namespace

template <class V>
void RowGroups<V>::add_in_row_order(Array<offset_t>&& start, index_t last, const index_t* col, const V* val,
                                    const V* imag, offset_t n, int threads) {
  constexpr offset_t kSlice = offset_t{1} << 20;
  std::vector<index_t> rows;  // the slice's row indices
  std::uintptr_t done_col = page_up(col), done_val = page_up(val), done_imag = imag ? page_up(imag) : 0;
  index_t r = 0;  // the row of entry `from`
  for (offset_t from = 0; from < n;) {
    const offset_t to = std::min(n, from + kSlice);
    rows.resize(static_cast<std::size_t>(to - from));
    for (offset_t p = from; p < to; ++p) {
      while (r < last && start[r + 1] <= p) ++r;
      rows[static_cast<std::size_t>(p - from)] = r;
    }
    add<false>(rows.data(), col + from, val + from, imag ? imag + from : nullptr, static_cast<i64>(to - from), threads);
    give_back_below(col, to, done_col);
    give_back_below(val, to, done_val);
    if (imag) give_back_below(imag, to, done_imag);
    from = to;
  }
  // The row starts become the rows' counts, in place: count_[r + 1] = row r's entries.
  offset_t at = 0;
  for (std::size_t q = 0; q <= static_cast<std::size_t>(last); ++q) {
    const offset_t next = q == static_cast<std::size_t>(last) ? n : start[q + 1];
    start[q + 1] = next - at;
    at = next;
  }
  std::fill(start.begin() + static_cast<std::ptrdiff_t>(last) + 2, start.end(), 0);
  start[0] = 0;
  count_ = std::move(start);
}

template <class V>
BasicCsr<V> RowGroups<V>::to_csr(int threads, const std::string& name, bool* pair) {
  const auto rows = static_cast<std::size_t>(h_.rows);
  if (count_.empty()) count_ = zeros_on_huge_pages<offset_t>(rows + 1);  // no entries at all
  std::partial_sum(count_.begin(), count_.end(), count_.begin());        // the rows' starts
  const auto m = static_cast<std::size_t>(count_[rows]);
  // The CSR's arrays, their pages committed as the groups fill them (no zero fill, no populate).
  Array<index_t> col;
  Array<V> val, imag;
  reserve_on_huge_pages(col, m);
  reserve_on_huge_pages(val, m);
  col.resize_for_overwrite(m);
  val.resize_for_overwrite(m);
  if (cplx_) {
    reserve_on_huge_pages(imag, m);
    imag.resize_for_overwrite(m);
  }
  const bool pairs = lower_ && upper_;  // mirrors keep their flag until the pairs are checked
  const std::uint32_t keep = pairs ? ~0u : ~kMirror;
  const int n_groups = static_cast<int>(groups_.size());
  const int t = std::clamp(threads, 1, std::max(n_groups, 1));
  std::vector<std::vector<offset_t>> filled(static_cast<std::size_t>(t),
                                            std::vector<offset_t>(std::size_t{1} << bits_));
  // Groups in row order (a thread's next group is the lowest left), each given back once placed:
  // the CSR's pages fill about as fast as the groups' empty.
#pragma omp parallel for num_threads(t) schedule(dynamic, 1)
  for (int gi = 0; gi < n_groups; ++gi) {
    std::vector<offset_t>& f = filled[static_cast<std::size_t>(omp_get_thread_num())];
    std::fill(f.begin(), f.end(), 0);
    const offset_t* start = count_.data() + (static_cast<std::size_t>(gi) << bits_);
    Group& g = groups_[static_cast<std::size_t>(gi)];
    for (std::size_t k = 0; k < g.chunks.size(); ++k) {
      char* b = g.chunks[k];
      const std::uint32_t n = k + 1 == g.chunks.size() ? g.last : capacity_;
      const std::uint16_t* off = offsets(b);
      const std::uint32_t* c = cols(b);
      const V* v = vals(b);
      const V* im = imags(b);
      for (std::uint32_t i = 0; i < n; ++i) {
        const offset_t p = start[off[i]] + f[off[i]]++;
        col[p] = static_cast<index_t>(c[i] & keep);
        val[p] = v[i];
        if (cplx_) imag[p] = im[i];
      }
      give_back(b);
    }
    g.chunks = std::vector<char*>();
  }
  if (pairs) {
    const std::size_t found = first_mirrored_row(col, count_, rows, t, kMirror);
    if (found < rows) {
      std::vector<std::uint32_t> in_row;
      const std::size_t r = found;
      const std::uint32_t c = mirrored_column(col, count_, r, in_row, kMirror);
      if (pair) {
        *pair = true;
        return {};
      }
      throw ParseError(name, 0,
                       fmt::format("the entries ({},{}) and ({},{}) mirror each other: a {} file must store each "
                                   "off-diagonal pair once (read once from a stream, their lines are not known)",
                                   r + 1, c + 1, c + 1, r + 1, to_string(h_.symmetry)));
    }
#pragma omp parallel for num_threads(t) schedule(static)
    for (std::size_t p = 0; p < m; ++p) col[p] = static_cast<index_t>(static_cast<std::uint32_t>(col[p]) & ~kMirror);
  }
  return spmv::detail::csr_from_rows(std::move(count_), static_cast<index_t>(h_.cols), h_.field, h_.symmetry,
                                     std::move(col), std::move(val), std::move(imag));
}

template <class V>
i64 RowGroups<V>::drain(BasicCoo<V>& out, int threads) {
  auto n = static_cast<i64>(out.row.size());
  for (std::size_t gi = 0; gi < groups_.size(); ++gi) {
    Group& g = groups_[gi];
    if (g.chunks.empty()) continue;
    cover(out, n + static_cast<i64>((g.chunks.size() - 1) * capacity_ + g.last), threads);  // mirrors included
    const auto first_row = static_cast<index_t>(gi << bits_);
    for (std::size_t k = 0; k < g.chunks.size(); ++k) {
      char* b = g.chunks[k];
      const std::uint32_t m = k + 1 == g.chunks.size() ? g.last : capacity_;
      for (std::uint32_t i = 0; i < m; ++i) {
        if (cols(b)[i] & kMirror) continue;
        const auto u = static_cast<std::size_t>(n++);
        out.row[u] = first_row + offsets(b)[i];
        out.col[u] = static_cast<index_t>(cols(b)[i]);
        out.val[u] = vals(b)[i];
        if (cplx_) out.imag[u] = imags(b)[i];
      }
      give_back(b);
    }
    g.chunks = std::vector<char*>();
  }
  trim(out, n);
  count_ = Array<offset_t>();
  return n;
}

template class RowGroups<double>;
template class RowGroups<float>;

}  // namespace spmv::io::detail
