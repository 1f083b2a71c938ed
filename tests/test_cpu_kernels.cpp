// The CPU-only kernel tests: what the conformance tests (conformance.cpp, every kernel of every
// backend against the reference) do not cover: ELL-rowlen's byte accounting, the omp "csr"
// schedule choice, the balanced partition, and the CLI path.
#include <gtest/gtest.h>
#include <spmv/spmv.hpp>

#include <cstdlib>
#include <fmt/format.h>
#include <filesystem>
#include <fstream>
#include <regex>

#include "cpu/row_kernels.hpp"
#include "test_util.hpp"

using namespace spmv;

// Padding must cost bandwidth in the plan's byte count: ELL counts every slot, ELL-rowlen only the
// true entries plus a length per row.
TEST(CpuKernels, PaddedBytesPerProduct) {
  const Csr a = test::csr_from_lengths({1, 9, 2, 0, 4}, 20, 3);  // nnz 16, ELL 5 x 9 = 45 slots
  for (const Backend b : {Backend::Serial, Backend::Omp}) {
    auto ell = make_plan(a, b, "ell", {});
    auto rowlen = make_plan(a, b, "ell-rowlen", {});
    EXPECT_EQ(ell->stored_entries, 45);
    EXPECT_EQ(rowlen->stored_entries, 45);
    EXPECT_EQ(ell->bytes_per_product, 12 * 45 + 8 * 20 + 8 * 5);
    EXPECT_EQ(rowlen->bytes_per_product, 12 * 16 + 4 * 5 + 8 * 20 + 8 * 5);
  }
}

TEST(CpuKernels, AutoCsrRecordsItsChoice) {
  const Csr a = test::edge_cases().back().second;
  for (const int t : {1, 4}) {
    PlanOptions opt;
    opt.threads = t;
    auto plan = make_plan(a, Backend::Omp, "csr", opt);
    EXPECT_TRUE(std::regex_search(
        plan->detail, std::regex("^variant=(balanced|dynamic|serial|balanced-[0-9]+) .*inner=(simd|scalar)")))
        << plan->detail;
    opt.kernel.variant = "dynamic";
    EXPECT_EQ(make_plan(a, Backend::Omp, "csr", opt)->detail.rfind("variant=dynamic", 0), 0u);
    opt.kernel.variant = "bogus";
    EXPECT_THROW(make_plan(a, Backend::Omp, "csr", opt), Unsupported);
    EXPECT_THROW(make_plan(a, Backend::Omp, "hll", opt), Unsupported);
    opt.kernel.variant = "dynamic";  // a schedule means nothing to ELL
    EXPECT_THROW(make_plan(a, Backend::Omp, "ell", opt), Unsupported);
  }
}

