// The benchmark's time budget (the arithmetic, given elapsed times) and the suite loop it steers.
#include <gtest/gtest.h>

#include <spmv/bench/bench.hpp>
#include <spmv/bench/budget.hpp>

#include <fstream>

#include "test_util.hpp"

namespace spmv::bench {
namespace {

SweepConfig sweep_of(int repeat, double sample_s) {
  SweepConfig c;
  c.repeat = repeat;
  c.min_sample_seconds = sample_s;
  c.max_config_seconds = 3.0;
  return c;
}

TEST(TimeBudget, FirstEstimateShortensSamplesToFitEightyPercent) {
  SweepConfig c = sweep_of(7, 0.05);
  TimeBudget b(20, true);
  b.first_estimate(c, 100, false);  // 0.16 s allowed per configuration, 10 samples of 0.05 wanted
  EXPECT_DOUBLE_EQ(c.min_sample_seconds, 0.016);
  EXPECT_EQ(c.repeat, 7);  // ten samples of 16 ms fit
  EXPECT_DOUBLE_EQ(c.max_config_seconds, 0.16);
}

TEST(TimeBudget, FirstEstimateNeverGoesBelowTenMillisecondsAndDropsRepeatsThereUnlessGiven) {
  SweepConfig c = sweep_of(7, 0.05);
  TimeBudget(1, true).first_estimate(c, 1000, false);  // 0.8 ms per configuration: below the floor
  EXPECT_DOUBLE_EQ(c.min_sample_seconds, TimeBudget::kShortestSample);
  EXPECT_DOUBLE_EQ(c.min_sample_seconds, 0.010);
  EXPECT_EQ(c.repeat, 5);
  SweepConfig fixed = sweep_of(7, 0.05);
  TimeBudget(1, true).first_estimate(fixed, 1000, true);
  EXPECT_EQ(fixed.repeat, 7);
  EXPECT_DOUBLE_EQ(fixed.min_sample_seconds, 0.010);
  // A sweep that asked for shorter samples (--quick) keeps them: the budget never lengthens one.
  SweepConfig quick = sweep_of(3, 0.002);
  TimeBudget(1, true).first_estimate(quick, 1000, false);
  EXPECT_DOUBLE_EQ(quick.min_sample_seconds, 0.002);
}

TEST(TimeBudget, AmpleBudgetOrFixedSamplesChangeNothing) {
  for (const auto& [seconds, adapt] : {std::pair{1e6, true}, std::pair{10.0, false}, std::pair{0.0, true}}) {
    SweepConfig c = sweep_of(7, 0.05);
    TimeBudget b(seconds, adapt);
    b.first_estimate(c, 100, false);
    b.before_matrix(c, 9.0, 9.0, 50, 100);
    EXPECT_DOUBLE_EQ(c.min_sample_seconds, 0.05) << seconds << adapt;
    EXPECT_EQ(c.repeat, 7);
    EXPECT_DOUBLE_EQ(c.max_config_seconds, 3.0);
  }
}

TEST(TimeBudget, BeforeEachMatrixSpendsWhatIsLeftAfterTheObservedOverhead) {
  SweepConfig c = sweep_of(7, 0.05);
  TimeBudget b(200, true);
  b.first_estimate(c, 1000, false);  // 0.16 s per configuration: samples of 16 ms
  ASSERT_DOUBLE_EQ(c.min_sample_seconds, 0.016);
  // 500 done in 80 s of sweep (0.16 s each, 0.016 of it overhead beyond 9 samples), 120 s into the
  // run: 70 s left for 500, 0.14 s each, so (0.14 - 0.016) / 9 per sample, under the 16 ms cap.
  b.before_matrix(c, 120, 80, 500, 1000);
  EXPECT_NEAR(c.min_sample_seconds, 0.124 / 9, 1e-12);
  EXPECT_DOUBLE_EQ(c.max_config_seconds, 0.16);  // 2 * 0.14 capped by the first estimate's 0.16
  // Behind schedule: 189 s in, almost nothing left per configuration: the 10 ms floor (never
  // shorter, whatever the budget), configurations of 50 ms.
  b.before_matrix(c, 189, 180, 500, 1000);
  EXPECT_DOUBLE_EQ(c.min_sample_seconds, 0.010);
  EXPECT_DOUBLE_EQ(c.max_config_seconds, 0.05);
  // Far ahead: never longer than the first estimate.
  b.before_matrix(c, 1, 1, 500, 1000);
  EXPECT_DOUBLE_EQ(c.min_sample_seconds, 0.016);
  EXPECT_DOUBLE_EQ(b.shortest_sample(), 0.010);
  EXPECT_DOUBLE_EQ(b.longest_sample(), 0.016);
  // Nothing measured yet, or everything: no change.
  c.min_sample_seconds = 0.004;
  b.before_matrix(c, 50, 40, 0, 1000);
  b.before_matrix(c, 50, 40, 1000, 1000);
  EXPECT_DOUBLE_EQ(c.min_sample_seconds, 0.004);
}

TEST(TimeBudget, ExhaustedPastOneAndAHalfTimesTheBudget) {
  EXPECT_FALSE(TimeBudget(10, true).exhausted(15));
  EXPECT_TRUE(TimeBudget(10, true).exhausted(15.01));
  EXPECT_TRUE(TimeBudget(10, false).exhausted(15.01));  // fixed samples: the cut still applies
  EXPECT_FALSE(TimeBudget(0, true).exhausted(1e9));
}

class RunSuite : public ::testing::Test {
 protected:
  void SetUp() override {
    so_.cache_dir = dir_ / "cache";
    reg_ = {*find_kernel(Backend::Serial, "csr")};
    cfg_.backends = {Backend::Serial};
    cfg_.baselines = false;
    cfg_.repeat = 3;
    cfg_.min_sample_seconds = 1e-4;
    cfg_.duel_rounds = 0;
    cfg_.noise_threshold = 0;  // the real serial CSR on a loaded machine: its spread is not checked here
    cfg_.registry = &reg_;
    generated_.name = "gen";
    generated_.origin = "synthetic";
    generated_.spec = gen::GenSpec{.kind = gen::Kind::Random, .rows = 300, .mean = 5, .std = 1};
    missing_.name = "missing";
    missing_.path = dir_ / "missing.mtx";
  }
  test::ScratchDir dir_;
  SuiteOptions so_;
  std::vector<KernelSpec> reg_;
  SweepConfig cfg_;
  MatrixSource generated_, missing_;
  Ceilings ceil_;
};

TEST_F(RunSuite, AnUnloadableMatrixIsASkippedRowAndTheRunGoesOn) {
  TimeBudget budget(0, true);
  std::vector<std::string> lines;
  Progress p;
  p.message = [&](const std::string& l) { lines.push_back(l); };
  const auto rows = run_suite({missing_, generated_}, so_, cfg_, ceil_, budget, std::chrono::steady_clock::now(), p);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].matrix, "missing");
  EXPECT_TRUE(rows[0].status.starts_with("skipped: ")) << rows[0].status;
  EXPECT_EQ(rows[1].matrix, "gen");
  EXPECT_EQ(rows[1].kernel, "csr");
  EXPECT_TRUE(rows[1].usable()) << rows[1].status;
  EXPECT_EQ(rows[1].nnz, 1500);
  ASSERT_EQ(lines.size(), 3u);  // [1/2] missing, its error, [2/2] gen
  EXPECT_EQ(lines[0], "[1/2] missing (real)");
  EXPECT_TRUE(lines[1].starts_with("missing: skipped: ")) << lines[1];
  EXPECT_EQ(lines[2], "[2/2] gen (synthetic)");
}

