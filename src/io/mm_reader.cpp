// Matrix Market reader.
//
// The header (banner, comments, size line) is parsed serially. The data section is split into
// chunks at newline boundaries; pass 1 counts lines and entry lines per chunk in parallel, a
// prefix sum gives every chunk its first line number and its first entry index, and pass 2 parses
// the chunks in parallel straight into the preallocated COO arrays. Every error is recorded with
// its exact line; the error of the earliest chunk wins, so messages equal a serial reader's.
//
// Tolerated: blank lines anywhere, `%` comment lines anywhere before the size line and also inside
// the data (like fast_matrix_market), CRLF, tabs, leading/trailing blanks, a UTF-8 BOM, numbers
// such as `1.`, `-.5e-3`, `+2`, `1E+02`, `inf`, `nan` (kept as values).
#include <algorithm>
#include <charconv>
#include <cstring>
#include <fast_float/fast_float.h>
#include <fmt/format.h>
#include <limits>
#include <omp.h>
#include <optional>

#include "io/fast_decimal.hpp"
#include "io/io_internal.hpp"

namespace spmv::io::detail {

namespace {

using i64 = std::int64_t;

inline bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

std::string lower(std::string_view s) {
  std::string r(s);
  for (char& c : r) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  return r;
}

std::vector<std::string_view> split(std::string_view line) {
  std::vector<std::string_view> t;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && is_blank(line[i])) ++i;
    const std::size_t b = i;
    while (i < line.size() && !is_blank(line[i])) ++i;
    if (i > b) t.push_back(line.substr(b, i - b));
  }
  return t;
}

bool blank_line(std::string_view line) {
  return std::all_of(line.begin(), line.end(), is_blank);
}

bool comment_line(std::string_view line) {
  const auto t = std::find_if_not(line.begin(), line.end(), is_blank);
  return t != line.end() && *t == '%';
}

// Serial line reader for the header.
struct Cursor {
  std::string_view text;
  std::size_t pos = 0;
  i64 line = 0;  // number of the line last returned
  bool next(std::string_view& out) {
    if (pos >= text.size()) return false;
    const std::size_t nl = text.find('\n', pos);
    const std::size_t end = nl == std::string_view::npos ? text.size() : nl;
    out = text.substr(pos, end - pos);
    pos = nl == std::string_view::npos ? text.size() : nl + 1;
    ++line;
    return true;
  }
};

struct Header {
  MmFormat format = MmFormat::Coordinate;
  Field field = Field::Real;
  Symmetry symmetry = Symmetry::General;
  i64 rows = 0, cols = 0;
  i64 entries = 0;           // stored entries the data section must hold
  std::size_t data_begin = 0;  // byte offset of the data section
  i64 data_first_line = 1;
};

