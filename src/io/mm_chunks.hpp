#pragma once
// The data section in chunks: split at newline boundaries so that each thread works on whole
// lines; pass 1 counts each chunk's lines and entry lines, and prefix sums over those counts give
// every chunk its first line number and first entry index.
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
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
  i64 parsed_newlines = 0;              // pass 2: '\n' bytes before parsed_end
  // pass 2: the entries that follow blank or comment lines, as (entry, line) offsets from the
  // chunk's first: every other entry is on the line after the previous one's.
  std::vector<std::pair<std::uint32_t, std::uint32_t>> anchors;
  std::string error;  // pass 2: message of the first error
};

// Totals over the data section.
struct DataCounts {
  i64 entries = 0;
  i64 newlines = 0;
};

// Splits text[data_begin, end) into chunks of at least min_chunk bytes, a few per thread so that
// uneven lines balance out; a single chunk when threads == 1.
inline constexpr std::size_t kMinChunk = std::size_t{64} << 10;
std::vector<Chunk> split_into_chunks(std::string_view text, std::size_t data_begin, int threads,
                                     std::size_t min_chunk = kMinChunk);

// Pass 1, `threads` chunks at a time: each chunk's newlines and entry lines (lines neither blank
// nor `%` comments).
void count_chunks(const char* base, std::vector<Chunk>& chunks, int threads);

// Prefix sums: each chunk's first line (the block starts on `first_line`) and first entry (the
// block's first is entry `first_entry` of the file).
DataCounts number_chunks(std::vector<Chunk>& chunks, i64 first_line, i64 first_entry);

// For a lone chunk that pass 2 parsed without pass 1: its true counts, from what the parse saw
// and a count of the bytes after where it stopped (lines after its last stored entry).
DataCounts count_parsed_lone_chunk(const char* base, Chunk& c);

// Line number of entry k (0-based), by rescanning its chunk; used only to report errors.
i64 line_of_entry(const char* base, const std::vector<Chunk>& chunks, i64 k);

// Where the entries of blocks already parsed were (their text is gone by the time an error about
// them is found): each chunk's first entry and line and its anchors give an entry's exact line.
// Past kMaxAnchors anchors in all (a file of alternating comment and entry lines), later chunks
// keep only their line range.
class EntryLines {
 public:
  static constexpr std::size_t kMaxAnchors = std::size_t{1} << 22;
  // A parsed chunk (its anchors are moved out); `lines`: its lines, the last one open or not.
  void add(Chunk& c, i64 lines);
  // Entries known only to lie within `lines` lines from `first_line` (a read that kept no lines).
  void add_range(i64 first_entry, i64 entries, i64 first_line, i64 lines);
  struct Where {
    i64 first = 0, last = 0;  // equal: the exact line
  };
  Where find(i64 k) const;

 private:
  struct Span {
    i64 first_entry, entries, first_line, lines;
    bool exact;
    std::vector<std::pair<std::uint32_t, std::uint32_t>> anchors;
  };
  std::vector<Span> spans_;
  std::size_t anchors_ = 0;
};

}  // namespace spmv::io::detail
