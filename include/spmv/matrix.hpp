#pragma once
/// @file
/// The two hub formats: COO (what the reader produces) and CSR (what every other format is
/// converted from). Formats are plain data; conversions and kernels are free functions.
#include <spmv/array.hpp>
#include <spmv/types.hpp>

#include <complex>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

namespace spmv {

/// Coordinate list after symmetry expansion. Entries may be unsorted and may repeat
/// (duplicates are summed by coo_to_csr). `imag` is non-empty only for complex matrices. V: the
/// values' type, double (Coo) or float (CooF32: a file read in single precision, real only).
template <class V>
struct BasicCoo {
  using value_type = V;
  index_t rows = 0;
  index_t cols = 0;
  Field field = Field::Real;
  Symmetry symmetry = Symmetry::General;  ///< as declared by the file; storage is always expanded
  Array<index_t> row;
  Array<index_t> col;
  Array<V> val;
  Array<V> imag;

  offset_t nnz() const { return static_cast<offset_t>(row.size()); }
  bool is_complex() const { return field == Field::Complex; }
};
using Coo = BasicCoo<double>;
using CooF32 = BasicCoo<float>;

/// A CSR matrix in arrays someone else owns (a Csr, the user's own arrays, numpy's): what every
/// plan, conversion, reference and statistic reads. Nothing is copied; the arrays must outlive
/// whatever is made from the view (see Plan's lifetime contract) and keep Csr's invariants
/// (csr_structure_error tells; kernels trust them). A Csr converts to it implicitly.
struct CsrView {
  index_t rows = 0;
  index_t cols = 0;
  Field field = Field::Real;
  Symmetry symmetry = Symmetry::General;
  std::span<const offset_t> row_ptr;  ///< rows + 1 entries
  std::span<const index_t> col;
  std::span<const double> val;
  std::span<const double> imag;  ///< non-empty only for complex matrices
  /// The values in float instead of `val`, which is then empty: a matrix kept in single precision
  /// (CsrF32, io::load_f32, numpy float32). Plans in single and mixed precision take them as they
  /// are (no double copy anywhere); double plans and the Matrix Market writer need `val`
  /// (to_double widens exactly). Real matrices only.
  std::span<const float> val_f32;

  offset_t nnz() const { return row_ptr.empty() ? 0 : row_ptr.back(); }
  bool is_complex() const { return field == Field::Complex; }
  bool values_in_float() const { return !val_f32.empty(); }
  offset_t row_length(index_t r) const { return row_ptr[r + 1] - row_ptr[r]; }
};

/// A real CSR matrix over the user's arrays with 32-bit row offsets (scipy's and many codes'
/// default while nnz < 2^31). make_plan widens row_ptr into the plan (8 bytes per row); col and
/// val are borrowed as with CsrView.
struct CsrView32 {
  index_t rows = 0;
  index_t cols = 0;
  std::span<const std::int32_t> row_ptr;  ///< rows + 1 entries
  std::span<const index_t> col;
  std::span<const double> val;
};

/// Compressed sparse rows; columns sorted within each row, no duplicates. V: the values' type,
/// double (Csr) or float (CsrF32: real only; its view carries the values in CsrView::val_f32).
template <class V>
struct BasicCsr {
  using value_type = V;
  index_t rows = 0;
  index_t cols = 0;
  Field field = Field::Real;
  Symmetry symmetry = Symmetry::General;
  Array<offset_t> row_ptr;  ///< rows + 1 entries
  Array<index_t> col;
  Array<V> val;
  Array<V> imag;  ///< non-empty only for complex matrices (double only)

  offset_t nnz() const { return row_ptr.empty() ? 0 : row_ptr.back(); }
  bool is_complex() const { return field == Field::Complex; }
  offset_t row_length(index_t r) const { return row_ptr[r + 1] - row_ptr[r]; }

  CsrView view() const {
    CsrView v{rows, cols, field, symmetry, {row_ptr.data(), row_ptr.size()}, {col.data(), col.size()}, {}, {}, {}};
    if constexpr (std::is_same_v<V, float>) {
      v.val_f32 = {val.data(), val.size()};
    } else {
      v.val = {val.data(), val.size()};
      v.imag = {imag.data(), imag.size()};
    }
    return v;
  }
  operator CsrView() const { return view(); }  // NOLINT: every reader of a Csr takes a view
};
using Csr = BasicCsr<double>;
using CsrF32 = BasicCsr<float>;

/// What is wrong with a's structure, "" when nothing: array sizes, row_ptr from 0 to nnz and
/// non-decreasing, column indices in [0, cols), strictly increasing within each row. The kernels
/// trust these invariants; a Csr made from outside data (a file, a user's arrays) is checked here.
std::string csr_structure_error(const CsrView& a);
/// The same for 32-bit row offsets.
std::string csr_structure_error(const CsrView32& a);

/// Throws Unsupported("<what> needs a real matrix; this one is complex") for complex input.
void require_real(const CsrView& a, const std::string& what);

/// Builds CSR in O(nnz + rows): stable counting sort by row, then columns sorted within each row
/// and duplicates summed (in file order; a float matrix's duplicates are summed in double and
/// rounded once, and a sum beyond float's range is refused with its row and column). Parallel
/// over rows for large inputs.
Csr coo_to_csr(const Coo& coo);
CsrF32 coo_to_csr(const CooF32& coo);
/// The same, taking the COO's arrays (the reader's path): where a copy of the entries fits in 64 MiB
/// a thread, the copying conversion; beyond, in the COO's own arrays without a second copy (entries
/// placed by row in place, so duplicates are summed in a deterministic order that need not be the
/// file's: results can differ from the copying version in the last bit when a position repeats
/// three or more times). `coo` is left empty.
Csr coo_to_csr(Coo&& coo);
CsrF32 coo_to_csr(CooF32&& coo);
/// Expands CSR back to COO in row-major order (used by writers and tests); float values are widened.
Coo csr_to_coo(const CsrView& csr);

/// A's values rounded to float (structure copied): Unsupported naming the first value (row,
/// column) that would round to infinity. Real matrices only.
CsrF32 to_float(const CsrView& a);
/// A's values in double (a float matrix's widened exactly; a double one's copied).
Csr to_double(const CsrView& a);

}  // namespace spmv
