// gzip input, the parallel parser against the serial one (same COO, same error lines), write/read
// round trips (bit-identical values) and the binary cache (round trip and corruption).
#include <gtest/gtest.h>
#include <spmv/io.hpp>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <random>
#include <sys/resource.h>
#include <unistd.h>
#include <zlib.h>

#include "io/io_internal.hpp"
#include "test_util.hpp"

using namespace spmv;
using test::dump;
using test::error_of;
using test::slurp;
namespace fs = std::filesystem;

namespace {

const std::string kDir = std::string(SPMV_TEST_DATA) + "/mm";

void gzip_file(const std::string& text, const std::string& path) {
  gzFile gz = gzopen(path.c_str(), "wb");
  ASSERT_NE(gz, nullptr);
  ASSERT_EQ(gzwrite(gz, text.data(), static_cast<unsigned>(text.size())), static_cast<int>(text.size()));
  ASSERT_EQ(gzclose(gz), Z_OK);
}

std::string gzipped(const test::ScratchDir& dir, const std::string& text) {
  gzip_file(text, dir / "gzipped.tmp");
  return slurp(dir / "gzipped.tmp");
}

// A 2000-entry coordinate file (about 30 KB of text).
std::string small_text() {
  std::string text = "%%MatrixMarket matrix coordinate real general\n50 40 2000\n";
  for (int i = 0; i < 2000; ++i) text += fmt::format("{} {} {}\n", i % 50 + 1, i % 40 + 1, i * 0.37);
  return text;
}

void expect_same_coo(const Coo& a, const Coo& b) {
  EXPECT_EQ(a.rows, b.rows);
  EXPECT_EQ(a.cols, b.cols);
  EXPECT_EQ(a.field, b.field);
  EXPECT_EQ(a.symmetry, b.symmetry);
  EXPECT_EQ(a.row, b.row);
  EXPECT_EQ(a.col, b.col);
  ASSERT_EQ(a.val.size(), b.val.size());
  EXPECT_EQ(std::memcmp(a.val.data(), b.val.data(), a.val.size() * sizeof(double)), 0);
  EXPECT_EQ(a.imag, b.imag);
}

void expect_bit_identical(const Csr& a, const Csr& b) {
  EXPECT_EQ(a.rows, b.rows);
  EXPECT_EQ(a.cols, b.cols);
  EXPECT_EQ(a.row_ptr, b.row_ptr);
  EXPECT_EQ(a.col, b.col);
  ASSERT_EQ(a.val.size(), b.val.size());
  EXPECT_EQ(std::memcmp(a.val.data(), b.val.data(), a.val.size() * sizeof(double)), 0) << "values differ in bits";
  ASSERT_EQ(a.imag.size(), b.imag.size());
  if (!a.imag.empty()) EXPECT_EQ(std::memcmp(a.imag.data(), b.imag.data(), a.imag.size() * sizeof(double)), 0);
}

// A ~5 MB coordinate file with comments and blank lines sprinkled in; line_of[k] is the line
// number of entry k.
struct BigFile {
  std::string header, body;
  std::vector<std::int64_t> line_of;
  std::vector<std::string> lines;  // the entry lines, to plant errors
  std::string text() const { return header + body; }
};

BigFile big_file(const char* symmetry, std::int64_t n_entries, index_t n) {
  BigFile f;
  std::mt19937_64 g(7);
  std::uniform_int_distribution<index_t> idx(1, n);
  std::uniform_real_distribution<double> v(-1e3, 1e3);
  f.header =
      fmt::format("%%MatrixMarket matrix coordinate real {}\n% generated\n{} {} {}\n", symmetry, n, n, n_entries);
  std::int64_t line = 4;
  for (std::int64_t k = 0; k < n_entries; ++k) {
    if (k % 9973 == 5) {
      f.body += "% a comment in the data\n\n";
      line += 2;
    }
    index_t r = idx(g), c = idx(g);
    if (std::string_view(symmetry) != "general" && r < c) std::swap(r, c);  // lower triangle
    f.lines.push_back(fmt::format("{} {} {:.17g}", r, c, v(g)));
    f.body += f.lines.back() + (k % 5 == 0 ? "\r\n" : "\n");
    f.line_of.push_back(line++);
  }
  return f;
}

}  // namespace

