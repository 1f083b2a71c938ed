// CSR <-> CSR5 conversion (layout described in include/spmv/formats/csr5.hpp).
#include <spmv/formats/csr5.hpp>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <fmt/format.h>
#include <omp.h>

#include "core/values.hpp"

namespace spmv {

namespace {

int ceil_log2(std::int64_t v) {
  int b = 0;
  while ((std::int64_t{1} << b) < v) ++b;
  return b;
}

// First row r with row_ptr[r] >= p (rows + 1 when none).
index_t first_row_at_or_after(const FormatArray<offset_t>& rp, offset_t p) {
  return static_cast<index_t>(std::lower_bound(rp.begin(), rp.end(), p) - rp.begin());
}

// Pass 1 for full tile t: its first row (the row holding its first entry, with the empty-row hint
// where a row inside it is empty), its column descriptors (y_offset with column 0's entry 0 counted
// as a segment start; seg_offset from the right; the row-start flags), and its entries transposed
// from CSR order (entry base + c*sigma + i goes to base + i*omega + c), values read in the source's
// type SV and rounded or copied to V. Returns the tile's empty_offset entries: one per segment where
// hinted, else 0. flags, seg: scratch of omega each.
template <class V, class SV>
offset_t build_tile(BasicCsr5<V>& f, const CsrView& a, const SV* src_val, offset_t t, std::vector<std::uint64_t>& flags,
                    std::vector<unsigned>& seg) {
  const auto& rp = f.row_ptr;
  const int omega = f.omega, sigma = f.sigma;
  const offset_t base = t * f.tile_entries(), end = base + f.tile_entries();
  const index_t row0 = static_cast<index_t>(std::upper_bound(rp.begin(), rp.end(), base) - rp.begin()) - 1;
  f.tile_ptr[t] = static_cast<std::uint64_t>(std::max<index_t>(row0, 0));
  // Rows starting inside [base, end): their first entries are the tile's row starts.
  const index_t r_lo = first_row_at_or_after(rp, base), r_hi = first_row_at_or_after(rp, end);
  std::fill(flags.begin(), flags.end(), 0);
  bool empty = false;
  for (index_t r = r_lo; r < r_hi && r < f.rows; ++r) {
    if (rp[r] == rp[r + 1]) {
      empty = true;
      continue;
    }
    const offset_t p = rp[r] - base;
    flags[p / sigma] |= std::uint64_t{1} << (p % sigma);
  }
  if (empty) f.tile_ptr[t] |= Csr5::kEmptyHint;
  unsigned opened = 0;
  unsigned run = 0;  // flag-free columns to the right of the current one
  for (int c = omega - 1; c >= 0; --c) {
    seg[c] = run;
    run = flags[c] != 0 || c == 0 ? 0 : run + 1;
  }
  for (int c = 0; c < omega; ++c) {
    const std::uint64_t d = static_cast<std::uint64_t>(opened) | (static_cast<std::uint64_t>(seg[c]) << f.y_bits) |
                            (flags[c] << (f.y_bits + f.seg_bits));
    const std::size_t w0 = static_cast<std::size_t>(t * f.desc_words) * omega + c;
    f.tile_desc[w0] = static_cast<std::uint32_t>(d);
    if (f.desc_words == 2) f.tile_desc[w0 + omega] = static_cast<std::uint32_t>(d >> 32);
    opened += static_cast<unsigned>(std::popcount(flags[c] | (c == 0 ? 1u : 0u)));
  }
  for (int c = 0; c < omega; ++c)
    for (int i = 0; i < sigma; ++i) {
      const offset_t src = base + static_cast<offset_t>(c) * sigma + i;
      const offset_t dst = base + static_cast<offset_t>(i) * omega + c;
      f.col[dst] = a.col[src];
      f.val[dst] = static_cast<V>(src_val[src]);
    }
  return empty ? opened : 0;
}

// Pass 2: empty_offset of hinted tiles. Segment 0 is the tile's first row; segment k >= 1 is the
// k-th non-empty row starting strictly after the tile's first entry; `counts` says how many pass 1
// found.
template <class V>
void fill_empty_offsets(BasicCsr5<V>& f, const std::vector<offset_t>& counts, int threads) {
  const auto& rp = f.row_ptr;
  const offset_t te = f.tile_entries();
  std::atomic<bool> mismatch{false};
#pragma omp parallel for schedule(dynamic, 64) num_threads(threads) if (f.nnz > (offset_t{1} << 16))
  for (offset_t t = 0; t < f.tiles; ++t) {
    if (!f.hinted(t)) continue;
    const offset_t base = t * te, end = base + te;
    const index_t row0 = Csr5::row_of(f.tile_ptr[t]);
    index_t* out = f.empty_offset.data() + f.empty_offset_ptr[t];
    offset_t k = 0;
    out[k++] = 0;
    for (index_t r = first_row_at_or_after(rp, base + 1); r < f.rows && rp[r] < end; ++r)
      if (rp[r] != rp[r + 1]) out[k++] = r - row0;
    if (k != counts[t]) mismatch = true;  // no throwing inside a parallel region
  }
  if (mismatch) throw Error("csr_to_csr5: segment count mismatch (internal error)");
}

}  // namespace

int csr5_descriptor_bits(int omega, int sigma) {
  return sigma + ceil_log2(static_cast<std::int64_t>(omega) * sigma) + ceil_log2(omega);
}

double csr5_bytes(const CsrView& a, int omega, int sigma, int value_bytes) {
  const double nnz = static_cast<double>(a.nnz());
  const double tiles = std::floor(nnz / (static_cast<double>(omega) * sigma));
  const int words = csr5_descriptor_bits(omega, sigma) <= 32 ? 1 : 2;
  return (4.0 + value_bytes) * nnz + 8.0 * (a.rows + 1.0) + 16.0 * (tiles + 1) + 4.0 * words * omega * tiles;
}

template <class V>
BasicCsr5<V> csr_to_csr5(const CsrView& a, int omega, int sigma, const ConvertOptions& opt) {
  if (omega < 1 || sigma < 1)
    throw Unsupported(fmt::format("CSR5 tile {}x{}: omega and sigma must be at least 1", omega, sigma));
  const int bits = csr5_descriptor_bits(omega, sigma);
  if (bits > 64 || omega > 1024)
    throw Unsupported(
        fmt::format("CSR5 tile {}x{}: a column descriptor would need {} bits (max 64)", omega, sigma, bits));
  check_format_memory("CSR5", csr5_bytes(a, omega, sigma, static_cast<int>(sizeof(V))), a, opt);

  BasicCsr5<V> f;
  f.omega = omega;
  f.sigma = sigma;
  f.rows = a.rows;
  f.cols = a.cols;
  f.nnz = a.nnz();
  f.y_bits = ceil_log2(static_cast<std::int64_t>(omega) * sigma);
  f.seg_bits = ceil_log2(omega);
  f.desc_words = bits <= 32 ? 1 : 2;
  const offset_t te = f.tile_entries();
  f.tiles = f.nnz / te;
  f.row_ptr.resize(std::max<std::size_t>(a.row_ptr.size(), 1));
  f.row_ptr[0] = 0;
#pragma omp parallel for schedule(static) num_threads(conversion_threads(opt)) if (a.rows > (1 << 16))
  for (std::size_t i = 0; i < a.row_ptr.size(); ++i) f.row_ptr[i] = a.row_ptr[i];
  const auto& rp = f.row_ptr;
  const offset_t tiles = f.tiles;
  const bool big = f.nnz > (offset_t{1} << 16);

  f.tile_ptr.assign(tiles + 1, 0);
  f.tile_desc.assign(static_cast<std::size_t>(tiles) * f.desc_words * omega, 0);
  f.empty_offset_ptr.assign(tiles + 1, 0);
  f.col.resize(f.nnz);
  f.val.resize(f.nnz);

  // The source's values are read in their own type (double, or a float matrix's) and rounded or
  // copied to V.
  // Pass 1 over tiles: tile_ptr, the empty-row hint, descriptors, and the count of empty_offset
  // entries (the segments of hinted tiles).
  std::vector<offset_t> eo_count(tiles, 0);
  detail::visit_values(a, [&](const auto* src_val) {
#pragma omp parallel num_threads(conversion_threads(opt)) if (big)
    {
      std::vector<std::uint64_t> flags(omega);
      std::vector<unsigned> seg(omega);
#pragma omp for schedule(static)
      for (offset_t t = 0; t <= tiles; ++t) {
        if (t < tiles) {
          eo_count[t] = build_tile(f, a, src_val, t, flags, seg);
          continue;
        }
        // The end marker: the row holding entry base, or rows where the tiles cover every entry.
        const offset_t base = t * te;
        const index_t row0 = static_cast<index_t>(std::upper_bound(rp.begin(), rp.end(), base) - rp.begin()) - 1;
        f.tile_ptr[t] =
            base >= f.nnz ? static_cast<std::uint64_t>(f.rows) : static_cast<std::uint64_t>(std::max<index_t>(row0, 0));
      }
    }
    std::copy(a.col.begin() + f.tail_begin(), a.col.end(), f.col.begin() + f.tail_begin());
    std::transform(src_val + f.tail_begin(), src_val + f.nnz, f.val.begin() + f.tail_begin(),
                   [](auto v) { return static_cast<V>(v); });
  });

  for (offset_t t = 0; t < tiles; ++t) f.empty_offset_ptr[t + 1] = f.empty_offset_ptr[t] + eo_count[t];
  f.empty_offset.resize(f.empty_offset_ptr[tiles]);
  fill_empty_offsets(f, eo_count, conversion_threads(opt));
  return f;
}

template Csr5 csr_to_csr5<double>(const CsrView&, int, int, const ConvertOptions&);
template Csr5Float csr_to_csr5<float>(const CsrView&, int, int, const ConvertOptions&);

Csr csr5_to_csr(const Csr5& f, int threads) {
  Csr a;
  a.rows = f.rows;
  a.cols = f.cols;
  a.row_ptr.assign(f.row_ptr.begin(), f.row_ptr.end());
  a.col.resize(f.nnz);
  a.val.resize(f.nnz);
  const offset_t te = f.tile_entries();
#pragma omp parallel for schedule(static) \
    num_threads(threads > 0 ? threads : omp_get_max_threads()) if (f.nnz > (offset_t{1} << 16))
  for (offset_t t = 0; t < f.tiles; ++t) {
    const offset_t base = t * te;
    for (int c = 0; c < f.omega; ++c)
      for (int i = 0; i < f.sigma; ++i) {
        const offset_t csr = base + static_cast<offset_t>(c) * f.sigma + i;
        const offset_t stored = base + static_cast<offset_t>(i) * f.omega + c;
        a.col[csr] = f.col[stored];
        a.val[csr] = f.val[stored];
      }
  }
  std::copy(f.col.begin() + f.tail_begin(), f.col.end(), a.col.begin() + f.tail_begin());
  std::copy(f.val.begin() + f.tail_begin(), f.val.end(), a.val.begin() + f.tail_begin());
  return a;
}

}  // namespace spmv
