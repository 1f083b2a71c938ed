#pragma once
// The data section in chunks: split at newline boundaries so that each thread works on whole
// lines; pass 1 counts each chunk's lines and entry lines, and prefix sums over those counts give
// every chunk its first line number and first entry index.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "io/mm_text.hpp"

namespace spmv::io::detail {

// A byte range of the data section starting at a line start and ending after a '\n' (the last
// chunk: at the end of the text). Its fields are filled stage by stage.
struct Chunk {
  std::size_t begin = 0, end = 0;       // byte offsets into the text
  i64 newlines = 0, entries = 0;        // pass 1: '\n' bytes, entry lines
  i64 first_line = 0, first_entry = 0;  // prefix sums: line number and entry index at `begin`
  i64 error_line = 0;                   // pass 2: line of the first error; 0: no error
  std::size_t parsed_end = 0;           // pass 2: where it stopped (after the last entry it stored)
  i64 parsed = 0;                       // pass 2: entries it stored
  std::string error;                    // pass 2: message of the first error
};

// Totals over the data section.
struct DataCounts {
  i64 entries = 0;
  i64 newlines = 0;
};

// Splits text[data_begin, end) into chunks of at least 64 KiB, a few per thread so that uneven
// lines balance out; a single chunk when threads == 1.
std::vector<Chunk> split_into_chunks(std::string_view text, std::size_t data_begin, int threads);

// Pass 1, `threads` chunks at a time: each chunk's newlines and entry lines (lines neither blank
// nor `%` comments).
void count_chunks(const char* base, std::vector<Chunk>& chunks, int threads);

// Prefix sums: each chunk's first line (the data section starts on `first_line`) and first entry.
DataCounts number_chunks(std::vector<Chunk>& chunks, i64 first_line);

// For a lone chunk that pass 2 parsed trusting the size line's `expected` (pass 1 skipped): the
// true counts. Exact without recounting when all `expected` entries were stored and only blank
// or comment lines follow (newlines is then 0: it is only needed when entries are missing);
// otherwise the chunk is counted as pass 1 would, for the same messages.
DataCounts recount_lone_chunk(const char* base, Chunk& c, i64 expected);

// Line number of entry k (0-based), by rescanning its chunk; used only to report errors.
i64 line_of_entry(const char* base, const std::vector<Chunk>& chunks, i64 k);

}  // namespace spmv::io::detail
