// Binary CSR cache (`spmv convert A.mtx A.spmvbin`): an 80-byte header, then the CSR arrays as
// they are in memory, so loading is reading them into place plus a checksum that runs faster than
// the disk. Layout (little-endian), version 3 (float values) or 2 (double: the same bytes with 72..79
// zero, so that earlier builds read it):
//   0  char[8]  magic "SPMVBIN\x1a"       8  u32 version (2 or 3) 12 u32 header bytes (80)
//   16 i32 rows   20 i32 cols   24 i64 nnz   32 u32 field   36 u32 symmetry
//   40 u64 payload bytes   48 u64 checksum (header with this field and the header checksum zeroed,
//   then every section)   56 u64 flags: bit 0 = generated (from `spmv generate`); other bits 0
//   64 u64 header checksum (bytes 0..63, so that sizes are trusted before anything is allocated)
//   72 u32 value bytes: 4 (float, real matrices only; version 3), 0 (double; version 2)   76 u32 reserved (0)
//   payload: row_ptr i64[rows+1] | col i32[nnz] | 0..4 zero bytes to an 8-byte boundary |
//            val f64 or f32 [nnz] | imag f64[nnz] (complex only)
// Version 1 (a 64-byte header without the header checksum) is still read.
#include <spmv/formats/limits.hpp>
#include <spmv/plan.hpp>

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <optional>
#include <type_traits>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <fmt/format.h>
#include <omp.h>
#include <sys/stat.h>
#include <unistd.h>
#include <string_view>
#include <utility>

#include "io/arrays.hpp"
#include "io/byte_sink.hpp"
#include "io/io_internal.hpp"

namespace spmv::io {

namespace detail {

namespace {

constexpr char kMagic[8] = {'S', 'P', 'M', 'V', 'B', 'I', 'N', '\x1a'};
constexpr std::uint32_t kVersion = 3;

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
  std::uint64_t header_checksum;  // version 2
  std::uint32_t value_bytes;      // version 3; 0 before
  std::uint32_t reserved;
};
constexpr std::uint64_t kGenerated = 1;
constexpr std::size_t kHeaderV1 = 64;
static_assert(sizeof(BinHeader) == 80);
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

constexpr std::size_t kBlock = std::size_t{1} << 20;

std::uint64_t combine(const std::vector<std::uint64_t>& digests, std::size_t bytes) {
  std::uint64_t h = P3 ^ bytes;
  for (std::uint64_t x : digests) h = round(h, x);
  return h;
}

}  // namespace

std::uint64_t checksum(const void* data, std::size_t bytes) {
  const auto* p = static_cast<const unsigned char*>(data);
  const std::size_t nblocks = (bytes + kBlock - 1) / kBlock;
  std::vector<std::uint64_t> d(nblocks);
#pragma omp parallel for schedule(static) if (nblocks > 4)
  for (std::size_t b = 0; b < nblocks; ++b)
    d[b] = block_digest(p + b * kBlock, std::min(kBlock, bytes - b * kBlock), b);
  return combine(d, bytes);
}

std::uint64_t copy_and_checksum(ByteSource& src, void* dst, std::size_t bytes, const char* what) {
  const std::string_view v = src.contiguous();
  if (v.size() < bytes || bytes == 0) {  // a pipe or gzip (or a short file: read_exact says so)
    src.read_exact(dst, bytes, what);
    return checksum(dst, bytes);
  }
  auto* out = static_cast<unsigned char*>(dst);
  const auto* in = reinterpret_cast<const unsigned char*>(v.data());
  const std::size_t nblocks = (bytes + kBlock - 1) / kBlock;
  constexpr std::size_t kWindow = 64;  // blocks copied between two give-backs of the mapping
  std::vector<std::uint64_t> d(nblocks);
  for (std::size_t w = 0; w < nblocks; w += kWindow) {
    const std::size_t w_end = std::min(nblocks, w + kWindow);
#pragma omp parallel for schedule(static) if (w_end - w > 4)
    for (std::size_t b = w; b < w_end; ++b) {
      const std::size_t n = std::min(kBlock, bytes - b * kBlock);
      std::memcpy(out + b * kBlock, in + b * kBlock, n);
      d[b] = block_digest(out + b * kBlock, n, b);  // while the block is in cache
    }
    src.advance(std::min(bytes, w_end * kBlock) - w * kBlock);
  }
  return combine(d, bytes);
}

bool has_binary_magic(std::string_view head) {
  return head.size() >= sizeof kMagic && std::memcmp(head.data(), kMagic, sizeof kMagic) == 0;
}

}  // namespace detail

