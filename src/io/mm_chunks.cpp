// The data section in chunks: splitting at newline boundaries, the counting pass, prefix sums.
#include "io/mm_chunks.hpp"

#include <algorithm>

namespace spmv::io::detail {

namespace {

// An entry line: anything but blank and `%` comment lines.
inline const char* entry_start(const char* p, const char* q) {
  while (p < q && is_blank(*p)) ++p;
  return (p < q && *p != '%') ? p : nullptr;
}

// Blank, control characters and '%': two compares, so the counting loop vectorises.
inline unsigned odd_line_start(unsigned char c) { return (c <= ' ') | (c == '%'); }

void count_chunk_slow(const char* base, Chunk& c) {
  const char* p = base + c.begin;
  const char* end = base + c.end;
  i64 lines = 0, entries = 0;
  while (p < end) {
    const char* q = line_end(p, end);
    if (entry_start(p, q)) ++entries;
    if (q < end) ++lines;
    p = q + 1;
  }
  c.newlines = lines;
  c.entries = entries;
}

// Fast path (vectorised by the compiler): count newlines and the line starts that are not plainly
// an entry (blank, comment, indented); when there are none every line is an entry.
void count_chunk(const char* base, Chunk& c) {
  const auto* p = reinterpret_cast<const unsigned char*>(base + c.begin);
  const std::size_t n = c.end - c.begin;
  if (n == 0) return;
  i64 lines = 0, odd = odd_line_start(p[0]);
  for (std::size_t i = 0; i + 1 < n;) {
    const std::size_t m = std::min(n - 1, i + (std::size_t{1} << 20));
    // 8-bit counters over 255-byte blocks keep the vector lanes narrow.
    for (std::size_t j0 = i; j0 < m; j0 += 255) {
      const std::size_t j1 = std::min(m, j0 + 255);
      unsigned char l = 0, o = 0;
      for (std::size_t j = j0; j < j1; ++j) {
        const unsigned char nl = p[j] == '\n';
        l += nl;
        o += nl & static_cast<unsigned char>(odd_line_start(p[j + 1]));
      }
      lines += l;
      odd += o;
    }
    i = m;
  }
  if (odd) return count_chunk_slow(base, c);
  // Newlines before the last byte start a line each; so does byte 0.
  c.newlines = lines + (p[n - 1] == '\n');
  c.entries = lines + 1;
}

}  // namespace

std::vector<Chunk> split_into_chunks(std::string_view text, std::size_t data_begin, int threads,
                                     std::size_t min_chunk) {
  const char* base = text.data();
  const std::size_t data_bytes = text.size() - data_begin;
  const std::size_t nchunks = threads == 1 ? 1
                                           : std::clamp<std::size_t>(data_bytes / std::max<std::size_t>(min_chunk, 1),
                                                                     1, static_cast<std::size_t>(threads) * 8);
  std::vector<Chunk> chunks(nchunks);
  std::size_t prev = data_begin;
  for (std::size_t i = 0; i < nchunks; ++i) {
    std::size_t b = prev;
    std::size_t e = i + 1 == nchunks ? text.size() : data_begin + data_bytes * (i + 1) / nchunks;
    if (e < b) e = b;
    if (e < text.size() && i + 1 < nchunks)
      e = static_cast<std::size_t>(line_end(base + e, base + text.size()) - base) + 1;
    e = std::min(e, text.size());
    chunks[i].begin = b;
    chunks[i].end = e;
    prev = e;
  }
  return chunks;
}

void count_chunks(const char* base, std::vector<Chunk>& chunks, int threads) {
  const std::size_t nchunks = chunks.size();
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1)
  for (std::size_t i = 0; i < nchunks; ++i) count_chunk(base, chunks[i]);
}

DataCounts number_chunks(std::vector<Chunk>& chunks, i64 first_line, i64 first_entry) {
  i64 line = first_line;
  DataCounts total;
  for (Chunk& c : chunks) {
    c.first_line = line;
    c.first_entry = first_entry + total.entries;
    line += c.newlines;
    total.entries += c.entries;
    total.newlines += c.newlines;
  }
  return total;
}

DataCounts count_parsed_lone_chunk(const char* base, Chunk& c) {
  Chunk rest;
  rest.begin = c.parsed_end;
  rest.end = c.end;
  count_chunk(base, rest);
  c.entries = c.parsed + rest.entries;
  c.newlines = c.parsed_newlines + rest.newlines;
  return {c.entries, c.newlines};
}

i64 line_of_entry(const char* base, const std::vector<Chunk>& chunks, i64 k) {
  for (const Chunk& c : chunks) {
    if (k >= c.first_entry + c.entries) continue;
    const char* p = base + c.begin;
    const char* end = base + c.end;
    i64 line = c.first_line, e = c.first_entry;
    while (p < end) {
      const char* q = line_end(p, end);
      if (entry_start(p, q) && e++ == k) return line;
      ++line;
      p = q + 1;
    }
  }
  return 0;
}

void EntryLines::add(Chunk& c, i64 lines) {
  if (c.entries == 0) return;
  const bool exact = anchors_ + c.anchors.size() <= kMaxAnchors;
  Span s{c.first_entry, c.entries, c.first_line, lines, exact, {}};
  if (exact) {
    anchors_ += c.anchors.size();
    s.anchors = std::move(c.anchors);
  }
  spans_.push_back(std::move(s));
}

void EntryLines::add_range(i64 first_entry, i64 entries, i64 first_line, i64 lines) {
  if (entries > 0) spans_.push_back(Span{first_entry, entries, first_line, lines, false, {}});
}

EntryLines::Where EntryLines::find(i64 k) const {
  auto it = std::upper_bound(spans_.begin(), spans_.end(), k, [](i64 v, const Span& s) { return v < s.first_entry; });
  if (it == spans_.begin()) return {};
  const Span& s = *--it;
  if (!s.exact) return {s.first_line, s.first_line + s.lines - 1};
  const auto rel = static_cast<std::uint32_t>(k - s.first_entry);
  auto a =
      std::upper_bound(s.anchors.begin(), s.anchors.end(), rel,
                       [](std::uint32_t v, const std::pair<std::uint32_t, std::uint32_t>& x) { return v < x.first; });
  const i64 line = a == s.anchors.begin() ? s.first_line + rel : s.first_line + (--a)->second + (rel - a->first);
  return {line, line};
}

}  // namespace spmv::io::detail
