#pragma once
/// @file
/// Hacked ELLPACK: rows cut into hacks of `hack` rows, each an ELL block padded to its own longest
/// row and stored column-major inside the hack, all in one flat buffer addressed by hack_offset.
#include <spmv/formats/limits.hpp>
#include <spmv/formats/storage.hpp>

#include <algorithm>

namespace spmv {

/// V: the values' type (double; float for single and mixed precision plans).
template <class V>
struct BasicHll {
  using value_type = V;
  index_t rows = 0, cols = 0;
  int hack = 32;
  offset_t nnz = 0;
  std::vector<offset_t> hack_offset;  ///< n_hacks + 1; slot offset of each hack
  std::vector<index_t> hack_width;    ///< n_hacks; padded row length of each hack
  FormatArray<index_t> col;           ///< slot (local row r, j) of hack h at
  FormatArray<V> val;                 ///<   hack_offset[h] + j * hack_rows(h) + r

  index_t n_hacks() const { return static_cast<index_t>(hack_width.size()); }
  index_t hack_rows(index_t h) const {
    const offset_t first = static_cast<offset_t>(h) * hack;
    return static_cast<index_t>(std::min<offset_t>(hack, rows - first));
  }
  offset_t slots() const { return hack_offset.empty() ? 0 : hack_offset.back(); }
};

using Hll = BasicHll<double>;
using HllFloat = BasicHll<float>;

/// Each hack's width (its longest row) and slot offset: one parallel O(rows) pass (the host
/// conversion; the CUDA plan makes its own layout on the device).
struct HllLayout {
  std::vector<index_t> width;    ///< n_hacks
  std::vector<offset_t> offset;  ///< n_hacks + 1; offset.back() = slots
  offset_t slots() const { return offset.back(); }
  double bytes(int value_bytes = 8) const;  ///< what csr_to_hll allocates: slots, hack widths and offsets
};
HllLayout hll_layout(const CsrView& a, int hack);

double hll_bytes(const CsrView& a, int hack);
offset_t hll_slots(const CsrView& a, int hack);
/// V = float rounds double values (make_plan has refused values beyond float's range) and copies a float
/// matrix's (CsrView::val_f32); V = double widens those exactly.
template <class V = double>
BasicHll<V> csr_to_hll(const CsrView& a, int hack, const ConvertOptions& opt = {});

}  // namespace spmv
