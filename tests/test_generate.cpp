// Structure-alike generator: determinism, size and row-profile targets, --like, memory refusal.
#include <gtest/gtest.h>

#include <spmv/bench/generate.hpp>
#include <spmv/io.hpp>
#include <spmv/stats.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <unistd.h>
#include <fmt/format.h>

#include "test_util.hpp"

namespace spmv::gen {
namespace {

struct Target {
  Kind kind;
  index_t rows;
  double mean, std;
  double std_tol;  // relative; heavy tails are only matched approximately at small sizes
};

const std::vector<Target>& targets() {
  static const std::vector<Target> t = {
      {Kind::Stencil3d, 30000, 27.0, 2.0, 0.1}, {Kind::Mesh2d, 30000, 7.0, 0.8, 0.1},
      {Kind::Powerlaw, 50000, 3.1, 25.0, 0.1},  {Kind::Road, 30000, 2.8, 1.0, 0.1},
      {Kind::Kkt, 30000, 27.0, 3.7, 0.15},      {Kind::Circuit, 20000, 6.5, 100.0, 0.1},
      {Kind::Random, 20000, 10.0, 3.0, 0.15},   {Kind::Fem, 20000, 30.0, 10.0, 0.15},
  };
  return t;
}

TEST(Generate, EachKindMeetsRowsNnzMeanStd) {
  for (const Target& t : targets()) {
    SCOPED_TRACE(to_string(t.kind));
    GenSpec s;
    s.kind = t.kind;
    s.rows = t.rows;
    s.mean = t.mean;
    s.std = t.std;
    s.seed = 11;
    const Csr a = generate(s, 2);
    test::expect_valid_csr(a);
    EXPECT_EQ(a.rows, t.rows);
    EXPECT_EQ(a.cols, t.rows);
    const double want_nnz = t.mean * t.rows;
    EXPECT_NEAR(static_cast<double>(a.nnz()), want_nnz, 0.01 * want_nnz);
    const MatrixStats st = compute_stats(a);
    EXPECT_NEAR(st.row_nnz_mean, t.mean, 0.01 * t.mean);
    EXPECT_NEAR(st.row_nnz_std, t.std, t.std_tol * t.std);
    EXPECT_EQ(st.empty_rows, 0);
  }
}

TEST(Generate, SameSeedSameBytesAcrossThreadCounts) {
  for (const Target& t : targets()) {
    SCOPED_TRACE(to_string(t.kind));
    GenSpec s;
    s.kind = t.kind;
    s.rows = 9000;  // > one reduction chunk is not needed: per-row streams carry determinism
    s.mean = t.mean;
    s.std = t.std;
    s.seed = 5;
    const Csr one = generate(s, 1), two = generate(s, 2), again = generate(s, 2);
    EXPECT_EQ(one.row_ptr, two.row_ptr);
    EXPECT_EQ(one.col, two.col);
    EXPECT_EQ(one.val, two.val);
    EXPECT_EQ(two.col, again.col);
    s.seed = 6;
    const Csr other = generate(s, 2);
    EXPECT_NE(one.val, other.val) << "a different seed must give a different matrix";
  }
}

TEST(Generate, DeterministicAcrossReductionChunks) {
  // More rows than one fixed reduction chunk (65536), so the ordered sums span several chunks.
  const GenSpec s{.kind = Kind::Powerlaw, .rows = 150000, .mean = 3.0, .std = 10.0};
  const Csr one = generate(s, 1), two = generate(s, 2);
  EXPECT_EQ(one.row_ptr, two.row_ptr);
  EXPECT_EQ(one.col, two.col);
}

TEST(Generate, Stencil27HasTheFullCubeInside) {
  const GenSpec s{.kind = Kind::Stencil3d, .rows = 27000, .mean = 27, .std = 0};  // 30^3
  const Csr a = generate(s, 2);
  // An interior point of the 30x30x30 grid: (15,15,15) has its 27 neighbours at offsets
  // dx + 30 dy + 900 dz for dx,dy,dz in {-1,0,1}.
  const index_t r = 15 + 30 * 15 + 900 * 15;
  ASSERT_EQ(a.row_length(r), 27);
  std::vector<index_t> want;
  for (int dz = -1; dz <= 1; ++dz)
    for (int dy = -1; dy <= 1; ++dy)
      for (int dx = -1; dx <= 1; ++dx) want.push_back(r + dx + 30 * dy + 900 * dz);
  std::sort(want.begin(), want.end());
  EXPECT_EQ(std::vector<index_t>(a.col.begin() + a.row_ptr[r], a.col.begin() + a.row_ptr[r + 1]), want);
}

TEST(Generate, CircuitHasLongRows) {
  const GenSpec s{.kind = Kind::Circuit, .rows = 20000, .mean = 6.5, .std = 100};
  const MatrixStats st = compute_stats(generate(s, 2));
  EXPECT_GT(st.row_nnz_max, 5000);  // a dense-ish "power net" row
  EXPECT_LE(st.row_nnz_min, 3);
}

TEST(Generate, LikeSeedSuiteMatrix) {
  const auto suite = read_seed_suite();
  ASSERT_GE(suite.size(), 30u);
  const auto e = find_seed(suite, "thermal1");
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->rows, 82654);
  EXPECT_EQ(e->nnz, 574458);
  EXPECT_EQ(e->kind, Kind::Mesh2d);
  EXPECT_EQ(find_seed(suite, "dc1")->kind, Kind::Circuit);
  EXPECT_EQ(find_seed(suite, "webbase-1M")->kind, Kind::Powerlaw);
  EXPECT_EQ(find_seed(suite, "roadNet-PA")->kind, Kind::Road);
  EXPECT_EQ(find_seed(suite, "nlpkkt80")->kind, Kind::Kkt);
  EXPECT_EQ(find_seed(suite, "cant")->kind, Kind::Stencil3d);
  const Csr a = generate(spec_like(*e), 2);
  EXPECT_EQ(a.rows, 82654);
  EXPECT_NEAR(static_cast<double>(a.nnz()), 574458.0, 0.01 * 574458);
  const MatrixStats st = compute_stats(a);
  EXPECT_NEAR(st.row_nnz_std, 0.876772, 0.2 * 0.876772);

