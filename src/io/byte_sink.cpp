// An output's bytes to a path, plain or gzip (ISA-L's isal_deflate, level 1: several times zlib's
// speed at a ratio close to gzip -1's), through a bounded buffer.
#include "io/byte_sink.hpp"

#include <spmv/types.hpp>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <fmt/format.h>
#include <isa-l/igzip_lib.h>
#include <unistd.h>
#include <utility>
#include <vector>

namespace spmv::io::detail {

namespace {
constexpr std::size_t kOutBuffer = std::size_t{1} << 20;  // compressed bytes written at a time
constexpr std::size_t kMaxIn = std::size_t{1} << 30;      // input bytes per deflate call (avail_in is 32-bit)
}  // namespace

bool gzip_name(const std::string& path) {
  if (path.size() < 3) return false;
  const std::string_view end = std::string_view(path).substr(path.size() - 3);
  return end[0] == '.' && (end[1] == 'g' || end[1] == 'G') && (end[2] == 'z' || end[2] == 'Z');
}

struct ByteSink::State {
  std::string path;
  std::string temp;  // where a regular file is written until close() renames it to path; empty: path itself
  int fd = -1;
  bool gz = false;
  std::unique_ptr<isal_zstream> z;  // about 1 KiB of state plus its level buffer
  std::vector<std::uint8_t> level_buf, out;

  // Without close() (an error on the way): the descriptor closed and a temporary file removed, so
  // a file that was at `path` stays as it was.
  ~State() {
    if (fd >= 0) ::close(fd);
    if (!temp.empty()) ::unlink(temp.c_str());
  }

  [[noreturn]] void fail(const std::string& what) const {
    throw Error(fmt::format("{}: cannot write: {}", path, what));
  }

  void write_raw(const void* data, std::size_t n) {
    const char* p = static_cast<const char*>(data);
    while (n > 0) {
      const ssize_t w = ::write(fd, p, std::min<std::size_t>(n, kMaxIn));
      if (w < 0) {
        if (errno == EINTR) continue;
        fail(std::strerror(errno));
      }
      p += w;
      n -= static_cast<std::size_t>(w);
    }
  }

  // Deflates n bytes; with `last`, ends the stream after them.
  void deflate(const std::uint8_t* p, std::size_t n, bool last) {
    isal_zstream& zs = *z;
    for (;;) {
      const std::size_t take = std::min(n, kMaxIn);
      zs.next_in = const_cast<std::uint8_t*>(p);
      zs.avail_in = static_cast<std::uint32_t>(take);
      zs.end_of_stream = last && take == n ? 1 : 0;
      p += take;
      n -= take;
      // Until this input is taken (and, at the end, until the trailer is out), a buffer at a time.
      do {
        zs.next_out = out.data();
        zs.avail_out = static_cast<std::uint32_t>(out.size());
        const int rc = isal_deflate(&zs);
        if (rc != COMP_OK) fail(fmt::format("gzip compression failed (ISA-L error {})", rc));
        write_raw(out.data(), out.size() - zs.avail_out);
      } while (zs.avail_in > 0 || (zs.end_of_stream && zs.internal_state.state != ZSTATE_END));
      if (n == 0) return;
    }
  }
};

ByteSink::ByteSink(const std::string& path) : s_(std::make_unique<State>()) {
  s_->path = path;
  s_->gz = gzip_name(path);
  if (s_->gz) {
    s_->z = std::make_unique<isal_zstream>();
    isal_deflate_init(s_->z.get());
    s_->level_buf.resize(ISAL_DEF_LVL1_DEFAULT);
    s_->z->level = 1;
    s_->z->level_buf = s_->level_buf.data();
    s_->z->level_buf_size = static_cast<std::uint32_t>(s_->level_buf.size());
    s_->z->gzip_flag = IGZIP_GZIP;  // gzip header and trailer (CRC-32, size)
    s_->out.resize(kOutBuffer);
  }
  // A regular file (or a new one) is written beside its name and renamed over it by close(): an
  // output cut short (disk full, a file size limit) never replaces what was there with a broken
  // file. FIFOs, devices (/dev/stdout) and symbolic links are written in place, and so is a file
  // whose folder takes no new names.
  struct stat st {};
  const bool special = ::lstat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode);
  if (!special) {
    // A name of its own (pid, a counter), created exclusively with the mode a new file gets (0644
    // less the umask).
    static std::atomic<unsigned> serial{0};
    for (int attempt = 0; s_->fd < 0 && attempt < 100; ++attempt) {
      s_->temp = fmt::format("{}.spmv-tmp-{}-{}", path, ::getpid(), serial++);
      s_->fd = ::open(s_->temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
      if (s_->fd < 0 && errno != EEXIST) break;
    }
    if (s_->fd < 0) s_->temp.clear();
  }
  if (s_->fd < 0) {
    s_->fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (s_->fd < 0) s_->fail(std::strerror(errno));
  }
}

ByteSink::ByteSink(ByteSink&&) noexcept = default;
ByteSink& ByteSink::operator=(ByteSink&&) noexcept = default;
ByteSink::~ByteSink() = default;

void ByteSink::write(const void* data, std::size_t n) {
  if (n == 0) return;
  if (s_->gz)
    s_->deflate(static_cast<const std::uint8_t*>(data), n, false);
  else
    s_->write_raw(data, n);
}

void ByteSink::close() {
  if (s_->fd < 0) return;
  if (s_->gz) s_->deflate(nullptr, 0, true);
  const int fd = std::exchange(s_->fd, -1);
  if (::close(fd) != 0) s_->fail(std::strerror(errno));
  if (!s_->temp.empty()) {
    if (::rename(s_->temp.c_str(), s_->path.c_str()) != 0) s_->fail(std::strerror(errno));
    s_->temp.clear();
  }
}

bool ByteSink::gzip() const { return s_->gz; }
const std::string& ByteSink::path() const { return s_->path; }

}  // namespace spmv::io::detail