TEST(Gzip, ReadsGzipByMagicWhateverTheName) {
  test::ScratchDir dir;
  const std::string text = slurp(kDir + "/coord_real_symmetric.mtx");
  gzip_file(text, dir / "a.mtx.gz");
  gzip_file(text, dir / "no_gz_suffix.mtx");
  const Coo plain = io::read_matrix(kDir + "/coord_real_symmetric.mtx");
  ASSERT_EQ(plain.nnz(), 6);
  expect_same_coo(io::read_matrix(dir / "a.mtx.gz"), plain);
  expect_same_coo(io::read_matrix(dir / "no_gz_suffix.mtx"), plain);
}

TEST(Gzip, ErrorsNameTheFileAndLine) {
  test::ScratchDir dir;
  gzip_file(slurp(kDir + "/bad_index_zero.mtx"), dir / "bad.mtx.gz");
  EXPECT_EQ(error_of([&] { io::read_matrix(dir / "bad.mtx.gz"); }),
            dir / "bad.mtx.gz" + ":4: row index 0 out of range 1..3");
}

TEST(Gzip, TruncatedStreamIsAnError) {
  test::ScratchDir dir;
  const std::string gz = gzipped(dir, small_text());
  dump(dir / "cut.mtx.gz", gz.substr(0, gz.size() / 2));
  const std::string msg = error_of([&] { io::read_matrix(dir / "cut.mtx.gz"); });
  EXPECT_EQ(msg.rfind(dir / "cut.mtx.gz" + ": corrupt gzip data: ", 0), 0u) << msg;
}

TEST(Gzip, CorruptDeflateStreamNamesTheFile) {
  test::ScratchDir dir;
  std::string gz = gzipped(dir, small_text());
  for (std::size_t i = gz.size() / 2; i < gz.size() / 2 + 8; ++i) gz[i] = static_cast<char>(gz[i] ^ 0x5a);
  dump(dir / "flipped.mtx.gz", gz);
  const std::string msg = error_of([&] { io::read_matrix(dir / "flipped.mtx.gz"); });
  EXPECT_EQ(msg.rfind(dir / "flipped.mtx.gz" + ": corrupt gzip data: the gzip member at byte 0 is damaged (", 0), 0u)
      << msg;
}

// Concatenated gzip files (gzip -c a b, blocked writers) decompress to the concatenation of
// their members, here cut mid-line and with an empty member.
TEST(Gzip, MultiMemberFileReadsAsTheConcatenation) {
  test::ScratchDir dir;
  const std::string text = small_text();
  dump(dir / "multi.mtx.gz", gzipped(dir, text.substr(0, 1001)) + gzipped(dir, "") +
                                 gzipped(dir, text.substr(1001, 20000)) + gzipped(dir, text.substr(21001)));
  expect_same_coo(io::read_matrix(dir / "multi.mtx.gz"), io::parse_matrix_market(text, "multi.mtx"));
}

// gzip -d accepts zero padding after the last member; anything else there is not gzip data.
TEST(Gzip, TrailingZerosAreToleratedOtherTrailingBytesAreNot) {
  test::ScratchDir dir;
  const std::string text = small_text(), gz = gzipped(dir, text);
  dump(dir / "padded.mtx.gz", gz + std::string(512, '\0'));
  expect_same_coo(io::read_matrix(dir / "padded.mtx.gz"), io::parse_matrix_market(text, "padded.mtx"));
  dump(dir / "junk.mtx.gz", gz + "junk");
  EXPECT_EQ(error_of([&] { io::read_matrix(dir / "junk.mtx.gz"); }),
            fmt::format("{}: corrupt gzip data: trailing garbage after the gzip data at byte {}", dir / "junk.mtx.gz",
                        gz.size()));
}