Header parse_header(std::string_view text, const std::string& name) {
  Header h;
  Cursor cur{text};
  if (text.starts_with("\xEF\xBB\xBF")) cur.pos = 3;  // UTF-8 byte order mark
  std::string_view line;
  bool found = false;
  while (cur.next(line))
    if (!blank_line(line)) { found = true; break; }
  if (!found) throw ParseError(name, 0, "empty file: no %%MatrixMarket banner");

  const auto words = split(line);
  const i64 bl = cur.line;
  if (lower(words[0]) != "%%matrixmarket")
    throw ParseError(name, bl, "missing banner: the first line must be "
                               "'%%MatrixMarket matrix <format> <field> <symmetry>'");
  if (words.size() < 2) throw ParseError(name, bl, "banner lacks the object (expected 'matrix')");
  if (lower(words[1]) != "matrix")
    throw ParseError(name, bl, fmt::format("unknown object '{}' in the banner (expected 'matrix')", words[1]));
  if (words.size() < 3)
    throw ParseError(name, bl, "banner lacks the format (expected 'coordinate' or 'array')");
  const std::string fmt_word = lower(words[2]);
  if (fmt_word == "coordinate") h.format = MmFormat::Coordinate;
  else if (fmt_word == "array") h.format = MmFormat::Array;
  else
    throw ParseError(name, bl, fmt::format("unknown format '{}' in the banner (expected 'coordinate' or 'array')", words[2]));
  if (words.size() < 4)
    throw ParseError(name, bl, "banner lacks the field (expected 'real', 'integer', 'pattern' or 'complex')");
  const std::string field = lower(words[3]);
  if (field == "real" || field == "double") h.field = Field::Real;
  else if (field == "integer") h.field = Field::Integer;
  else if (field == "pattern") h.field = Field::Pattern;
  else if (field == "complex") h.field = Field::Complex;
  else
    throw ParseError(name, bl, fmt::format("unknown field '{}' in the banner (expected 'real', 'integer', "
                                           "'pattern' or 'complex')", words[3]));
  if (words.size() < 5)
    throw ParseError(name, bl, "banner lacks the symmetry (expected 'general', 'symmetric', "
                               "'skew-symmetric' or 'hermitian')");
  const std::string sym = lower(words[4]);
  if (sym == "general") h.symmetry = Symmetry::General;
  else if (sym == "symmetric") h.symmetry = Symmetry::Symmetric;
  else if (sym == "skew-symmetric") h.symmetry = Symmetry::SkewSymmetric;
  else if (sym == "hermitian") h.symmetry = Symmetry::Hermitian;
  else
    throw ParseError(name, bl, fmt::format("unknown symmetry '{}' in the banner (expected 'general', "
                                           "'symmetric', 'skew-symmetric' or 'hermitian')", words[4]));
  if (words.size() > 5)
    throw ParseError(name, bl, fmt::format("unexpected word '{}' after the symmetry in the banner", words[5]));
  if (h.format == MmFormat::Array && h.field == Field::Pattern)
    throw ParseError(name, bl, "the pattern field is not valid with the array format");
  if (h.symmetry == Symmetry::Hermitian && h.field != Field::Complex)
    throw ParseError(name, bl, fmt::format("hermitian symmetry needs the complex field, not {}", to_string(h.field)));
  if (h.symmetry == Symmetry::SkewSymmetric && h.field == Field::Pattern)
    throw ParseError(name, bl, "skew-symmetric symmetry is not valid with the pattern field");

  // Comments and blank lines, then the size line.
  found = false;
  while (cur.next(line))
    if (!blank_line(line) && !comment_line(line)) { found = true; break; }
  if (!found) throw ParseError(name, cur.line, "missing size line: the file ends before it");
  const i64 sl = cur.line;
  const auto t = split(line);
  const bool coord = h.format == MmFormat::Coordinate;
  const std::size_t want = coord ? 3 : 2;
  const char* shape = coord ? "'rows cols nnz'" : "'rows cols'";
  if (t.size() != want) {
    std::string got;
    for (auto w : t) {
      if (!got.empty()) got += ' ';
      got += w;
    }
    throw ParseError(name, sl, fmt::format("bad size line: expected {}, found '{}'", shape, got));
  }
  i64 v[3] = {0, 0, 0};
  const char* what[3] = {"rows", "cols", "nnz"};
  for (std::size_t k = 0; k < want; ++k) {
    const auto r = std::from_chars(t[k].data(), t[k].data() + t[k].size(), v[k]);
    if (r.ec == std::errc::result_out_of_range)
      throw ParseError(name, sl, fmt::format("bad size line: {} '{}' overflows a 64-bit integer", what[k], t[k]));
    if (r.ec != std::errc() || r.ptr != t[k].data() + t[k].size())
      throw ParseError(name, sl, fmt::format("bad size line: {} '{}' is not an integer", what[k], t[k]));
    if (v[k] < 0) throw ParseError(name, sl, fmt::format("bad size line: negative {} {}", what[k], v[k]));
  }
  constexpr i64 kMaxIndex = std::numeric_limits<index_t>::max();
  for (int k = 0; k < 2; ++k)
    if (v[k] > kMaxIndex)
      throw ParseError(name, sl, fmt::format("bad size line: {} {} exceeds the 32-bit index limit {}", what[k], v[k], kMaxIndex));
  h.rows = v[0];
  h.cols = v[1];
  if (h.symmetry != Symmetry::General && h.rows != h.cols)
    throw ParseError(name, sl, fmt::format("a {} matrix must be square, this one is {} x {}",
                                           to_string(h.symmetry), h.rows, h.cols));
  const i64 n = h.rows;
  const i64 full = h.rows * h.cols;  // < 2^62: no overflow
  const i64 triangle = n * (n + 1) / 2;
  if (coord) {
    h.entries = v[2];
    const i64 cap = h.symmetry == Symmetry::General ? full : triangle;
    if (h.entries > cap)
      throw ParseError(name, sl, fmt::format("bad size line: nnz {} exceeds {}, the most entries a {} x {} {} "
                                             "matrix can store", h.entries, cap, h.rows, h.cols, to_string(h.symmetry)));
  } else {
    // Array files list every entry; symmetric ones the lower triangle column by column, skew
    // ones without the (zero) diagonal.
    h.entries = h.symmetry == Symmetry::General ? full
                : h.symmetry == Symmetry::SkewSymmetric ? n * (n - 1) / 2 : triangle;
  }
  h.data_begin = cur.pos;
  h.data_first_line = sl + 1;
  return h;
}

