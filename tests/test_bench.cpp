// The benchmark runner (sweep, checks, timing, auto's interleaved timing), driven by fake kernels in
// a private list.
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

// The quick sweep with the noise check at 5% and no duel.
SweepConfig noise_config(const std::vector<KernelSpec>& reg) {
  SweepConfig c = quick_config(reg);
  c.noise_threshold = 0.05;
  c.duel_rounds = 0;
  return c;
}

// The fake registry's quick sweep over `rows` rows of `len` entries each (square).
std::vector<Row> quick_rows(index_t rows, offset_t len, std::uint64_t seed, const std::string& name = "m") {
  const auto reg = fake_registry();
  const Csr a = test::csr_from_lengths(std::vector<offset_t>(static_cast<std::size_t>(rows), len), rows, seed);
  return bench_matrix(a, source(name), quick_config(reg), Ceilings{10e9, 2, 0});
}

TEST(Bench, SweepsOnlyTheParamsAKernelNames) {
  const auto reg = fake_registry();
  const SweepConfig cfg = quick_config(reg);
  // serial csr 1 + fake-good 2 threads + fake-hll 2x3 + wrong 1 + refused 1 + lib 2
  EXPECT_EQ(count_configs(cfg), 1u + 2 + 6 + 1 + 1 + 2);
  const Csr a = test::csr_from_lengths(std::vector<offset_t>(300, 5), 300, 1);
  const auto rows = bench_matrix(a, source("m"), cfg, Ceilings{10e9, 2, 0});
  ASSERT_EQ(rows.size(), count_configs(cfg));
  EXPECT_EQ(rows.front().kernel, "csr");  // the speedup reference runs first
  EXPECT_EQ(rows.front().backend, "serial");
  for (int t : {1, 2})
    for (int h : {16, 32, 64}) {
      const Row* r = find_row(rows, "fake-hll", t, h);
      ASSERT_NE(r, nullptr) << t << " " << h;
      EXPECT_EQ(r->detail, fmt::format("threads={} hack={}", t, h));  // the plan got them
    }
  const Row* wrong = find_row(rows, "fake-wrong");
  ASSERT_NE(wrong, nullptr);
  EXPECT_EQ(wrong->hack, 0);  // not a parameter of this kernel
  EXPECT_EQ(wrong->threads, 0);
}

// k > 1 is swept in every layout asked for, each checked against its own reference and timed
// against the serial CSR of the same k and layout; k = 1 has one (row) layout.
TEST(Bench, SweepsLayoutsForSeveralRightHandSides) {
  SweepConfig cfg;
  cfg.backends = {Backend::Serial, Backend::Omp};
  cfg.kernels = {"csr"};
  cfg.sweep["threads"] = {2};
  cfg.ks = {1, 3};
  cfg.layouts = {Layout::RowMajor, Layout::ColMajor};
  cfg.baselines = false;
  cfg.repeat = 3;
  cfg.min_sample_seconds = 0.001;
  cfg.max_config_seconds = 0.02;
  cfg.duel_rounds = 0;
  cfg.noise_threshold = 0;  // real kernels on a loaded machine: the spread is not checked here
  const Csr a = test::csr_from_lengths(std::vector<offset_t>(400, 6), 300, 3);
  const auto rows = bench_matrix(a, source("m"), cfg, Ceilings{10e9, 2, 0});
  ASSERT_EQ(rows.size(), 6u);  // (serial, omp) x (k=1, k=3 row, k=3 col)
  int col = 0;
  for (const Row& r : rows) {
    EXPECT_TRUE(r.usable()) << r.kernel << " k=" << r.k << " " << r.layout << ": " << r.status << " " << r.detail;
    EXPECT_EQ(r.layout, r.k == 1 ? "row" : r.layout);
    col += r.layout == "col";
    EXPECT_GT(r.speedup, 0) << "speedup against the serial CSR of the same k and layout";
    if (r.backend == "serial") EXPECT_DOUBLE_EQ(r.speedup, 1.0);
  }
  EXPECT_EQ(col, 2);
}

