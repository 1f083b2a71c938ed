#pragma once
/// @file
/// CSR5 (Liu & Vinter, ICS 2015): the nonzeros, in CSR order, cut into full tiles of omega x sigma
/// entries. Inside a full tile, column c (one SIMD lane / one warp lane) owns the sigma consecutive
/// CSR entries base + c*sigma .. base + c*sigma + sigma-1; col/val are stored transposed
/// (entry (c, i) at base + i*omega + c) so that step i of all lanes is one contiguous load.
/// The incomplete last tile (nnz mod omega*sigma entries) stays in CSR order: the "tail".
///
/// Per tile:
///  - tile_ptr[t]: row holding the tile's first entry; bit 63 (kEmptyHint) set when the tile has to
///    handle empty rows: an empty row whose next non-empty row starts inside the tile. Unsigned with
///    a flag bit so that "-0" (tile 0 with empty rows) is representable.
///  - tile_desc: one packed descriptor per column, desc_words 32-bit words, column-interleaved
///    (word w of column c of tile t at (t*desc_words + w)*omega + c) so warp lanes read coalesced.
///    Bits, low to high: y_offset (y_bits), seg_offset (seg_bits), bit_flag (sigma bits).
///      bit_flag bit i of column c: CSR entry base + c*sigma + i starts a row. Bit 0 of column 0 is
///        stored as it is (whether the tile begins a row); kernels always open segment 0 there.
///      y_offset[c]: segments opened in columns < c, counting column 0's entry 0 as opened.
///        Column c's entries before its first flag belong to segment y_offset[c] - 1.
///      seg_offset[c]: number of columns right of c with no flag at all (the columns the segment
///        still open at the bottom of c runs through).
///  - empty_offset: for hinted tiles only, row(k) - tile_ptr for every segment k of the tile
///    (segment k's row is tile_ptr + k when the tile has no empty rows); empty_offset_ptr[t] is
///    where tile t's entries begin.
#include <spmv/formats/limits.hpp>
#include <spmv/formats/storage.hpp>

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

namespace spmv {

/// V: the values' type (double; float for single and mixed precision plans).
template <class V>
struct BasicCsr5 {
  using value_type = V;
  static constexpr std::uint64_t kEmptyHint = std::uint64_t{1} << 63;

  int omega = 4, sigma = 16;
  index_t rows = 0, cols = 0;
  offset_t nnz = 0;
  offset_t tiles = 0;            ///< full tiles: nnz / (omega*sigma)
  int y_bits = 0, seg_bits = 0;  ///< ceil(log2(omega*sigma)), ceil(log2(omega))
  int desc_words = 1;            ///< 32-bit words per column descriptor (1 or 2)

  std::vector<std::uint64_t> tile_ptr;     ///< tiles + 1; tile_ptr[tiles] = row of the tail's 1st entry
  std::vector<std::uint32_t> tile_desc;    ///< tiles * desc_words * omega
  std::vector<offset_t> empty_offset_ptr;  ///< tiles + 1
  std::vector<index_t> empty_offset;
  FormatArray<offset_t> row_ptr;  ///< a copy of the CSR row pointer (the tail and the back-conversion)
  FormatArray<index_t> col;       ///< nnz: full tiles transposed, tail in CSR order
  FormatArray<V> val;

  offset_t tile_entries() const { return static_cast<offset_t>(omega) * sigma; }
  offset_t tail_begin() const { return tiles * tile_entries(); }
  static index_t row_of(std::uint64_t tp) { return static_cast<index_t>(tp & ~kEmptyHint); }
  bool hinted(offset_t t) const { return (tile_ptr[t] & kEmptyHint) != 0; }

  std::uint64_t descriptor(offset_t t, int c) const {
    std::uint64_t v = tile_desc[static_cast<std::size_t>(t * desc_words) * omega + c];
    if (desc_words == 2) v |= std::uint64_t{tile_desc[static_cast<std::size_t>(t * desc_words + 1) * omega + c]} << 32;
    return v;
  }
  unsigned y_offset(std::uint64_t d) const { return static_cast<unsigned>(d & ((std::uint64_t{1} << y_bits) - 1)); }
  unsigned seg_offset(std::uint64_t d) const {
    return static_cast<unsigned>((d >> y_bits) & ((std::uint64_t{1} << seg_bits) - 1));
  }
  std::uint64_t bit_flag(std::uint64_t d) const { return d >> (y_bits + seg_bits); }
};

using Csr5 = BasicCsr5<double>;
using Csr5Float = BasicCsr5<float>;

/// Bits of one column descriptor: sigma + ceil(log2(omega*sigma)) + ceil(log2(omega)); must be <= 64.
int csr5_descriptor_bits(int omega, int sigma);

/// Bytes csr_to_csr5 allocates (without the empty_offset entries, at most a few per empty row), with
/// values of value_bytes each.
double csr5_bytes(const CsrView& a, int omega, int sigma, int value_bytes = 8);
/// Throws Unsupported for omega/sigma < 1 or descriptors over 64 bits, and via
/// check_format_memory when over budget.
/// V = float rounds double values (make_plan has refused values beyond float's range) and copies a float
/// matrix's (CsrView::val_f32); V = double widens those exactly.
template <class V = double>
BasicCsr5<V> csr_to_csr5(const CsrView& a, int omega, int sigma, const ConvertOptions& opt = {});
/// The exact inverse: same row_ptr, col and val, bit for bit. threads: 0 = OpenMP's default.
Csr csr5_to_csr(const Csr5& f, int threads = 0);

}  // namespace spmv
