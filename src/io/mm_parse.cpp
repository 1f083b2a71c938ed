// Pass 2: parsing one chunk's entry lines into the COO arrays. A fast path takes the common
// `row col [value]` line; anything else takes the general path with its exact diagnostics.
#include "io/mm_parse.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <type_traits>
#include <fast_float/fast_float.h>
#include <fmt/format.h>

#include "core/float_range.hpp"
#include "io/fast_decimal.hpp"

namespace spmv::io::detail {

namespace {

// In pass 2 tokens are scanned up to the chunk end: a token ends at a blank or the newline.
inline bool ends_token(char c) { return is_blank(c) || c == '\n'; }
inline bool at_eol(const char* s, const char* e) { return s == e || *s == '\n'; }

std::string_view token_at(const char* s, const char* e) {
  const char* t = s;
  while (t < e && !ends_token(*t)) ++t;
  return {s, static_cast<std::size_t>(t - s)};
}

// An error in the line being parsed; parse_chunk records it with the line's number.
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
    while (t < e && t - s < 18 && static_cast<unsigned char>(*t - '0') < 10)
      u = u * 10 + static_cast<unsigned>(*t++ - '0');
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
    throw LineError{fmt::format("{} index {} out of range 1..{}", what, quoted(token_at(s, e)), limit)};
  if (r.ec != std::errc() || (r.ptr < e && !ends_token(*r.ptr)))
    throw LineError{fmt::format("{} index {} is not an integer", what, quoted(token_at(s, e)))};
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
    throw LineError{fmt::format("{} {} is not a number", what, quoted(token_at(s, e)))};
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
    throw LineError{fmt::format("integer value {} overflows 64 bits", quoted(token_at(s, e)))};
  if (r.ec != std::errc() || (r.ptr < e && !ends_token(*r.ptr)))
    throw LineError{fmt::format("value {} is not an integer (the field is integer)", quoted(token_at(s, e)))};
  s = r.ptr;
  return static_cast<double>(v);
}

// Leaves s on the line's newline (or the chunk end).
inline void expect_end(const char*& s, const char* e) {
  while (s < e && is_blank(*s)) ++s;
  if (!at_eol(s, e)) throw LineError{fmt::format("unexpected {} after the entry", quoted(token_at(s, e)))};
}

// Stores a parsed value in the arrays' type: a float that would round to infinity is refused (a
// value beyond double's range, read as inf, stays what the file means).
template <class V>
[[gnu::always_inline]] inline void store_value(V* out, i64 k, double v) {
  if constexpr (std::is_same_v<V, double>) {
    out[k] = v;
  } else {
    if (spmv::detail::beyond_float(v)) [[unlikely]]
      throw LineError{
          fmt::format("value {} does not fit in single precision (largest {}): read the file in double precision", v,
                      std::numeric_limits<float>::max())};
    out[k] = static_cast<V>(v);
  }
}

// Position of array entry k (column-major; symmetric: lower triangle incl. diagonal; skew: below it).
struct ArrayPos {
  i64 i = 0, j = 0;
  void seek(const MmHeader& h, i64 k) {
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
  void advance(const MmHeader& h) {
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
  if (*s == ' ' || *s == '\t') [[unlikely]]  // writers mostly use one blank
    for (int i = 0; i < 7 && (*s == ' ' || *s == '\t'); ++i) ++s;
  return s;
}

template <Field field>
[[gnu::always_inline]] inline const char* fast_entry_line(const char* s, i64 rows, i64 cols, bool nearest, index_t& r,
                                                          index_t& c, double& v) {
  std::uint64_t a, b;
  s = scan_digits(s, a, 10);
  if (!s || a - 1 >= static_cast<std::uint64_t>(rows)) return nullptr;  // 0 wraps around
  if (!(s = fast_separator(s))) return nullptr;
  s = scan_digits(s, b, 10);
  if (!s || b - 1 >= static_cast<std::uint64_t>(cols)) return nullptr;
  if constexpr (field == Field::Pattern) {
    v = 1.0;
  } else {
    if (!(s = fast_separator(s))) return nullptr;
    if constexpr (field == Field::Real) {
      if (!(s = fast_decimal(s, v, nearest))) return nullptr;
    } else {  // integer: up to 16 digits, converted exactly as the general path converts an int64
      const bool neg = *s == '-';
      std::uint64_t u;
      if (!(s = scan_digits(s + neg, u, 16))) return nullptr;
      v = static_cast<double>(neg ? -static_cast<i64>(u) : static_cast<i64>(u));
    }
  }
  if (*s != '\n') [[unlikely]] {  // trailing blanks, '\r' of CRLF
    for (int i = 0; i < 8 && is_blank(*s); ++i) ++s;
    if (*s != '\n') return nullptr;
  }
  r = static_cast<index_t>(a - 1);
  c = static_cast<index_t>(b - 1);
  return s;
}

// Parses the common entry lines from p on, up to entry `stop` and while kLineSlack bytes remain
// before `end`, into entry k onwards; returns the first line it does not take (the general path
// then parses it, with its diagnostics). A loop of its own, apart from the general path, so that
// more of its state stays in registers (measured in bench/results/README.md).
template <Field field, class V>
[[gnu::noinline]] const char* fast_lines(const char* p, const char* end, i64& k, i64 stop, const MmHeader& h,
                                         bool nearest, const CooArrays<V>& out) {
  const bool skew = h.symmetry == Symmetry::SkewSymmetric;
  const i64 rows = h.rows, cols = h.cols;
  i64 at = k - out.shift;
  const i64 at_stop = stop - out.shift;
  while (at < at_stop && end - p >= kLineSlack) {
    index_t r, c;
    double v;
    const char* t = fast_entry_line<field>(p, rows, cols, nearest, r, c, v);
    if (!t || (skew && r == c && v != 0.0)) break;  // a skew diagonal error takes the general path
    if constexpr (!std::is_same_v<V, double>)
      if (spmv::detail::beyond_float(v)) break;  // so does a float overflow: the error names the line
    out.val[at] = static_cast<V>(v);
    out.row[at] = r;
    out.col[at] = c;
    ++at;
    p = t + 1;
  }
  k = at + out.shift;
  return p;
}

// General path for the entry line at s (blanks skipped, not a comment): parses and checks it,
// stores it at index k of `out`, and leaves s on the line's newline (or the chunk end).
template <class V>
[[gnu::always_inline]] inline void parse_entry_line(const char*& s, const char* end, const MmHeader& h, ArrayPos& pos,
                                                    const CooArrays<V>& out, i64 k) {
  i64 r, cl;
  if (h.format == MmFormat::Coordinate) {
    r = parse_index(s, end, h.rows, "row");
    cl = parse_index(s, end, h.cols, "column");
  } else {
    r = pos.i + 1;
    cl = pos.j + 1;
    pos.advance(h);
  }
  double v = 1.0, im = 0.0;
  switch (h.field) {
    case Field::Pattern: break;
    case Field::Real: v = parse_real(s, end, "value"); break;
    case Field::Integer: v = parse_integer_value(s, end); break;
    case Field::Complex:
      v = parse_real(s, end, "value");
      im = parse_real(s, end, "imaginary part");
      break;
  }
  expect_end(s, end);
  if (h.symmetry == Symmetry::SkewSymmetric && r == cl && (v != 0.0 || im != 0.0))
    throw LineError{fmt::format("nonzero diagonal entry ({},{}) in a skew-symmetric matrix", r, cl)};
  if (h.symmetry == Symmetry::Hermitian && r == cl && im != 0.0)  // NaN too: the diagonal is its own conjugate
    throw LineError{
        fmt::format("diagonal entry ({},{}) of a hermitian matrix has imaginary part {}: it must be real", r, cl, im)};
  out.row[k] = static_cast<index_t>(r - 1);
  out.col[k] = static_cast<index_t>(cl - 1);
  store_value(out.val, k, v);
  if (out.imag) store_value(out.imag, k, im);
}

// Parses chunk c's entry lines, up to entry index `limit`; records where it stopped, or its first error.
template <class V>
void parse_chunk(const char* base, const MmHeader& h, Chunk& c, i64 limit, const CooArrays<V>& out) {
  const char* p = base + c.begin;
  const char* end = base + c.end;
  i64 line = c.first_line;
  i64 k = c.first_entry;
  const i64 stop = std::min(limit, c.first_entry + c.entries);
  if (k >= stop) return;
  const bool coord = h.format == MmFormat::Coordinate;
  ArrayPos pos;
  if (!coord) pos.seek(h, k);
  bool gap = false;  // blank or comment lines since the last entry: the next one gets an anchor
  const auto anchor = [&] {
    c.anchors.push_back(
        {static_cast<std::uint32_t>(k - c.first_entry), static_cast<std::uint32_t>(line - c.first_line)});
    gap = false;
  };
  try {
    // No memchr here: the tokens themselves find the end of an entry line.
    const bool fast = coord && h.field != Field::Complex;
    const bool nearest = fast_float::detail::rounds_to_nearest();
    while (p < end && k < stop) {
      if (fast && !gap) {  // after blank or comment lines the general path takes the first entry (its anchor)
        const i64 k0 = k;
        switch (h.field) {
          case Field::Real: p = fast_lines<Field::Real>(p, end, k, stop, h, nearest, out); break;
          case Field::Integer: p = fast_lines<Field::Integer>(p, end, k, stop, h, nearest, out); break;
          default: p = fast_lines<Field::Pattern>(p, end, k, stop, h, nearest, out); break;
        }
        line += k - k0;  // one line an entry
        if (p >= end || k >= stop) break;
      }
      const char* s = p;
      while (s < end && is_blank(*s)) ++s;
      if (s < end && *s == '%') s = line_end(s, end);
      if (s < end && *s != '\n') {
        if (gap) anchor();
        parse_entry_line(s, end, h, pos, out, k - out.shift);
        ++k;
      } else {
        gap = true;
      }
      ++line;
      p = s + 1;
    }
    c.parsed_end = static_cast<std::size_t>(std::min(p, end) - base);  // p passes end after an open last line
    c.parsed = k - c.first_entry;
    c.parsed_newlines = line - c.first_line - (p > end ? 1 : 0);
  } catch (const LineError& e) {
    c.error_line = line;
    c.error = e.message;
  }
}

}  // namespace

template <class V>
void parse_chunks(const char* base, const MmHeader& h, std::vector<Chunk>& chunks, i64 limit, int threads,
                  const CooArrays<V>& out, const std::string& name) {
  const std::size_t nchunks = chunks.size();
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1)
  for (std::size_t i = 0; i < nchunks; ++i) parse_chunk(base, h, chunks[i], limit, out);
  for (const Chunk& c : chunks)
    if (c.error_line) throw ParseError(name, c.error_line, c.error);
}

template void parse_chunks(const char*, const MmHeader&, std::vector<Chunk>&, i64, int, const CooArrays<double>&,
                           const std::string&);
template void parse_chunks(const char*, const MmHeader&, std::vector<Chunk>&, i64, int, const CooArrays<float>&,
                           const std::string&);

}  // namespace spmv::io::detail