namespace {

using detail::BinHeader;
using detail::kHeaderV1;

// A fuzzing build (libFuzzer's convention) skips the checksums, so that mutated headers and
// payloads reach the size and structure checks behind them instead of all stopping at the first.
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
constexpr bool checksums_checked = false;
#else
constexpr bool checksums_checked = true;
#endif

std::size_t col_pad(std::int64_t nnz) { return static_cast<std::size_t>(nnz % 2) * 4; }

std::uint64_t payload_bytes(std::int64_t rows, std::int64_t nnz, bool cplx, std::uint32_t value_bytes) {
  return static_cast<std::uint64_t>(rows + 1) * 8 + static_cast<std::uint64_t>(nnz) * 4 + col_pad(nnz) +
         static_cast<std::uint64_t>(nnz) * value_bytes * (cplx ? 2 : 1);
}

std::uint64_t header_checksum(const BinHeader& h) { return detail::checksum(&h, kHeaderV1); }

// The payload checksum: the header's (with the checksum fields zeroed), then each section's mixed in.
std::uint64_t header_part(BinHeader h) {
  h.checksum = 0;
  h.header_checksum = 0;
  return detail::checksum(&h, h.version == 1 ? kHeaderV1 : sizeof h);
}
std::uint64_t mix(std::uint64_t s, std::uint64_t section) { return (s ^ section) * 0x9E3779B185EBCA87ull; }

std::uint64_t full_checksum(const BinHeader& h, const CsrView& a) {
  std::uint64_t s = header_part(h);
  s = mix(s, detail::checksum(a.row_ptr.data(), a.row_ptr.size() * sizeof(offset_t)));
  s = mix(s, detail::checksum(a.col.data(), a.col.size() * sizeof(index_t)));
  if (a.values_in_float())
    s = mix(s, detail::checksum(a.val_f32.data(), a.val_f32.size() * sizeof(float)));
  else
    s = mix(s, detail::checksum(a.val.data(), a.val.size() * sizeof(double)));
  if (a.is_complex()) s = mix(s, detail::checksum(a.imag.data(), a.imag.size() * sizeof(double)));
  return s;
}

}  // namespace

void write_binary(const std::string& path, const CsrView& a, bool generated) {
  const bool cplx = a.is_complex();
  const bool f32 = a.values_in_float();
  BinHeader h{};
  std::memcpy(h.magic, detail::kMagic, sizeof h.magic);
  h.version = f32 ? detail::kVersion : 2;
  h.header_bytes = sizeof h;
  h.rows = a.rows;
  h.cols = a.cols;
  h.nnz = a.nnz();
  h.field = static_cast<std::uint32_t>(a.field);
  h.symmetry = static_cast<std::uint32_t>(a.symmetry);
  h.value_bytes = f32 ? 4 : 0;
  h.payload_bytes = payload_bytes(a.rows, a.nnz(), cplx, f32 ? 4 : 8);
  h.flags = generated ? detail::kGenerated : 0;
  const std::size_t values = f32 ? a.val_f32.size() : a.val.size();
  if (a.row_ptr.size() != static_cast<std::size_t>(a.rows) + 1 || static_cast<offset_t>(a.col.size()) != a.nnz() ||
      static_cast<offset_t>(values) != a.nnz() || (cplx && (f32 || static_cast<offset_t>(a.imag.size()) != a.nnz())))
    throw Error(fmt::format("{}: cannot write an inconsistent CSR matrix", path));
  h.checksum = full_checksum(h, a);
  h.header_checksum = header_checksum(h);  // over the rest of the header, the payload checksum included

  detail::ByteSink f(path);  // gzip-compressed when the name ends in .gz (load() reads either)
  f.write(&h, sizeof h);
  f.write(a.row_ptr.data(), a.row_ptr.size() * sizeof(offset_t));
  f.write(a.col.data(), a.col.size() * sizeof(index_t));
  const char zeros[8] = {};
  f.write(zeros, col_pad(a.nnz()));
  if (f32)
    f.write(a.val_f32.data(), a.val_f32.size() * sizeof(float));
  else
    f.write(a.val.data(), a.val.size() * sizeof(double));
  if (cplx) f.write(a.imag.data(), a.imag.size() * sizeof(double));
  f.close();
}

}  // namespace spmv::io

