// Binary CSR cache (`spmv convert A.mtx A.spmvbin`): a 64-byte header, then the CSR arrays as
// they are in memory, so loading is a few read() calls plus a checksum that runs faster than the
// disk. Layout (little-endian):
//   0  char[8]  magic "SPMVBIN\x1a"       8  u32 version (1)      12 u32 header bytes (64)
//   16 i32 rows   20 i32 cols   24 i64 nnz   32 u32 field   36 u32 symmetry
//   40 u64 payload bytes   48 u64 checksum (header with this field zeroed + every section)
//   56 u64 flags: bit 0 = generated (a synthetic matrix from `spmv generate`); other bits 0
//   payload: row_ptr i64[rows+1] | col i32[nnz] | 0..4 zero bytes to an 8-byte boundary |
//            val f64[nnz] | imag f64[nnz] (complex only)
#include <bit>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <fmt/format.h>
#include <omp.h>
#include <sys/stat.h>
#include <unistd.h>
#include <string_view>
#include <utility>
#include <zlib.h>

#include "io/io_internal.hpp"

namespace spmv::io {

namespace detail {

namespace {

constexpr char kMagic[8] = {'S', 'P', 'M', 'V', 'B', 'I', 'N', '\x1a'};
constexpr std::uint32_t kVersion = 1;

struct BinHeader {
  char magic[8];
  std::uint32_t version;
  std::uint32_t header_bytes;
  std::int32_t rows;
  std::int32_t cols;
  std::int64_t nnz;
  std::uint32_t field;
  std::uint32_t symmetry;
  std::uint64_t payload_bytes;
  std::uint64_t checksum;
  std::uint64_t flags;
};
constexpr std::uint64_t kGenerated = 1;
static_assert(sizeof(BinHeader) == 64);
static_assert(std::endian::native == std::endian::little, "the cache layout is little-endian");

constexpr std::uint64_t P1 = 0x9E3779B185EBCA87ull, P2 = 0xC2B2AE3D27D4EB4Full, P3 = 0x165667B19E3779F9ull;

inline std::uint64_t round(std::uint64_t acc, std::uint64_t in) {
  acc += in * P2;
  acc = std::rotl(acc, 31);
  return acc * P1;
}

// xxhash64-style digest of one block.
std::uint64_t block_digest(const unsigned char* p, std::size_t n, std::uint64_t seed) {
  std::uint64_t a = seed + P1 + P2, b = seed + P2, c = seed, d = seed - P1;
  std::size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    std::uint64_t w[4];
    std::memcpy(w, p + i, 32);
    a = round(a, w[0]);
    b = round(b, w[1]);
    c = round(c, w[2]);
    d = round(d, w[3]);
  }
  std::uint64_t h = std::rotl(a, 1) + std::rotl(b, 7) + std::rotl(c, 12) + std::rotl(d, 18);
  for (; i < n; ++i) h = (h ^ p[i]) * P3;
  h ^= n;
  h ^= h >> 33;
  h *= P2;
  h ^= h >> 29;
  return h;
}

}  // namespace

std::uint64_t checksum(const void* data, std::size_t bytes) {
  constexpr std::size_t kBlock = std::size_t{1} << 20;
  const auto* p = static_cast<const unsigned char*>(data);
  const std::size_t nblocks = (bytes + kBlock - 1) / kBlock;
  std::vector<std::uint64_t> d(nblocks);
#pragma omp parallel for schedule(static) if (nblocks > 4)
  for (std::size_t b = 0; b < nblocks; ++b)
    d[b] = block_digest(p + b * kBlock, std::min(kBlock, bytes - b * kBlock), b);
  std::uint64_t h = P3 ^ bytes;
  for (std::uint64_t x : d) h = round(h, x);
  return h;
}

bool has_binary_magic(std::string_view head) {
  return head.size() >= sizeof kMagic && std::memcmp(head.data(), kMagic, sizeof kMagic) == 0;
}

}  // namespace detail

