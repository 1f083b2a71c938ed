// The Matrix Market writer: gzip output for names ending in .gz (checked by its magic, by our reader
// and by the system's gzip), the matrix's own symmetry kept (banner and lower triangle only, the
// upper one checked to mirror it; general with WriteOptions::expand), field kept, header comments
// carried from a loaded file and written back, the spmv-generated marker, and refusals.
#include <gtest/gtest.h>
#include <spmv/io.hpp>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "test_util.hpp"

using namespace spmv;
using test::expect_same_csr;
namespace fs = std::filesystem;

namespace {

const std::string kDir = std::string(SPMV_TEST_DATA) + "/mm";

bool gzip_magic(const std::string& path) {
  const std::string b = test::slurp(path);
  return b.size() >= 2 && static_cast<unsigned char>(b[0]) == 0x1f && static_cast<unsigned char>(b[1]) == 0x8b;
}

// The exit status of a shell command.
int sh(const std::string& cmd) { return std::system(cmd.c_str()); }

// A written Matrix Market file taken apart by the test itself (not by the reader under test).
struct MmText {
  std::string banner;
  std::vector<std::string> comments;  // the '%' lines between the banner and the size line
  long long rows = -1, cols = -1, count = -1;
  std::vector<std::vector<std::string>> entries;  // each data line's tokens
};

MmText parse_text(const std::string& text) {
  MmText m;
  std::istringstream in(text);
  std::string line;
  std::getline(in, m.banner);
  while (std::getline(in, line)) {
    const std::size_t first = line.find_first_not_of(" \t");
    if (first != std::string::npos && line[first] == '%') {
      if (m.rows < 0) m.comments.push_back(line);
      continue;
    }
    std::istringstream ls(line);
    if (m.rows < 0) {
      ls >> m.rows >> m.cols >> m.count;
      continue;
    }
    std::vector<std::string> t;
    for (std::string w; ls >> w;) t.push_back(w);
    m.entries.push_back(t);
  }
  return m;
}

// A test file read, written to dir/name (with `opt`), and the written text parsed.
struct Rewritten {
  Csr in;
  MmText text;
};
Rewritten rewrite(const test::ScratchDir& dir, const std::string& file, const std::string& name,
                  const io::WriteOptions& opt = {}) {
  Rewritten r{io::load_csr(kDir + "/" + file), {}};
  io::write_matrix_market(dir / name, r.in, opt);
  r.text = parse_text(test::slurp(dir / name));
  return r;
}

// (row, col) -> value of a CSR matrix, 1-based like the file, explicit entries only.
std::map<std::pair<int, int>, double> entries_of(const Csr& a) {
  std::map<std::pair<int, int>, double> m;
  for (index_t r = 0; r < a.rows; ++r)
    for (offset_t p = a.row_ptr[r]; p < a.row_ptr[r + 1]; ++p) m[{r + 1, a.col[p] + 1}] = a.val[p];
  return m;
}

// A general matrix with values that stress 17-digit printing, some rows empty.
Csr awkward_matrix(index_t rows, index_t cols, double density, unsigned seed) {
  Coo c = test::random_coo(rows, cols, density, seed);
  std::mt19937_64 g(seed);
  for (auto& v : c.val) v *= std::pow(10.0, static_cast<int>(g() % 40) - 20);
  if (!c.val.empty()) c.val[0] = 1.0 / 3.0;
  return coo_to_csr(c);
}

// A symmetric matrix as a file stores it (a random lower triangle, diagonal included), read by load().
Csr random_symmetric(test::ScratchDir& dir, const char* symmetry, index_t n, unsigned seed) {
  std::mt19937_64 g(seed);
  std::uniform_real_distribution<double> v(-10, 10);
  std::map<std::pair<int, int>, double> lower;
  for (int k = 0; k < 6 * n; ++k) {
    int r = static_cast<int>(g() % n) + 1, c = static_cast<int>(g() % n) + 1;
    if (r < c) std::swap(r, c);
    if (std::string(symmetry) == "skew-symmetric" && r == c) continue;
    lower[{r, c}] = v(g);
  }
  std::string text = fmt::format("%%MatrixMarket matrix coordinate real {}\n{} {} {}\n", symmetry, n, n, lower.size());
  for (const auto& [rc, x] : lower) text += fmt::format("{} {} {:.17g}\n", rc.first, rc.second, x);
  test::dump(dir / "random_in.mtx", text);
  return io::load_csr(dir / "random_in.mtx");
}

}  // namespace