namespace spmv::io::detail {

namespace {

// Values stored as S, wanted as V: converted after the checksum; double read as float passes
// require_float_range first (a value that would round to infinity refused naming row and column).
template <class V, class S>
void convert_values(const Array<S>& in, BasicCsr<V>& a, const std::string& path) {
  if constexpr (sizeof(V) < sizeof(S)) {  // double read as float: the plans' own range check first
    CsrView stored = a.view();
    stored.val_f32 = {};
    stored.val = {in.data(), in.size()};
    try {
      require_float_range(stored);
    } catch (const Unsupported& e) {
      throw ParseError(path, 0, e.what());
    }
  }
  const auto n = static_cast<offset_t>(in.size());
#pragma omp parallel for schedule(static) if (n > (1 << 16))
  for (offset_t i = 0; i < n; ++i) a.val[i] = static_cast<V>(in[i]);
}

// The header read and checked: magic, version, checksum, sizes that add up, the file's size where
// known, and the memory the matrix needs (with the caller's extra) within the budget.
struct CheckedHeader {
  BinHeader h{};
  std::uint32_t stored_bytes = 8;  // the values' type in the file
  bool cplx = false;
};

template <class V>
CheckedHeader read_header(ByteSource& src, const ReadOptions& opt) {
  const std::string& path = src.name();
  CheckedHeader c;
  BinHeader& h = c.h;
  const std::int64_t size = src.content_size();  // -1: a pipe or gzip (checked as it is read)
  const auto truncated_header = [&](std::size_t header_bytes) {
    return ParseError(path, 0,
                      fmt::format("truncated binary cache: {} bytes, the header alone has {}", size, header_bytes));
  };
  if (size >= 0 && size < 12) throw truncated_header(sizeof h);
  src.read_exact(&h, 12, "truncated binary cache header");  // magic and version
  if (!has_binary_magic({h.magic, 8})) throw ParseError(path, 0, "not an spmv binary cache (bad magic number)");
  if (h.version < 1 || h.version > kVersion)
    throw ParseError(path, 0,
                     fmt::format("binary cache version {} is not supported (this build reads versions 1 to {})",
                                 h.version, kVersion));
  const std::size_t header_bytes = h.version == 1 ? kHeaderV1 : sizeof h;
  if (size >= 0 && size < static_cast<std::int64_t>(header_bytes)) throw truncated_header(header_bytes);
  src.read_exact(reinterpret_cast<char*>(&h) + 12, header_bytes - 12, "truncated binary cache header");
  if (h.header_bytes != header_bytes) throw ParseError(path, 0, "corrupt binary cache header");
  if (h.version >= 2 && checksums_checked && h.header_checksum != header_checksum(h))
    throw ParseError(path, 0, "corrupt binary cache header: its checksum does not match");
  if (h.version >= 2 && (h.reserved != 0 || (h.version == 2 && h.value_bytes != 0)))
    throw ParseError(path, 0, "corrupt binary cache header: reserved bytes are not zero");
  const std::uint32_t stored_bytes = c.stored_bytes = h.version >= 3 ? h.value_bytes : 8;
  if (h.rows < 0 || h.cols < 0 || h.nnz < 0 || h.field > 3 || h.symmetry > 3 || (h.flags & ~kGenerated) != 0)
    throw ParseError(path, 0, "corrupt binary cache header");
  // nnz bounded before it is multiplied (a crafted nnz near 2^62 wrapped the payload size around to
  // a small matching value, found by fuzz_binary): a CSR holds at most rows x cols entries.
  if (h.nnz > static_cast<std::int64_t>(h.rows) * h.cols || h.nnz > (std::int64_t{1} << 56))
    throw ParseError(path, 0,
                     fmt::format("corrupt binary cache header: {} entries in a {} x {} matrix", h.nnz, h.rows, h.cols));
  const bool cplx = c.cplx = static_cast<Field>(h.field) == Field::Complex;
  if ((stored_bytes != 4 && stored_bytes != 8) || (stored_bytes == 4 && cplx))
    throw ParseError(
        path, 0,
        fmt::format("corrupt binary cache header: {}-byte values{}", stored_bytes, cplx ? " in a complex matrix" : ""));
  if (cplx && !std::is_same_v<V, double>)
    throw ParseError(path, 0, "a complex matrix is read in double precision only");
  const bool convert = stored_bytes != sizeof(V);
  if (h.payload_bytes != payload_bytes(h.rows, h.nnz, cplx, stored_bytes))
    throw ParseError(path, 0, "corrupt binary cache header: the sizes do not add up to the payload size");
  // The sizes are bounded by the file's size, when known, and by the budget before anything is allocated.
  if (size >= 0) {
    const auto total = static_cast<std::uint64_t>(size);
    if (total < header_bytes + h.payload_bytes)
      throw ParseError(
          path, 0, fmt::format("truncated binary cache: {} bytes, expected {}", total, header_bytes + h.payload_bytes));
    if (total > header_bytes + h.payload_bytes)
      throw ParseError(
          path, 0,
          fmt::format("corrupt binary cache: {} bytes after the payload", total - header_bytes - h.payload_bytes));
  }
  const double need = static_cast<double>(h.payload_bytes) + (convert ? sizeof(V) * static_cast<double>(h.nnz) : 0.0) +
                      opt.extra_bytes_per_row * h.rows + opt.extra_bytes_per_col * h.cols;
  if (need > input_memory_budget(opt.memory_budget_bytes))
    throw ParseError(path, 0,
                     fmt::format("a {} x {} matrix with {} entries needs {} (with {}); the memory budget is {}", h.rows,
                                 h.cols, h.nnz, memory_size_text(need), opt.extra_what,
                                 memory_size_text(input_memory_budget(opt.memory_budget_bytes))));
  return c;
}

}  // namespace

template <class V>
BasicCsr<V> read_binary(ByteSource& src, const ReadOptions& opt, bool* generated) {
  const std::string& path = src.name();
  const std::int64_t size = src.content_size();  // -1: a pipe or gzip (checked as it is read)
  const CheckedHeader c = read_header<V>(src, opt);
  const BinHeader& h = c.h;
  const std::uint32_t stored_bytes = c.stored_bytes;
  const bool cplx = c.cplx, convert = stored_bytes != sizeof(V);
  BasicCsr<V> a;
  a.rows = h.rows;
  a.cols = h.cols;
  a.field = static_cast<Field>(h.field);
  a.symmetry = static_cast<Symmetry>(h.symmetry);
  // The arrays grown without one thread's page faults, then copied and digested in parallel; from a
  // stream or gzip (size unknown: a header may claim what never comes) grown without committing
  // pages, which the payload then commits as it arrives.
  const int threads = resolve_threads(opt.threads);
  const int grow_threads = size >= 0 ? threads : 1;
  const auto n = static_cast<std::size_t>(h.nnz);
  a.row_ptr.reserve(static_cast<std::size_t>(h.rows) + 1);
  a.col.reserve(n);
  a.val.reserve(n);
  if (cplx) a.imag.reserve(n);
  for (const auto* v : {&a.val, &a.imag}) advise_huge(*v);
  advise_huge(a.row_ptr);
  advise_huge(a.col);
  grow(a.row_ptr, static_cast<std::size_t>(h.rows) + 1, grow_threads);
  grow(a.col, n, grow_threads);
  grow(a.val, n, grow_threads);
  if (cplx) grow(a.imag, n, grow_threads);
  constexpr const char* kShort = "truncated binary cache: the payload";
  std::uint64_t sum = header_part(h);
  sum = mix(sum, copy_and_checksum(src, a.row_ptr.data(), a.row_ptr.size() * sizeof(offset_t), kShort));
  sum = mix(sum, copy_and_checksum(src, a.col.data(), a.col.size() * sizeof(index_t), kShort));
  char pad[8];
  src.read_exact(pad, col_pad(h.nnz), kShort);
  // Values of the other type: read as stored into a scratch array, converted once the checksum holds.
  Array<double> stored64;
  Array<float> stored32;
  if (!convert) {
    sum = mix(sum, copy_and_checksum(src, a.val.data(), a.val.size() * sizeof(V), kShort));
  } else if (stored_bytes == 8) {
    stored64.resize_for_overwrite(n);
    sum = mix(sum, copy_and_checksum(src, stored64.data(), n * sizeof(double), kShort));
  } else {
    stored32.resize_for_overwrite(n);
    sum = mix(sum, copy_and_checksum(src, stored32.data(), n * sizeof(float), kShort));
  }
  if (cplx) sum = mix(sum, copy_and_checksum(src, a.imag.data(), a.imag.size() * sizeof(V), kShort));
  if (src.content_size() < 0 && src.read(pad, 1) != 0)
    throw ParseError(path, 0, "corrupt binary cache: bytes after the payload");
  if (checksums_checked && sum != h.checksum)
    throw ParseError(path, 0, "binary cache checksum mismatch: the file is corrupted");

  // A file with a valid checksum can still be hand-made; kernels trust these invariants.
  if (const std::string e = csr_structure_error(a); !e.empty()) throw ParseError(path, 0, "corrupt binary cache: " + e);
  if (stored_bytes == 8 && convert) convert_values(stored64, a, path);
  if (stored_bytes == 4 && convert) convert_values(stored32, a, path);
  if (generated) *generated = (h.flags & kGenerated) != 0;
  return a;
}

template Csr read_binary(ByteSource&, const ReadOptions&, bool*);
template CsrF32 read_binary(ByteSource&, const ReadOptions&, bool*);

std::optional<BinaryLayout> binary_layout(const std::string& path) {
  ByteSource src = ByteSource::open(path);
  if (src.content_size() < 0 || !has_binary_magic(src.head())) return std::nullopt;  // gzip, a pipe, text
  ReadOptions opt;
  opt.memory_budget_bytes = std::numeric_limits<double>::max();  // the ranks read parts of it
  const CheckedHeader c = read_header<double>(src, opt);
  if (c.cplx) throw ParseError(path, 0, "a complex matrix (the distributed product is real)");
  BinaryLayout l;
  l.rows = c.h.rows;
  l.cols = c.h.cols;
  l.nnz = c.h.nnz;
  l.field = static_cast<Field>(c.h.field);
  l.symmetry = static_cast<Symmetry>(c.h.symmetry);
  l.value_bytes = c.stored_bytes;
  l.row_ptr_at = c.h.header_bytes;
  l.col_at = l.row_ptr_at + (static_cast<std::uint64_t>(l.rows) + 1) * sizeof(offset_t);
  l.val_at = l.col_at + static_cast<std::uint64_t>(l.nnz) * sizeof(index_t) + col_pad(l.nnz);
  return l;
}

namespace {

// `bytes` at `offset` of the file, read whole (pread in pieces).
void read_at(int fd, const std::string& path, std::uint64_t offset, void* dst, std::size_t bytes) {
  auto* p = static_cast<char*>(dst);
  while (bytes > 0) {
    const ssize_t n = ::pread(fd, p, std::min<std::size_t>(bytes, std::size_t{1} << 30), static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0)
      throw ParseError(path, 0, n < 0 ? std::string("read failed: ") + std::strerror(errno) : "truncated binary cache");
    p += n;
    offset += static_cast<std::uint64_t>(n);
    bytes -= static_cast<std::size_t>(n);
  }
}

struct Fd {
  int fd;
  explicit Fd(const std::string& path) : fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC)) {
    if (fd < 0) throw ParseError(path, 0, std::string("cannot open: ") + std::strerror(errno));
  }
  ~Fd() { ::close(fd); }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
};

}  // namespace

