#include "io/text_blocks.hpp"

#include <spmv/types.hpp>

#include <algorithm>
#include <cstring>
#include <fmt/format.h>

namespace spmv::io::detail {

TextBlocks::TextBlocks(ByteSource& src, std::size_t block_bytes) : src_(src), block_(std::max<std::size_t>(block_bytes, 1)) {
  // Untouched until read into; an input of known size needs no more than it holds.
  std::size_t cap = std::max(block_, kMaxLine) + kMaxLine;
  if (const std::int64_t size = src.content_size(); size >= 0) cap = std::min(cap, static_cast<std::size_t>(size) + 1);
  buf_.reserve(cap);
}

void TextBlocks::fill(std::size_t want) {
  if (pos_ > 0) {
    std::memmove(buf_.data(), buf_.data() + pos_, end_ - pos_);
    end_ -= pos_;
    pos_ = 0;
  }
  const std::size_t cap = buf_.capacity();
  want = std::min(want, cap);
  while (!eof_ && end_ < want) {
    if (buf_.size() < cap) buf_.resize(std::min(cap, std::max(end_ + (std::size_t{1} << 20), 2 * buf_.size())));
    const std::size_t got = src_.read(buf_.data() + end_, buf_.size() - end_);
    if (got == 0) eof_ = true;
    end_ += got;
  }
}

bool TextBlocks::next_line(std::string_view& line, bool& too_long) {
  too_long = false;
  for (;;) {
    const char* b = buf_.data() + pos_;
    const std::size_t avail = end_ - pos_;
    const auto* nl = static_cast<const char*>(std::memchr(b, '\n', avail));
    if (nl || (eof_ && avail > 0) || avail > kMaxLine) {
      const std::size_t len = nl ? static_cast<std::size_t>(nl - b) : avail;
      if (len > kMaxLine) {
        too_long = true;
        line = {b, kMaxLine};
        return true;  // the caller throws: the rest of this line is never read
      }
      line = {b, len};
      const std::size_t used = nl ? len + 1 : len;
      pos_ += used;
      consumed_ += used;
      return true;
    }
    if (eof_) return false;
    fill(avail + (std::size_t{1} << 16));  // a line at a time: a header never reads a whole block
  }
}

std::string_view TextBlocks::next_block(i64 line) {
  fill(block_);
  if (end_ == pos_) return {};
  std::size_t len = end_ - pos_;
  if (!eof_) {
    const auto last_newline = [&] {
      const char* b = buf_.data() + pos_;
      const char* p = buf_.data() + end_;
      while (p > b && p[-1] != '\n') --p;
      return static_cast<std::size_t>(p - b);
    };
    len = last_newline();
    if (len == 0) {  // no whole line yet: read on, up to the buffer's capacity
      fill(buf_.capacity());
      len = eof_ ? end_ - pos_ : last_newline();
      if (len == 0) throw ParseError(src_.name(), line, fmt::format("a line longer than {} bytes (no end of line)", kMaxLine));
    }
  }
  const char* b = buf_.data() + pos_;
  pos_ += len;
  consumed_ += len;
  return {b, len};
}

}  // namespace spmv::io::detail