// .gz: gzip's magic, read back by our reader bit for bit, and `gzip -dc` gives exactly the text
// the same matrix is written as under a plain name.
TEST(WriteGzip, MatrixIsGzipReadBackAndDecompressesToThePlainText) {
  test::ScratchDir dir;
  const Csr a = awkward_matrix(300, 200, 0.05, 11);
  io::write_matrix_market(dir / "a.mtx.gz", a, io::WriteOptions{});
  io::write_matrix_market(dir / "a.mtx", a, io::WriteOptions{});
  EXPECT_TRUE(gzip_magic(dir / "a.mtx.gz"));
  EXPECT_FALSE(gzip_magic(dir / "a.mtx"));
  expect_same_csr(io::load_csr(dir / "a.mtx.gz"), a);
  expect_same_csr(io::load_csr(dir / "a.mtx"), a);
  ASSERT_EQ(sh(fmt::format("gzip -t '{}'", dir / "a.mtx.gz")), 0);
  ASSERT_EQ(sh(fmt::format("gzip -dc '{}' > '{}'", dir / "a.mtx.gz", dir / "d.mtx")), 0);
  const std::string plain = test::slurp(dir / "a.mtx");
  EXPECT_EQ(test::slurp(dir / "d.mtx"), plain);
  EXPECT_EQ(plain.rfind("%%MatrixMarket matrix coordinate real general\n", 0), 0u);
  EXPECT_LT(fs::file_size(dir / "a.mtx.gz"), plain.size());
}

// Output larger than the writer's text buffer (4 MiB) and the deflate output buffer (1 MiB): the
// stream is cut into many deflate calls and still one valid member.
TEST(WriteGzip, LargeOutputCrossesTheBuffers) {
  test::ScratchDir dir;
  const Csr a = awkward_matrix(4000, 4000, 0.02, 5);  // 320k entries and more, ~10 MB of text
  ASSERT_GT(a.nnz(), 300000);
  io::write_matrix_market(dir / "big.mtx.gz", a, io::WriteOptions{});
  ASSERT_EQ(sh(fmt::format("gzip -dc '{}' > '{}'", dir / "big.mtx.gz", dir / "big.mtx")), 0);
  EXPECT_GT(fs::file_size(dir / "big.mtx"), std::uintmax_t{8} << 20);
  EXPECT_GT(fs::file_size(dir / "big.mtx.gz"), std::uintmax_t{2} << 20);
  expect_same_csr(io::load_csr(dir / "big.mtx.gz"), a);
  expect_same_csr(io::load_csr(dir / "big.mtx"), a);
}

TEST(WriteGzip, EmptyMatrixAndAnyCaseOfTheSuffix) {
  test::ScratchDir dir;
  const Csr empty = test::csr_from_lengths({0, 0, 0}, 4, 1);
  io::write_matrix_market(dir / "e.MTX.GZ", empty, io::WriteOptions{});
  EXPECT_TRUE(gzip_magic(dir / "e.MTX.GZ"));
  EXPECT_EQ(sh(fmt::format("gzip -t '{}'", dir / "e.MTX.GZ")), 0);
  const Csr back = io::load_csr(dir / "e.MTX.GZ");
  EXPECT_EQ(back.rows, 3);
  EXPECT_EQ(back.cols, 4);
  EXPECT_EQ(back.nnz(), 0);
}

