// `spmv convert` run as a process: .gz output that gzip and `spmv info` read, the output as
// OUTPUT or -o (exactly one: exit status 2 otherwise), symmetry kept or --expand'ed, header
// comments and the generated marker carried, a matrix that does not match its symmetry refused, an
// output cut short never replacing the file that was there.
#include <gtest/gtest.h>
#include <spmv/io.hpp>

#include <cstring>
#include <filesystem>
#include <fmt/format.h>
#include <sstream>
#include <string>
#include <vector>

#include "cli_util.hpp"
#include "test_util.hpp"

using namespace spmv;
using namespace spmv::test;
namespace fs = std::filesystem;

namespace {

int sh(const std::string& cmd) { return std::system(cmd.c_str()); }

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

// The data lines of a Matrix Market text (after the size line).
std::vector<std::string> data_lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  std::string line;
  bool size_seen = false;
  std::getline(in, line);  // banner
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '%') continue;
    if (!size_seen)
      size_seen = true;
    else
      out.push_back(line);
  }
  return out;
}

}  // namespace

// To .gz: gzip -t accepts it, gzip -dc gives the symmetric banner and the file's lower triangle,
// and `spmv info` reads the same matrix as from the input.
TEST_F(Cli, ConvertToGzipThatGzipAndInfoRead) {
  const std::string in = kDir + "/coord_real_symmetric.mtx", out = tmp("s.mtx.gz");
  const Result c = run(fmt::format("convert {} {}", in, out));
  ASSERT_EQ(c.status, 0) << c.err;
  EXPECT_EQ(c.out, fmt::format("wrote {} (3 x 3, 6 nonzeros, symmetric: lower triangle stored)\n", out));
  EXPECT_EQ(sh(fmt::format("gzip -t '{}'", out)), 0);
  ASSERT_EQ(sh(fmt::format("gzip -dc '{}' > '{}'", out, tmp("s.mtx"))), 0);
  const std::string text = slurp(tmp("s.mtx"));
  EXPECT_EQ(first_line(text), "%%MatrixMarket matrix coordinate real symmetric");
  EXPECT_EQ(data_lines(text),
            (std::vector<std::string>{"1 1 4", "2 1 -1", "3 1 2.5", "3 3 6"}));  // the input's entries
  const Result i = run("info " + out);
  ASSERT_EQ(i.status, 0) << i.err;
  auto got = keys(i.out), want = keys(run("info " + in).out);
  ASSERT_FALSE(want.empty());
  EXPECT_EQ(got["symmetry"], "symmetric");
  EXPECT_EQ(got["nnz"], "6");
  got.erase("file");
  want.erase("file");
  EXPECT_EQ(got, want);
  expect_same_csr(io::load_csr(out), io::load_csr(in));
}

// scipy (python3-scipy, which scripts/setup.sh installs for Debian's python3) reads the .gz a
// symmetric shared matrix converts to as the same matrix as the original file.
TEST_F(Cli, ConvertedGzipIsReadByScipy) {
  const std::string in = test::shared_matrices_dir() + "/bcsstk16.mtx.gz", out = tmp("b.mtx.gz");
  ASSERT_TRUE(fs::exists(in)) << in;
  ASSERT_EQ(run(fmt::format("convert {} {}", in, out)).status, 0);
  EXPECT_EQ(sh(fmt::format("/usr/bin/python3 -c \"import sys, scipy.io; a = scipy.io.mmread(sys.argv[1]); "
                           "b = scipy.io.mmread(sys.argv[2]); assert a.shape == b.shape == (4884, 4884); "
                           "assert abs(a - b).max() == 0 and a.nnz == b.nnz == 290378\" '{}' '{}'",
                           out, in)),
            0);
}

