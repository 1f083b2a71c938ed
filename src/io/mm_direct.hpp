#pragma once
// A coordinate file that can be read twice (a mapped file, or gzip in memory, inflated again)
// straight into CSR, without the COO's 4-byte row indices beside the CSR's 12 bytes an entry and
// without its conversion: a general file in row order in one pass, any other in two (pass 1 counts
// each row's entries from the text).
#include <optional>
#include <string>

#include "io/mm_header.hpp"
#include "io/text_blocks.hpp"

namespace spmv::io::detail {

// From the data section on (text right after the header, TextBlocks::can_rewind()). A general file is read first
// as though in row order: each block parsed into a buffer of one block's entries, appended to the
// CSR's arrays, each row's start recorded as the rows advance. Once a row decreases, and for a
// symmetric file, two passes when `two_passes`: pass 1 counts each row's entries (mirrors
// included) from the text, pass 2 parses it again a block at a time and places each entry in its
// row in file order. Either way the rows then sort and their duplicates sum in file order, as
// coo_to_csr(const Coo&) sums them: the matrix the read through the COO makes (but for the last bit
// of sums that coo_to_csr(Coo&&) takes in its own order, in place), and the same errors. nullopt where that read does
// something else (the caller rewinds and takes it): a file out of row order without `two_passes`,
// a symmetric file with entries in both triangles (mirrored pairs are refused there, by line), a
// file mostly repeating positions (merged there as it is read), or an entry line the two passes
// count differently. *out_of_order (when given) is set for the first of these: the caller may read
// the file once into row groups instead (mm_row_groups).
template <class V>
std::optional<BasicCsr<V>> read_csr_direct(TextBlocks& text, const MmHeader& h, i64 entries_max, int threads,
                                           const ParseTuning& tune, const std::string& name, bool two_passes,
                                           bool* out_of_order = nullptr);

}  // namespace spmv::io::detail