TEST(WriteGzip, DenseVectorAndBinaryCache) {
  test::ScratchDir dir;
  std::vector<double> v(5000);
  std::mt19937_64 g(4);
  for (double& x : v)
    x = std::uniform_real_distribution<double>(-1, 1)(g) * std::pow(10.0, static_cast<int>(g() % 30) - 15);
  io::write_dense_vector(dir / "v.mtx.gz", v);
  EXPECT_TRUE(gzip_magic(dir / "v.mtx.gz"));
  EXPECT_EQ(sh(fmt::format("gzip -t '{}'", dir / "v.mtx.gz")), 0);
  const auto back = io::read_dense_vector(dir / "v.mtx.gz");
  ASSERT_EQ(back.size(), v.size());
  EXPECT_EQ(std::memcmp(back.data(), v.data(), v.size() * sizeof(double)), 0);

  const Csr a = awkward_matrix(300, 200, 0.05, 12);
  io::write_binary(dir / "a.spmvbin.gz", a, true);
  EXPECT_TRUE(gzip_magic(dir / "a.spmvbin.gz"));
  EXPECT_EQ(sh(fmt::format("gzip -t '{}'", dir / "a.spmvbin.gz")), 0);
  EXPECT_TRUE(io::is_binary_cache(dir / "a.spmvbin.gz"));
  const io::LoadedMatrix m = io::load(dir / "a.spmvbin.gz");
  expect_same_csr(m.matrix, a);
  EXPECT_EQ(m.generated, "spmv-generated");
  // The inflated bytes are exactly the plain cache's.
  io::write_binary(dir / "a.spmvbin", a, true);
  ASSERT_EQ(sh(fmt::format("gzip -dc '{}' > '{}'", dir / "a.spmvbin.gz", dir / "d.spmvbin")), 0);
  EXPECT_EQ(test::slurp(dir / "d.spmvbin"), test::slurp(dir / "a.spmvbin"));
}

TEST(WriteGzip, UnwritablePathIsAnError) {
  test::ScratchDir dir;
  const Csr a = awkward_matrix(10, 10, 0.2, 1);
  const std::string p = dir / "no_such_dir/a.mtx.gz";
  EXPECT_EQ(test::error_of([&] { io::write_matrix_market(p, a, io::WriteOptions{}); }),
            p + ": cannot write: No such file or directory");
}

// A symmetric file comes back as its banner and lower triangle: the written entries are exactly
// the file's (stored above the diagonal in the input: mirrored below), and read back equal.
TEST(WriteSymmetry, SymmetricKeepsItsBannerAndTheLowerTriangle) {
  test::ScratchDir dir;
  for (const char* file : {"coord_real_symmetric.mtx", "coord_symmetric_upper.mtx", "coord_symmetric_mixed.mtx"}) {
    SCOPED_TRACE(file);
    const io::LoadedMatrix in = io::load(kDir + "/" + file);
    ASSERT_EQ(in.matrix.symmetry, Symmetry::Symmetric);
    io::write_matrix_market(dir / "s.mtx", in.matrix, io::WriteOptions{});
    const MmText t = parse_text(test::slurp(dir / "s.mtx"));
    EXPECT_EQ(t.banner, "%%MatrixMarket matrix coordinate real symmetric");
    // The input file's entries, each put in the lower triangle.
    const MmText src = parse_text(test::slurp(kDir + "/" + file));
    std::map<std::pair<int, int>, std::string> want, got;
    for (const auto& e : src.entries) {
      int r = std::stoi(e[0]), c = std::stoi(e[1]);
      if (r < c) std::swap(r, c);
      want[{r, c}] = e[2];
    }
    for (const auto& e : t.entries) {
      ASSERT_EQ(e.size(), 3u);
      const int r = std::stoi(e[0]), c = std::stoi(e[1]);
      EXPECT_GE(r, c) << "an entry above the diagonal";
      got[{r, c}] = e[2];
    }
    EXPECT_EQ(t.count, src.count);
    EXPECT_EQ(static_cast<long long>(t.entries.size()), src.count);
    ASSERT_EQ(got.size(), want.size());
    for (const auto& [rc, v] : want) EXPECT_EQ(std::stod(got[rc]), std::stod(v)) << rc.first << "," << rc.second;
    const Csr back = io::load_csr(dir / "s.mtx");
    EXPECT_EQ(back.symmetry, Symmetry::Symmetric);
    expect_same_csr(back, in.matrix);
  }
}