// --variant: a kernel runs each variant it knows (auto: its own choice), the rest are not its
// configurations, and with one right-hand side not those only SpMM reads (they would repeat the
// default's row); the row's settings name the words and the plan ran them.
TEST(Bench, SweepsTheVariantsEachKernelKnows) {
  SweepConfig cfg;
  cfg.backends = {Backend::Omp};
  cfg.kernels = {"ell", "ell-rowlen"};
  cfg.variants = {"auto", "elements", "unpadded", "no-such-word"};
  cfg.sweep["threads"] = {2};
  cfg.ks = {1, 3};
  cfg.baselines = false;
  cfg.repeat = 3;
  cfg.min_sample_seconds = 0.001;
  cfg.max_config_seconds = 0.02;
  cfg.duel_rounds = 0;
  cfg.noise_threshold = 0;
  const Csr a = test::csr_from_lengths(std::vector<offset_t>(400, 6), 300, 3);
  const auto rows = bench_matrix(a, source("m"), cfg, Ceilings{10e9, 2, 0});
  std::multiset<std::string> ran;
  for (const Row& r : rows) {
    EXPECT_TRUE(r.usable()) << r.kernel << " " << r.settings << ": " << r.status << " " << r.detail;
    ran.insert(fmt::format("k={} {}/{} {}", r.k, r.backend, r.kernel, r.settings));
    if (r.settings.find("variant=elements") != std::string::npos)
      EXPECT_NE(r.detail.find("spmm=elements"), std::string::npos) << r.detail;
    if (r.settings.find("variant=unpadded") != std::string::npos)
      EXPECT_NE(r.detail.find("storage=unpadded"), std::string::npos) << r.detail;
  }
  // The serial CSR reference at its default; ell without the storage word ell-rowlen alone has.
  EXPECT_EQ(ran, (std::multiset<std::string>{
                     "k=1 serial/csr ", "k=1 omp/ell ", "k=1 omp/ell-rowlen ", "k=1 omp/ell-rowlen variant=unpadded",
                     "k=3 serial/csr ", "k=3 omp/ell ", "k=3 omp/ell variant=elements", "k=3 omp/ell-rowlen ",
                     "k=3 omp/ell-rowlen variant=elements", "k=3 omp/ell-rowlen variant=unpadded"}));
}

TEST(Bench, WrongKernelIsMarkedFailedAndExcluded) {
  const auto rows = quick_rows(500, 7, 2, "tiny");
  const Row* wrong = find_row(rows, "fake-wrong");
  ASSERT_NE(wrong, nullptr);
  EXPECT_EQ(wrong->status, "failed");
  EXPECT_EQ(wrong->check, "failed");
  EXPECT_FALSE(wrong->usable());
  EXPECT_EQ(wrong->gflops, 0.0);  // never timed, so never a best
  EXPECT_GT(wrong->max_rel_error, 0.5);

  const Row* refused = find_row(rows, "fake-refused");
  ASSERT_NE(refused, nullptr);
  EXPECT_EQ(refused->status, "skipped: ELL would need 99 GiB");

  for (const Row& r : rows)
    if (r.kernel != "fake-wrong" && r.kernel != "fake-refused") {
      EXPECT_TRUE(r.usable()) << r.kernel << " " << r.status;
      EXPECT_GT(r.gflops, 0) << r.kernel;
      EXPECT_GE(r.time_median_s, r.time_min_s);
    }

  // Even if the wrong row claimed the highest GFLOPS, the summary never picks it.
  auto tampered = rows;
  for (Row& r : tampered)
    if (r.kernel == "fake-wrong") r.gflops = 1e6;
  const std::string s = summary_table(tampered);
  EXPECT_EQ(s.find("fake-wrong"), std::string::npos) << s;
  EXPECT_NE(s.find("1 failed"), std::string::npos) << s;
  EXPECT_NE(s.find("1 skipped"), std::string::npos) << s;
  EXPECT_NE(s.find("tiny"), std::string::npos);
}