// A file that inflates 1000:1 streams through the reader's bounded buffer.
TEST(Gzip, HighlyCompressibleFileStreams) {
  test::ScratchDir dir;
  std::string text = "%%MatrixMarket matrix coordinate pattern general\n2000 1000 2000000\n";
  for (int i = 0; i < 2000000; ++i) text += "1 1\n";
  const std::string gz = gzipped(dir, text);
  ASSERT_LT(gz.size() * 100, text.size());
  dump(dir / "ones.mtx.gz", gz);
  EXPECT_EQ(io::read_matrix(dir / "ones.mtx.gz").nnz(), 2000000);
  EXPECT_EQ(io::load_csr(dir / "ones.mtx.gz").nnz(), 1);  // the duplicates summed
}

// A trailer that lies is caught by the length check; a huge one costs no huge buffer:
// the read runs with the address space limited to 1 GiB more than the process uses now.
TEST(Gzip, LyingIsizeIsAnErrorWithoutAHugeAllocation) {
  test::ScratchDir dir;
  const std::string gz = gzipped(dir, small_text());
  for (const std::uint32_t isize : {1u, 0xfffffff0u}) {
    std::string bytes = gz;
    for (int k = 0; k < 4; ++k) bytes[bytes.size() - 4 + k] = static_cast<char>(isize >> (8 * k));
    const std::string path = dir / fmt::format("isize_{}.mtx.gz", isize);
    dump(path, bytes);
    std::ifstream statm("/proc/self/statm");
    std::size_t vm_pages = 0;
    statm >> vm_pages;
    rlimit old{};
    ASSERT_EQ(getrlimit(RLIMIT_AS, &old), 0);
    rlimit tight = old;
    tight.rlim_cur = std::min<rlim_t>(old.rlim_max, vm_pages * sysconf(_SC_PAGESIZE) + (rlim_t{1} << 30));
    ASSERT_EQ(setrlimit(RLIMIT_AS, &tight), 0);
    const std::string msg = error_of([&] { io::read_matrix(path); });
    ASSERT_EQ(setrlimit(RLIMIT_AS, &old), 0);
    EXPECT_EQ(msg, path +
                       ": corrupt gzip data: the gzip member at byte 0 is damaged "
                       "(its CRC-32 or length does not check out)");
  }
}

// A pipe has no size: it is inflated as it is read.
TEST(Gzip, ReadsGzipFromAPipe) {
  test::ScratchDir dir;
  const std::string text = small_text(), gz = gzipped(dir, text);
  ASSERT_LT(gz.size(), 65536u);  // fits the pipe's buffer: written before reading
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  ASSERT_EQ(write(fds[1], gz.data(), gz.size()), static_cast<ssize_t>(gz.size()));
  close(fds[1]);
  const Coo c = io::read_matrix(fmt::format("/dev/fd/{}", fds[0]));
  close(fds[0]);
  expect_same_coo(c, io::parse_matrix_market(text, "pipe.mtx"));
}

TEST(ParallelParse, SameCooWithOneAndFourThreads) {
  const BigFile f = big_file("general", 160000, 50000);
  const std::string text = f.text();
  ASSERT_GT(text.size(), 4u << 20);
  const Coo one = io::parse_matrix_market(text, "big.mtx", {.threads = 1});
  const Coo four = io::parse_matrix_market(text, "big.mtx", {.threads = 4});
  ASSERT_EQ(one.nnz(), 160000);
  expect_same_coo(one, four);
  // Spot-check against the generated lines (file order is kept).
  for (std::int64_t k : {0L, 1L, 77777L, 159999L}) {
    EXPECT_EQ(fmt::format("{} {} {:.17g}", one.row[k] + 1, one.col[k] + 1, one.val[k]), f.lines[k]);
  }
}

