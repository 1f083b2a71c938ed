#pragma once
// The bytes of an input, read once and in order: a path opened a single time (a regular file is
// mapped; a FIFO, /dev/stdin or any other descriptor is read) or text already in memory. gzip is
// recognised by its magic bytes whatever the name and inflated as it is read (ISA-L, every member
// of a multi-member file), so no reader ever holds the whole file or its decompressed text: a
// mapping's pages are given back as they are consumed.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace spmv::io::detail {

class ByteSource {
 public:
  // Opens `path` once; ParseError "path: cannot open: <reason>" when it cannot be read.
  static ByteSource open(const std::string& path);
  // Bytes someone else owns (they must outlive the source), named `name` in messages; gzip too.
  static ByteSource memory(std::string_view bytes, const std::string& name);

  ByteSource(ByteSource&&) noexcept;
  ByteSource& operator=(ByteSource&&) noexcept;
  ~ByteSource();

  const std::string& name() const { return name_; }
  // Reads up to n bytes of the content (inflated when gzip) into dst; 0 only at the end.
  // ParseError naming the file for read errors and corrupt or truncated gzip data.
  std::size_t read(char* dst, std::size_t n);
  // Reads exactly n bytes or throws ParseError "<name>: <what>: the file ended after X of Y bytes".
  void read_exact(void* dst, std::size_t n, const char* what);
  // Whether the raw bytes are gzip.
  bool gzip() const;
  // The content's size when known before reading it (a regular file or memory that is not gzip);
  // -1 otherwise (pipes, gzip).
  std::int64_t content_size() const;
  // The first bytes of the content (up to 64), without consuming them.
  std::string_view head();

  // The rest of the content as one view when it is all in memory (a mapped regular file or memory,
  // not gzip): read in place instead of through read(); empty otherwise.
  std::string_view contiguous() const;
  // The view's first `upto` bytes are done with: a mapping gives their pages back.
  void consumed_contiguous(std::size_t upto);
  // Whether the content can be read again from its start: gzip in memory (a mapped file, bytes
  // given as such). Content in memory without gzip is read again through contiguous() instead.
  bool can_restart() const;
  // Reads the content again from its start (can_restart() only): the inflater starts over.
  void restart();
  // The view's bytes from `offset` on will be read again (pages given back since are taken again).
  void rereading_from(std::size_t offset);
  // Consumes the view's first n bytes (read in place) as read() would have.
  void advance(std::size_t n);
  // The view's bytes [offset, offset + bytes) will be read soon: the kernel reads them ahead.
  void will_need(std::size_t offset, std::size_t bytes) const;

 private:
  struct State;
  explicit ByteSource(std::unique_ptr<State> s, std::string name);
  std::unique_ptr<State> s_;
  std::string name_;
};

}  // namespace spmv::io::detail
