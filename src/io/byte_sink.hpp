#pragma once
// The bytes of an output, written once and in order to a path: plain, or gzip-compressed (ISA-L's
// streaming deflate at level 1, one member) when the name ends in ".gz". Memory is bounded whatever
// the output's size: the caller's bytes go through a fixed compressed-output buffer.
#include <cstddef>
#include <memory>
#include <string>

namespace spmv::io::detail {

// Whether a path names gzip output: it ends in ".gz" (any case).
bool gzip_name(const std::string& path);

class ByteSink {
 public:
  // Opens the output: a regular file is written to a temporary file beside `path` that close()
  // renames over it (a sink destroyed without close() removes it, leaving `path` as it was);
  // FIFOs and devices are written in place. Error "path: cannot write: <reason>" when it cannot.
  explicit ByteSink(const std::string& path);
  ByteSink(ByteSink&&) noexcept;
  ByteSink& operator=(ByteSink&&) noexcept;
  // Closes the descriptor without finishing the gzip stream (after an error): use close().
  ~ByteSink();

  // Writes (compresses) n bytes; Error naming the path when the file cannot take them.
  void write(const void* data, std::size_t n);
  // Ends the gzip member (trailer with CRC and size) and closes the file; Error on failure.
  void close();
  bool gzip() const;
  const std::string& path() const;

 private:
  struct State;
  std::unique_ptr<State> s_;
};

}  // namespace spmv::io::detail
