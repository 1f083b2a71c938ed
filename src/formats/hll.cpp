#include <spmv/formats/hll.hpp>

#include <fmt/format.h>

#include "core/values.hpp"

namespace spmv {

HllLayout hll_layout(const CsrView& a, int hack) {
  if (hack < 1) throw Unsupported(fmt::format("HLL hack size must be positive, got {}", hack));
  const index_t n_hacks = static_cast<index_t>((static_cast<offset_t>(a.rows) + hack - 1) / hack);
  HllLayout l;
  l.width.resize(n_hacks);
  l.offset.assign(static_cast<std::size_t>(n_hacks) + 1, 0);
#pragma omp parallel for schedule(static) if (a.rows > (1 << 16))
  for (index_t h = 0; h < n_hacks; ++h) {
    const offset_t first = static_cast<offset_t>(h) * hack, last = std::min<offset_t>(first + hack, a.rows);
    offset_t w = 0;
    for (offset_t r = first; r < last; ++r) w = std::max(w, a.row_length(static_cast<index_t>(r)));
    l.width[h] = static_cast<index_t>(w);
    l.offset[h + 1] = w * (last - first);
  }
  for (index_t h = 0; h < n_hacks; ++h) l.offset[h + 1] += l.offset[h];
  return l;
}

double HllLayout::bytes(int value_bytes) const {
  return (4.0 + value_bytes) * static_cast<double>(slots()) + 12.0 * static_cast<double>(width.size()) + 8.0;
}

offset_t hll_slots(const CsrView& a, int hack) { return hll_layout(a, hack).slots(); }

double hll_bytes(const CsrView& a, int hack) { return hll_layout(a, hack).bytes(); }

template <class V>
BasicHll<V> csr_to_hll(const CsrView& a, int hack, const ConvertOptions& opt) {
  HllLayout l = hll_layout(a, hack);
  check_format_memory(fmt::format("HLL (hack {})", hack), l.bytes(static_cast<int>(sizeof(V))), a, opt);
  BasicHll<V> h;
  h.rows = a.rows;
  h.cols = a.cols;
  h.hack = hack;
  h.nnz = a.nnz();
  const index_t n_hacks = static_cast<index_t>(l.width.size());
  h.hack_width = std::move(l.width);
  h.hack_offset = std::move(l.offset);
  h.col.resize(h.slots());
  h.val.resize(h.slots());
  // The source's values in their own type (double, or a float matrix's), rounded or copied to V.
  detail::visit_values(a, [&](const auto* src) {
#pragma omp parallel for schedule(dynamic, 64) num_threads(conversion_threads(opt)) if (h.slots() > (1 << 20))
    for (index_t k = 0; k < n_hacks; ++k) {
      const index_t first = k * hack, rows_here = h.hack_rows(k), w = h.hack_width[k];
      for (index_t lr = 0; lr < rows_here; ++lr) {
        const index_t r = first + lr;
        const offset_t b = a.row_ptr[r];
        const index_t len = static_cast<index_t>(a.row_length(r));
        const index_t pad_col = len > 0 ? a.col[b + len - 1] : 0;
        for (index_t j = 0; j < w; ++j) {
          const offset_t s = h.hack_offset[k] + static_cast<offset_t>(j) * rows_here + lr;
          h.col[s] = j < len ? a.col[b + j] : pad_col;
          h.val[s] = j < len ? static_cast<V>(src[b + j]) : V{0};
        }
      }
    }
  });
  return h;
}

template Hll csr_to_hll<double>(const CsrView&, int, const ConvertOptions&);
template HllFloat csr_to_hll<float>(const CsrView&, int, const ConvertOptions&);

}  // namespace spmv
