#pragma once
/// @file
/// A^T as CSR, for the transposed product made with an explicit transpose (PlanOptions::operation).
#include <spmv/formats/limits.hpp>
#include <spmv/matrix.hpp>

namespace spmv {

/// Bytes transpose() allocates: the row pointers of A^T (cols + 1) and every entry's column and value.
double transpose_bytes(const CsrView& a);
/// A^T in CSR, columns sorted within each row, in O(nnz + rows + cols): a counting sort by column.
/// Values come as they are (double; a complex matrix's imaginary parts too, not conjugated);
/// memory checked first against `opt` ("the transpose would need ..."). transpose_f32 is the same
/// for a float matrix (CsrView::val_f32).
Csr transpose(const CsrView& a, const ConvertOptions& opt = {});
CsrF32 transpose_f32(const CsrView& a, const ConvertOptions& opt = {});

/// A^T in the matrix's own value type: a float matrix's (CsrView::val_f32) in f32, else in f64.
struct Transposed {
  Csr f64;
  CsrF32 f32;
  CsrView view() const { return f32.row_ptr.empty() ? f64.view() : f32.view(); }
};
Transposed transpose_as_stored(const CsrView& a, const ConvertOptions& opt = {});

}  // namespace spmv