std::vector<offset_t> read_binary_row_ptr(const std::string& path, const BinaryLayout& l) {
  const Fd f(path);
  std::vector<offset_t> ptr(static_cast<std::size_t>(l.rows) + 1);
  read_at(f.fd, path, l.row_ptr_at, ptr.data(), ptr.size() * sizeof(offset_t));
  return ptr;
}

Csr read_binary_rows(const std::string& path, const BinaryLayout& l, index_t r0, index_t r1) {
  if (r0 < 0 || r1 < r0 || r1 > l.rows) throw Error(fmt::format("{}: rows {}..{} of {}", path, r0, r1, l.rows));
  const Fd f(path);
  Csr a;
  a.rows = r1 - r0;
  a.cols = l.cols;
  a.field = l.field;
  a.symmetry = l.symmetry;
  a.row_ptr.resize(static_cast<std::size_t>(a.rows) + 1);
  read_at(f.fd, path, l.row_ptr_at + static_cast<std::uint64_t>(r0) * sizeof(offset_t), a.row_ptr.data(),
          a.row_ptr.size() * sizeof(offset_t));
  const offset_t base = a.row_ptr[0], end = a.row_ptr.back();
  if (base < 0 || end < base || end > l.nnz)
    throw ParseError(
        path, 0, fmt::format("corrupt binary cache: rows {}..{} span entries {}..{} of {}", r0, r1, base, end, l.nnz));
  for (offset_t& p : a.row_ptr) p -= base;
  const auto n = static_cast<std::size_t>(end - base);
  a.col.resize(n);
  read_at(f.fd, path, l.col_at + static_cast<std::uint64_t>(base) * sizeof(index_t), a.col.data(), n * sizeof(index_t));
  a.val.resize(n);
  if (l.value_bytes == sizeof(double)) {
    read_at(f.fd, path, l.val_at + static_cast<std::uint64_t>(base) * sizeof(double), a.val.data(), n * sizeof(double));
  } else {
    std::vector<float> v(n);
    read_at(f.fd, path, l.val_at + static_cast<std::uint64_t>(base) * sizeof(float), v.data(), n * sizeof(float));
    std::copy(v.begin(), v.end(), a.val.begin());
  }
  // The file's checksum covers all of it: a part is checked for the structure the kernels trust.
  if (const std::string e = csr_structure_error(a); !e.empty())
    throw ParseError(path, 0, fmt::format("corrupt binary cache (rows {}..{}): {}", r0, r1, e));
  return a;
}

}  // namespace spmv::io::detail