// ---- data section ----------------------------------------------------------------------------

struct Chunk {
  std::size_t begin = 0, end = 0;
  i64 newlines = 0, entries = 0;
  i64 first_line = 0, first_entry = 0;
  i64 error_line = 0;  // 0: no error
  std::size_t parsed_end = 0;  // where pass 2 stopped (after the last entry it stored)
  i64 parsed = 0;              // entries pass 2 stored
  std::string error;
};

// An entry line: anything but blank and `%` comment lines.
inline const char* entry_start(const char* p, const char* q) {
  while (p < q && is_blank(*p)) ++p;
  return (p < q && *p != '%') ? p : nullptr;
}

inline const char* line_end(const char* p, const char* end) {
  const void* q = std::memchr(p, '\n', static_cast<std::size_t>(end - p));
  return q ? static_cast<const char*>(q) : end;
}

// Blank, control characters and '%': two compares, so the counting loop vectorises.
inline unsigned odd_line_start(unsigned char c) { return (c <= ' ') | (c == '%'); }

void count_chunk_slow(const char* base, Chunk& c);

// Pass 1. Fast path (vectorised by the compiler): count newlines and the line starts that are not
// plainly an entry (blank, comment, indented); when there are none every line is an entry.
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

// In pass 2 tokens are scanned up to the chunk end: a token ends at a blank or the newline.
inline bool ends_token(char c) { return is_blank(c) || c == '\n'; }
inline bool at_eol(const char* s, const char* e) { return s == e || *s == '\n'; }

std::string_view token_at(const char* s, const char* e) {
  const char* t = s;
  while (t < e && !ends_token(*t)) ++t;
  return {s, static_cast<std::size_t>(t - s)};
}

struct LineError {
  std::string message;
};

// Parses one 1-based index in [1, limit] and leaves s after it.
inline i64 parse_index(const char*& s, const char* e, i64 limit, const char* what) {
  while (s < e && is_blank(*s)) ++s;
  if (at_eol(s, e)) throw LineError{fmt::format("missing {} index", what)};
  // Fast path (std::from_chars was a fifth of the parse time): up to 18 digits cannot overflow.
  {
    const char* t = s;
    std::uint64_t u = 0;
    while (t < e && t - s < 18 && static_cast<unsigned char>(*t - '0') < 10) u = u * 10 + static_cast<unsigned>(*t++ - '0');
    if (t > s && (t == e || ends_token(*t))) {
      const i64 v = static_cast<i64>(u);
      if (v < 1 || v > limit) throw LineError{fmt::format("{} index {} out of range 1..{}", what, v, limit)};
      s = t;
      return v;
    }
  }
  // Anything else (signs, long digit runs, garbage) takes std::from_chars and its diagnostics.
  i64 v = 0;
  const auto r = std::from_chars(s, e, v);
  if (r.ec == std::errc::result_out_of_range)
    throw LineError{fmt::format("{} index {} out of range 1..{}", what, token_at(s, e), limit)};
  if (r.ec != std::errc() || (r.ptr < e && !ends_token(*r.ptr)))
    throw LineError{fmt::format("{} index '{}' is not an integer", what, token_at(s, e))};
  if (v < 1 || v > limit) throw LineError{fmt::format("{} index {} out of range 1..{}", what, v, limit)};
  s = r.ptr;
  return v;
}

