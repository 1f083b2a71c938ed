// Matrix Market writers: matrices as `coordinate` with the matrix's own field and symmetry (a
// symmetric, skew-symmetric or hermitian matrix as its lower triangle, after checking that the
// upper one mirrors it) or expanded to general, vectors as `array real general`; values with 17
// significant digits (a float matrix's with its own shortest round-trip digits) so they read back
// bit-identical. A name ending in .gz is written gzip-compressed (ByteSink).
#include <cmath>
#include <cstdint>
#include <fmt/format.h>
#include <string_view>
#include <type_traits>
#include <vector>

#include "core/values.hpp"
#include "io/byte_sink.hpp"
#include "io/io_internal.hpp"

namespace spmv::io {

namespace {

constexpr std::size_t kFlushBytes = std::size_t{1} << 22;  // text formatted before it goes to the file

// Formatted text to a ByteSink, a bounded buffer at a time.
class Out {
 public:
  explicit Out(const std::string& path) : sink_(path) {}
  fmt::memory_buffer& buf() { return buf_; }
  void maybe_flush() {
    if (buf_.size() >= kFlushBytes) flush();
  }
  void close() {
    flush();
    sink_.close();
  }

 private:
  void flush() {
    sink_.write(buf_.data(), buf_.size());
    buf_.clear();
  }
  detail::ByteSink sink_;
  fmt::memory_buffer buf_;
};

template <class V>
std::string value_text(const CsrView& a, const V* val, offset_t p) {
  if (a.is_complex()) return fmt::format("{:.17g}{:+.17g}i", val[p], a.imag[p]);
  return fmt::format("{:.17g}", val[p]);
}

bool same_value(double x, double y) { return x == y || (std::isnan(x) && std::isnan(y)); }

// The field a file can declare for a's values: a pattern matrix whose values are not all 1
// (duplicates summed) and an integer one with values that are not 64-bit integers are written as
// real, so that nothing read back differs.
template <class V>
Field written_field(const CsrView& a, const V* val) {
  const offset_t n = a.nnz();
  if (a.field == Field::Pattern) {
    if (a.symmetry == Symmetry::SkewSymmetric) return Field::Real;  // not a valid pair in a banner
    for (offset_t p = 0; p < n; ++p)
      if (val[p] != V{1}) return Field::Real;
  } else if (a.field == Field::Integer) {
    constexpr double lim = 9223372036854775808.0;  // 2^63
    for (offset_t p = 0; p < n; ++p) {
      const double v = static_cast<double>(val[p]);
      if (!(v >= -lim && v < lim) || std::trunc(v) != v) return Field::Real;
    }
  }
  return a.field;
}

// A symmetric, skew-symmetric or hermitian matrix is written as its lower triangle (skew: strictly
// below the diagonal, whose entries must be 0): checks that the upper triangle mirrors it exactly
// (a, -a or conj(a)) and returns the number of entries the file stores. Columns are sorted within
// rows, so each row's upper part is consumed in order by the rows below: O(nnz + rows).
template <class V>
offset_t check_mirrored(const std::string& path, const CsrView& a, const V* val) {
  const Symmetry sym = a.symmetry;
  const char* name = to_string(sym);
  const bool cplx = a.is_complex();
  const auto at = [](index_t r, index_t c) { return fmt::format("({},{})", r + 1, c + 1); };
  const auto refuse = [&](const std::string& why) {
    throw Error(
        fmt::format("{}: cannot write the matrix as {}: {}; write it expanded, as general "
                    "(WriteOptions::expand, spmv convert --expand)",
                    path, name, why));
  };
  if (a.rows != a.cols) refuse(fmt::format("it is {} x {}, not square", a.rows, a.cols));
  if (sym == Symmetry::Hermitian && !cplx) refuse("a hermitian matrix must be complex");
  // cursor[c]: row c's next entry above the diagonal that no row below has mirrored yet.
  std::vector<offset_t> cursor(static_cast<std::size_t>(a.rows));
  for (index_t r = 0; r < a.rows; ++r) {
    offset_t p = a.row_ptr[r];
    while (p < a.row_ptr[r + 1] && a.col[p] <= r) ++p;
    cursor[r] = p;
  }
  const double vsign = sym == Symmetry::SkewSymmetric ? -1.0 : 1.0;
  const double isign = sym == Symmetry::Symmetric ? 1.0 : -1.0;
  offset_t stored = 0;
  for (index_t r = 0; r < a.rows; ++r) {
    for (offset_t p = a.row_ptr[r]; p < a.row_ptr[r + 1] && a.col[p] <= r; ++p) {
      const index_t c = a.col[p];
      if (c == r) {
        if (sym == Symmetry::SkewSymmetric && (val[p] != V{0} || (cplx && a.imag[p] != 0.0)))
          refuse(fmt::format("the diagonal entry {} is {}, not 0", at(r, r), value_text(a, val, p)));
        if (sym == Symmetry::Hermitian && a.imag[p] != 0.0)
          refuse(fmt::format("the diagonal entry {} is {}, not real", at(r, r), value_text(a, val, p)));
        if (sym != Symmetry::SkewSymmetric) ++stored;
        continue;
      }
      offset_t& q = cursor[c];
      if (q < a.row_ptr[c + 1] && a.col[q] < r)  // rows above r had no entry to mirror it
        refuse(fmt::format("the entry {} = {} has no mirror at {}", at(c, a.col[q]), value_text(a, val, q),
                           at(a.col[q], c)));
      if (q == a.row_ptr[c + 1] || a.col[q] != r)
        refuse(fmt::format("the entry {} = {} has no mirror at {}", at(r, c), value_text(a, val, p), at(c, r)));
      if (!same_value(static_cast<double>(val[q]), vsign * static_cast<double>(val[p])) ||
          (cplx && !same_value(a.imag[q], isign * a.imag[p])))
        refuse(fmt::format("the entry {} = {} but its mirror {} = {}", at(r, c), value_text(a, val, p), at(c, r),
                           value_text(a, val, q)));
      ++q;
      ++stored;
    }
  }
  for (index_t c = 0; c < a.rows; ++c)
    if (const offset_t q = cursor[c]; q < a.row_ptr[c + 1])
      refuse(fmt::format("the entry {} = {} has no mirror at {}", at(c, a.col[q]), value_text(a, val, q),
                         at(a.col[q], c)));
  return stored;
}

// The caller's comment lines: each a line of its own starting with '%'; the writer's own lines
// ("% written by spmv", "% spmv-generated: ...") are left out, written afresh.
void write_comments(fmt::memory_buffer& buf, const std::vector<std::string>& comments) {
  auto it = std::back_inserter(buf);
  for (const std::string& comment : comments) {
    std::string_view rest = comment;
    for (;;) {
      const std::size_t nl = rest.find('\n');
      std::string_view line = rest.substr(0, nl);
      while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t')) line.remove_suffix(1);
      if (!line.starts_with("% spmv-generated:") && !line.starts_with("% written by spmv")) {
        const std::size_t first = line.find_first_not_of(" \t");
        if (first == std::string_view::npos || line[first] != '%')
          fmt::format_to(it, "% {}\n", line);
        else
          fmt::format_to(it, "{}\n", line);
      }
      if (nl == std::string_view::npos) break;
      rest.remove_prefix(nl + 1);
    }
  }
}

template <class V>
void write_coordinate(const std::string& path, const CsrView& a, const V* val, const WriteOptions& opt) {
  const offset_t nnz = a.nnz();
  const bool cplx = a.is_complex();
  if (a.row_ptr.size() != static_cast<std::size_t>(a.rows) + 1 || static_cast<offset_t>(a.col.size()) != nnz ||
      (cplx && static_cast<offset_t>(a.imag.size()) != nnz))
    throw Error(fmt::format("{}: cannot write an inconsistent CSR matrix", path));
  const bool lower = !opt.expand && a.symmetry != Symmetry::General;
  // Checked before the file is opened: a refusal leaves an existing file as it was.
  const offset_t stored = lower ? check_mirrored(path, a, val) : nnz;
  const Field field = written_field(a, val);
  const bool skew = a.symmetry == Symmetry::SkewSymmetric;

  Out out(path);
  auto it = std::back_inserter(out.buf());
  fmt::format_to(it, "%%MatrixMarket matrix coordinate {} {}\n", to_string(field),
                 to_string(lower ? a.symmetry : Symmetry::General));
  if (!opt.generated.empty()) fmt::format_to(it, "% spmv-generated: {}\n", opt.generated);
  write_comments(out.buf(), opt.comments);
  if (lower) {
    fmt::format_to(it, "% written by spmv; the lower triangle{} of a {} matrix\n", skew ? " (below the diagonal)" : "",
                   to_string(a.symmetry));
  } else if (a.symmetry != Symmetry::General || field != a.field) {
    fmt::format_to(it, "% written by spmv; source field {}, symmetry {}{}\n", to_string(a.field), to_string(a.symmetry),
                   a.symmetry != Symmetry::General ? " (stored expanded)" : "");
  } else {
    fmt::format_to(it, "% written by spmv\n");
  }
  fmt::format_to(it, "{} {} {}\n", a.rows, a.cols, stored);
  for (index_t r = 0; r < a.rows; ++r) {
    for (offset_t p = a.row_ptr[r]; p < a.row_ptr[r + 1]; ++p) {
      const index_t c = a.col[p];
      if (lower && (c > r || (skew && c == r))) continue;  // only the lower triangle; skew: its 0 diagonal neither
      switch (field) {
        case Field::Complex: fmt::format_to(it, "{} {} {:.17g} {:.17g}\n", r + 1, c + 1, val[p], a.imag[p]); break;
        case Field::Pattern: fmt::format_to(it, "{} {}\n", r + 1, c + 1); break;
        case Field::Integer: fmt::format_to(it, "{} {} {}\n", r + 1, c + 1, static_cast<long long>(val[p])); break;
        default:
          // Float values (a view over val_f32) with their own shortest round-trip digits ({}: 9 at most).
          if constexpr (std::is_same_v<V, float>)
            fmt::format_to(it, "{} {} {}\n", r + 1, c + 1, val[p]);
          else
            fmt::format_to(it, "{} {} {:.17g}\n", r + 1, c + 1, val[p]);
      }
      out.maybe_flush();
    }
  }
  out.close();
}

}  // namespace

void write_matrix_market(const std::string& path, const CsrView& a, const WriteOptions& opt) {
  spmv::detail::visit_values(a, [&](const auto* val) { write_coordinate(path, a, val, opt); });
}

void write_matrix_market(const std::string& path, const CsrView& a, const std::string& generated) {
  WriteOptions opt;
  opt.expand = true;
  opt.generated = generated;
  write_matrix_market(path, a, opt);
}

void write_dense_vector(const std::string& path, const std::vector<double>& v) {
  write_dense_matrix(path, v, static_cast<index_t>(v.size()), 1);
}

void write_dense_matrix(const std::string& path, const std::vector<double>& v, index_t rows, index_t cols) {
  if (static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols) != v.size())
    throw Error(fmt::format("{}: {} values are not a {} x {} matrix", path, v.size(), rows, cols));
  Out out(path);
  auto it = std::back_inserter(out.buf());
  fmt::format_to(it, "%%MatrixMarket matrix array real general\n{} {}\n", rows, cols);
  for (std::size_t i = 0; i < v.size(); ++i) {
    fmt::format_to(it, "{:.17g}\n", v[i]);
    if ((i & 0xffff) == 0) out.maybe_flush();
  }
  out.close();
}

}  // namespace spmv::io
