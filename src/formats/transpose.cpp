// A^T as CSR by a counting sort over the columns (include/spmv/formats/transpose.hpp).
#include <spmv/formats/transpose.hpp>

#include <algorithm>
#include <span>
#include <vector>

namespace spmv {

namespace {

// Entries are visited row by row, so each row of A^T receives its columns (A's rows) in increasing
// order: sorted without a sort.
template <class V>
BasicCsr<V> transpose_as(const CsrView& a, std::span<const V> val, std::span<const double> imag,
                         const ConvertOptions& opt) {
  check_format_memory("the transpose", transpose_bytes(a), a, opt);
  const auto nnz = static_cast<std::size_t>(a.nnz());
  BasicCsr<V> t{.rows = a.cols,
                .cols = a.rows,
                .field = a.field,
                .symmetry = a.symmetry,
                .row_ptr = Array<offset_t>(static_cast<std::size_t>(a.cols) + 1, 0),
                .col = Array<index_t>(nnz),
                .val = Array<V>(nnz),
                .imag = Array<V>(imag.empty() ? 0 : nnz)};
  for (std::size_t p = 0; p < nnz; ++p) ++t.row_ptr[static_cast<std::size_t>(a.col[p]) + 1];
  for (index_t c = 0; c < a.cols; ++c) t.row_ptr[c + 1] += t.row_ptr[c];
  std::vector<offset_t> next(t.row_ptr.begin(), t.row_ptr.end() - 1);
  for (index_t r = 0; r < a.rows; ++r)
    for (offset_t p = a.row_ptr[r]; p < a.row_ptr[r + 1]; ++p) {
      const offset_t q = next[static_cast<std::size_t>(a.col[p])]++;
      t.col[q] = r;
      t.val[q] = val[p];
      if (!imag.empty()) t.imag[q] = imag[p];
    }
  return t;
}

}  // namespace

double transpose_bytes(const CsrView& a) {
  const double value = a.values_in_float() ? 4.0 : a.is_complex() ? 16.0 : 8.0;
  return 8.0 * (a.cols + 1.0) + (4.0 + value) * static_cast<double>(a.nnz());
}

Csr transpose(const CsrView& a, const ConvertOptions& opt) {
  if (a.values_in_float()) throw Error("transpose: the matrix's values are in float: use transpose_f32");
  return transpose_as<double>(a, a.val, a.imag, opt);
}

CsrF32 transpose_f32(const CsrView& a, const ConvertOptions& opt) {
  if (!a.values_in_float()) throw Error("transpose_f32: the matrix's values are in double: use transpose");
  return transpose_as<float>(a, a.val_f32, {}, opt);
}

Transposed transpose_as_stored(const CsrView& a, const ConvertOptions& opt) {
  Transposed t;
  if (a.values_in_float())
    t.f32 = transpose_f32(a, opt);
  else
    t.f64 = transpose(a, opt);
  return t;
}

}  // namespace spmv