TEST(ParallelParse, SymmetricExpansionSameWithOneAndFourThreads) {
  const BigFile f = big_file("symmetric", 120000, 40000);
  const std::string text = f.text();
  const Coo one = io::parse_matrix_market(text, "sym.mtx", {.threads = 1});
  const Coo four = io::parse_matrix_market(text, "sym.mtx", {.threads = 4});
  std::int64_t diag = 0;
  for (std::int64_t k = 0; k < 120000; ++k) diag += one.row[k] == one.col[k];
  EXPECT_EQ(one.nnz(), 2 * 120000 - diag);
  expect_same_coo(one, four);
}

TEST(ParallelParse, ErrorDeepInTheFileHasTheExactLine) {
  BigFile f = big_file("general", 160000, 50000);
  const std::int64_t k = 151234;
  const std::string bad = f.lines[k] + " 42";
  const std::size_t at = f.body.find("\n" + f.lines[k] + "\n");  // whole line (k % 5 != 0: LF)
  ASSERT_NE(at, std::string::npos);
  f.body.replace(at + 1, f.lines[k].size(), bad);
  const std::string want = fmt::format("big.mtx:{}: unexpected '42' after the entry", f.line_of[k]);
  for (int t : {1, 4})
    EXPECT_EQ(error_of([&] { io::parse_matrix_market(f.text(), "big.mtx", {.threads = t}); }), want) << t;
  // Two errors: the earlier line wins whatever chunk finishes first.
  const std::size_t at2 = f.body.find("\n" + f.lines[2001] + "\n");
  ASSERT_NE(at2, std::string::npos);
  f.body.replace(at2 + 1, f.lines[2001].size(), "1 0 1");
  EXPECT_EQ(error_of([&] { io::parse_matrix_market(f.text(), "big.mtx", {.threads = 4}); }),
            fmt::format("big.mtx:{}: column index 0 out of range 1..50000", f.line_of[2001]));
}

TEST(ParallelParse, WrongCountsHaveExactLines) {
  BigFile f = big_file("general", 160000, 50000);
  const std::string body = f.body;
  f.header = "%%MatrixMarket matrix coordinate real general\n% generated\n50000 50000 140000\n";
  EXPECT_EQ(error_of([&] { io::parse_matrix_market(f.text(), "big.mtx", {.threads = 4}); }),
            fmt::format("big.mtx:{}: too many entries: the size line says 140000", f.line_of[140000]));
  f.header = "%%MatrixMarket matrix coordinate real general\n% generated\n50000 50000 160001\n";
  EXPECT_EQ(error_of([&] { io::parse_matrix_market(f.text(), "big.mtx", {.threads = 4}); }),
            fmt::format("big.mtx:{}: unexpected end of file: 160000 of 160001 entries", f.line_of.back()));
}

TEST(ParallelParse, MirroredPairInASymmetricFileHasExactLines) {
  BigFile f = big_file("symmetric", 120000, 40000);
  // Append the transpose of an early off-diagonal entry at the very end.
  std::int64_t k = 10;
  while (true) {
    index_t r, c;
    std::sscanf(f.lines[k].c_str(), "%d %d", &r, &c);
    if (r != c) {
      f.body += fmt::format("{} {} 1.0\n", c, r);
      f.header = "%%MatrixMarket matrix coordinate real symmetric\n% generated\n40000 40000 120001\n";
      const std::string want = fmt::format(
          "sym.mtx:{}: entry ({},{}) mirrors the entry ({},{}) on line {}: a symmetric file must store each "
          "off-diagonal pair once",
          f.line_of.back() + 1, c, r, r, c, f.line_of[k]);
      for (int t : {1, 4})
        EXPECT_EQ(error_of([&] { io::parse_matrix_market(f.text(), "sym.mtx", {.threads = t}); }), want);
      break;
    }
    ++k;
  }
}

