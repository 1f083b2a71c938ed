#include <spmv/formats/hll.hpp>

#include <fmt/format.h>

namespace spmv {

offset_t hll_slots(const Csr& a, int hack) {
  offset_t slots = 0;
  for (offset_t first = 0; first < a.rows; first += hack) {
    const offset_t last = std::min<offset_t>(first + hack, a.rows);
    offset_t w = 0;
    for (offset_t r = first; r < last; ++r) w = std::max(w, a.row_length(static_cast<index_t>(r)));
    slots += w * (last - first);
  }
  return slots;
}

double hll_bytes(const Csr& a, int hack) {
  const double hacks = static_cast<double>((static_cast<offset_t>(a.rows) + hack - 1) / hack);
  return 12.0 * static_cast<double>(hll_slots(a, hack)) + 12.0 * hacks + 8.0;
}

Hll csr_to_hll(const Csr& a, int hack, const PlanOptions& opt) {
  if (hack < 1) throw Unsupported(fmt::format("HLL hack size must be positive, got {}", hack));
  check_format_memory(fmt::format("HLL (hack {})", hack), hll_bytes(a, hack), a, opt);
  Hll h;
  h.rows = a.rows;
  h.cols = a.cols;
  h.hack = hack;
  h.nnz = a.nnz();
  const index_t n_hacks = static_cast<index_t>((static_cast<offset_t>(a.rows) + hack - 1) / hack);
  h.hack_width.resize(n_hacks);
  h.hack_offset.assign(static_cast<std::size_t>(n_hacks) + 1, 0);
  for (index_t k = 0; k < n_hacks; ++k) {
    const index_t first = k * hack, rows_here = h.hack_rows(k);
    offset_t w = 0;
    for (index_t r = first; r < first + rows_here; ++r) w = std::max(w, a.row_length(r));
    h.hack_width[k] = static_cast<index_t>(w);
    h.hack_offset[k + 1] = h.hack_offset[k] + w * rows_here;
  }
  h.col.resize(h.slots());
  h.val.resize(h.slots());
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
        h.val[s] = j < len ? a.val[b + j] : 0.0;
      }
    }
  }
  return h;
}

}  // namespace spmv
