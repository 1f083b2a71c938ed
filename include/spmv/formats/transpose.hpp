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

}  // namespace spmv
