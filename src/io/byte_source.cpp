// An input's bytes in order: read() from one descriptor, or memory; gzip inflated on the way
// (ISA-L's streaming inflate, member after member, in a bounded buffer: as fast as libdeflate's
// whole-buffer decompression and twice zlib's, bench/results/README.md).
#include "io/byte_source.hpp"

#include <spmv/types.hpp>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>
#include <isa-l/igzip_lib.h>

namespace spmv::io::detail {

namespace {
constexpr std::size_t kRawBuffer = std::size_t{1} << 20;  // compressed bytes read at a time
constexpr std::size_t kHead = 64;                         // bytes head() shows
}  // namespace

struct ByteSource::State {
  std::string name;
  int fd = -1;
  const char* mem = nullptr;  // memory source: the bytes, consumed from mem_pos
  std::size_t mem_size = 0, mem_pos = 0;
  std::int64_t size = -1;  // the raw size when known (regular file, memory)
  bool raw_eof = false;
  std::uint64_t raw_read_bytes = 0;  // raw bytes taken from the descriptor or memory so far

  // Raw bytes read but not yet handed out (plain) or inflated (gzip): in[in_pos, in_end).
  std::vector<char> in;
  std::size_t in_pos = 0, in_end = 0;

  bool gz = false;
  std::unique_ptr<inflate_state> z;  // about 40 KiB: on the heap
  bool between_members = false;     // after a member's end: padding, another member, or the end
  std::uint64_t member_start = 0;   // raw offset of the current member

  std::string head;  // content bytes peeked by head(), handed out first
  std::size_t head_pos = 0;
  bool head_done = false;

  ~State() {
    if (fd >= 0) ::close(fd);
  }

  [[noreturn]] void fail(const std::string& what) const { throw ParseError(name, 0, what); }

  // Up to n raw bytes straight from the descriptor or memory; 0 at the end.
  std::size_t raw_read(char* dst, std::size_t n) {
    if (raw_eof || n == 0) return 0;
    std::size_t got = 0;
    if (mem) {
      got = std::min(n, mem_size - mem_pos);
      std::memcpy(dst, mem + mem_pos, got);
      mem_pos += got;
    } else {
      for (;;) {
        const ssize_t r = ::read(fd, dst, std::min<std::size_t>(n, std::size_t{1} << 30));
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) fail(fmt::format("cannot read: {}", std::strerror(errno)));
        got = static_cast<std::size_t>(r);
        break;
      }
    }
    if (got == 0) raw_eof = true;
    raw_read_bytes += got;
    return got;
  }

  // Refills `in` when it is empty; false at the end of the raw bytes.
  // The raw buffer: 1 MiB, or the whole input when it is smaller (a small file costs what it holds).
  std::size_t raw_capacity() const {
    return size >= 0 ? std::max<std::size_t>(std::min<std::size_t>(kRawBuffer, static_cast<std::size_t>(size)), 2) : kRawBuffer;
  }

  bool refill() {
    if (in_pos < in_end) return true;
    if (in.size() < raw_capacity()) in.resize(raw_capacity());
    in_pos = 0;
    in_end = raw_read(in.data(), in.size());
    return in_end > 0;
  }
  std::uint64_t raw_offset() const { return raw_read_bytes - (in_end - in_pos); }

  // Reads the first raw bytes (at least 2 unless the input is shorter) to tell gzip.
  void sniff() {
    in.resize(raw_capacity());
    while (in_end < 2) {
      const std::size_t got = raw_read(in.data() + in_end, in.size() - in_end);
      if (got == 0) break;
      in_end += got;
    }
    gz = in_end >= 2 && static_cast<unsigned char>(in[0]) == 0x1f && static_cast<unsigned char>(in[1]) == 0x8b;
    if (gz) start_member();
  }

  void start_member() {
    member_start = raw_offset();
    if (!z) {
      z = std::make_unique<inflate_state>();
      isal_inflate_init(z.get());
    } else {
      isal_inflate_reset(z.get());
    }
    z->crc_flag = ISAL_GZIP;  // parse the gzip header, check the CRC-32 and length of the trailer
    between_members = false;
  }

  // After a member: zero padding to the end is tolerated, another member continues, anything
  // else is an error. Returns false at the end of the input.
  bool next_member() {
    for (;;) {
      if (!refill()) return false;
      while (in_pos < in_end && in[in_pos] == 0) ++in_pos;  // padding (blocked tape images)
      if (in_pos == in_end) continue;
      const std::uint64_t at = raw_offset();
      if (static_cast<unsigned char>(in[in_pos]) != 0x1f)
        fail(fmt::format("corrupt gzip data: trailing garbage after the gzip data at byte {}", at));
      start_member();
      return true;
    }
  }

