#include <spmv/matrix.hpp>
#include <spmv/plan.hpp>

#include <algorithm>
#include <fmt/format.h>

namespace spmv {

const char* to_string(Field f) {
  switch (f) {
    case Field::Real: return "real";
    case Field::Integer: return "integer";
    case Field::Pattern: return "pattern";
    case Field::Complex: return "complex";
  }
  return "?";
}

const char* to_string(Symmetry s) {
  switch (s) {
    case Symmetry::General: return "general";
    case Symmetry::Symmetric: return "symmetric";
    case Symmetry::SkewSymmetric: return "skew-symmetric";
    case Symmetry::Hermitian: return "hermitian";
  }
  return "?";
}

const char* to_string(Precision p) {
  switch (p) {
    case Precision::Double: return "double";
    case Precision::Single: return "single";
    case Precision::Mixed: return "mixed";
  }
  return "?";
}

Precision parse_precision(std::string_view s) {
  if (s == "double") return Precision::Double;
  if (s == "single" || s == "float") return Precision::Single;
  if (s == "mixed") return Precision::Mixed;
  throw Unsupported(fmt::format("unknown precision '{}' (double, single or mixed)", s));
}

const char* to_string(Operation op) { return op == Operation::Transpose ? "t" : "n"; }

Operation parse_operation(std::string_view s) {
  if (s == "n" || s == "none") return Operation::NoTranspose;
  if (s == "t" || s == "transpose") return Operation::Transpose;
  throw Unsupported(fmt::format("unknown operation '{}' (n: A, or t: its transpose)", s));
}

const char* to_string(Reorder r) { return r == Reorder::Rcm ? "rcm" : r == Reorder::Auto ? "auto" : "none"; }

Reorder parse_reorder(std::string_view s) {
  if (s == "none") return Reorder::None;
  if (s == "rcm") return Reorder::Rcm;
  if (s == "auto") return Reorder::Auto;
  throw Unsupported(fmt::format("unknown reordering '{}' (none, rcm or auto)", s));
}

const char* to_string(Backend b) {
  switch (b) {
    case Backend::Serial: return "serial";
    case Backend::Omp: return "omp";
    case Backend::Cuda: return "cuda";
  }
  return "?";
}

Backend parse_backend(std::string_view s) {
  if (s == "serial") return Backend::Serial;
  if (s == "omp" || s == "openmp") return Backend::Omp;
  if (s == "cuda" || s == "gpu") return Backend::Cuda;
  throw Unsupported(fmt::format("unknown backend '{}' (expected serial, omp or cuda)", s));
}

ParseError::ParseError(const std::string& f, std::int64_t l, const std::string& r)
    : Error(l > 0 ? fmt::format("{}:{}: {}", f, l, r) : fmt::format("{}: {}", f, r)), file(f), line(l), reason(r) {}

namespace {

// Values a view holds: val's, or val_f32's for a matrix kept in float (never both).
std::size_t values_held(const CsrView& a) { return a.val.empty() ? a.val_f32.size() : a.val.size() + a.val_f32.size(); }
std::size_t values_held(const CsrView32& a) { return a.val.size(); }

// V: CsrView or CsrView32 (same member names; the offset width differs).
template <typename V>
std::string structure_error(const V& a) {
  if (a.rows < 0 || a.cols < 0) return fmt::format("negative shape {} x {}", a.rows, a.cols);
  if (a.row_ptr.size() != static_cast<std::size_t>(a.rows) + 1)
    return fmt::format("row_ptr has {} entries, rows + 1 = {}", a.row_ptr.size(), offset_t{a.rows} + 1);
  const offset_t nnz = a.row_ptr.back();
  if (nnz < 0) return fmt::format("row_ptr ends at {}", nnz);
  if (a.row_ptr[0] != 0 || static_cast<offset_t>(a.col.size()) != nnz || values_held(a) != a.col.size())
    return fmt::format("row_ptr must span 0..nnz with nnz = {} column indices and values (it spans {}..{})",
                       a.col.size(), a.row_ptr[0], nnz);
  // The first bad row, found in parallel on large matrices.
  index_t bad = a.rows;
#pragma omp parallel for schedule(static) reduction(min : bad) if (a.rows > (1 << 16))
  for (index_t r = 0; r < a.rows; ++r) {
    const offset_t b = a.row_ptr[r], e = a.row_ptr[r + 1];
    bool ok = b >= 0 && b <= e && e <= nnz;
    for (offset_t p = b; ok && p < e; ++p)
      ok = a.col[p] >= 0 && a.col[p] < a.cols && (p == b || a.col[p] > a.col[p - 1]);
    if (!ok) bad = std::min(bad, r);
  }
  if (bad == a.rows) return "";
  const offset_t b = a.row_ptr[bad], e = a.row_ptr[bad + 1];
  if (b < 0 || b > e || e > nnz) return fmt::format("row_ptr decreases or leaves 0..nnz at row {}", bad);
  return fmt::format("row {}: column indices must be in [0, cols), sorted and without duplicates", bad);
}

}  // namespace

std::string csr_structure_error(const CsrView& a) { return structure_error(a); }
std::string csr_structure_error(const CsrView32& a) { return structure_error(a); }

void require_real(const CsrView& a, const std::string& what) {
  if (a.is_complex())
    throw Unsupported(
        fmt::format("{} needs a real matrix; this one is complex "
                    "(complex values are read and stored, but only real kernels exist)",
                    what));
}

}  // namespace spmv