// Plan::threads_used: the threads a product runs on, fewer than given where the kernel falls back,
// and the detail says why.
TEST(CpuKernels, ThreadsUsedAndWhyAKernelFallsBack) {
  const auto runs_on = [](const Plan& p) {
    std::smatch m;
    return std::regex_search(p.detail, m, std::regex("runs on ([0-9]+) of ([0-9]+) threads: ")) ? std::stoi(m[1]) : -1;
  };
  // OpenMP CSR, balanced, one row on 4 threads: one part holds it.
  const Csr one_row = test::csr_from_lengths({5}, 10, 1);
  PlanOptions opt;
  opt.threads = 4;
  opt.kernel.variant = "balanced";
  auto p = make_plan(one_row, Backend::Omp, "csr", opt);
  EXPECT_EQ(p->threads_used(), 1);
  EXPECT_NE(p->detail.find("runs on 1 of 4 threads: 1 row"), std::string::npos) << p->detail;

  // OpenMP CSR, auto on 2 threads: the trial may find one thread fastest on a small matrix. Its
  // choice and threads_used agree, and a fallback names the trial.
  const Csr small = test::csr_from_lengths(std::vector<offset_t>(200, 5), 200, 2);
  opt.kernel.variant = "auto";
  opt.threads = 2;
  for (int i = 0; i < 5; ++i) {
    p = make_plan(small, Backend::Omp, "csr", opt);
    const bool serial = p->detail.rfind("variant=serial ", 0) == 0;
    EXPECT_EQ(p->threads_used(), serial ? 1 : 2) << p->detail;
    EXPECT_EQ(runs_on(*p), serial ? 1 : -1) << p->detail;
    if (serial)
      EXPECT_NE(p->detail.find("the trial found one thread fastest (a small matrix: nnz x k = 1000 < "),
                std::string::npos)
          << p->detail;
  }
  p = make_plan(small, Backend::Serial, "csr", opt);
  EXPECT_EQ(p->threads_used(), 1);

  // ELL: three rows on four threads. HLL: 40 rows in hacks of 32, two hacks on four threads.
  const Csr three = test::csr_from_lengths({2, 3, 1}, 10, 1);
  opt.kernel.variant = "auto";
  opt.threads = 4;
  p = make_plan(three, Backend::Omp, "ell", opt);
  EXPECT_EQ(p->threads_used(), 3);
  EXPECT_NE(p->detail.find("runs on 3 of 4 threads: 3 rows"), std::string::npos) << p->detail;
  const Csr forty = test::csr_from_lengths(std::vector<offset_t>(40, 4), 40, 3);
  opt.kernel.hack = 32;
  p = make_plan(forty, Backend::Omp, "hll", opt);
  EXPECT_EQ(p->threads_used(), 2);
  EXPECT_NE(p->detail.find("runs on 2 of 4 threads: 2 hacks"), std::string::npos) << p->detail;
  p = make_plan(forty, Backend::Serial, "hll", opt);
  EXPECT_EQ(p->threads_used(), 1);

  // CSR5 (a fixed variant: no thread trial): never more threads than tiles.
  opt.kernel.variant = "simd";
  opt.threads = 32;
  p = make_plan(forty, Backend::Omp, "csr5", opt);
  std::smatch m;
  ASSERT_TRUE(std::regex_search(p->detail, m, std::regex("tiles=([0-9]+)"))) << p->detail;
  const int tiles = std::stoi(m[1]);
  ASSERT_LT(tiles, 32);
  EXPECT_EQ(p->threads_used(), std::max(tiles, 1));
  EXPECT_EQ(runs_on(*p), std::max(tiles, 1)) << p->detail;

  // Eigen multiplies serially up to 20000 nonzeros, whatever setNbThreads says.
  if (find_kernel(Backend::Omp, "eigen")) {
    opt.kernel.variant = "auto";
    opt.threads = 2;
    p = make_plan(small, Backend::Omp, "eigen", opt);
    EXPECT_EQ(p->threads_used(), 1);
    EXPECT_NE(p->detail.find("runs on 1 of 2 threads: Eigen multiplies serially at <= 20000 nonzeros"),
              std::string::npos)
        << p->detail;
    const Csr big = test::csr_from_lengths(std::vector<offset_t>(3000, 10), 3000, 4);  // 30000 nonzeros
    p = make_plan(big, Backend::Omp, "eigen", opt);
    EXPECT_EQ(p->threads_used(), 2);
    EXPECT_EQ(runs_on(*p), -1) << p->detail;
  }

  // auto: the plan it chose says.
  opt.threads = 2;
  p = make_plan(small, Backend::Omp, "auto", opt);
  EXPECT_GE(p->threads_used(), 1);
  EXPECT_LE(p->threads_used(), 2);
}

// The chunk as the course reports set it: in nonzeros (000) or rows under the dynamic schedule, or
// 004's: rows / threads (or the rows given) rounded down to a multiple of 16, under a static
// schedule; the product stays right.
TEST(CpuKernels, DynamicChunkInRowsAndRounded) {
  Csr a = test::csr_from_lengths(std::vector<offset_t>(1000, 10), 1000, 10);  // 10 per row
  std::fill(a.val.begin(), a.val.end(), 1.0);  // y = 10 exactly, whatever the order of the sums
  const std::vector<double> x(1000, 1.0);
  const auto chunk = [&](offset_t nz, index_t rows, index_t multiple) {
    PlanOptions opt;
    opt.threads = 3;
    opt.kernel.nz_per_chunk = nz;
    opt.kernel.chunk_rows = rows;
    opt.kernel.chunk_multiple = multiple;
    auto plan = make_plan(a, Backend::Omp, "csr-dynamic", opt);
    std::vector<double> y(1000, -1.0);
    plan->multiply(x, y);
    EXPECT_EQ(y, std::vector<double>(1000, 10.0));
    std::smatch m;
    const bool static_schedule = plan->detail.rfind("variant=static ", 0) == 0;
    EXPECT_EQ(static_schedule, multiple > 1) << plan->detail;
    return std::regex_search(plan->detail, m, std::regex("chunk_rows=([0-9]+)")) ? std::stoi(m[1]) : -1;
  };
  EXPECT_EQ(chunk(1000, 0, 0), 100);   // 1000 nonzeros of rows of 10
  EXPECT_EQ(chunk(1000, 0, 16), 320);  // 004: 1000 rows / 3 threads = 333, down to a multiple of 16
  EXPECT_EQ(chunk(1000, 37, 0), 37);
  EXPECT_EQ(chunk(0, 37, 16), 32);
  EXPECT_EQ(chunk(0, 32, 16), 32);
  EXPECT_EQ(chunk(0, 7, 16), 16);  // at least one multiple
}