  std::size_t inflate_into(char* dst, std::size_t n) {
    n = std::min<std::size_t>(n, UINT32_MAX);
    inflate_state& st = *z;
    st.next_out = reinterpret_cast<std::uint8_t*>(dst);
    st.avail_out = static_cast<std::uint32_t>(n);
    while (st.avail_out == n) {
      if (between_members && !next_member()) break;
      if (in_pos == in_end && !refill())
        fail(fmt::format("corrupt gzip data: the gzip member at byte {} is truncated", member_start));
      st.next_in = reinterpret_cast<std::uint8_t*>(in.data() + in_pos);
      st.avail_in = static_cast<std::uint32_t>(std::min<std::size_t>(in_end - in_pos, UINT32_MAX));
      const int r = isal_inflate(&st);
      in_pos = static_cast<std::size_t>(reinterpret_cast<char*>(st.next_in) - in.data());
      if (r < 0) fail(fmt::format("corrupt gzip data: the gzip member at byte {} is damaged ({})", member_start, why(r)));
      if (st.block_state == ISAL_BLOCK_FINISH) between_members = true;
    }
    return n - st.avail_out;
  }

  static const char* why(int r) {
    switch (r) {
      case ISAL_INCORRECT_CHECKSUM: return "its CRC-32 or length does not check out";
      case ISAL_INVALID_WRAPPER: return "bad gzip header";
      case ISAL_UNSUPPORTED_METHOD: return "not deflate-compressed";
      default: return "invalid deflate data";
    }
  }

  std::size_t content_read(char* dst, std::size_t n) {
    if (gz) return inflate_into(dst, n);
    if (in_pos < in_end) {
      const std::size_t k = std::min(n, in_end - in_pos);
      std::memcpy(dst, in.data() + in_pos, k);
      in_pos += k;
      return k;
    }
    return raw_read(dst, n);
  }
};

ByteSource::ByteSource(std::unique_ptr<State> s, std::string name) : s_(std::move(s)), name_(std::move(name)) {}
ByteSource::ByteSource(ByteSource&&) noexcept = default;
ByteSource& ByteSource::operator=(ByteSource&&) noexcept = default;
ByteSource::~ByteSource() = default;

ByteSource ByteSource::open(const std::string& path) {
  auto s = std::make_unique<State>();
  s->name = path;
  s->fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (s->fd < 0) s->fail(fmt::format("cannot open: {}", std::strerror(errno)));
  struct stat st{};
  if (::fstat(s->fd, &st) != 0) s->fail(fmt::format("cannot open: {}", std::strerror(errno)));
  if (S_ISDIR(st.st_mode)) s->fail("cannot open: Is a directory");
  if (S_ISREG(st.st_mode)) {
    s->size = static_cast<std::int64_t>(st.st_size);
    ::posix_fadvise(s->fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  }
  s->sniff();
  return ByteSource(std::move(s), path);
}

ByteSource ByteSource::memory(std::string_view bytes, const std::string& name) {
  auto s = std::make_unique<State>();
  s->name = name;
  s->mem = bytes.data();
  s->mem_size = bytes.size();
  s->size = static_cast<std::int64_t>(bytes.size());
  s->sniff();
  return ByteSource(std::move(s), name);
}

bool ByteSource::gzip() const { return s_->gz; }

std::int64_t ByteSource::content_size() const { return s_->gz ? -1 : s_->size; }

std::string_view ByteSource::head() {
  State& s = *s_;
  if (!s.head_done) {
    s.head_done = true;
    s.head.resize(kHead);
    std::size_t got = 0;
    while (got < kHead) {
      const std::size_t r = s.content_read(s.head.data() + got, kHead - got);
      if (r == 0) break;
      got += r;
    }
    s.head.resize(got);
  }
  return std::string_view(s.head).substr(s.head_pos);
}

std::size_t ByteSource::read(char* dst, std::size_t n) {
  State& s = *s_;
  if (s.head_pos < s.head.size()) {
    const std::size_t k = std::min(n, s.head.size() - s.head_pos);
    std::memcpy(dst, s.head.data() + s.head_pos, k);
    s.head_pos += k;
    return k;
  }
  return s.content_read(dst, n);
}

void ByteSource::read_exact(void* dst, std::size_t n, const char* what) {
  char* p = static_cast<char*>(dst);
  std::size_t got = 0;
  while (got < n) {
    const std::size_t r = read(p + got, n - got);
    if (r == 0) throw ParseError(name_, 0, fmt::format("{}: the file ended after {} of {} bytes", what, got, n));
    got += r;
  }
}

}  // namespace spmv::io::detail