namespace {

using detail::BinHeader;

struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

std::size_t col_pad(std::int64_t nnz) { return static_cast<std::size_t>(nnz % 2) * 4; }

std::uint64_t payload_bytes(std::int64_t rows, std::int64_t nnz, bool cplx) {
  return static_cast<std::uint64_t>(rows + 1) * 8 + static_cast<std::uint64_t>(nnz) * 4 + col_pad(nnz) +
         static_cast<std::uint64_t>(nnz) * 8 * (cplx ? 2 : 1);
}

std::uint64_t full_checksum(BinHeader h, const CsrView& a) {
  h.checksum = 0;
  std::uint64_t s = detail::checksum(&h, sizeof h);
  auto mix = [&s](const void* p, std::size_t n) { s = (s ^ detail::checksum(p, n)) * 0x9E3779B185EBCA87ull; };
  mix(a.row_ptr.data(), a.row_ptr.size() * sizeof(offset_t));
  mix(a.col.data(), a.col.size() * sizeof(index_t));
  mix(a.val.data(), a.val.size() * sizeof(double));
  if (a.is_complex()) mix(a.imag.data(), a.imag.size() * sizeof(double));
  return s;
}

void write_all(int fd, const std::string& path, const void* p, std::size_t n) {
  const char* c = static_cast<const char*>(p);
  while (n > 0) {
    const ssize_t w = ::write(fd, c, std::min<std::size_t>(n, std::size_t{1} << 30));
    if (w < 0) {
      if (errno == EINTR) continue;
      throw Error(fmt::format("{}: cannot write: {}", path, std::strerror(errno)));
    }
    c += w;
    n -= static_cast<std::size_t>(w);
  }
}

void read_all(int fd, const std::string& path, void* p, std::size_t n) {
  char* c = static_cast<char*>(p);
  while (n > 0) {
    const ssize_t r = ::read(fd, c, std::min<std::size_t>(n, std::size_t{1} << 30));
    if (r < 0) {
      if (errno == EINTR) continue;
      throw ParseError(path, 0, fmt::format("cannot read: {}", std::strerror(errno)));
    }
    if (r == 0) throw ParseError(path, 0, "truncated binary cache: the file ended inside the payload");
    c += r;
    n -= static_cast<std::size_t>(r);
  }
}

}  // namespace

void write_binary(const std::string& path, const CsrView& a, bool generated) {
  const bool cplx = a.is_complex();
  BinHeader h{};
  std::memcpy(h.magic, detail::kMagic, sizeof h.magic);
  h.version = detail::kVersion;
  h.header_bytes = sizeof h;
  h.rows = a.rows;
  h.cols = a.cols;
  h.nnz = a.nnz();
  h.field = static_cast<std::uint32_t>(a.field);
  h.symmetry = static_cast<std::uint32_t>(a.symmetry);
  h.payload_bytes = payload_bytes(a.rows, a.nnz(), cplx);
  h.flags = generated ? detail::kGenerated : 0;
  if (a.row_ptr.size() != static_cast<std::size_t>(a.rows) + 1 || static_cast<offset_t>(a.col.size()) != a.nnz() ||
      static_cast<offset_t>(a.val.size()) != a.nnz() || (cplx && static_cast<offset_t>(a.imag.size()) != a.nnz()))
    throw Error(fmt::format("{}: cannot write an inconsistent CSR matrix", path));
  h.checksum = full_checksum(h, a);

  Fd f{::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)};
  if (f.fd < 0) throw Error(fmt::format("{}: cannot write: {}", path, std::strerror(errno)));
  write_all(f.fd, path, &h, sizeof h);
  write_all(f.fd, path, a.row_ptr.data(), a.row_ptr.size() * sizeof(offset_t));
  write_all(f.fd, path, a.col.data(), a.col.size() * sizeof(index_t));
  const char zeros[8] = {};
  write_all(f.fd, path, zeros, col_pad(a.nnz()));
  write_all(f.fd, path, a.val.data(), a.val.size() * sizeof(double));
  if (cplx) write_all(f.fd, path, a.imag.data(), a.imag.size() * sizeof(double));
  if (::close(std::exchange(f.fd, -1)) != 0)
    throw Error(fmt::format("{}: cannot write: {}", path, std::strerror(errno)));
}

