#pragma once
// A text input first line by line (the header), then in blocks of whole lines (the data, parsed in
// parallel a block at a time). In memory (a mapped file, text given as such) the blocks are views
// into it, the pages behind each block given back once the next is asked for; otherwise (pipes,
// gzip) two buffers of bounded size, the next block read (and inflated) in the background while the
// caller parses one. Nothing looks further than a block and a line ahead, so a line without an end
// (/dev/zero, a flood of NUL bytes) is an error, not a hang or an ever-growing allocation.
#include <cstddef>
#include <future>
#include <string_view>
#include <vector>

#include "io/byte_source.hpp"
#include "io/mm_text.hpp"

namespace spmv::io::detail {

// The longest line accepted: Matrix Market lines are at most 1024 characters; 64 KiB leaves room
// for long comments and digit runs.
inline constexpr std::size_t kMaxLine = std::size_t{64} << 10;

class TextBlocks {
 public:
  // block_bytes: about how much text one block holds.
  TextBlocks(ByteSource& src, std::size_t block_bytes);
  ~TextBlocks();

  // The next line, without its '\n'; false at the end of the input. A line longer than kMaxLine
  // comes back cut to kMaxLine bytes with too_long set (the caller names the error).
  bool next_line(std::string_view& line, bool& too_long);

  // The next block of whole lines from where the lines left off: ends after a '\n', or at the
  // end of the input; empty at the end. Valid until the next call, during which the following
  // block is read. A line over kMaxLine without an end: ParseError naming `line`, the number of the
  // block's first line. Errors of the background read come out of the next call.
  std::string_view next_block(i64 line);

  // Bytes of the input consumed so far (handed out as lines or blocks).
  std::size_t consumed() const { return consumed_; }

  // Whether the input is in memory (a mapped file, text given as such), read in place.
  bool in_memory() const { return !view_.empty(); }
  // Whether rewind() works: the input in memory, or gzip in memory (inflated again from its start).
  bool can_rewind() const { return in_memory() || src_.can_restart(); }
  // The blocks start again at `offset` (a value consumed() returned); can_rewind() only.
  void rewind(std::size_t offset);

 private:
  struct Filled {
    std::size_t end;
    bool eof;
  };
  // Reads into buffer b from byte `end` until `want` bytes are there (at most its capacity) or
  // the input ends.
  Filled read_into(std::vector<char>& b, std::size_t end, std::size_t want);
  // The current buffer: unread bytes moved to the front, then read_into.
  void fill(std::size_t want);

  std::string_view next_view_block(i64 line);  // the in-memory case of next_block

  ByteSource& src_;
  std::size_t block_;
  std::string_view view_;  // the whole content when it is in memory; then pos_ is an offset into it
  std::vector<char> buf_[2];
  int cur_ = 0;
  std::size_t pos_ = 0, end_ = 0, consumed_ = 0;
  bool eof_ = false;
  std::future<Filled> next_;  // the other buffer, being read while the caller parses a block
};

}  // namespace spmv::io::detail
