// The benchmark's suite: the default suite's real matrices and labelled structure-alikes, generated
// files labelled synthetic, and what a file's read counts in the memory budget.
#include <gtest/gtest.h>

#include <spmv/bench/bench.hpp>
#include <spmv/io.hpp>
#include <spmv/timing.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <set>
#include <sstream>
#include <unistd.h>

#include "bench_fakes.hpp"
#include "test_util.hpp"

namespace spmv::bench {
namespace {

namespace fs = std::filesystem;
using namespace test_fakes;

TEST(Bench, DefaultSuiteHasRealMatricesAndLabelledAlikes) {
  SuiteOptions so;
  so.matrices_dir = test::shared_matrices_dir();
  so.small_machine = true;
  const auto suite = default_suite(so);
  int real = 0, scaled = 0;
  bool cage4_real = false, cant_alike = false;
  for (const auto& s : suite) {
    real += s.origin == "real";
    if (s.name == "cage4") cage4_real = s.origin == "real" && !s.spec;
    if (s.name == "cant") {
      ASSERT_TRUE(s.spec.has_value());
      cant_alike = s.origin == "synthetic-scaled";
      EXPECT_LE(s.spec->nnz, 2'000'000 * 1.01);
      EXPECT_NEAR(s.spec->mean, 64.1684, 0.01);
      EXPECT_LT(s.scale, 1.0);
    }
    if (s.origin == "synthetic-scaled") {
      ++scaled;
      EXPECT_LE(s.spec->nnz, 2'000'000 * 1.01) << s.name;
    }
  }
  EXPECT_GE(real, static_cast<int>(test::shared_count(70, 14)));  // the folder's SuiteSparse matrices
  EXPECT_TRUE(cage4_real);
  EXPECT_TRUE(cant_alike);
  EXPECT_GE(scaled, 8);
  // Full size where memory allows: no scaling.
  so.full = true;
  for (const auto& s : default_suite(so)) EXPECT_NE(s.origin, "synthetic-scaled") << s.name;
  // --seed-suite: the seed suite's 30 matrices alone, in its order, each real where the folder
  // has it (with the folder's path) and an alike otherwise.
  so.seed_only = true;
  const auto seeds = default_suite(so);
  const auto table = gen::read_seed_suite("");
  ASSERT_EQ(seeds.size(), table.size());
  ASSERT_EQ(table.size(), 30u);
  std::set<std::string> real_names;
  for (const auto& s : suite)
    if (s.origin == "real") real_names.insert(s.name);
  for (std::size_t i = 0; i < seeds.size(); ++i) {
    EXPECT_EQ(seeds[i].name, table[i].name) << i;
    const bool have = real_names.count(table[i].name) > 0;
    EXPECT_EQ(seeds[i].origin, have ? "real" : "synthetic") << seeds[i].name;
    EXPECT_EQ(seeds[i].spec.has_value(), !have) << seeds[i].name;
    if (have) EXPECT_TRUE(std::filesystem::exists(seeds[i].path)) << seeds[i].path;
  }
  EXPECT_EQ(seeds.front().name, "cage4");
  EXPECT_EQ(seeds.front().origin, "real");
  EXPECT_EQ(std::find_if(seeds.begin(), seeds.end(), [](const MatrixSource& s) { return s.name == "cant"; })->origin,
            "synthetic");
}

// Files given to the benchmark: a generated one is labelled synthetic with its description, a
// real one stays real.
TEST(Bench, GeneratedFilesAreLabelledSynthetic) {
  const test::ScratchDir scratch;
  const std::filesystem::path dir = scratch.path;
  const Csr a = coo_to_csr(test::random_coo(30, 30, 0.1, 2));
  io::write_matrix_market((dir / "alike.mtx").string(), a, "webbase-1M alike (web graph), seed 1");
  io::write_binary((dir / "alike2.spmvbin").string(), a, true);
  io::write_matrix_market((dir / "data.mtx").string(), a);
  const auto v = sources_from_paths({dir.string()});
  ASSERT_EQ(v.size(), 3u);
  for (const auto& s : v) {
    if (s.name == "data") {
      EXPECT_EQ(s.origin, "real");
    } else {
      EXPECT_EQ(s.origin, "synthetic") << s.name;
      EXPECT_EQ(s.kind, s.name == "alike" ? "webbase-1M alike (web graph), seed 1" : "spmv-generated");
    }
  }
  EXPECT_EQ(sources_from_paths({(dir / "alike.mtx").string()}).at(0).origin, "synthetic");
}

// A file's vectors, reference and plans' copies at the sweep's largest k count in its read's
// memory budget, as run counts them: 2^31 - 1 rows and one entry at k = 1024 would need
// 80 TiB beside its 16 GiB of row pointers, refused at the size line whatever the machine. A small
// file loads.
TEST(Bench, LoadCountsTheSweepsVectorsInTheBudget) {
  const test::ScratchDir scratch;
  const std::string path = (std::filesystem::path(scratch.path) / "tall.mtx").string();
  std::ofstream(path) << "%%MatrixMarket matrix coordinate real general\n2147483647 1 1\n5 1 1.0\n";
  SuiteOptions so;
  so.max_k = 1024;
  const MatrixSource src = sources_from_paths({path}).at(0);
  try {
    load_source(src, so);
    ADD_FAILURE() << "loaded";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find(path + ":2: a 2147483647 x 1 matrix with 1 entries needs "), std::string::npos) << m;
    EXPECT_NE(m.find("(row pointers 16.0 GiB, entries 16 B, X and Y at k = 1024, the reference and the plans' copies "),
              std::string::npos)
        << m;
  }
  const std::string small = (std::filesystem::path(scratch.path) / "small.mtx").string();
  io::write_matrix_market(small, coo_to_csr(test::random_coo(30, 20, 0.2, 4)));
  so.max_k = 1;
  EXPECT_EQ(load_source(sources_from_paths({small}).at(0), so).rows, 30);
}

// `spmv report CSV -o DIR/OUT`; report.md's text, "" (and a failure) when it did not run.

}  // namespace
}  // namespace spmv::bench