// Each matrix's rows reach the CSV as soon as it is done: a run cut short keeps what it measured.
TEST_F(RunSuite, EachMatrixsRowsAreWrittenAsItIsDone) {
  TimeBudget budget(0, true);
  const test::ScratchDir scratch;
  const std::string path = scratch.str() + "/r.csv";
  const MachineInfo m = machine_info();
  CsvWriter csv(path, m, ceil_);
  std::vector<std::size_t> lines_seen;  // the CSV's lines when each batch arrived, after adding it
  Progress p;
  p.rows = [&](const std::vector<Row>& r) {
    csv.add(r);
    std::ifstream f(path);
    std::size_t n = 0;
    for (std::string line; std::getline(f, line);) ++n;
    lines_seen.push_back(n);
  };
  const auto rows = run_suite({missing_, generated_}, so_, cfg_, ceil_, budget, std::chrono::steady_clock::now(), p);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(lines_seen, (std::vector<std::size_t>{2, 3}));  // the header, then a row per matrix
}

TEST_F(RunSuite, PastTheBudgetTheRestIsListedNotMeasured) {
  TimeBudget budget(10, true);
  const auto started = std::chrono::steady_clock::now() - std::chrono::seconds(20);
  const auto rows = run_suite({generated_, generated_}, so_, cfg_, ceil_, budget, started);
  ASSERT_EQ(rows.size(), 2u);
  for (const Row& r : rows) EXPECT_EQ(r.status, "skipped: time budget exhausted (--time-budget)");
}

}  // namespace
}  // namespace spmv::bench