bool is_binary_cache(const std::string& path) {
  Fd f{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (f.fd < 0) return false;
  char head[8];
  return ::pread(f.fd, head, sizeof head, 0) == sizeof head && detail::has_binary_magic({head, sizeof head});
}

std::string generated_description(const std::string& path) {
  {  // a binary cache: its header's flag, from one read of the header
    Fd f{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
    BinHeader h{};  // a shorter file leaves the flags zero
    if (f.fd >= 0 && ::pread(f.fd, &h, sizeof h, 0) >= 8 && detail::has_binary_magic({h.magic, 8}))
      return (h.flags & detail::kGenerated) ? "spmv-generated" : "";
  }
  // The header comments of a Matrix Market file (zlib reads plain and gzip files alike); only the
  // comment lines right after the banner count, so the search never reads into the data.
  gzFile g = gzopen(path.c_str(), "rb");
  if (!g) return "";
  std::string found;
  char line[4096];
  for (int n = 0; n < 64 && gzgets(g, line, sizeof line); ++n) {
    const std::string_view l(line);
    if (n == 0) continue;  // the banner
    if (l.empty() || l[0] != '%') break;
    constexpr std::string_view tag = "% spmv-generated: ";
    if (l.starts_with(tag)) {
      found = std::string(l.substr(tag.size()));
      while (!found.empty() && (found.back() == '\n' || found.back() == '\r')) found.pop_back();
      if (found.empty()) found = "spmv-generated";
      break;
    }
  }
  gzclose(g);
  return found;
}

Csr read_binary(const std::string& path) {
  Fd f{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (f.fd < 0) throw ParseError(path, 0, fmt::format("cannot open: {}", std::strerror(errno)));
  struct stat st{};
  if (::fstat(f.fd, &st) != 0) throw ParseError(path, 0, fmt::format("cannot open: {}", std::strerror(errno)));
  const auto size = static_cast<std::uint64_t>(st.st_size);
  BinHeader h{};
  if (size < 8 || ::pread(f.fd, &h, 8, 0) != 8 || !detail::has_binary_magic({h.magic, 8}))
    throw ParseError(path, 0, "not an spmv binary cache (bad magic number)");
  if (size < sizeof h)
    throw ParseError(path, 0, fmt::format("truncated binary cache: {} bytes, the header alone has {}", size, sizeof h));
  read_all(f.fd, path, &h, sizeof h);
  if (h.version != detail::kVersion)
    throw ParseError(path, 0, fmt::format("binary cache version {} is not supported (this build reads version {})",
                                          h.version, detail::kVersion));
  if (h.header_bytes != sizeof h || h.rows < 0 || h.cols < 0 || h.nnz < 0 || h.field > 3 || h.symmetry > 3 ||
      (h.flags & ~detail::kGenerated) != 0)
    throw ParseError(path, 0, "corrupt binary cache header");
  const bool cplx = static_cast<Field>(h.field) == Field::Complex;
  // nnz is bounded by the file size before anything is allocated.
  if (static_cast<std::uint64_t>(h.nnz) > size / 12 || h.payload_bytes != payload_bytes(h.rows, h.nnz, cplx))
    throw ParseError(path, 0, "corrupt binary cache header: the sizes do not add up to the payload size");
  if (size < sizeof h + h.payload_bytes)
    throw ParseError(path, 0, fmt::format("truncated binary cache: {} bytes, expected {}", size, sizeof h + h.payload_bytes));
  if (size > sizeof h + h.payload_bytes)
    throw ParseError(path, 0, fmt::format("corrupt binary cache: {} bytes after the payload", size - sizeof h - h.payload_bytes));

  Csr a;
  a.rows = h.rows;
  a.cols = h.cols;
  a.field = static_cast<Field>(h.field);
  a.symmetry = static_cast<Symmetry>(h.symmetry);
  a.row_ptr.resize(static_cast<std::size_t>(h.rows) + 1);
  a.col.resize(static_cast<std::size_t>(h.nnz));
  a.val.resize(static_cast<std::size_t>(h.nnz));
  if (cplx) a.imag.resize(static_cast<std::size_t>(h.nnz));
  read_all(f.fd, path, a.row_ptr.data(), a.row_ptr.size() * sizeof(offset_t));
  read_all(f.fd, path, a.col.data(), a.col.size() * sizeof(index_t));
  char pad[8];
  read_all(f.fd, path, pad, col_pad(h.nnz));
  read_all(f.fd, path, a.val.data(), a.val.size() * sizeof(double));
  if (cplx) read_all(f.fd, path, a.imag.data(), a.imag.size() * sizeof(double));
  if (full_checksum(h, a) != h.checksum) throw ParseError(path, 0, "binary cache checksum mismatch: the file is corrupted");

  // A file with a valid checksum can still be hand-made; kernels trust these invariants.
  if (const std::string e = csr_structure_error(a); !e.empty()) throw ParseError(path, 0, "corrupt binary cache: " + e);
  return a;
}

}  // namespace spmv::io
