// An input's bytes in order: a regular file mapped (its pages given back as they are consumed), any
// other descriptor read(), or memory; gzip inflated on the way (ISA-L's streaming inflate, member
// after member: as fast as libdeflate's whole-buffer decompression and twice zlib's,
// bench/results/README.md).
#include "io/byte_source.hpp"

#include <spmv/types.hpp>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <fmt/format.h>
#include <isa-l/igzip_lib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

#include "io/arrays.hpp"

namespace spmv::io::detail {

namespace {
constexpr std::size_t kRawBuffer = std::size_t{1} << 20;     // compressed bytes read at a time
constexpr std::size_t kHead = 64;                            // bytes head() shows
constexpr std::size_t kReleaseStep = std::size_t{16} << 20;  // mapped bytes given back at a time
}  // namespace

struct ByteSource::State {
  std::string name;
  int fd = -1;
  // Memory (the caller's, or a regular file mapped): all raw bytes are there, consumed from mem_pos.
  const char* mem = nullptr;
  std::size_t mem_size = 0, mem_pos = 0;
  void* map = nullptr;       // our own mapping of the file (munmap'ed at the end)
  std::size_t released = 0;  // the mapping's bytes before this are given back (MADV_DONTNEED)
  std::int64_t size = -1;    // the raw size when known (regular file, memory)
  bool raw_eof = false;
  std::uint64_t raw_read_bytes = 0;  // raw bytes taken from the descriptor so far

  // A descriptor's raw bytes read but not yet used: in[in_pos, in_end).
  std::vector<char> in;
  std::size_t in_pos = 0, in_end = 0;

  bool gz = false;
  std::unique_ptr<inflate_state> z;  // about 40 KiB: on the heap
  bool between_members = false;      // after a member's end: padding, another member, or the end
  std::uint64_t member_start = 0;    // raw offset of the current member

  std::string head;  // content bytes peeked by head() (descriptor or gzip), handed out first
  std::size_t head_pos = 0;
  bool head_done = false;

  ~State() {
    if (map) ::munmap(map, mem_size);
    if (fd >= 0) ::close(fd);
  }

  [[noreturn]] void fail(const std::string& what) const { throw ParseError(name, 0, what); }

  // Gives back the mapped pages before raw offset `upto` (a read-only private mapping: they stay
  // in the page cache, the process no longer holds them), a step at a time.
  void release(std::size_t upto) {
    if (!map || upto < released + kReleaseStep) return;
    const std::size_t page = page_bytes();
    const std::size_t end = upto / page * page;
    ::madvise(static_cast<char*>(map) + released, end - released, MADV_DONTNEED);
    released = end;
  }

  // The raw bytes not yet used: a view into memory, or the descriptor's buffer refilled.
  std::string_view raw_view() {
    if (mem) return {mem + mem_pos, mem_size - mem_pos};
    if (in_pos == in_end && !raw_eof) {
      if (in.empty()) in.resize(kRawBuffer);
      in_pos = 0;
      in_end = 0;
      for (;;) {
        const ssize_t r = ::read(fd, in.data(), in.size());
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) fail(fmt::format("cannot read: {}", std::strerror(errno)));
        in_end = static_cast<std::size_t>(r);
        raw_eof = r == 0;
        raw_read_bytes += in_end;
        break;
      }
    }
    return {in.data() + in_pos, in_end - in_pos};
  }
  void raw_consume(std::size_t n) {
    if (mem) {
      mem_pos += n;
      release(mem_pos);
    } else {
      in_pos += n;
    }
  }
  std::uint64_t raw_offset() const { return mem ? mem_pos : raw_read_bytes - (in_end - in_pos); }