// The row of a kernel in a precision (the first setting), or nullptr.
const Row* find_row_in(const std::vector<Row>& rows, const std::string& kernel, const std::string& precision) {
  for (const Row& r : rows)
    if (r.kernel == kernel && r.precision == precision) return &r;
  return nullptr;
}

// Precisions are swept like k: every kernel and setting once per precision, each checked with its
// precision's tolerance (a kernel computing in float passes single's check and fails double's),
// a kernel without the precision a skipped row naming it, speedups against the serial CSR of the
// same precision.
TEST(Bench, SweepsPrecisionsEachCheckedWithItsOwnTolerance) {
  std::vector<KernelSpec> reg;
  reg.push_back(*find_kernel(Backend::Serial, "csr"));
  // Computes in float whatever it is asked for, and claims double too.
  reg.push_back(
      fake("fake-float", Backend::Omp, {}, 1.0, false, {Precision::Double, Precision::Single}, Precision::Single));
  reg.push_back(fake("fake-mixed", Backend::Omp, {}, 1.0, false, {Precision::Mixed}, Precision::Mixed));
  reg.push_back(fake("fake-double", Backend::Omp, {"threads"}, 1.0));
  SweepConfig cfg = quick_config(reg);
  cfg.precisions = {Precision::Double, Precision::Single, Precision::Mixed};
  cfg.duel_rounds = 0;
  EXPECT_EQ(count_configs(cfg), 3u * (1 + 1 + 1 + 2));  // (serial csr, float, mixed, double x 2 threads) x 3
  const Csr a = test::csr_from_lengths(std::vector<offset_t>(300, 6), 300, 3);  // values in [-1, 1): not floats
  const auto rows = bench_matrix(a, source("m"), cfg, Ceilings{10e9, 2, 0});
  ASSERT_EQ(rows.size(), count_configs(cfg));
  for (const char* p : {"double", "single", "mixed"})
    EXPECT_EQ(std::count_if(rows.begin(), rows.end(), [&](const Row& r) { return r.precision == p; }), 5) << p;

  // Float arithmetic is outside double's bound, inside single's.
  const Row* float_double = find_row_in(rows, "fake-float", "double");
  ASSERT_NE(float_double, nullptr);
  EXPECT_EQ(float_double->status, "failed");
  const Row* float_single = find_row_in(rows, "fake-float", "single");
  ASSERT_NE(float_single, nullptr);
  EXPECT_TRUE(float_single->usable()) << float_single->status << " " << float_single->detail;
  EXPECT_GT(float_single->gflops, 0);
  const Row* mixed = find_row_in(rows, "fake-mixed", "mixed");
  ASSERT_NE(mixed, nullptr);
  EXPECT_TRUE(mixed->usable()) << mixed->status << " " << mixed->detail;
  for (int t : {1, 2}) {
    const Row* d = find_row(rows, "fake-double", t);
    ASSERT_NE(d, nullptr);
    EXPECT_EQ(d->precision, "double");
    EXPECT_TRUE(d->usable()) << d->status;
  }

  // Kernels without the precision: skipped, naming the kernels of the backend that have it.
  const Row* no_single = find_row_in(rows, "fake-double", "single");
  ASSERT_NE(no_single, nullptr);
  EXPECT_EQ(no_single->status,
            "skipped: kernel 'fake-double' (omp) has no single precision (kernels that have: fake-float)");
  EXPECT_EQ(no_single->gflops, 0.0);
  const Row* no_double = find_row_in(rows, "fake-mixed", "double");
  ASSERT_NE(no_double, nullptr);
  EXPECT_EQ(no_double->status,
            "skipped: kernel 'fake-mixed' (omp) has no double precision (kernels that have: fake-float, fake-double)");
  const Row* float_mixed = find_row_in(rows, "fake-float", "mixed");
  ASSERT_NE(float_mixed, nullptr);
  EXPECT_EQ(float_mixed->status.rfind("skipped: kernel 'fake-float' (omp) has no mixed precision", 0), 0u);

  // Speedup: against the serial CSR of the same precision.
  const Row* serial_single = find_row_in(rows, "csr", "single");
  ASSERT_NE(serial_single, nullptr);
  ASSERT_TRUE(supports(reg.front(), Precision::Single)) << "serial CSR computes in single";
  ASSERT_TRUE(serial_single->usable()) << serial_single->status << " " << serial_single->detail;
  EXPECT_NEAR(float_single->speedup, serial_single->time_median_s / float_single->time_median_s, 1e-12);
  const Row* serial_double = find_row_in(rows, "csr", "double");
  ASSERT_NE(serial_double, nullptr);
  const Row* d1 = find_row(rows, "fake-double", 1);
  EXPECT_NEAR(d1->speedup, serial_double->time_median_s / d1->time_median_s, 1e-12);
}

