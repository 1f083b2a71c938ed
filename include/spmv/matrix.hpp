#pragma once
/// @file
/// The two hub formats: COO (what the reader produces) and CSR (what every other format is
/// converted from). Formats are plain data; conversions and kernels are free functions.
#include <spmv/types.hpp>

#include <complex>
#include <span>
#include <string>
#include <vector>

namespace spmv {

/// Coordinate list after symmetry expansion. Entries may be unsorted and may repeat
/// (duplicates are summed by coo_to_csr). `imag` is non-empty only for complex matrices.
struct Coo {
  index_t rows = 0;
  index_t cols = 0;
  Field field = Field::Real;
  Symmetry symmetry = Symmetry::General;  ///< as declared by the file; storage is always expanded
  std::vector<index_t> row;
  std::vector<index_t> col;
  std::vector<double> val;
  std::vector<double> imag;

  offset_t nnz() const { return static_cast<offset_t>(row.size()); }
  bool is_complex() const { return field == Field::Complex; }
};

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

  offset_t nnz() const { return row_ptr.empty() ? 0 : row_ptr.back(); }
  bool is_complex() const { return field == Field::Complex; }
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

/// Compressed sparse rows; columns sorted within each row, no duplicates.
struct Csr {
  index_t rows = 0;
  index_t cols = 0;
  Field field = Field::Real;
  Symmetry symmetry = Symmetry::General;
  std::vector<offset_t> row_ptr;  ///< rows + 1 entries
  std::vector<index_t> col;
  std::vector<double> val;
  std::vector<double> imag;  ///< non-empty only for complex matrices

  offset_t nnz() const { return row_ptr.empty() ? 0 : row_ptr.back(); }
  bool is_complex() const { return field == Field::Complex; }
  offset_t row_length(index_t r) const { return row_ptr[r + 1] - row_ptr[r]; }

  CsrView view() const {
    return {rows, cols, field, symmetry, {row_ptr.data(), row_ptr.size()}, {col.data(), col.size()},
            {val.data(), val.size()}, {imag.data(), imag.size()}};
  }
  operator CsrView() const { return view(); }  // NOLINT: every reader of a Csr takes a view
};

/// What is wrong with a's structure, "" when nothing: array sizes, row_ptr from 0 to nnz and
/// non-decreasing, column indices in [0, cols), strictly increasing within each row. The kernels
/// trust these invariants; a Csr made from outside data (a file, a user's arrays) is checked here.
std::string csr_structure_error(const CsrView& a);
/// The same for 32-bit row offsets.
std::string csr_structure_error(const CsrView32& a);

/// Throws Unsupported("<what> needs a real matrix; this one is complex") for complex input.
void require_real(const CsrView& a, const std::string& what);

/// Builds CSR in O(nnz + rows): stable counting sort by row, then columns sorted within each row
/// and duplicates summed (in file order). Parallel over rows for large inputs.
Csr coo_to_csr(const Coo& coo);
/// The same, taking the COO's arrays (the reader's path): where a copy of the entries fits in 64 MiB
/// a thread, the copying conversion; beyond, in the COO's own arrays without a second copy (entries
/// placed by row in place, so duplicates are summed in a deterministic order that need not be the
/// file's: results can differ from the copying version in the last bit when a position repeats
/// three or more times). `coo` is left empty.
Csr coo_to_csr(Coo&& coo);
/// Expands CSR back to COO in row-major order (used by writers and tests).
Coo csr_to_coo(const CsrView& csr);

}  // namespace spmv