  // The first raw bytes tell gzip (a descriptor's are read into `in` and used from there).
  void sniff() {
    if (!mem) {
      in.resize(kRawBuffer);
      while (in_end < 2 && !raw_eof) {
        const ssize_t r = ::read(fd, in.data() + in_end, in.size() - in_end);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) fail(fmt::format("cannot read: {}", std::strerror(errno)));
        raw_eof = r == 0;
        in_end += static_cast<std::size_t>(r);
        raw_read_bytes += static_cast<std::size_t>(r);
      }
    }
    const std::string_view v = mem ? std::string_view(mem, mem_size) : std::string_view(in.data(), in_end);
    gz = v.size() >= 2 && static_cast<unsigned char>(v[0]) == 0x1f && static_cast<unsigned char>(v[1]) == 0x8b;
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
      const std::string_view v = raw_view();
      if (v.empty()) return false;
      std::size_t zeros = 0;
      while (zeros < v.size() && v[zeros] == 0) ++zeros;  // padding (blocked tape images)
      raw_consume(zeros);
      if (zeros == v.size()) continue;
      if (static_cast<unsigned char>(v[zeros]) != 0x1f)
        fail(fmt::format("corrupt gzip data: trailing garbage after the gzip data at byte {}", raw_offset()));
      start_member();
      return true;
    }
  }

  static const char* why(int r) {
    switch (r) {
      case ISAL_INCORRECT_CHECKSUM: return "its CRC-32 or length does not check out";
      case ISAL_INVALID_WRAPPER: return "bad gzip header";
      case ISAL_UNSUPPORTED_METHOD: return "not deflate-compressed";
      default: return "invalid deflate data";
    }
  }

  std::size_t inflate_into(char* dst, std::size_t n) {
    n = std::min<std::size_t>(n, UINT32_MAX);
    inflate_state& st = *z;
    st.next_out = reinterpret_cast<std::uint8_t*>(dst);
    st.avail_out = static_cast<std::uint32_t>(n);
    while (st.avail_out == n) {
      if (between_members && !next_member()) break;
      const std::string_view v = raw_view();
      if (v.empty()) fail(fmt::format("corrupt gzip data: the gzip member at byte {} is truncated", member_start));
      st.next_in = reinterpret_cast<std::uint8_t*>(const_cast<char*>(v.data()));
      st.avail_in = static_cast<std::uint32_t>(std::min<std::size_t>(v.size(), kRawBuffer));
      const int r = isal_inflate(&st);
      raw_consume(static_cast<std::size_t>(reinterpret_cast<const char*>(st.next_in) - v.data()));
      if (r < 0)
        fail(fmt::format("corrupt gzip data: the gzip member at byte {} is damaged ({})", member_start, why(r)));
      if (st.block_state == ISAL_BLOCK_FINISH) between_members = true;
    }
    return n - st.avail_out;
  }

  std::size_t content_read(char* dst, std::size_t n) {
    if (gz) return inflate_into(dst, n);
    const std::string_view v = raw_view();
    const std::size_t k = std::min({n, v.size(), 4 * kReleaseStep});  // a mapping given back as it is copied
    std::memcpy(dst, v.data(), k);
    raw_consume(k);
    return k;
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
  struct stat st {};
  if (::fstat(s->fd, &st) != 0) s->fail(fmt::format("cannot open: {}", std::strerror(errno)));
  if (S_ISDIR(st.st_mode)) s->fail("cannot open: Is a directory");
  if (S_ISREG(st.st_mode) && st.st_size > 0) {
    void* p = ::mmap(nullptr, static_cast<std::size_t>(st.st_size), PROT_READ, MAP_PRIVATE, s->fd, 0);
    if (p != MAP_FAILED) {  // else (a /proc file, say) read() like a pipe
      ::madvise(p, static_cast<std::size_t>(st.st_size), MADV_SEQUENTIAL);
      s->map = p;
      s->mem = static_cast<const char*>(p);
      s->mem_size = static_cast<std::size_t>(st.st_size);
      s->size = st.st_size;
    }
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

std::string_view ByteSource::contiguous() const {
  const State& s = *s_;
  if (!s.mem || s.gz || s.head_pos < s.head.size()) return {};
  return {s.mem + s.mem_pos, s.mem_size - s.mem_pos};
}

void ByteSource::consumed_contiguous(std::size_t upto) {
  State& s = *s_;
  s.release(s.mem_pos + upto);
}

bool ByteSource::can_restart() const { return s_->mem && s_->gz; }

void ByteSource::restart() {
  State& s = *s_;
  s.mem_pos = 0;
  s.released = 0;
  s.start_member();
  // The bytes head() peeked are handed out first again, as they were the first time, and the
  // inflater passes over them: the content is read in the same pieces as before.
  std::string again(s.head.size(), '\0');
  for (std::size_t got = 0; got < again.size();) {
    const std::size_t n = s.inflate_into(again.data() + got, again.size() - got);
    if (n == 0) break;
    got += n;
  }
  s.head_pos = 0;
}

void ByteSource::rereading_from(std::size_t offset) {
  State& s = *s_;
  if (!s.map) return;
  const std::size_t page = page_bytes();
  s.released = std::min(s.released, (s.mem_pos + offset) / page * page);
}

void ByteSource::advance(std::size_t n) {
  State& s = *s_;
  s.mem_pos += std::min(n, s.mem_size - s.mem_pos);
  s.release(s.mem_pos);
}

void ByteSource::will_need(std::size_t offset, std::size_t bytes) const {
  const State& s = *s_;
  if (!s.map || offset >= s.mem_size) return;
  const std::size_t page = page_bytes();
  const std::size_t b = (s.mem_pos + offset) / page * page, e = std::min(s.mem_size, s.mem_pos + offset + bytes);
  ::madvise(static_cast<char*>(s.map) + b, e - b, MADV_WILLNEED);
}

std::string_view ByteSource::head() {
  State& s = *s_;
  if (s.mem && !s.gz) return {s.mem + s.mem_pos, std::min(kHead, s.mem_size - s.mem_pos)};  // a peek costs nothing
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
