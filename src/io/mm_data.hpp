#pragma once
// The data section a block at a time: the step the reader into COO (mm_reader) and the reader
// straight into CSR (mm_direct) share.
#include <fmt/format.h>
#include <string>

#include "io/arrays.hpp"
#include "io/mm_chunks.hpp"
#include "io/mm_header.hpp"
#include "io/text_blocks.hpp"

namespace spmv::io::detail {

// Where the data section's parse stands between blocks.
struct DataCursor {
  i64 line = 1;  // the next block's first line
  i64 seen = 0;  // entry lines so far (more than the size line's count: an error)
};

// The next block of whole lines split into chunks, counted and parsed `threads` at a time into
// `coo`'s arrays (grown as needed), entry k of the file into slot k - shift; the chunks' lines
// recorded in `lines` unless null (for messages about entries of blocks already gone). Returns the block's entry lines, -1 at the end of the input. ParseError for
// the first error in the block, and for an entry past the size line's count.
template <class V>
i64 parse_next_block(TextBlocks& text, const MmHeader& h, int threads, const ParseTuning& tune, const std::string& name,
                     DataCursor& at, EntryLines* lines, BasicCoo<V>& coo, i64 shift);

// The COO arrays hold at least n entries (never shrunk between blocks; grown without writing: the
// parser fills what it keeps, trim() drops the rest).
template <class V>
void cover(BasicCoo<V>& coo, i64 n, int threads) {
  const auto m = static_cast<std::size_t>(n);
  grow(coo.row, m, threads);
  grow(coo.col, m, threads);
  grow(coo.val, m, threads);
  if (coo.field == Field::Complex) grow(coo.imag, m, threads);
}

// The arrays cut to n entries, the pages written past them given back.
template <class V>
void trim(BasicCoo<V>& coo, i64 n) {
  const auto cut = [m = static_cast<std::size_t>(n)](auto& a) {
    a.resize(m);
    release_tail(a);
  };
  cut(coo.row);
  cut(coo.col);
  cut(coo.val);
  if (coo.field == Field::Complex) cut(coo.imag);
}

// Memory ran out while reading the data: where the read stood.
inline ParseError out_of_memory(const std::string& name, const DataCursor& at) {
  return ParseError(name, at.line, fmt::format("out of memory after {} entries", at.seen));
}

// Step 4 at the end of the data: the file held as many entries as its size line says.
inline void check_entry_count(const DataCursor& at, const MmHeader& h, const std::string& name) {
  if (at.seen < h.entries)
    throw ParseError(name, at.line > 1 ? at.line - 1 : 1,
                     fmt::format("unexpected end of file: {} of {} entries", at.seen, h.entries));
}

}  // namespace spmv::io::detail