TEST(WriteSymmetry, RandomSymmetricAndSkewReadBackBitIdentical) {
  test::ScratchDir dir;
  for (const char* sym : {"symmetric", "skew-symmetric"}) {
    SCOPED_TRACE(sym);
    const Csr a = random_symmetric(dir, sym, 500, 3);
    const MmText src = parse_text(test::slurp(dir / "random_in.mtx"));
    io::write_matrix_market(dir / "s.mtx.gz", a, io::WriteOptions{});
    ASSERT_EQ(sh(fmt::format("gzip -dc '{}' > '{}'", dir / "s.mtx.gz", dir / "s.mtx")), 0);
    const MmText t = parse_text(test::slurp(dir / "s.mtx"));
    EXPECT_EQ(t.banner, fmt::format("%%MatrixMarket matrix coordinate real {}", sym));
    EXPECT_EQ(t.count, src.count);
    ASSERT_EQ(t.entries.size(), src.entries.size());
    for (std::size_t k = 0; k < t.entries.size(); ++k) {  // both in row-major order of the lower triangle
      const auto& e = t.entries[k];
      const auto& s = src.entries[k];
      ASSERT_EQ(e[0], s[0]);
      ASSERT_EQ(e[1], s[1]);
      EXPECT_EQ(std::stod(e[2]), std::stod(s[2]));
    }
    const Csr back = io::load_csr(dir / "s.mtx.gz");
    EXPECT_EQ(back.symmetry, a.symmetry);
    expect_same_csr(back, a);
  }
}

// --expand: general banner, both triangles, the same matrix.
TEST(WriteSymmetry, ExpandWritesGeneral) {
  test::ScratchDir dir;
  const io::LoadedMatrix in = io::load(kDir + "/coord_real_symmetric.mtx");
  io::write_matrix_market(dir / "g.mtx", in.matrix, io::WriteOptions{.expand = true});
  const MmText t = parse_text(test::slurp(dir / "g.mtx"));
  EXPECT_EQ(t.banner, "%%MatrixMarket matrix coordinate real general");
  EXPECT_EQ(t.count, 6);  // 4 stored: 2 on the diagonal, 2 mirrored
  EXPECT_EQ(t.entries.size(), 6u);
  const Csr back = io::load_csr(dir / "g.mtx");
  EXPECT_EQ(back.symmetry, Symmetry::General);
  expect_same_csr(back, in.matrix);
  // (2,1) = -1 and (3,1) = 2.5 in the file: both mirrors present.
  const auto e = entries_of(back);
  EXPECT_EQ(e.at({1, 2}), -1.0);
  EXPECT_EQ(e.at({2, 1}), -1.0);
  EXPECT_EQ(e.at({1, 3}), 2.5);
  EXPECT_EQ(e.at({3, 1}), 2.5);
  // The earlier overload (generated string) writes general, as it always did.
  io::write_matrix_market(dir / "old.mtx", in.matrix);
  EXPECT_EQ(parse_text(test::slurp(dir / "old.mtx")).banner, "%%MatrixMarket matrix coordinate real general");
  expect_same_csr(io::load_csr(dir / "old.mtx"), in.matrix);
}