// A value beyond float's range: every single and mixed configuration is skipped with the value's
// position; double runs as before.
TEST(Bench, ValuesBeyondFloatSkipTheFloatPrecisions) {
  std::vector<KernelSpec> reg;
  reg.push_back(
      fake("fake-all", Backend::Omp, {}, 1.0, false, {Precision::Double, Precision::Single, Precision::Mixed}));
  SweepConfig cfg = quick_config(reg);
  cfg.precisions = {Precision::Double, Precision::Single, Precision::Mixed};
  cfg.duel_rounds = 0;
  Csr a = test::csr_from_lengths(std::vector<offset_t>(100, 3), 100, 2);
  a.val[4] = 1e300;  // row 2 (1-based), its second entry
  const auto rows = bench_matrix(a, source("big"), cfg, Ceilings{10e9, 2, 0});
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_TRUE(find_row_in(rows, "fake-all", "double")->usable()) << find_row_in(rows, "fake-all", "double")->status;
  for (const char* p : {"single", "mixed"}) {
    const Row* r = find_row_in(rows, "fake-all", p);
    ASSERT_NE(r, nullptr) << p;
    EXPECT_EQ(r->status,
              fmt::format("skipped: value 1.0000000000000001e+300 at row 2, column {} (1-based) does not fit in "
                          "single precision (largest 3.402823e+38); compute in double precision",
                          a.col[4] + 1))
        << p;
  }
}

TEST(Bench, SpeedupEfficiencyAndIterativeColumns) {
  const auto rows = quick_rows(2000, 9, 3);
  const Row* serial = find_row(rows, "csr");
  ASSERT_NE(serial, nullptr);
  EXPECT_DOUBLE_EQ(serial->speedup, 1.0);
  EXPECT_EQ(serial->threads, 1);
  const Row* two = find_row(rows, "fake-good", 2);
  ASSERT_NE(two, nullptr);
  EXPECT_NEAR(two->speedup, serial->time_median_s / two->time_median_s, 1e-12);
  EXPECT_NEAR(two->efficiency, two->speedup / 2, 1e-12);
  EXPECT_NEAR(two->gflops, 2.0 * 2000 * 9 / two->time_median_s * 1e-9, 1e-9 * two->gflops);
  EXPECT_NEAR(two->bandwidth_share, two->bandwidth_gbs / 10.0, 1e-12);
  EXPECT_NEAR(two->iter50_s, two->convert_s + two->setup_s + 50 * two->time_median_s, 1e-12);
  EXPECT_NEAR(two->iter500_s, two->convert_s + two->setup_s + 500 * two->time_median_s, 1e-12);
}