// -o instead of OUTPUT; a gzipped binary cache by its name.
TEST_F(Cli, ConvertTakesDashO) {
  const std::string in = kDir + "/cli_small.mtx";
  const Result c = run(fmt::format("convert {} -o {}", in, tmp("o.mtx")));
  ASSERT_EQ(c.status, 0) << c.err;
  expect_same_csr(io::load_csr(tmp("o.mtx")), io::load_csr(in));
  const Result b = run(fmt::format("convert {} --output {}", in, tmp("o.spmvbin.gz")));
  ASSERT_EQ(b.status, 0) << b.err;
  EXPECT_EQ(sh(fmt::format("gzip -t '{}'", tmp("o.spmvbin.gz"))), 0);
  EXPECT_TRUE(io::is_binary_cache(tmp("o.spmvbin.gz")));
  expect_same_csr(io::load_csr(tmp("o.spmvbin.gz")), io::load_csr(in));
}

TEST_F(Cli, ConvertOutputGivenTwiceOrNotAtAllIsBadUsage) {
  const std::string in = kDir + "/cli_small.mtx";
  const Result both = run(fmt::format("convert {} {} -o {}", in, tmp("a.mtx"), tmp("b.mtx")));
  EXPECT_EQ(both.status, 2);
  EXPECT_EQ(both.err, fmt::format("convert: the output is given twice, as OUTPUT '{}' and as -o '{}': give one\n"
                                  "Run with --help for more information.\n",
                                  tmp("a.mtx"), tmp("b.mtx")));
  EXPECT_FALSE(fs::exists(tmp("a.mtx")));
  EXPECT_FALSE(fs::exists(tmp("b.mtx")));
  const Result neither = run("convert " + in);
  EXPECT_EQ(neither.status, 2);
  EXPECT_EQ(neither.err,
            "convert: no output: give OUTPUT (spmv convert A.mtx A.mtx.gz) or -o OUTPUT\n"
            "Run with --help for more information.\n");
  EXPECT_EQ(neither.out, "");
}

// --expand: general banner and both triangles, the same matrix.
TEST_F(Cli, ConvertExpand) {
  const std::string in = kDir + "/coord_real_symmetric.mtx";
  const Result c = run(fmt::format("convert {} {} --expand", in, tmp("g.mtx")));
  ASSERT_EQ(c.status, 0) << c.err;
  const std::string text = slurp(tmp("g.mtx"));
  EXPECT_EQ(first_line(text), "%%MatrixMarket matrix coordinate real general");
  EXPECT_EQ(data_lines(text), (std::vector<std::string>{"1 1 4", "1 2 -1", "1 3 2.5", "2 1 -1", "3 1 2.5", "3 3 6"}));
  const Csr back = io::load_csr(tmp("g.mtx"));
  EXPECT_EQ(back.symmetry, Symmetry::General);
  expect_same_csr(back, io::load_csr(in));
  EXPECT_EQ(keys(run("info " + tmp("g.mtx")).out)["symmetry"], "general");
}

// The input's header comments are written after the banner; a generated matrix stays marked
// through .gz and back.
TEST_F(Cli, ConvertKeepsCommentsAndTheGeneratedMarker) {
  const Result c = run(fmt::format("convert {}/cli_small.mtx {}", kDir, tmp("c.mtx")));
  ASSERT_EQ(c.status, 0) << c.err;
  const std::string text = slurp(tmp("c.mtx"));
  EXPECT_EQ(text.rfind("%%MatrixMarket matrix coordinate real general\n% 4 x 5, row 3 empty\n", 0), 0u) << text;

  ASSERT_EQ(run("generate --kind random --rows 300 --nnz-per-row 4 -o " + tmp("g.mtx")).status, 0);
  const std::string mark = io::generated_description(tmp("g.mtx"));
  ASSERT_NE(mark, "");
  ASSERT_EQ(run(fmt::format("convert {} {}", tmp("g.mtx"), tmp("g2.mtx.gz"))).status, 0);
  EXPECT_EQ(io::generated_description(tmp("g2.mtx.gz")), mark);
  ASSERT_EQ(run(fmt::format("convert {} -o {}", tmp("g2.mtx.gz"), tmp("g3.mtx"))).status, 0);
  EXPECT_EQ(io::generated_description(tmp("g3.mtx")), mark);
  expect_same_csr(io::load_csr(tmp("g3.mtx")), io::load_csr(tmp("g.mtx")));
}