// Skew-symmetric: strictly below the diagonal (the input's explicit "1 1 0" is not stored; every
// value the same); integer and complex fields kept.
TEST(WriteSymmetry, SkewSymmetricKept) {
  test::ScratchDir dir;
  const auto [in, t] = rewrite(dir, "coord_real_skew.mtx", "k.mtx");
  EXPECT_EQ(t.banner, "%%MatrixMarket matrix coordinate real skew-symmetric");
  ASSERT_EQ(t.count, 2);
  ASSERT_EQ(t.entries.size(), 2u);
  EXPECT_EQ(t.entries[0], (std::vector<std::string>{"2", "1", "1.5"}));
  EXPECT_EQ(t.entries[1], (std::vector<std::string>{"3", "2", "-2"}));
  const Csr back = io::load_csr(dir / "k.mtx");
  EXPECT_EQ(back.symmetry, Symmetry::SkewSymmetric);
  auto want = entries_of(in);
  EXPECT_EQ(want.erase({1, 1}), 1u);  // the explicit zero on the diagonal
  EXPECT_EQ(entries_of(back), want);
  EXPECT_EQ(want.at({1, 2}), -1.5);
  EXPECT_EQ(want.at({2, 3}), 2.0);

  const auto [ik, it] = rewrite(dir, "coord_integer_skew.mtx", "ik.mtx");
  EXPECT_EQ(it.banner, "%%MatrixMarket matrix coordinate integer skew-symmetric");
  EXPECT_EQ(it.entries, (std::vector<std::vector<std::string>>{{"2", "1", "4"}, {"3", "1", "-9"}}));
  expect_same_csr(io::load_csr(dir / "ik.mtx"), ik);

  const auto [ck, ct] = rewrite(dir, "coord_complex_skew.mtx", "ck.mtx");
  EXPECT_EQ(ct.banner, "%%MatrixMarket matrix coordinate complex skew-symmetric");
  EXPECT_EQ(ct.entries, (std::vector<std::vector<std::string>>{{"2", "1", "2", "3"}}));
  expect_same_csr(io::load_csr(dir / "ck.mtx"), ck);
}

TEST(WriteSymmetry, HermitianAndComplexSymmetricKept) {
  test::ScratchDir dir;
  for (const auto& [file, banner] : {std::pair{"coord_complex_hermitian.mtx", "complex hermitian"},
                                     std::pair{"coord_complex_symmetric.mtx", "complex symmetric"}}) {
    SCOPED_TRACE(file);
    const Csr in = io::load_csr(kDir + "/" + file);
    io::write_matrix_market(dir / "h.mtx", in, io::WriteOptions{});
    const MmText t = parse_text(test::slurp(dir / "h.mtx"));
    EXPECT_EQ(t.banner, std::string("%%MatrixMarket matrix coordinate ") + banner);
    const MmText src = parse_text(test::slurp(kDir + "/" + file));
    ASSERT_EQ(t.entries.size(), src.entries.size());
    for (std::size_t k = 0; k < t.entries.size(); ++k)
      for (std::size_t w = 0; w < 4; ++w) EXPECT_EQ(std::stod(t.entries[k][w]), std::stod(src.entries[k][w]));
    const Csr back = io::load_csr(dir / "h.mtx");
    EXPECT_EQ(back.symmetry, in.symmetry);
    expect_same_csr(back, in);
  }
}