TEST(Bench, ComplexMatrixIsOneSkippedRow) {
  const auto reg = fake_registry();
  const SweepConfig cfg = quick_config(reg);
  Csr a = test::csr_from_lengths(std::vector<offset_t>(50, 3), 50, 9);
  a.field = Field::Complex;
  a.imag.assign(a.val.size(), 0.5);
  const auto rows = bench_matrix(a, source("cplx"), cfg, Ceilings{});
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].status.rfind("skipped: complex", 0), 0u) << rows[0].status;
  EXPECT_EQ(rows[0].nnz, a.nnz());
}

TEST(Bench, TinyMatrixSamplesManyProducts) {
  const auto reg = fake_registry();
  SweepConfig cfg = quick_config(reg);
  cfg.min_sample_seconds = 0.003;
  cfg.kernels = {"csr"};
  const Csr a = test::csr_from_lengths({5, 6, 5, 6, 5, 6, 5, 6, 5}, 9, 4);  // cage4-sized
  const auto rows = bench_matrix(a, source("cage"), cfg, Ceilings{});
  ASSERT_EQ(rows.size(), 1u);
  // A 50-nonzero product takes well under a microsecond: one sample must batch many of them.
  EXPECT_GT(rows[0].products_per_sample, 100);
  EXPECT_GE(rows[0].samples, 3);
}

// A plan whose products are correct and whose timing is a simulated clock: time_runs(n) reports
// n x per_product(call), so timing code can be tested without timing anything.
class ClockedPlan final : public Plan {
 public:
  ClockedPlan(const CsrView& a, std::function<double(int call)> per_product)
      : fake_(a, PlanOptions{}, 1.0), per_product_(std::move(per_product)) {}
  void set_x(std::span<const double> x) override { fake_.set_x(x); }
  void run(int times) override { fake_.run(std::min(times, 1)); }
  void get_y(std::span<double> y) override { fake_.get_y(y); }
  double time_runs(int times) override { return times * per_product_(calls_++); }

 private:
  FakePlan fake_;
  std::function<double(int)> per_product_;
  int calls_ = 0;
};

TEST(Timing, InterleavedRatiosAreMediansOfPerRoundRatios) {
  const Csr a = test::csr_from_lengths({2, 3}, 3, 1);
  ClockedPlan first(a, [](int) { return 2e-6; });
  ClockedPlan half(a, [](int) { return 1e-6; });
  // 3 us, but one call in four 10x slower (a hiccup): the median ignores it, a mean would not.
  ClockedPlan bumpy(a, [](int call) { return call % 4 == 3 ? 30e-6 : 3e-6; });
  std::vector<Plan*> plans{&first, &half, &bumpy};
  const auto r = interleaved_ratios(plans, 1e-3, 9);
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r[0], 1.0);
  EXPECT_DOUBLE_EQ(r[1], 0.5);
  EXPECT_DOUBLE_EQ(r[2], 1.5);
}