TEST(RoundTrip, WriteReadIsBitIdentical) {
  test::ScratchDir dir;
  std::vector<std::pair<std::string, Csr>> cases = test::edge_cases();
  for (std::uint64_t seed = 1; seed <= 6; ++seed)
    cases.emplace_back(fmt::format("random{}", seed),
                       coo_to_csr(test::random_coo(static_cast<index_t>(20 + seed * 37),
                                                   static_cast<index_t>(15 + seed * 23), 0.05, seed)));
  {  // values that stress 17-digit printing
    Coo c;
    c.rows = c.cols = 4;
    const double v[] = {1e-300, 4.9e-324, -0.0, 1.0 / 3.0, 0.1, 1.7976931348623157e308, INFINITY, -2.5e-7};
    for (int i = 0; i < 8; ++i) {
      c.row.push_back(i / 2);
      c.col.push_back(i % 4);
      c.val.push_back(v[i]);
    }
    cases.emplace_back("special_values", coo_to_csr(c));
  }
  for (const auto& [name, a] : cases) {
    SCOPED_TRACE(name);
    const std::string path = dir / (name + ".mtx");
    io::write_matrix_market(path, a);
    EXPECT_EQ(slurp(path).rfind("%%MatrixMarket matrix coordinate real general\n", 0), 0u);
    expect_bit_identical(io::load_csr(path), a);
  }
}

TEST(RoundTrip, ComplexMatricesAreWrittenAsComplexGeneral) {
  test::ScratchDir dir;
  const Csr a = io::load_csr(kDir + "/coord_complex_hermitian.mtx");
  io::write_matrix_market(dir / "c.mtx", a);
  EXPECT_EQ(slurp(dir / "c.mtx").rfind("%%MatrixMarket matrix coordinate complex general\n", 0), 0u);
  const Csr b = io::load_csr(dir / "c.mtx");
  EXPECT_EQ(b.field, Field::Complex);
  expect_bit_identical(b, a);
}

TEST(RoundTrip, DenseVectorIsBitIdentical) {
  test::ScratchDir dir;
  std::mt19937_64 g(3);
  std::uniform_real_distribution<double> u(-1e6, 1e6);
  std::vector<double> v(1000);
  for (double& x : v) x = u(g) * std::pow(10.0, static_cast<int>(g() % 40) - 20);
  v[5] = -0.0;
  io::write_dense_vector(dir / "v.mtx", v);
  EXPECT_EQ(slurp(dir / "v.mtx").rfind("%%MatrixMarket matrix array real general\n1000 1\n", 0), 0u);
  const auto back = io::read_dense_vector(dir / "v.mtx");
  ASSERT_EQ(back.size(), v.size());
  EXPECT_EQ(std::memcmp(back.data(), v.data(), v.size() * sizeof(double)), 0);
}

TEST(BinaryCache, RoundTripRealAndComplexWhateverTheName) {
  test::ScratchDir dir;
  for (const char* file :
       {"coord_real_symmetric.mtx", "coord_complex_hermitian.mtx", "coord_empty.mtx", "coord_pattern_general.mtx"}) {
    SCOPED_TRACE(file);
    const Csr a = io::load_csr(kDir + "/" + file);
    const std::string cache = dir / "cache.mtx";  // the name says .mtx: the magic decides
    io::write_binary(cache, a);
    EXPECT_TRUE(io::is_binary_cache(cache));
    const Csr b = io::load_csr(cache);
    expect_bit_identical(b, a);
    EXPECT_EQ(b.field, a.field);
    EXPECT_EQ(b.symmetry, a.symmetry);
    expect_bit_identical(coo_to_csr(io::read_matrix(cache)), a);
  }
  EXPECT_FALSE(io::is_binary_cache(kDir + "/coord_real_general.mtx"));
  EXPECT_FALSE(io::is_binary_cache(kDir + "/no_such_file"));
}

// Caches written before the header had its own checksum (version 1, 64-byte header) still load.
TEST(BinaryCache, VersionOneStillReads) {
  const std::string v1 = std::string(SPMV_TEST_DATA) + "/v1_coord_real_general.spmvbin";
  ASSERT_EQ(slurp(v1)[8], 1);
  expect_bit_identical(io::load_csr(v1), io::load_csr(kDir + "/coord_real_general.mtx"));
}