inline double parse_real(const char*& s, const char* e, const char* what) {
  while (s < e && is_blank(*s)) ++s;
  if (at_eol(s, e)) throw LineError{fmt::format("missing {}", what)};
  const char* b = s;
  if (*b == '+' && b + 1 < e && b[1] != '-' && b[1] != '+') ++b;  // fast_float refuses a leading '+'
  double v = 0;
  const auto r = fast_float::from_chars(b, e, v);
  // Out-of-range values (1e999, 1e-999) come back as inf/0, which is what a file means by them.
  if ((r.ec != std::errc() && r.ec != std::errc::result_out_of_range) || (r.ptr < e && !ends_token(*r.ptr)))
    throw LineError{fmt::format("{} '{}' is not a number", what, token_at(s, e))};
  s = r.ptr;
  return v;
}

inline double parse_integer_value(const char*& s, const char* e) {
  while (s < e && is_blank(*s)) ++s;
  if (at_eol(s, e)) throw LineError{"missing value"};
  const char* b = s;
  if (*b == '+' && b + 1 < e && b[1] != '-' && b[1] != '+') ++b;
  i64 v = 0;
  const auto r = std::from_chars(b, e, v);
  if (r.ec == std::errc::result_out_of_range)
    throw LineError{fmt::format("integer value '{}' overflows 64 bits", token_at(s, e))};
  if (r.ec != std::errc() || (r.ptr < e && !ends_token(*r.ptr)))
    throw LineError{fmt::format("value '{}' is not an integer (the field is integer)", token_at(s, e))};
  s = r.ptr;
  return static_cast<double>(v);
}

// Leaves s on the line's newline (or the chunk end).
inline void expect_end(const char*& s, const char* e) {
  while (s < e && is_blank(*s)) ++s;
  if (!at_eol(s, e)) throw LineError{fmt::format("unexpected '{}' after the entry", token_at(s, e))};
}

struct Target {
  index_t* row;
  index_t* col;
  double* val;
  double* imag;  // null unless complex
};

// Position of array entry k (column-major; symmetric: lower triangle incl. diagonal; skew: below it).
struct ArrayPos {
  i64 i = 0, j = 0;
  void seek(const Header& h, i64 k) {
    if (h.symmetry == Symmetry::General) {
      i = h.rows ? k % h.rows : 0;
      j = h.rows ? k / h.rows : 0;
      return;
    }
    const i64 skip = h.symmetry == Symmetry::SkewSymmetric ? 1 : 0;
    j = 0;
    for (;;) {
      const i64 len = h.rows - j - skip;
      if (k < len || len <= 0) break;
      k -= len;
      ++j;
    }
    i = j + skip + k;
  }
  void advance(const Header& h) {
    if (++i < h.rows) return;
    ++j;
    i = h.symmetry == Symmetry::General ? 0 : h.symmetry == Symmetry::SkewSymmetric ? j + 1 : j;
  }
};

// Fast path for the common entry line `row col [value]` (digits, ' '/tab separators, a plain
// decimal): returns the line's newline, or nullptr when anything differs and the general path
// (with its exact diagnostics) must parse the line. Needs kLineSlack readable bytes from s.
constexpr std::ptrdiff_t kLineSlack = 160;

inline const char* fast_separator(const char* s) {
  if (*s != ' ' && *s != '\t') return nullptr;
  ++s;
  for (int i = 0; i < 7 && (*s == ' ' || *s == '\t'); ++i) ++s;
  return s;
}

[[gnu::always_inline]] inline const char* fast_entry_line(const char* s, i64 rows, i64 cols, Field field, bool nearest,
                                                          index_t& r, index_t& c, double& v) {
  std::uint64_t a, b;
  s = scan_digits(s, a, 10);
  if (!s || a - 1 >= static_cast<std::uint64_t>(rows)) return nullptr;  // 0 wraps around
  if (!(s = fast_separator(s))) return nullptr;
  s = scan_digits(s, b, 10);
  if (!s || b - 1 >= static_cast<std::uint64_t>(cols)) return nullptr;
  if (field == Field::Pattern) {
    v = 1.0;
  } else {
    if (!(s = fast_separator(s))) return nullptr;
    if (field == Field::Real) {
      if (!(s = fast_decimal(s, v, nearest))) return nullptr;
    } else {  // integer: up to 16 digits, converted exactly as the general path converts an int64
      const bool neg = *s == '-';
      std::uint64_t u;
      if (!(s = scan_digits(s + neg, u, 16))) return nullptr;
      v = static_cast<double>(neg ? -static_cast<i64>(u) : static_cast<i64>(u));
    }
  }
  for (int i = 0; i < 8 && is_blank(*s); ++i) ++s;
  if (*s != '\n') return nullptr;
  r = static_cast<index_t>(a - 1);
  c = static_cast<index_t>(b - 1);
  return s;
}