  // Scaled down: rows and nnz shrink, the row profile stays.
  const GenSpec half = spec_like(*find_seed(suite, "cop20k_A"), 0.1);
  EXPECT_NEAR(half.rows, 12119, 1);
  const MatrixStats hs = compute_stats(generate(half, 2));
  EXPECT_NEAR(hs.row_nnz_mean, 21.6543, 0.2);
  EXPECT_NEAR(hs.row_nnz_std, 13.79268, 0.15 * 13.79268);
}

TEST(Generate, KindParsingAndDescriptions) {
  for (Kind k : all_kinds()) EXPECT_EQ(parse_kind(to_string(k)), k);
  EXPECT_THROW(parse_kind("lattice"), Unsupported);
  EXPECT_EQ(kind_from_description("thermal (symmetric)"), Kind::Mesh2d);
  EXPECT_EQ(kind_from_description("co-purchase graph (pattern)"), Kind::Powerlaw);
  EXPECT_EQ(kind_from_description("computational fluid dynamics"), Kind::Fem);
}

TEST(Generate, RefusesWhatDoesNotFitInMemory) {
  GenSpec s;
  s.kind = Kind::Random;
  s.rows = 2'000'000'000;
  s.nnz = 4'000'000'000'000LL;  // 48 TB of CSR
  s.mean = 2000;
  try {
    check_generate_memory(s, "huge");
    FAIL() << "expected a refusal";
  } catch (const Unsupported& e) {
    EXPECT_NE(std::string(e.what()).find("huge"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("GiB"), std::string::npos);
  }
  s.rows = 1000;
  s.nnz = 10000;
  EXPECT_NO_THROW(check_generate_memory(s, "small"));
}

TEST(Generate, CacheRoundTrip) {
  const test::ScratchDir scratch;
  const std::string dir = scratch.str();
  GenSpec s{.kind = Kind::Fem, .rows = 5000, .mean = 12, .std = 4};
  bool hit = true;
  const Csr a = generate_cached(s, dir, &hit);
  EXPECT_FALSE(hit);
  const Csr b = generate_cached(s, dir, &hit);
  EXPECT_TRUE(hit);
  EXPECT_EQ(a.col, b.col);
  EXPECT_EQ(a.val, b.val);
  s.seed = 2;
  EXPECT_NE(cache_name(s), cache_name(GenSpec{s.kind, s.rows, 0, 0, s.mean, s.std, 1}));
}

TEST(Generate, CliWritesMatrixMarket) {
  const test::ScratchDir scratch;
  const std::string out = scratch / "cage4.mtx";
  const std::string cmd = fmt::format("{} generate --like cage4 --seed 3 -o {} > /dev/null", SPMV_CLI, out);
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  const Csr a = io::load_csr(out);
  EXPECT_EQ(a.rows, 9);
  EXPECT_EQ(a.nnz(), 49);
  const std::string bad = fmt::format("{} generate --like no_such_matrix -o {} 2> /dev/null", SPMV_CLI, out);
  EXPECT_NE(std::system(bad.c_str()), 0);
}

}  // namespace
}  // namespace spmv::gen

TEST(Generate, SeedSuiteNamedByFolderOrRefusedWhenMissing) {
  namespace fs = std::filesystem;
  const spmv::test::ScratchDir scratch;
  const fs::path dir = scratch.path;
  {
    std::ofstream f(dir / "seed_suite.tsv");
    f << "name\trows\tnnz\tnnz_per_row_mean\tnnz_per_row_std\tkind\n"
      << "tiny\t100\t500\t5\t1\tthermal (symmetric)\n";
  }
  const auto by_folder = spmv::gen::read_seed_suite(dir.string());  // a folder reads the seed_suite.tsv in it
  ASSERT_EQ(by_folder.size(), 1u);
  EXPECT_EQ(by_folder[0].name, "tiny");
  EXPECT_EQ(by_folder[0].rows, 100);
  EXPECT_THROW(spmv::gen::read_seed_suite((dir / "absent.tsv").string()),
               spmv::Error);  // named: never the built-in copy
}