// A header with valid checksums whose nnz makes the payload size wrap around 2^64 to a plausible
// value (found by fuzz_binary: std::length_error from the arrays' resize) is refused, here through
// gzip, where no file size bounds it, and with a budget that would let the wrapped size pass.
TEST(BinaryCache, NnzThatWrapsThePayloadSizeIsRefused) {
  test::ScratchDir dir;
  const std::int64_t rows = 2147483647, nnz = static_cast<std::int64_t>(UINT64_MAX / 12 + 1);
  std::string h(80, '\0');
  auto put = [&h](std::size_t at, auto v) { std::memcpy(h.data() + at, &v, sizeof v); };
  h.replace(0, 8, std::string("SPMVBIN\x1a", 8));
  put(8, std::uint32_t{2});
  put(12, std::uint32_t{80});
  put(16, static_cast<std::int32_t>(rows));
  put(20, static_cast<std::int32_t>(rows));
  put(24, nnz);
  put(40, static_cast<std::uint64_t>(rows + 1) * 8 + static_cast<std::uint64_t>(nnz) * 12 + 4);  // wraps: 16 GiB
  put(64, io::detail::checksum(h.data(), 64));
  gzip_file(h, dir / "wrap.spmvbin.gz");
  EXPECT_EQ(error_of([&] { io::load_csr(dir / "wrap.spmvbin.gz", {.memory_budget_bytes = 1e12}); }),
            fmt::format("{}: corrupt binary cache header: {} entries in a {} x {} matrix", dir / "wrap.spmvbin.gz", nnz,
                        rows, rows));
}

// A gzipped cache is a cache: the magic is looked for in the inflated bytes.
TEST(BinaryCache, GzippedCacheReads) {
  test::ScratchDir dir;
  const Csr a = coo_to_csr(test::random_coo(300, 200, 0.05, 11));
  io::write_binary(dir / "a.spmvbin", a, true);
  gzip_file(slurp(dir / "a.spmvbin"), dir / "a.spmvbin.gz");
  const io::LoadedMatrix m = io::load(dir / "a.spmvbin.gz");
  expect_bit_identical(m.matrix, a);
  EXPECT_EQ(m.generated, "spmv-generated");
  std::string cut = slurp(dir / "a.spmvbin");
  gzip_file(cut.substr(0, cut.size() - 9), dir / "cut.spmvbin.gz");
  EXPECT_EQ(error_of([&] { io::load_csr(dir / "cut.spmvbin.gz"); }),
            dir / "cut.spmvbin.gz" + ": truncated binary cache: the payload: the file ended after " +
                std::to_string(8 * a.nnz() - 9) + " of " + std::to_string(8 * a.nnz()) + " bytes");
}

