#pragma once
/// @file
/// The two hub formats: COO (what the reader produces) and CSR (what every other format is
/// converted from). Formats are plain data; conversions and kernels are free functions.
#include <spmv/types.hpp>

#include <complex>
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
};

/// What is wrong with a's structure, "" when nothing: array sizes, row_ptr from 0 to nnz and
/// non-decreasing, column indices in [0, cols), strictly increasing within each row. The kernels
/// trust these invariants; a Csr made from outside data (a file, a user's arrays) is checked here.
std::string csr_structure_error(const Csr& a);

/// Throws Unsupported("<what> needs a real matrix; this one is complex") for complex input.
void require_real(const Csr& a, const std::string& what);

/// Builds CSR in O(nnz + rows): stable counting sort by row, then columns sorted within each row
/// and duplicates summed. Parallel over rows for large inputs.
Csr coo_to_csr(const Coo& coo);
/// Expands CSR back to COO in row-major order (used by writers and tests).
Coo csr_to_coo(const Csr& csr);

}  // namespace spmv