// Rows nearly all empty: the chunk follows the rows, at most 1024 chunks a thread (a chunk a row
// made 2^26 rows and one nonzero take 4.4 s a product on 2 threads: one chunk grab a row).
TEST(CpuKernels, DynamicChunksOfEmptyRowsAreBounded) {
  const index_t n = 1 << 20;
  std::vector<offset_t> lengths(n, 0);
  lengths[5] = 1;
  Csr a = test::csr_from_lengths(lengths, 1, 1);
  a.val.assign(1, 2.5);
  PlanOptions opt;
  opt.threads = 2;
  auto plan = make_plan(a, Backend::Omp, "csr-dynamic", opt);
  std::vector<double> y(n, -1.0);
  plan->multiply(std::vector<double>{4.0}, y);
  std::vector<double> want(n, 0.0);
  want[5] = 10.0;
  EXPECT_EQ(y, want);
  std::smatch m;
  ASSERT_TRUE(std::regex_search(plan->detail, m, std::regex("chunk_rows=([0-9]+)"))) << plan->detail;
  EXPECT_EQ(std::stoi(m[1]), n / (1024 * 2));
}

// The plans' trial: after the first round a candidate more than 4 times slower than the fastest is
// not run again. On a clock that only the runs advance, candidate 1 takes 20 ms a run, the others
// 1 us: 1 runs its warm-up and one timed run only; 0 and 2 run in all three rounds.
TEST(CpuKernels, TrialLeavesOutCandidatesFarSlower) {
  int current = 0;
  double now = 0;
  std::vector<int> runs(3, 0);
  const auto best = cpu::trial_candidates(
      3, [&](int c) { current = c; },
      [&] {
        ++runs[current];
        now += current == 1 ? 0.02 : 1e-6;
      },
      [&] { return now; });
  ASSERT_EQ(best.size(), 3u);
  EXPECT_DOUBLE_EQ(best[1], 0.02);
  EXPECT_NEAR(best[0], 1e-6, 1e-12);
  EXPECT_NEAR(best[2], 1e-6, 1e-12);
  EXPECT_EQ(runs[1], 2);
  EXPECT_GE(runs[0], 4);  // a warm-up and at least one run in each of the 3 rounds
  EXPECT_GE(runs[2], 4);
}

TEST(CpuKernels, BalancedBoundsSplitWorkEvenly) {
  // Row lengths 0..99 repeated; parts must cover [0, n) in order and each hold about total/parts.
  std::vector<offset_t> prefix{0};
  for (int r = 0; r < 10000; ++r) prefix.push_back(prefix.back() + r % 100 + 1);
  for (const int parts : {1, 2, 3, 7, 16, 20000}) {
    const auto b = cpu::balanced_bounds(10000, parts, [&](index_t i) { return prefix[i]; });
    ASSERT_EQ(b.size(), static_cast<std::size_t>(parts) + 1);
    EXPECT_EQ(b.front(), 0);
    EXPECT_EQ(b.back(), 10000);
    const double ideal = static_cast<double>(prefix.back()) / parts;
    for (int p = 0; p < parts; ++p) {
      ASSERT_LE(b[p], b[p + 1]);
      EXPECT_LE(static_cast<double>(prefix[b[p + 1]] - prefix[b[p]]), ideal + 101) << "part " << p;
    }
  }
}

TEST(CpuKernels, CliRunsHllOnOmp) {
  const auto files = test::shared_matrix_files();
  ASSERT_FALSE(files.empty()) << "no MANIFEST.tsv in " << test::shared_matrices_dir();
  const test::ScratchDir scratch;
  const std::string out = scratch / "run.txt";
  const std::string cmd = fmt::format("{} run {} --format hll --hack 16 --backend omp --threads 4 > {} 2>&1", SPMV_CLI,
                                      files.front().second, out);
  const int rc = std::system(cmd.c_str());
  std::ifstream in(out);
  const std::string text((std::istreambuf_iterator<char>(in)), {});
  EXPECT_EQ(rc, 0) << text;
  EXPECT_NE(text.find("kernel: hll"), std::string::npos) << text;
  EXPECT_NE(text.find("check: passed"), std::string::npos) << text;
  EXPECT_NE(text.find("hack=16"), std::string::npos) << text;
}
