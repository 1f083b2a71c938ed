// Getting a file's bytes into memory: one mmap for plain files; gzip (by magic bytes) is mapped
// and decompressed whole with libdeflate, member by member.
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <fmt/format.h>
#include <libdeflate.h>
#include <limits>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <utility>

#include "io/io_internal.hpp"

namespace spmv::io::detail {

LoadedFile::LoadedFile(LoadedFile&& o) noexcept { *this = std::move(o); }

LoadedFile& LoadedFile::operator=(LoadedFile&& o) noexcept {
  if (this != &o) {
    if (map_) munmap(map_, size_);
    map_ = std::exchange(o.map_, nullptr);
    heap_ = std::move(o.heap_);  // the bytes stay where they are: data_ moves as is
    size_ = std::exchange(o.size_, 0);
    data_ = std::exchange(o.data_, nullptr);
  }
  return *this;
}

LoadedFile::~LoadedFile() {
  if (map_) munmap(map_, size_);
}

namespace {

// DEFLATE expands at most 1032:1 (a 258-byte match per 2 bits); the slack covers the headers.
constexpr std::size_t kMaxInflateRatio = 1032;
constexpr std::size_t kMinCapacity = std::size_t{1} << 16;

std::size_t most_inflated(std::size_t compressed) {
  const std::size_t cap = std::numeric_limits<std::size_t>::max() / kMaxInflateRatio - kMinCapacity;
  return std::min(compressed, cap) * kMaxInflateRatio + kMinCapacity;
}

struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

[[noreturn]] void fail_errno(const std::string& path, const char* what) {
  throw ParseError(path, 0, fmt::format("{}: {}", what, std::strerror(errno)));
}

// Resizes a malloc'ed buffer to n bytes (n > 0); running out of memory names the file.
void regrow(HeapBytes& b, std::size_t n, const std::string& path) {
  char* p = static_cast<char*>(std::realloc(b.get(), n));
  if (!p) throw ParseError(path, 0, fmt::format("out of memory: cannot hold {} bytes of the file", n));
  (void)b.release();
  b.reset(p);
}

bool is_gzip(std::string_view s) {
  return s.size() >= 2 && static_cast<unsigned char>(s[0]) == 0x1f && static_cast<unsigned char>(s[1]) == 0x8b;
}

struct Decompressor {
  libdeflate_decompressor* d = libdeflate_alloc_decompressor();
  ~Decompressor() { libdeflate_free_decompressor(d); }
};

// Decompresses every gzip member of `in` into one buffer (their concatenation, as gzip -d
// does). libdeflate needs the whole output space up front: on INSUFFICIENT_SPACE the buffer
// grows (bounded by what the remaining input can expand to) and the member is decompressed again.
// Zero padding after the last member is tolerated, other trailing bytes are an error.
std::pair<HeapBytes, std::size_t> gunzip(const std::string& path, std::string_view in) {
  const auto* src = reinterpret_cast<const unsigned char*>(in.data());
  const std::size_t n = in.size();
  std::uint32_t isize = 0;
  if (n >= 4) isize = src[n - 4] | src[n - 3] << 8 | src[n - 2] << 16 | static_cast<std::uint32_t>(src[n - 1]) << 24;
  Decompressor dec;
  if (!dec.d) throw ParseError(path, 0, "out of memory: cannot allocate a gzip decompressor");
  std::size_t cap = gzip_initial_capacity(n, isize), used = 0, pos = 0;
  HeapBytes out;
  regrow(out, cap, path);
  while (pos < n) {
    if (pos > 0 && !is_gzip(in.substr(pos))) {
      if (std::all_of(src + pos, src + n, [](unsigned char c) { return c == 0; })) break;
      throw ParseError(path, 0, fmt::format("corrupt gzip data: {} bytes of trailing garbage after the gzip data at byte {}",
                                            n - pos, pos));
    }
    std::size_t member_in = 0, member_out = 0;
    const libdeflate_result r = libdeflate_gzip_decompress_ex(dec.d, src + pos, n - pos, out.get() + used, cap - used,
                                                              &member_in, &member_out);
    if (r == LIBDEFLATE_INSUFFICIENT_SPACE) {
      const std::size_t most = used + most_inflated(n - pos);
      if (cap >= most) break;  // cannot be valid data: reported below
      cap = std::min(most, cap * 2);
      regrow(out, cap, path);
      continue;
    }
    if (r != LIBDEFLATE_SUCCESS) break;
    pos += member_in;
    used += member_out;
  }
  if (pos < n && is_gzip(in.substr(pos)))
    throw ParseError(path, 0, fmt::format("corrupt gzip data: the gzip member at byte {} is truncated or damaged "
                                          "(its deflate stream, CRC-32 or length does not check out)", pos));
  if (used < cap) regrow(out, std::max<std::size_t>(used, 1), path);  // give back the unused tail
  return {std::move(out), used};
}

// The bytes of a pipe, /dev/stdin or an unmappable file, read() to the end.
std::pair<HeapBytes, std::size_t> read_all(const std::string& path, int fd, std::size_t size_hint) {
  std::size_t cap = std::max(size_hint, std::size_t{1} << 20), used = 0;
  HeapBytes b;
  regrow(b, cap, path);
  for (;;) {
    if (used == cap) regrow(b, cap *= 2, path);
    const ssize_t got = ::read(fd, b.get() + used, cap - used);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) fail_errno(path, "cannot read");
    if (got == 0) break;
    used += static_cast<std::size_t>(got);
  }
  if (used < cap) regrow(b, std::max<std::size_t>(used, 1), path);
  return {std::move(b), used};
}

}  // namespace

std::size_t gzip_initial_capacity(std::size_t compressed, std::uint32_t isize) {
  const std::size_t c = std::min(compressed, std::numeric_limits<std::size_t>::max() / 64);
  // No ISIZE (0: empty, or the empty last member of a blocked file): about what text compresses to.
  const std::size_t guess = isize ? std::min<std::size_t>(isize, c * 64) : c * 4;
  return std::max(guess, kMinCapacity);
}

LoadedFile load_file(const std::string& path) {
  Fd f{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (f.fd < 0) fail_errno(path, "cannot open");
  struct stat st{};
  if (::fstat(f.fd, &st) != 0) fail_errno(path, "cannot open");
  if (S_ISDIR(st.st_mode)) throw ParseError(path, 0, "cannot open: Is a directory");
  const std::size_t size = static_cast<std::size_t>(st.st_size);

  LoadedFile raw;
  if (S_ISREG(st.st_mode)) {
    if (size == 0) return raw;
    void* p = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, f.fd, 0);
    if (p != MAP_FAILED) {
      ::madvise(p, size, MADV_SEQUENTIAL);  // advice values, not flags: one call each
      ::madvise(p, size, MADV_WILLNEED);
      raw.map_ = p;
      raw.size_ = size;
      raw.data_ = static_cast<const char*>(p);
    }
  }
  if (!raw.data_) {  // a pipe, /dev/stdin, or not mappable (/proc): read() it whole
    auto [bytes, used] = read_all(path, f.fd, S_ISREG(st.st_mode) ? size : 0);
    raw.heap_ = std::move(bytes);
    raw.size_ = used;
    raw.data_ = raw.heap_.get();
  }
  if (!is_gzip(raw.view())) return raw;
  LoadedFile loaded;  // the compressed bytes are unmapped or freed on return
  auto [bytes, used] = gunzip(path, raw.view());
  loaded.heap_ = std::move(bytes);
  loaded.size_ = used;
  loaded.data_ = loaded.heap_.get();
  return loaded;
}

}  // namespace spmv::io::detail