// A cache that says symmetric over entries that are not: refused (exit 1, the entries named, no
// output file), written with --expand.
TEST_F(Cli, ConvertRefusesEntriesThatDoNotMatchTheSymmetry) {
  Coo c;
  c.rows = c.cols = 2;
  c.symmetry = Symmetry::Symmetric;
  c.row = {1, 0};
  c.col = {0, 1};
  c.val = {5.0, 6.0};
  const Csr a = coo_to_csr(c);
  io::write_binary(tmp("bad.spmvbin"), a);
  const Result r = run(fmt::format("convert {} {}", tmp("bad.spmvbin"), tmp("bad.mtx.gz")));
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err,
            fmt::format("{}: cannot write the matrix as symmetric: the entry (2,1) = 5 but its mirror (1,2) = 6; "
                        "write it expanded, as general (WriteOptions::expand, spmv convert --expand)\n",
                        tmp("bad.mtx.gz")));
  EXPECT_FALSE(fs::exists(tmp("bad.mtx.gz")));
  const Result e = run(fmt::format("convert {} {} --expand", tmp("bad.spmvbin"), tmp("bad.mtx.gz")));
  ASSERT_EQ(e.status, 0) << e.err;
  expect_same_csr(io::load_csr(tmp("bad.mtx.gz")), a);
}

// An output cut short (here by a file size limit) leaves the file that was there as it was, and no
// temporary file behind: the output is written beside its name and renamed over it at the end.
// The command reports the failure (exit 1) instead of being killed by SIGXFSZ.
TEST_F(Cli, ConvertCutShortKeepsTheOldFile) {
  const std::string small = kDir + "/cli_small.mtx", big = tmp("big.mtx"), out = tmp("keep.mtx.gz");
  ASSERT_EQ(run(fmt::format("generate --kind random --rows 2000 --nnz-per-row 10 -o {}", big)).status, 0);
  ASSERT_EQ(run(fmt::format("convert {} {}", small, out)).status, 0);
  const std::string before = slurp(out);
  const int rc = sh(fmt::format("ulimit -f 8; '{}' convert '{}' '{}' 2> '{}'", SPMV_CLI, big, out, tmp("err.txt")));
  ASSERT_TRUE(WIFEXITED(rc)) << "killed by a signal";
  EXPECT_EQ(WEXITSTATUS(rc), 1);
  EXPECT_NE(slurp(tmp("err.txt")).find("keep.mtx.gz: cannot write: File too large"), std::string::npos)
      << slurp(tmp("err.txt"));
  EXPECT_EQ(slurp(out), before);
  for (const auto& e : fs::directory_iterator(fs::path(out).parent_path()))
    EXPECT_EQ(e.path().filename().string().find("spmv-tmp"), std::string::npos) << e.path();
  // Without the limit the same command replaces it; through a symbolic link, the link's target.
  ASSERT_EQ(run(fmt::format("convert {} {}", big, out)).status, 0);
  expect_same_csr(io::load_csr(out), io::load_csr(big));
  fs::create_symlink(out, tmp("link.mtx.gz"));
  ASSERT_EQ(run(fmt::format("convert {} {}", small, tmp("link.mtx.gz"))).status, 0);
  EXPECT_TRUE(fs::is_symlink(tmp("link.mtx.gz")));
  expect_same_csr(io::load_csr(out), io::load_csr(small));
}

// `generate -o NAME.spmvbin.gz` writes the binary cache gzip-compressed, as convert does (it wrote
// gzipped Matrix Market text).
TEST_F(Cli, GenerateWritesAGzippedBinaryCache) {
  const std::string out = tmp("g.spmvbin.gz");
  const Result r = run(fmt::format("generate --kind random --rows 50 --nnz-per-row 3 -o {}", out));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(sh(fmt::format("gzip -t '{}'", out)), 0);
  EXPECT_TRUE(io::is_binary_cache(out));
  ASSERT_EQ(run(fmt::format("generate --kind random --rows 50 --nnz-per-row 3 -o {}", tmp("g.mtx"))).status, 0);
  expect_same_csr(io::load_csr(out), io::load_csr(tmp("g.mtx")));
}