void parse_chunk(const char* base, const Header& h, Chunk& c, i64 limit, const Target& out) {
  const char* p = base + c.begin;
  const char* end = base + c.end;
  i64 line = c.first_line;
  i64 k = c.first_entry;
  const i64 stop = std::min(limit, c.first_entry + c.entries);
  if (k >= stop) return;
  const bool coord = h.format == MmFormat::Coordinate;
  const bool skew = h.symmetry == Symmetry::SkewSymmetric;
  ArrayPos pos;
  if (!coord) pos.seek(h, k);
  try {
    // No memchr here: the tokens themselves find the end of an entry line.
    const bool fast = coord && h.field != Field::Complex;
    const bool nearest = fast_float::detail::rounds_to_nearest();
    while (p < end && k < stop) {
      if (fast && end - p >= kLineSlack) {
        index_t fr, fc;
        double fv;
        const char* t = fast_entry_line(p, h.rows, h.cols, h.field, nearest, fr, fc, fv);
        if (t && !(skew && fr == fc && fv != 0.0)) {  // a skew diagonal error takes the general path
          out.row[k] = fr;
          out.col[k] = fc;
          out.val[k] = fv;
          ++k;
          ++line;
          p = t + 1;
          continue;
        }
      }
      const char* s = p;
      while (s < end && is_blank(*s)) ++s;
      if (s < end && *s == '%') s = line_end(s, end);
      if (s < end && *s != '\n') {
        const char* q = end;
        i64 r, cl;
        if (coord) {
          r = parse_index(s, q, h.rows, "row");
          cl = parse_index(s, q, h.cols, "column");
        } else {
          r = pos.i + 1;
          cl = pos.j + 1;
          pos.advance(h);
        }
        double v = 1.0, im = 0.0;
        switch (h.field) {
          case Field::Pattern: break;
          case Field::Real: v = parse_real(s, q, "value"); break;
          case Field::Integer: v = parse_integer_value(s, q); break;
          case Field::Complex:
            v = parse_real(s, q, "value");
            im = parse_real(s, q, "imaginary part");
            break;
        }
        expect_end(s, q);
        if (skew && r == cl && (v != 0.0 || im != 0.0))
          throw LineError{fmt::format("nonzero diagonal entry ({},{}) in a skew-symmetric matrix", r, cl)};
        out.row[k] = static_cast<index_t>(r - 1);
        out.col[k] = static_cast<index_t>(cl - 1);
        out.val[k] = v;
        if (out.imag) out.imag[k] = im;
        ++k;
      }
      ++line;
      p = s + 1;
    }
    c.parsed_end = static_cast<std::size_t>(std::min(p, end) - base);  // p passes end after an open last line
    c.parsed = k - c.first_entry;
  } catch (const LineError& e) {
    c.error_line = line;
    c.error = e.message;
  }
}

// Line number of the k-th entry (0-based), by rescanning its chunk; used only to report errors.
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