TEST(Bench, AutoIsTimedInterleavedWithTheOracleAndTheBaseline) {
  // auto 2 us; the oracle 0.8 us in the sweep (a lucky plan) but 1 us when made again; the baseline 4 us.
  auto clocked = [](const std::string& name, bool baseline, std::function<double(int made)> per) {
    auto made = std::make_shared<int>(0);
    return KernelSpec{.name = name,
                      .backend = Backend::Omp,
                      .format = "csr",
                      .description = "test fake",
                      .baseline = baseline,
                      .spmm = false,
                      .params = {},
                      .make = [per, made](const CsrView& a, const PlanOptions&) -> std::unique_ptr<Plan> {
                        const double t = per((*made)++);
                        return std::make_unique<ClockedPlan>(a, [t](int) { return t; });
                      }};
  };
  std::vector<KernelSpec> reg{*find_kernel(Backend::Serial, "csr"), clocked("auto", false, [](int) { return 2e-6; }),
                              clocked("fake-oracle", false, [](int made) { return made == 0 ? 0.8e-6 : 1e-6; }),
                              clocked("fake-lib", true, [](int) { return 4e-6; })};
  SweepConfig cfg = quick_config(reg);
  cfg.sweep["threads"] = {1};
  const Csr a = test::csr_from_lengths(std::vector<offset_t>(50, 3), 50, 3);
  const auto rows = bench_matrix(a, source("m"), cfg, Ceilings{10e9, 2, 0});
  const Row* au = find_row(rows, "auto");
  ASSERT_NE(au, nullptr);
  ASSERT_TRUE(au->usable()) << au->status;
  EXPECT_DOUBLE_EQ(au->time_median_s, 2e-6);
  EXPECT_DOUBLE_EQ(find_row(rows, "fake-oracle")->time_median_s, 0.8e-6);
  EXPECT_DOUBLE_EQ(au->duel_oracle, 0.5);  // the oracle made again: 1 us against auto's 2 us
  EXPECT_DOUBLE_EQ(au->duel_baseline, 2.0);
  EXPECT_EQ(find_row(rows, "fake-oracle")->duel_oracle, 0.0);  // only auto rows carry them
  const std::string s = summary_table(rows);
  EXPECT_NE(s.find("auto/oracle 0.500 (sweep 0.400) | auto/base 2.000 (sweep 2.000)"), std::string::npos) << s;

  cfg.duel_rounds = 0;  // off: the sweep's ratios (the oracle's plan is now a 1 us one)
  const auto plain = bench_matrix(a, source("m"), cfg, Ceilings{10e9, 2, 0});
  EXPECT_EQ(find_row(plain, "auto")->duel_oracle, 0.0);
  EXPECT_NE(summary_table(plain).find("auto/oracle 0.500 (sweep 0.500)"), std::string::npos) << summary_table(plain);
}

// A plan whose products are correct and whose timing is scripted per measurement: time_products
// starts each measurement with a batch of one product (its calibration), which this plan counts,
// so per_product(measurement, call within it) can make the first measurement noisy and the second
// steady, or both noisy, whatever the machine's load.
class ScriptedPlan final : public Plan {
 public:
  ScriptedPlan(const CsrView& a, std::function<double(int measurement, int call)> per_product)
      : fake_(a, PlanOptions{}, 1.0), per_product_(std::move(per_product)) {}
  void set_x(std::span<const double> x) override { fake_.set_x(x); }
  void run(int times) override { fake_.run(std::min(times, 1)); }
  void get_y(std::span<double> y) override { fake_.get_y(y); }
  double time_runs(int times) override {
    if (times == 1) {  // a calibration starts: the next measurement
      ++measurement_;
      call_ = 0;
    }
    return times * per_product_(measurement_, call_++);
  }

 private:
  FakePlan fake_;
  std::function<double(int, int)> per_product_;
  int measurement_ = -1, call_ = 0;
};

KernelSpec scripted(const std::string& name, std::function<double(int measurement, int call)> per) {
  return {.name = name,
          .backend = Backend::Omp,
          .format = "csr",
          .description = "test fake",
          .params = {},
          .make = [per](const CsrView& a, const PlanOptions&) -> std::unique_ptr<Plan> {
            return std::make_unique<ScriptedPlan>(a, per);
          }};
}