// Pattern: no values written, banner pattern (symmetric or general); integer: integers.
TEST(WriteSymmetry, PatternAndIntegerFieldsKept) {
  test::ScratchDir dir;
  const auto [ps, t] = rewrite(dir, "coord_pattern_symmetric.mtx", "ps.mtx");
  EXPECT_EQ(t.banner, "%%MatrixMarket matrix coordinate pattern symmetric");
  EXPECT_EQ(t.entries, (std::vector<std::vector<std::string>>{{"1", "1"}, {"3", "1"}, {"3", "2"}}));
  const Csr back = io::load_csr(dir / "ps.mtx");
  EXPECT_EQ(back.field, Field::Pattern);
  expect_same_csr(back, ps);

  const Csr pg = io::load_csr(kDir + "/coord_pattern_general.mtx");
  io::write_matrix_market(dir / "pg.mtx", pg, io::WriteOptions{});
  EXPECT_EQ(parse_text(test::slurp(dir / "pg.mtx")).banner, "%%MatrixMarket matrix coordinate pattern general");
  expect_same_csr(io::load_csr(dir / "pg.mtx"), pg);

  const auto [is, it] = rewrite(dir, "coord_integer_symmetric.mtx", "is.mtx", {.expand = true});
  EXPECT_EQ(it.banner, "%%MatrixMarket matrix coordinate integer general");
  EXPECT_EQ(it.entries, (std::vector<std::vector<std::string>>{{"1", "1", "5"}, {"1", "2", "-3"}, {"2", "1", "-3"}}));

  // A pattern matrix whose duplicates were summed (a value 2) is written as real: nothing changes on reading.
  test::dump(dir / "pdup.mtx", "%%MatrixMarket matrix coordinate pattern general\n2 2 3\n1 1\n1 1\n2 2\n");
  const Csr pd = io::load_csr(dir / "pdup.mtx");
  io::write_matrix_market(dir / "pd.mtx", pd, io::WriteOptions{});
  EXPECT_EQ(parse_text(test::slurp(dir / "pd.mtx")).banner, "%%MatrixMarket matrix coordinate real general");
  const auto e = entries_of(io::load_csr(dir / "pd.mtx"));
  EXPECT_EQ(e.at({1, 1}), 2.0);
  EXPECT_EQ(e.at({2, 2}), 1.0);
}

// A float matrix (load_f32) keeps its symmetry too, values read back in float bit for bit.
TEST(WriteSymmetry, FloatValues) {
  test::ScratchDir dir;
  const Csr a = random_symmetric(dir, "symmetric", 200, 9);
  const io::LoadedMatrixF32 f = io::load_f32(dir / "random_in.mtx");
  io::write_matrix_market(dir / "f.mtx", f.matrix, io::WriteOptions{});
  EXPECT_EQ(parse_text(test::slurp(dir / "f.mtx")).banner, "%%MatrixMarket matrix coordinate real symmetric");
  const io::LoadedMatrixF32 back = io::load_f32(dir / "f.mtx");
  EXPECT_EQ(back.matrix.row_ptr, f.matrix.row_ptr);
  EXPECT_EQ(back.matrix.col, f.matrix.col);
  ASSERT_EQ(back.matrix.val.size(), f.matrix.val.size());
  EXPECT_EQ(std::memcmp(back.matrix.val.data(), f.matrix.val.data(), f.matrix.val.size() * sizeof(float)), 0);
  EXPECT_EQ(back.matrix.row_ptr, a.row_ptr);
}

