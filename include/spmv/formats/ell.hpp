#pragma once
/// @file
/// ELLPACK: every row padded to the longest row. Padding slots hold value 0 and the row's last
/// valid column index, so padded loads of x hit a cache line the row already touched.
#include <spmv/formats/limits.hpp>
#include <spmv/formats/storage.hpp>

namespace spmv {

/// V: the values' type (double; float for single and mixed precision plans).
template <class V>
struct BasicEll {
  using value_type = V;
  index_t rows = 0, cols = 0;
  index_t width = 0;                 ///< max nonzeros per row
  offset_t nnz = 0;                  ///< real entries (without padding)
  Layout layout = Layout::RowMajor;  ///< RowMajor: slot (r,j) at r*width+j (CPU);
                                     /// ColMajor: at j*rows+r (GPU, coalesced)
  FormatArray<index_t> col;          ///< rows*width
  FormatArray<V> val;                ///< rows*width
  FormatArray<index_t> row_len;      ///< real length of each row (the ell-rowlen kernels skip padding)

  offset_t slots() const { return static_cast<offset_t>(rows) * width; }
  offset_t at(index_t r, index_t j) const {
    return layout == Layout::RowMajor ? static_cast<offset_t>(r) * width + j : static_cast<offset_t>(j) * rows + r;
  }
};

using Ell = BasicEll<double>;
using EllFloat = BasicEll<float>;

/// The longest row: ELL's width (one parallel pass over the row pointer).
index_t ell_width(const CsrView& a);
/// Bytes an ELL of this width would take: slots (4 + value_bytes each), plus a row length per row.
double ell_bytes(index_t rows, index_t width, int value_bytes = 8);
/// Bytes csr_to_ell would allocate (computed in 64 bits from the row pointer only).
double ell_bytes(const CsrView& a);
/// V = float rounds double values (make_plan has refused values beyond float's range) and copies a float
/// matrix's (CsrView::val_f32); V = double widens those exactly.
template <class V = double>
BasicEll<V> csr_to_ell(const CsrView& a, Layout layout, const ConvertOptions& opt = {});

}  // namespace spmv