TEST(Noise, ANoisyConfigurationIsMeasuredAgainFlaggedAndLeftOutOfBests) {
  // Steady at 20 us; noisy: every other batch 4x slower in every measurement, and so fast that it
  // would be the best kernel if it counted; settling: noisy in its first measurement only, then 30 us.
  const auto alternating = [](double base) { return [base](int, int call) { return call % 2 ? 4 * base : base; }; };
  // Scripted kernels only (no serial CSR timed by the wall clock): every row's spread is known.
  std::vector<KernelSpec> reg{
      scripted("fake-steady", [](int, int) { return 20e-6; }), scripted("fake-noisy", alternating(1e-9)),
      scripted("fake-settles", [](int m, int call) { return m == 0 && call % 2 ? 120e-6 : 30e-6; })};
  SweepConfig cfg = noise_config(reg);
  const Csr a = test::csr_from_lengths(std::vector<offset_t>(100, 3), 100, 3);
  const auto rows = bench_matrix(a, source("m"), cfg, Ceilings{10e9, 2, 0});

  const Row* steady = find_row(rows, "fake-steady");
  ASSERT_NE(steady, nullptr);
  EXPECT_EQ(steady->status, "ok");
  EXPECT_TRUE(steady->usable());
  EXPECT_EQ(steady->measurements, 1);
  EXPECT_DOUBLE_EQ(steady->time_median_s, 20e-6);
  EXPECT_DOUBLE_EQ(steady->time_mean_s, 20e-6);
  EXPECT_DOUBLE_EQ(steady->time_max_s, 20e-6);
  EXPECT_LT(steady->time_cv, 1e-12);
  EXPECT_LT(steady->time_drift, 1e-12);
  EXPECT_EQ(steady->noise_threshold, 0.05);

  const Row* noisy = find_row(rows, "fake-noisy");
  ASSERT_NE(noisy, nullptr);
  EXPECT_EQ(noisy->status, "noisy");
  EXPECT_FALSE(noisy->usable());
  EXPECT_EQ(noisy->measurements, 2);
  EXPECT_EQ(noisy->check, "passed");
  EXPECT_GT(noisy->time_cv, 0.05);
  EXPECT_DOUBLE_EQ(noisy->time_max_s, 4e-9);
  EXPECT_GT(noisy->gflops, steady->gflops);  // timed and kept in the row, the fastest of all
  EXPECT_NE(noisy->detail.find("noisy: cv "), std::string::npos) << noisy->detail;

  const Row* settles = find_row(rows, "fake-settles");
  ASSERT_NE(settles, nullptr);
  EXPECT_EQ(settles->status, "ok");
  EXPECT_EQ(settles->measurements, 2);  // the first was noisy, the second counts
  EXPECT_DOUBLE_EQ(settles->time_median_s, 30e-6);
  EXPECT_LT(settles->time_cv, 1e-12);
  EXPECT_NE(settles->detail.find("measured again: the first measurement had cv "), std::string::npos)
      << settles->detail;

  // No best takes the noisy row: the summary names the steady one and counts the noisy one.
  const std::string s = summary_table(rows);
  EXPECT_EQ(s.find("fake-noisy"), std::string::npos) << s;
  EXPECT_NE(s.find("3 rows; 0 failed or errored (excluded from bests); 0 skipped; 1 noisy"), std::string::npos) << s;
  EXPECT_NE(s.find("omp/fake-steady"), std::string::npos) << s;

  // Threshold 0: nothing is measured twice or flagged.
  cfg.noise_threshold = 0;
  const auto off = bench_matrix(a, source("m"), cfg, Ceilings{10e9, 2, 0});
  EXPECT_EQ(find_row(off, "fake-noisy")->status, "ok");
  EXPECT_EQ(find_row(off, "fake-noisy")->measurements, 1);
}

// Its products really alternate: every other timed batch spins four times as long. Wall-clock
// timing on a loaded machine only adds to the spread, so it is flagged whatever the load.
class SpinningPlan final : public Plan {
 public:
  explicit SpinningPlan(const CsrView& a) : fake_(a, PlanOptions{}, 1.0) {}
  void set_x(std::span<const double> x) override { fake_.set_x(x); }
  void run(int times) override {
    for (int t = 0; t < times; ++t) {
      fake_.run(1);
      const auto t0 = std::chrono::steady_clock::now();
      while (seconds_since(t0) < (slow_ ? 200e-6 : 50e-6)) {}
    }
  }
  void get_y(std::span<double> y) override { fake_.get_y(y); }
  double time_runs(int times) override {
    slow_ = calls_++ % 2 == 1;
    const double t = Plan::time_runs(times);
    slow_ = false;
    return t;
  }

 private:
  FakePlan fake_;
  bool slow_ = false;
  int calls_ = 0;
};