// Symmetric/skew/hermitian files must not store both (i,j) and (j,i), i != j: the mirror would be
// counted twice. Returns the (earlier, later) entry indices of the first such pair in file order.
std::optional<std::pair<i64, i64>> find_mirrored_pair(const Coo& c, i64 n) {
  std::vector<std::pair<std::uint64_t, i64>> lower, upper;
  for (i64 e = 0; e < n; ++e) {
    const std::uint32_t r = static_cast<std::uint32_t>(c.row[e]), cl = static_cast<std::uint32_t>(c.col[e]);
    if (r > cl) lower.emplace_back((std::uint64_t{r} << 32) | cl, e);
    else if (r < cl) upper.emplace_back((std::uint64_t{cl} << 32) | r, e);
  }
  std::sort(lower.begin(), lower.end());
  std::sort(upper.begin(), upper.end());
  std::optional<std::pair<i64, i64>> best;
  std::size_t a = 0, b = 0;
  while (a < lower.size() && b < upper.size()) {
    if (lower[a].first < upper[b].first) { ++a; continue; }
    if (upper[b].first < lower[a].first) { ++b; continue; }
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

int resolve_threads(int t) { return t > 0 ? t : std::max(1, omp_get_max_threads()); }

}  // namespace

Parsed parse(std::string_view text, const std::string& name, int threads_opt) {
  const Header h = parse_header(text, name);
  const int threads = resolve_threads(threads_opt);
  const char* base = text.data();
  const std::size_t data_bytes = text.size() - h.data_begin;

  // Chunks of at least 64 KiB, a few per thread so uneven lines balance out.
  constexpr std::size_t kMinChunk = std::size_t{64} << 10;
  const std::size_t nchunks = threads == 1 ? 1
      : std::clamp<std::size_t>(data_bytes / kMinChunk, 1, static_cast<std::size_t>(threads) * 8);
  std::vector<Chunk> chunks(nchunks);
  {
    std::size_t prev = h.data_begin;
    for (std::size_t i = 0; i < nchunks; ++i) {
      std::size_t b = prev;
      std::size_t e = i + 1 == nchunks ? text.size() : h.data_begin + data_bytes * (i + 1) / nchunks;
      if (e < b) e = b;
      if (e < text.size() && i + 1 < nchunks) e = static_cast<std::size_t>(line_end(base + e, base + text.size()) - base) + 1;
      e = std::min(e, text.size());
      chunks[i].begin = b;
      chunks[i].end = e;
      prev = e;
    }
  }
  const int nthreads = static_cast<int>(std::min<std::size_t>(threads, nchunks));
  // One chunk: skip the counting pass and trust the size line (the common, well-formed case);
  // the counts are recomputed below only when the file disagrees with it. Only when the data
  // could hold that many entries (an entry line takes >= 4 bytes), so that a lying size line
  // cannot make us allocate for entries that are not there.
  const bool single_pass = nchunks == 1 && h.entries <= static_cast<i64>((data_bytes + 1) / 4);
  if (single_pass) {
    chunks[0].entries = h.entries;
  } else {
#pragma omp parallel for num_threads(nthreads) schedule(dynamic, 1)
    for (std::size_t i = 0; i < nchunks; ++i) count_chunk(base, chunks[i]);
  }

  i64 line = h.data_first_line, entry = 0, newlines = 0;
  for (Chunk& c : chunks) {
    c.first_line = line;
    c.first_entry = entry;
    line += c.newlines;
    entry += c.entries;
    newlines += c.newlines;
  }
  i64 total = entry;
  const i64 stored = std::min(total, h.entries);

  Parsed out;
  out.format = h.format;
  Coo& coo = out.coo;
  coo.rows = static_cast<index_t>(h.rows);
  coo.cols = static_cast<index_t>(h.cols);
  coo.field = h.field;
  coo.symmetry = h.symmetry;
  const bool cplx = h.field == Field::Complex;
  const bool mirrored = h.symmetry != Symmetry::General;
  // Room for the mirrors up front, so expanding does not reallocate.
  const std::size_t capacity = static_cast<std::size_t>(mirrored ? 2 * stored : stored);
  coo.row.reserve(capacity);
  coo.col.reserve(capacity);
  coo.val.reserve(capacity);
  if (cplx) coo.imag.reserve(capacity);
  coo.row.resize(stored);
  coo.col.resize(stored);
  coo.val.resize(stored);
  if (cplx) coo.imag.resize(stored);
  const Target target{coo.row.data(), coo.col.data(), coo.val.data(), cplx ? coo.imag.data() : nullptr};

#pragma omp parallel for num_threads(nthreads) schedule(dynamic, 1)
  for (std::size_t i = 0; i < nchunks; ++i) parse_chunk(base, h, chunks[i], h.entries, target);

  for (const Chunk& c : chunks)
    if (c.error_line) throw ParseError(name, c.error_line, c.error);
  if (single_pass) {
    // Stored all h.entries and only blank/comment lines follow: the counts are exact. Otherwise
    // count as the two-pass reader does, for its exact messages.
    Chunk& c = chunks[0];
    Chunk rest;
    rest.begin = c.parsed_end;
    rest.end = c.end;
    count_chunk(base, rest);
    i64 parsed = h.entries;  // == c.parsed here
    if (c.parsed != h.entries || rest.entries) {
      c.entries = 0;
      count_chunk(base, c);
      parsed = c.entries;
    }
    total = parsed;
    newlines = c.newlines;  // only read when entries are missing, and then counted
  }
  if (total > h.entries)
    throw ParseError(name, line_of_entry(base, chunks, h.entries),
                     fmt::format("too many entries: the size line says {}", h.entries));
  if (total < h.entries) {
    const bool open_last = data_bytes > 0 && text.back() != '\n';
    const i64 last_line = h.data_first_line - 1 + newlines + (open_last ? 1 : 0);
    throw ParseError(name, std::max<i64>(last_line, 1),
                     fmt::format("unexpected end of file: {} of {} entries", total, h.entries));
  }

  if (!mirrored) return out;

  // Count off-diagonal entries per block (and whether both triangles are used), then mirror.
  const i64 n = stored;
  const int nb = n >= (1 << 16) ? threads : 1;
  std::vector<i64> off(static_cast<std::size_t>(nb) + 1, 0);
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
  if (std::count(has_lower.begin(), has_lower.end(), 1) && std::count(has_upper.begin(), has_upper.end(), 1)) {
    if (const auto pair = find_mirrored_pair(coo, n)) {
      const i64 first = pair->first, second = pair->second;
      throw ParseError(name, line_of_entry(base, chunks, second),
                       fmt::format("entry ({},{}) mirrors the entry ({},{}) on line {}: a {} file must store "
                                   "each off-diagonal pair once", coo.row[second] + 1, coo.col[second] + 1,
                                   coo.row[first] + 1, coo.col[first] + 1, line_of_entry(base, chunks, first),
                                   to_string(h.symmetry)));
    }
  }
  for (int b = 0; b < nb; ++b) off[b + 1] += off[b];
  const i64 m = off[nb];
  coo.row.resize(n + m);
  coo.col.resize(n + m);
  coo.val.resize(n + m);
  if (cplx) coo.imag.resize(n + m);
  const double vsign = h.symmetry == Symmetry::SkewSymmetric ? -1.0 : 1.0;
  // Skew mirrors -a (both parts); hermitian mirrors conj(a).
  const double isign = h.symmetry == Symmetry::Symmetric ? 1.0 : -1.0;
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
  return out;
}

}  // namespace spmv::io::detail

