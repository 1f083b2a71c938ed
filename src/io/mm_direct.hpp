#pragma once
// A coordinate file straight into CSR, without the COO's row indices: for a mapped file so large
// that those (4 bytes an entry, beside the CSR's 12) would take the read past its memory bound.
#include <optional>
#include <string>

#include "io/mm_header.hpp"
#include "io/text_blocks.hpp"

namespace spmv::io::detail {

// From the data section on (text right after the header, in memory): pass 1 counts each row's
// entries from the text, pass 2 parses it again a block at a time into a buffer of one block's
// entries and places them in their rows in file order, so the rows sort and their duplicates sum as
// coo_to_csr's do: the matrix the read through the COO makes, and the same errors. nullopt where
// that read does something else (the caller rewinds and takes it): a symmetric file with entries
// in both triangles (mirrored pairs are refused there, by line), a file mostly repeating positions
// (merged there as it is read), or an entry line the two passes count differently.
template <class V>
std::optional<BasicCsr<V>> read_csr_direct(TextBlocks& text, const MmHeader& h, i64 entries_max, int threads,
                                           const ParseTuning& tune, const std::string& name);

}  // namespace spmv::io::detail