TEST(BinaryCache, TruncatedOrCorruptedFilesGiveClearErrors) {
  test::ScratchDir dir;
  const Csr a = coo_to_csr(test::random_coo(300, 200, 0.05, 11));
  const std::string good = dir / "a.spmvbin";
  io::write_binary(good, a);
  const std::string bytes = slurp(good);
  const std::size_t expected_size = 80 + 8 * 301 + 12 * static_cast<std::size_t>(a.nnz()) + (a.nnz() % 2) * 4;
  ASSERT_EQ(bytes.size(), expected_size);

  const std::string p = dir / "bad.spmvbin";
  dump(p, bytes.substr(0, bytes.size() - 10));
  EXPECT_EQ(error_of([&] { io::read_binary(p); }),
            fmt::format("{}: truncated binary cache: {} bytes, expected {}", p, bytes.size() - 10, bytes.size()));
  dump(p, bytes.substr(0, 20));
  EXPECT_EQ(error_of([&] { io::read_binary(p); }), p + ": truncated binary cache: 20 bytes, the header alone has 80");

  std::string flipped = bytes;
  flipped[bytes.size() - 3] ^= 0x10;  // a value bit
  dump(p, flipped);
  EXPECT_EQ(error_of([&] { io::load_csr(p); }), p + ": binary cache checksum mismatch: the file is corrupted");
  flipped = bytes;
  flipped[80 + 8 * 301 + 5] ^= 0x01;  // a column index
  dump(p, flipped);
  EXPECT_EQ(error_of([&] { io::read_matrix(p); }), p + ": binary cache checksum mismatch: the file is corrupted");
  flipped = bytes;
  // Any change to the header is caught by its own checksum before its sizes are used.
  for (const int at : {16, 24, 29, 32, 36, 40, 56}) {
    flipped = bytes;
    flipped[at] ^= 0x04;  // rows, nnz (low and high bytes), field, symmetry, payload bytes, flags
    dump(p, flipped);
    EXPECT_EQ(error_of([&] { io::read_binary(p); }), p + ": corrupt binary cache header: its checksum does not match")
        << at;
  }
  flipped = bytes;
  flipped[8] = 9;  // version
  dump(p, flipped);
  EXPECT_EQ(error_of([&] { io::read_binary(p); }),
            p + ": binary cache version 9 is not supported (this build reads versions 1 to 3)");
  EXPECT_EQ(error_of([&] { io::read_binary(kDir + "/coord_real_general.mtx"); }),
            kDir + "/coord_real_general.mtx: not an spmv binary cache (bad magic number)");
}

// A generated matrix says so in its file (Matrix Market comment, binary-cache flag), the mark
// survives a conversion, and real files have none: benchmarks of files label alikes "synthetic".
TEST(Provenance, GeneratedFilesAreMarkedRealFilesAreNot) {
  test::ScratchDir dir;
  const Csr a = coo_to_csr(test::random_coo(50, 40, 0.1, 5));
  io::write_matrix_market(dir / "gen.mtx", a, "dc1 alike (circuit), seed 3");
  io::write_matrix_market(dir / "plain.mtx", a);
  io::write_binary(dir / "gen.spmvbin", a, true);
  io::write_binary(dir / "plain.spmvbin", a);
  EXPECT_EQ(io::generated_description(dir / "gen.mtx"), "dc1 alike (circuit), seed 3");
  EXPECT_EQ(io::generated_description(dir / "plain.mtx"), "");
  EXPECT_EQ(io::generated_description(dir / "gen.spmvbin"), "spmv-generated");
  EXPECT_EQ(io::generated_description(dir / "plain.spmvbin"), "");
  gzip_file(slurp(dir / "gen.mtx"), dir / "gen.mtx.gz");
  EXPECT_EQ(io::generated_description(dir / "gen.mtx.gz"), "dc1 alike (circuit), seed 3");
  // The mark is a comment: the matrix reads back bit-identical, flagged or not.
  expect_bit_identical(io::load_csr(dir / "gen.mtx"), a);
  expect_bit_identical(io::load_csr(dir / "gen.spmvbin"), a);
  // Only a comment line right after the banner counts, not text further down.
  dump(dir / "late.mtx", "%%MatrixMarket matrix coordinate real general\n1 1 1\n% spmv-generated: no\n1 1 2\n");
  EXPECT_EQ(io::generated_description(dir / "late.mtx"), "");
  EXPECT_EQ(io::generated_description(kDir + "/coord_real_general.mtx"), "");
  EXPECT_EQ(io::generated_description(dir / "no_such_file"), "");
  // Header bits other than "generated" are still corruption.
  std::string bytes = slurp(dir / "plain.spmvbin");
  bytes[56] = 2;
  dump(dir / "bad.spmvbin", bytes);
  EXPECT_EQ(error_of([&] { io::read_binary(dir / "bad.spmvbin"); }),
            (dir / "bad.spmvbin") + ": corrupt binary cache header: its checksum does not match");
}
