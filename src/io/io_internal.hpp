#pragma once
// Internals shared by the Matrix Market reader, the writers and the binary cache.
#include <spmv/io.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace spmv::io::detail {

// A malloc'ed byte buffer (grown with realloc, which moves large blocks by remapping pages).
struct FreeBytes {
  void operator()(char* p) const noexcept { std::free(p); }
};
using HeapBytes = std::unique_ptr<char, FreeBytes>;

// The bytes of a file: mmap'ed for plain files (zero copy), decompressed into memory for gzip.
class LoadedFile {
 public:
  LoadedFile() = default;
  LoadedFile(const LoadedFile&) = delete;
  LoadedFile& operator=(const LoadedFile&) = delete;
  LoadedFile(LoadedFile&& o) noexcept;
  LoadedFile& operator=(LoadedFile&& o) noexcept;
  ~LoadedFile();

  std::string_view view() const { return {data_, size_}; }

 private:
  friend LoadedFile load_file(const std::string& path);
  const char* data_ = nullptr;
  std::size_t size_ = 0;
  void* map_ = nullptr;  // munmap'ed on destruction when set
  HeapBytes heap_;       // owns the bytes of a decompressed (or read()) file
};

// Opens `path` (ParseError "path: cannot open: <strerror>" when missing), decompresses gzip
// recognised by its magic bytes 1f 8b whatever the name (libdeflate; every member of a
// multi-member file; "path: corrupt gzip data: ..." for a truncated or damaged one).
LoadedFile load_file(const std::string& path);

// The output buffer a gzip decompression starts with, for `compressed` bytes whose last 4 bytes
// (the last member's ISIZE, the size mod 2^32) read `isize`: ISIZE when plausible, at most 64x the
// compressed size, so that a lying trailer cannot make the reader allocate gigabytes; too small
// a start only costs a retry with a larger buffer.
std::size_t gzip_initial_capacity(std::size_t compressed, std::uint32_t isize);

// True when the first bytes are the binary cache's magic.
bool has_binary_magic(std::string_view head);

enum class MmFormat { Coordinate, Array };

struct Parsed {
  Coo coo;
  MmFormat format = MmFormat::Coordinate;
};

// The whole reader (the pipeline in mm_reader.cpp): banner, header, size line, parallel data
// parse, symmetry expansion.
Parsed parse(std::string_view text, const std::string& name, int threads);

// 64-bit checksum of a byte range, parallel over fixed-size blocks (deterministic whatever the
// thread count): a 4-lane multiply/rotate mix per block, block digests combined in order.
std::uint64_t checksum(const void* data, std::size_t bytes);

}  // namespace spmv::io::detail
