#include <spmv/formats/ell.hpp>

#include "core/values.hpp"

namespace spmv {

index_t ell_width(const CsrView& a) {
  offset_t w = 0;
  const offset_t* rp = a.row_ptr.data();
#pragma omp parallel for reduction(max : w) if (a.rows > (1 << 16))
  for (index_t r = 0; r < a.rows; ++r) w = std::max(w, rp[r + 1] - rp[r]);
  return static_cast<index_t>(w);
}

double ell_bytes(index_t rows, index_t width, int value_bytes) {
  return static_cast<double>(rows) * static_cast<double>(width) * (4.0 + value_bytes) + 4.0 * static_cast<double>(rows);
}

double ell_bytes(const CsrView& a) { return ell_bytes(a.rows, ell_width(a)); }

template <class V>
BasicEll<V> csr_to_ell(const CsrView& a, Layout layout, const ConvertOptions& opt) {
  const index_t width = ell_width(a);
  check_format_memory("ELL", ell_bytes(a.rows, width, static_cast<int>(sizeof(V))), a, opt);
  BasicEll<V> e;
  e.rows = a.rows;
  e.cols = a.cols;
  e.width = width;
  e.nnz = a.nnz();
  e.layout = layout;
  e.col.resize(e.slots());
  e.val.resize(e.slots());
  e.row_len.resize(a.rows);
  // The source's values in their own type (double, or a float matrix's), rounded or copied to V.
  detail::visit_values(a, [&](const auto* src) {
#pragma omp parallel for schedule(static) num_threads(conversion_threads(opt)) if (e.slots() > (1 << 20))
    for (index_t r = 0; r < a.rows; ++r) {
      const offset_t b = a.row_ptr[r];
      const index_t len = static_cast<index_t>(a.row_length(r));
      e.row_len[r] = len;
      const index_t pad_col = len > 0 ? a.col[b + len - 1] : 0;
      for (index_t j = 0; j < e.width; ++j) {
        const offset_t s = e.at(r, j);
        if (j < len) {
          e.col[s] = a.col[b + j];
          e.val[s] = static_cast<V>(src[b + j]);
        } else {
          e.col[s] = pad_col;
          e.val[s] = V{0};
        }
      }
    }
  });
  return e;
}

template Ell csr_to_ell<double>(const CsrView&, Layout, const ConvertOptions&);
template EllFloat csr_to_ell<float>(const CsrView&, Layout, const ConvertOptions&);

}  // namespace spmv
