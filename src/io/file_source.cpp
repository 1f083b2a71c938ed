// Getting a file's bytes into memory: one mmap for plain files, zlib for gzip (by magic bytes).
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <utility>
#include <zlib.h>

#include "io/io_internal.hpp"

namespace spmv::io::detail {

LoadedFile::LoadedFile(LoadedFile&& o) noexcept { *this = std::move(o); }

LoadedFile& LoadedFile::operator=(LoadedFile&& o) noexcept {
  if (this != &o) {
    if (map_) munmap(map_, size_);
    map_ = std::exchange(o.map_, nullptr);
    buffer_ = std::move(o.buffer_);
    size_ = std::exchange(o.size_, 0);
    data_ = map_ ? static_cast<const char*>(map_) : (o.data_ ? buffer_.data() : nullptr);
    o.data_ = nullptr;
  }
  return *this;
}

LoadedFile::~LoadedFile() {
  if (map_) munmap(map_, size_);
}

namespace {

struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

[[noreturn]] void fail_errno(const std::string& path, const char* what) {
  throw ParseError(path, 0, fmt::format("{}: {}", what, std::strerror(errno)));
}

std::string gunzip(const std::string& path, int fd, std::size_t compressed_size) {
  const int dup_fd = ::dup(fd);  // gzclose closes its descriptor; ours is closed by Fd
  if (dup_fd < 0) fail_errno(path, "cannot open");
  gzFile gz = gzdopen(dup_fd, "rb");
  if (!gz) {
    ::close(dup_fd);
    throw ParseError(path, 0, "cannot open the gzip stream");
  }
  gzbuffer(gz, 1 << 20);
  std::string out;
  // Matrix Market text compresses about 3-5x; start there and grow geometrically.
  out.resize(std::max<std::size_t>(compressed_size * 4, 1 << 16));
  std::size_t used = 0;
  for (;;) {
    if (used == out.size()) out.resize(out.size() * 2);
    const std::size_t want = std::min<std::size_t>(out.size() - used, 1u << 30);
    const int got = gzread(gz, out.data() + used, static_cast<unsigned>(want));
    if (got < 0) {
      int err = 0;
      const std::string msg = gzerror(gz, &err);
      gzclose(gz);
      throw ParseError(path, 0, "corrupt gzip data: " + msg);
    }
    if (got == 0) break;
    used += static_cast<std::size_t>(got);
  }
  int err = 0;
  const char* msg = gzerror(gz, &err);
  if (err != Z_OK && err != Z_STREAM_END) {
    const std::string m = msg;
    gzclose(gz);
    throw ParseError(path, 0, "corrupt gzip data: " + m);
  }
  gzclose(gz);
  out.resize(used);
  return out;
}

}  // namespace

LoadedFile load_file(const std::string& path) {
  Fd f{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (f.fd < 0) fail_errno(path, "cannot open");
  struct stat st{};
  if (::fstat(f.fd, &st) != 0) fail_errno(path, "cannot open");
  if (S_ISDIR(st.st_mode)) throw ParseError(path, 0, "cannot open: Is a directory");
  const std::size_t size = static_cast<std::size_t>(st.st_size);

  LoadedFile loaded;
  if (!S_ISREG(st.st_mode)) {
    // A pipe or /dev/stdin: no size, no pread. zlib reads it sequentially and passes plain
    // (non-gzip) data through unchanged.
    loaded.buffer_ = gunzip(path, f.fd, 0);
    loaded.size_ = loaded.buffer_.size();
    loaded.data_ = loaded.buffer_.data();
    return loaded;
  }
  unsigned char magic[2] = {0, 0};
  const ssize_t m = ::pread(f.fd, magic, 2, 0);
  if (m < 0) fail_errno(path, "cannot read");
  if (m == 2 && magic[0] == 0x1f && magic[1] == 0x8b) {
    loaded.buffer_ = gunzip(path, f.fd, size);
    loaded.size_ = loaded.buffer_.size();
    loaded.data_ = loaded.buffer_.data();
    return loaded;
  }
  if (size == 0) return loaded;
  void* p = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, f.fd, 0);
  if (p == MAP_FAILED) {
    // Not mappable (a pipe, /proc): fall back to read() into a buffer.
    loaded.buffer_.resize(size);
    std::size_t used = 0;
    while (used < size) {
      const ssize_t got = ::read(f.fd, loaded.buffer_.data() + used, size - used);
      if (got < 0) fail_errno(path, "cannot read");
      if (got == 0) break;
      used += static_cast<std::size_t>(got);
    }
    loaded.buffer_.resize(used);
    loaded.size_ = used;
    loaded.data_ = loaded.buffer_.data();
    return loaded;
  }
  ::madvise(p, size, MADV_SEQUENTIAL);  // advice values, not flags: one call each
  ::madvise(p, size, MADV_WILLNEED);
  loaded.map_ = p;
  loaded.size_ = size;
  loaded.data_ = static_cast<const char*>(p);
  return loaded;
}

}  // namespace spmv::io::detail