namespace spmv::io {

Coo parse_matrix_market(std::string_view text, const std::string& name, const ReadOptions& opt) {
  return detail::parse(text, name, opt.threads).coo;
}

Coo read_matrix(const std::string& path, const ReadOptions& opt) {
  const detail::FileBytes bytes = detail::load_file(path);
  if (detail::has_binary_magic(bytes.view())) return csr_to_coo(read_binary(path));
  return detail::parse(bytes.view(), path, opt.threads).coo;
}

Csr load_csr(const std::string& path, const ReadOptions& opt) {
  if (is_binary_cache(path)) return read_binary(path);
  return coo_to_csr(read_matrix(path, opt));
}

std::vector<double> read_dense_vector(const std::string& path) {
  const detail::FileBytes bytes = detail::load_file(path);
  if (detail::has_binary_magic(bytes.view()))
    throw ParseError(path, 0, "is a binary matrix cache, not a Matrix Market vector");
  detail::Parsed p = detail::parse(bytes.view(), path, 0);
  Coo& c = p.coo;
  if (c.is_complex()) throw ParseError(path, 0, "a vector must be real or integer, this file is complex");
  if (p.format == detail::MmFormat::Array) {
    if (c.symmetry != Symmetry::General)
      throw ParseError(path, 0, fmt::format("a vector must be a general array, this one is {}", to_string(c.symmetry)));
    return std::move(c.val);  // file order is column-major
  }
  std::vector<double> v(static_cast<std::size_t>(c.rows) * c.cols, 0.0);
  for (offset_t e = 0; e < c.nnz(); ++e) v[static_cast<std::size_t>(c.col[e]) * c.rows + c.row[e]] += c.val[e];
  return v;
}

}  // namespace spmv::io
