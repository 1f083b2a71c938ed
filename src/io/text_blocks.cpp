#include "io/text_blocks.hpp"

#include <spmv/types.hpp>

#include <algorithm>
#include <cstring>
#include <fmt/format.h>

namespace spmv::io::detail {

TextBlocks::TextBlocks(ByteSource& src, std::size_t block_bytes)
    : src_(src), block_(std::max<std::size_t>(block_bytes, 1)), view_(src.contiguous()) {
  if (!view_.empty()) {  // read in place: no buffers
    end_ = view_.size();
    eof_ = true;
    return;
  }
  // Untouched until read into; an input of known size needs no more than it holds.
  std::size_t cap = std::max(block_, kMaxLine) + kMaxLine;
  if (const std::int64_t size = src.content_size(); size >= 0) cap = std::min(cap, static_cast<std::size_t>(size) + 1);
  for (auto& b : buf_) b.reserve(cap);
}

TextBlocks::~TextBlocks() {
  if (next_.valid()) next_.wait();  // the background read uses src_ and the buffer
}

TextBlocks::Filled TextBlocks::read_into(std::vector<char>& b, std::size_t end, std::size_t want) {
  const std::size_t cap = b.capacity();
  want = std::min(want, cap);
  bool eof = false;
  while (end < want) {
    if (b.size() < cap) b.resize(std::min(cap, std::max(end + (std::size_t{1} << 20), 2 * b.size())));
    const std::size_t got = src_.read(b.data() + end, b.size() - end);
    if (got == 0) {
      eof = true;
      break;
    }
    end += got;
  }
  return {end, eof};
}

void TextBlocks::fill(std::size_t want) {
  std::vector<char>& b = buf_[cur_];
  if (pos_ > 0) {
    std::memmove(b.data(), b.data() + pos_, end_ - pos_);
    end_ -= pos_;
    pos_ = 0;
  }
  if (eof_) return;
  const Filled f = read_into(b, end_, want);
  end_ = f.end;
  eof_ = f.eof;
}

bool TextBlocks::next_line(std::string_view& line, bool& too_long) {
  too_long = false;
  for (;;) {
    const char* b = (view_.empty() ? buf_[cur_].data() : view_.data()) + pos_;
    const std::size_t avail = end_ - pos_;
    const auto* nl = static_cast<const char*>(std::memchr(b, '\n', std::min(avail, kMaxLine + 1)));
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

std::string_view TextBlocks::next_view_block(i64 line) {
  src_.consumed_contiguous(pos_);  // the caller is done with the last block
  if (pos_ == end_) return {};
  const std::size_t window = std::min(end_ - pos_, block_ + kMaxLine);
  std::size_t len = window;
  if (pos_ + window < end_) {
    const char* b = view_.data() + pos_;
    const char* p = b + window;
    while (p > b && p[-1] != '\n') --p;
    len = static_cast<std::size_t>(p - b);
    if (len == 0)
      throw ParseError(src_.name(), line, fmt::format("a line longer than {} bytes (no end of line)", kMaxLine));
  }
  src_.will_need(pos_ + len, block_ + kMaxLine);  // read ahead while this block is parsed
  const std::string_view block = view_.substr(pos_, len);
  pos_ += len;
  consumed_ += len;
  return block;
}

void TextBlocks::rewind(std::size_t offset) {
  if (in_memory()) {
    src_.consumed_contiguous(pos_);
    src_.rereading_from(offset);
    pos_ = consumed_ = offset;
    return;
  }
  if (next_.valid()) {  // the background read of the next block: done with, its errors too
    try {
      next_.get();
    } catch (const Error&) {}
  }
  src_.restart();
  cur_ = 0;
  pos_ = end_ = consumed_ = 0;
  eof_ = false;
  for (auto& b : buf_) b.resize(0);  // grown again as the first time (capacity kept)
  // The header's lines again, as read_header read them: the input is then read ahead exactly as
  // the first time, so an error in it comes out at the same point.
  std::string_view line;
  bool too_long = false;
  while (consumed_ < offset && next_line(line, too_long) && !too_long) {}
  if (consumed_ != offset) throw ParseError(src_.name(), 0, "the input changed while it was read again");
}

std::string_view TextBlocks::next_block(i64 line) {
  if (!view_.empty()) return next_view_block(line);
  if (next_.valid()) {  // the block read in the background while the last one was parsed
    const Filled f = next_.get();
    cur_ ^= 1;
    pos_ = 0;
    end_ = f.end;
    eof_ = f.eof;
  } else {
    fill(block_);
  }
  if (end_ == pos_) return {};
  const auto last_newline = [&] {
    const char* b = buf_[cur_].data() + pos_;
    const char* p = buf_[cur_].data() + end_;
    while (p > b && p[-1] != '\n') --p;
    return static_cast<std::size_t>(p - b);
  };
  std::size_t len = eof_ ? end_ - pos_ : last_newline();
  if (len == 0) {  // no whole line yet: read on, up to the buffer's capacity
    fill(buf_[cur_].capacity());
    len = eof_ ? end_ - pos_ : last_newline();
    if (len == 0)
      throw ParseError(src_.name(), line, fmt::format("a line longer than {} bytes (no end of line)", kMaxLine));
  }
  const char* block = buf_[cur_].data() + pos_;
  if (!eof_) {
    // The partial line after the block starts the other buffer, which the rest of the next block
    // is read into while the caller parses this one.
    std::vector<char>& other = buf_[cur_ ^ 1];
    const std::size_t tail = end_ - pos_ - len;
    if (other.size() < tail) other.resize(std::min(other.capacity(), std::max(tail, std::size_t{1} << 20)));
    std::memcpy(other.data(), block + len, tail);
    next_ = std::async(std::launch::async, [this, &other, tail] { return read_into(other, tail, block_); });
  }
  pos_ += len;
  consumed_ += len;
  return {block, len};
}

}  // namespace spmv::io::detail