TEST(Noise, AWallClockPlanWhoseProductTimeVariesIsFlagged) {
  std::vector<KernelSpec> reg{*find_kernel(Backend::Serial, "csr")};
  reg.push_back({.name = "fake-spinning",
                 .backend = Backend::Omp,
                 .format = "csr",
                 .description = "test fake",
                 .params = {},
                 .make = [](const CsrView& a, const PlanOptions&) -> std::unique_ptr<Plan> {
                   return std::make_unique<SpinningPlan>(a);
                 }});
  SweepConfig cfg = noise_config(reg);
  cfg.repeat = 4;
  const Csr a = test::csr_from_lengths(std::vector<offset_t>(50, 3), 50, 3);
  const auto rows = bench_matrix(a, source("m"), cfg, Ceilings{10e9, 2, 0});
  const Row* r = find_row(rows, "fake-spinning");
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->status, "noisy") << r->detail;
  EXPECT_EQ(r->measurements, 2);
  EXPECT_GT(r->time_cv, 0.05);
  EXPECT_GT(r->time_max_s, 2 * r->time_min_s);
}

// The threads column is what the plan ran on; the sweep's setting is threads_requested, and a plan
// that runs on fewer without saying why gets the runner's note.
TEST(Bench, ThreadsAreThoseThePlanRanOn) {
  std::vector<KernelSpec> reg{*find_kernel(Backend::Serial, "csr")};
  reg.push_back({.name = "fake-fallback",
                 .backend = Backend::Omp,
                 .format = "csr",
                 .description = "test fake",
                 .params = {"threads"},
                 .make = [](const CsrView& a, const PlanOptions& o) -> std::unique_ptr<Plan> {
                   auto p = std::make_unique<FakePlan>(a, o, 1.0);
                   p->used = 1;  // whatever it is given, it runs on one thread
                   return p;
                 }});
  reg.push_back(fake("fake-good", Backend::Omp, {"threads"}, 1.0));  // says nothing: the setting stays
  SweepConfig cfg = quick_config(reg);
  cfg.sweep["threads"] = {1, 4};
  cfg.duel_rounds = 0;
  const Csr a = test::csr_from_lengths(std::vector<offset_t>(60, 3), 60, 3);
  const auto rows = bench_matrix(a, source("m"), cfg, Ceilings{10e9, 2, 0});
  int fallback = 0;
  for (const Row& r : rows) {
    if (r.kernel == "fake-fallback") {
      ++fallback;
      EXPECT_EQ(r.threads, 1);
      EXPECT_TRUE(r.threads_requested == 1 || r.threads_requested == 4) << r.threads_requested;
      if (r.threads_requested == 4) {
        EXPECT_NE(r.detail.find("runs on 1 of 4 threads"), std::string::npos) << r.detail;
        EXPECT_DOUBLE_EQ(r.efficiency, r.speedup);  // speedup / the one thread it ran on
      } else {
        EXPECT_EQ(r.detail.find("runs on"), std::string::npos) << r.detail;
      }
    }
    if (r.kernel == "fake-good") EXPECT_EQ(r.threads, r.threads_requested);
    if (r.backend == "serial") {
      EXPECT_EQ(r.threads, 1);
      EXPECT_EQ(r.threads_requested, 1);
    }
  }
  EXPECT_EQ(fallback, 2);
  // Labels: the threads it ran on, and those asked for where they differ.
  const Row* four = nullptr;
  for (const Row& r : rows)
    if (r.kernel == "fake-fallback" && r.threads_requested == 4) four = &r;
  ASSERT_NE(four, nullptr);
  Row only = *four;  // alone with the serial CSR and faster, it is the best CPU kernel
  only.gflops = 1e9;
  const std::string s = summary_table({rows.front(), only});
  EXPECT_NE(s.find("omp/fake-fallback t=1 of 4"), std::string::npos) << s;
}

}  // namespace
}  // namespace spmv::bench