// A matrix declared symmetric whose entries are not is refused, naming the entries, and the
// output is left as it was; --expand (WriteOptions::expand) writes it.
TEST(WriteSymmetry, EntriesThatDoNotMatchTheDeclaredSymmetryAreRefused) {
  test::ScratchDir dir;
  const auto make = [](Symmetry sym, std::vector<std::tuple<int, int, double, double>> e, bool cplx = false) {
    Coo c;
    c.rows = c.cols = 3;
    c.symmetry = sym;
    c.field = cplx ? Field::Complex : Field::Real;
    for (auto [r, cl, v, im] : e) {
      c.row.push_back(r);
      c.col.push_back(cl);
      c.val.push_back(v);
      if (cplx) c.imag.push_back(im);
    }
    return coo_to_csr(c);
  };
  const std::string p = dir / "out.mtx";
  const std::string tail = "; write it expanded, as general (WriteOptions::expand, spmv convert --expand)";
  test::dump(p, "untouched");
  const Csr differ = make(Symmetry::Symmetric, {{1, 0, 2, 0}, {0, 1, 3, 0}, {2, 2, 1, 0}});
  EXPECT_EQ(test::error_of([&] { io::write_matrix_market(p, differ, io::WriteOptions{}); }),
            p + ": cannot write the matrix as symmetric: the entry (2,1) = 2 but its mirror (1,2) = 3" + tail);
  EXPECT_EQ(test::slurp(p), "untouched");
  const Csr lower_only = make(Symmetry::Symmetric, {{1, 0, 2, 0}, {2, 2, 1, 0}});
  EXPECT_EQ(test::error_of([&] { io::write_matrix_market(p, lower_only, io::WriteOptions{}); }),
            p + ": cannot write the matrix as symmetric: the entry (2,1) = 2 has no mirror at (1,2)" + tail);
  const Csr upper_only = make(Symmetry::Symmetric, {{0, 2, 2, 0}, {1, 1, 1, 0}});
  EXPECT_EQ(test::error_of([&] { io::write_matrix_market(p, upper_only, io::WriteOptions{}); }),
            p + ": cannot write the matrix as symmetric: the entry (1,3) = 2 has no mirror at (3,1)" + tail);
  const Csr not_skew = make(Symmetry::SkewSymmetric, {{1, 0, 2, 0}, {0, 1, 2, 0}});
  EXPECT_EQ(test::error_of([&] { io::write_matrix_market(p, not_skew, io::WriteOptions{}); }),
            p + ": cannot write the matrix as skew-symmetric: the entry (2,1) = 2 but its mirror (1,2) = 2" + tail);
  const Csr skew_diag = make(Symmetry::SkewSymmetric, {{1, 1, 4, 0}});
  EXPECT_EQ(test::error_of([&] { io::write_matrix_market(p, skew_diag, io::WriteOptions{}); }),
            p + ": cannot write the matrix as skew-symmetric: the diagonal entry (2,2) is 4, not 0" + tail);
  const Csr herm_diag = make(Symmetry::Hermitian, {{0, 0, 1, 2}}, true);
  EXPECT_EQ(test::error_of([&] { io::write_matrix_market(p, herm_diag, io::WriteOptions{}); }),
            p + ": cannot write the matrix as hermitian: the diagonal entry (1,1) is 1+2i, not real" + tail);
  const Csr herm_sym = make(Symmetry::Hermitian, {{1, 0, 1, 2}, {0, 1, 1, 2}}, true);  // symmetric, not conjugate
  EXPECT_EQ(test::error_of([&] { io::write_matrix_market(p, herm_sym, io::WriteOptions{}); }),
            p + ": cannot write the matrix as hermitian: the entry (2,1) = 1+2i but its mirror (1,2) = 1+2i" + tail);
  EXPECT_EQ(test::slurp(p), "untouched");

  // Expanded, each is written as it is.
  io::write_matrix_market(p, differ, io::WriteOptions{.expand = true});
  EXPECT_EQ(parse_text(test::slurp(p)).banner, "%%MatrixMarket matrix coordinate real general");
  expect_same_csr(io::load_csr(p), differ);
}

// The header's comments are kept on the loaded matrix (in order, not the generated marker) and
// written back after the banner; the generated marker is written once and still recognised.
TEST(WriteComments, KeptOnLoadAndWrittenBack) {
  test::ScratchDir dir;
  test::dump(dir / "c.mtx",
             "%%MatrixMarket matrix coordinate real symmetric\r\n"
             "% spmv-generated: a test, seed 2\n"
             "%-------------------------------\n"
             "% name: Test/c  \n"
             "\n"
             "  % indented, after a blank line\n"
             "%\n"
             "3 3 2\n"
             "% a comment in the data is not a header comment\n"
             "2 1 7\n3 3 1\n");
  const io::LoadedMatrix in = io::load(dir / "c.mtx");
  EXPECT_EQ(in.generated, "a test, seed 2");
  const std::vector<std::string> want = {"%-------------------------------", "% name: Test/c",
                                         "  % indented, after a blank line", "%"};
  EXPECT_EQ(in.comments, want);

  io::write_matrix_market(dir / "w.mtx.gz", in.matrix,
                          io::WriteOptions{.generated = in.generated, .comments = in.comments});
  ASSERT_EQ(sh(fmt::format("gzip -dc '{}' > '{}'", dir / "w.mtx.gz", dir / "w.mtx")), 0);
  const MmText t = parse_text(test::slurp(dir / "w.mtx"));
  EXPECT_EQ(t.banner, "%%MatrixMarket matrix coordinate real symmetric");
  ASSERT_GE(t.comments.size(), 6u);
  EXPECT_EQ(t.comments[0], "% spmv-generated: a test, seed 2");
  EXPECT_EQ(std::vector<std::string>(t.comments.begin() + 1, t.comments.begin() + 5), want);
  EXPECT_EQ(t.comments[5].rfind("% written by spmv", 0), 0u);
  EXPECT_EQ(io::generated_description(dir / "w.mtx.gz"), "a test, seed 2");
  const io::LoadedMatrix again = io::load(dir / "w.mtx.gz");
  EXPECT_EQ(again.generated, "a test, seed 2");
  // Read back: the same comments and our own line, which a second write does not repeat.
  ASSERT_EQ(again.comments.size(), 5u);
  EXPECT_EQ(std::vector<std::string>(again.comments.begin(), again.comments.begin() + 4), want);
  io::write_matrix_market(dir / "w2.mtx", again.matrix,
                          io::WriteOptions{.generated = again.generated, .comments = again.comments});
  EXPECT_EQ(parse_text(test::slurp(dir / "w2.mtx")).comments, t.comments);
  expect_same_csr(io::load_csr(dir / "w2.mtx"), in.matrix);

  // Caller's comments: a line without '%' gets "% ", a '\n' splits, a generated marker among them is
  // not written (only WriteOptions::generated is).
  io::write_matrix_market(dir / "x.mtx", in.matrix,
                          io::WriteOptions{.comments = {"plain words", "% two\n% lines", "% spmv-generated: no"}});
  const MmText x = parse_text(test::slurp(dir / "x.mtx"));
  EXPECT_EQ(std::vector<std::string>(x.comments.begin(), x.comments.begin() + 3),
            (std::vector<std::string>{"% plain words", "% two", "% lines"}));
  EXPECT_EQ(x.comments.size(), 4u);
  EXPECT_EQ(io::generated_description(dir / "x.mtx"), "");
}

// More than 64 KiB of header comments: a prefix that fits is kept, then one line says how many
// were not; writing it back writes that line too.
TEST(WriteComments, BoundedAt64KiB) {
  test::ScratchDir dir;
  std::string text = "%%MatrixMarket matrix coordinate real general\n";
  std::vector<std::string> lines;
  for (int i = 0; i < 1000; ++i)
    lines.push_back(fmt::format("% comment {:04} {}", i, std::string(90, 'x')));  // 105 bytes
  for (const auto& l : lines) text += l + "\n";
  text += "2 2 1\n1 2 3\n";
  test::dump(dir / "many.mtx", text);
  const io::LoadedMatrix in = io::load(dir / "many.mtx");
  const std::size_t fit = (64 * 1024) / 106;  // each kept line counts its bytes and a newline
  ASSERT_EQ(in.comments.size(), fit + 1);
  EXPECT_EQ(std::vector<std::string>(in.comments.begin(), in.comments.end() - 1),
            std::vector<std::string>(lines.begin(), lines.begin() + static_cast<long>(fit)));
  EXPECT_EQ(in.comments.back(), fmt::format("% (spmv: {} more comment lines of {} bytes not kept: the header's "
                                            "comments are kept up to 64 KiB)",
                                            1000 - fit, (1000 - fit) * 106));
  io::write_matrix_market(dir / "w.mtx", in.matrix, io::WriteOptions{.comments = in.comments});
  const MmText t = parse_text(test::slurp(dir / "w.mtx"));
  ASSERT_EQ(t.comments.size(), fit + 2);  // and "% written by spmv"
  EXPECT_EQ(t.comments[fit], in.comments.back());
  EXPECT_EQ(entries_of(io::load_csr(dir / "w.mtx")), entries_of(in.matrix));
}
