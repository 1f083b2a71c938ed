// The planner (kernel "auto"): its features, its model's rules, and its plans' products against the
// reference on the edge cases and on every shared matrix, for k = 1 and k > 1, on the host backends.
#include <gtest/gtest.h>
#include <spmv/io.hpp>
#include <spmv/planner.hpp>
#include <spmv/reference.hpp>

#include <chrono>
#include <cmath>
#include <algorithm>
#include <map>
#include <fmt/format.h>

#include "plan/auto_plan.hpp"
#include "plan/model_tuning.hpp"
#include "test_util.hpp"

using namespace spmv;

namespace {

// The product of `plan` on x = random, checked against the reference.
void expect_correct(const Csr& a, Plan& plan, int k, Layout layout, const std::string& what) {
  const std::vector<double> x = make_vector("random:3", static_cast<std::size_t>(a.cols) * k);
  std::vector<double> y(static_cast<std::size_t>(a.rows) * k, std::nan(""));
  plan.multiply(x, y);
  const CheckResult chk = check_product(a, reference_product(a, x, k, layout), y, k, layout);
  EXPECT_TRUE(chk.passed) << what << ": " << chk.message << " (" << plan.describe() << ")";
}

}  // namespace

TEST(Planner, FeaturesOfASmallMatrix) {
  // Row lengths 3, 0, 1, 4 over 8 columns.
  const Csr a = test::csr_from_lengths({3, 0, 1, 4}, 8, 1);
  const MatrixFeatures f = analyze(a);
  EXPECT_EQ(f.nnz, 8);
  EXPECT_EQ(f.max_row, 4);
  EXPECT_EQ(f.empty_rows, 1);
  EXPECT_DOUBLE_EQ(f.mean, 2.0);
  EXPECT_DOUBLE_EQ(f.std, std::sqrt((1.0 + 4.0 + 1.0 + 4.0) / 4));  // population std
  EXPECT_DOUBLE_EQ(f.ell_padding, 4.0 * 4 / 8);
  for (double p : f.hll_padding) EXPECT_DOUBLE_EQ(p, 2.0);  // one hack of 4 rows, 4 wide
  EXPECT_DOUBLE_EQ(f.csr_bytes, 12.0 * 8 + 4.0 * 5 + 8.0 * 8 + 8.0 * 4);
}

TEST(Planner, HllPaddingPerHackSize) {
  // 40 rows of 1 entry and row 0 of 9: hack 16 pads the first hack only (16 x 9 + 24 x 1 slots),
  // hack 32 the first 32 rows (32 x 9 + 8), hack 64 all 40 rows (40 x 9).
  std::vector<offset_t> len(40, 1);
  len[0] = 9;
  const MatrixFeatures f = analyze(test::csr_from_lengths(len, 64, 2));
  EXPECT_EQ(f.nnz, 48);
  EXPECT_DOUBLE_EQ(f.hll_padding[0], (16.0 * 9 + 24) / 48);
  EXPECT_DOUBLE_EQ(f.hll_padding[1], (32.0 * 9 + 8) / 48);
  EXPECT_DOUBLE_EQ(f.hll_padding[2], 40.0 * 9 / 48);
  EXPECT_DOUBLE_EQ(f.ell_padding, 40.0 * 9 / 48);
}

// Each format is described once (format_storage); every CPU kernel of it stores just that many
// slots (padding included), on every edge case and at each HLL hack described.
TEST(Planner, PlansStoreWhatTheirFormatDescribes) {
  int checked = 0;
  for (const auto& [name, a] : test::edge_cases())
    for (const FormatStorage& f : format_storage(analyze(a)))
      for (const KernelSpec& k : kernels()) {
        if (k.backend == Backend::Cuda || k.format != f.format || k.baseline) continue;
        const PlanOptions o{.threads = 2, .kernel = {.hack = f.hack > 0 ? f.hack : 32}};
        try {
          EXPECT_EQ(static_cast<double>(make_plan(a, k.backend, k.name, o)->stored_entries), f.slots)
              << name << " " << f.name << " " << k.name << " (" << to_string(k.backend) << ")";
          ++checked;
        } catch (const Unsupported& e) {  // only ELL's padding past its memory limit (one dominant row)
          EXPECT_EQ(f.name + std::string(e.what()).substr(0, 14), "ellELL would need") << e.what();
        }
      }
  EXPECT_GT(checked, 100);
}

TEST(Planner, OneProductNeverPaysAConversion) {
  const Csr a = test::csr_from_lengths(std::vector<offset_t>(20000, 5), 20000, 3);  // ELL's best case
  for (const Backend b : {Backend::Serial, Backend::Omp}) {
    PlanOptions o;
    o.products = 1;
    for (const Candidate& c : rank_candidates(analyze(a), b, o))
      EXPECT_EQ(get_kernel(b, c.kernel).format, "csr") << c.label;
    const auto plan = make_plan(a, b, "auto", o);
    EXPECT_EQ(get_kernel(b, test::chosen_kernel(plan->chosen)).format, "csr") << plan->describe();
    EXPECT_EQ(plan->convert_seconds, 0.0);
  }
}

TEST(Planner, ManyProductsLetAPaddedFormatLead) {
  // Equal rows: ELL stores no padding and drops the row pointer, so with a million products to
  // repay it the model ranks a converted format first on the OpenMP backend.
  const Csr a = test::csr_from_lengths(std::vector<offset_t>(20000, 5), 20000, 3);
  PlanOptions o;
  o.products = 1'000'000;
  const auto ranked = rank_candidates(analyze(a), Backend::Omp, o);
  ASSERT_FALSE(ranked.empty());
  EXPECT_NE(get_kernel(Backend::Omp, ranked.front().kernel).format, "csr") << ranked.front().label;
}

TEST(Planner, ModelOnlyIsDeterministic) {
  const Csr a = test::edge_cases()[8].second;  // irregular_5000
  PlanOptions o;
  o.trial = false;
  for (const Backend b : {Backend::Serial, Backend::Omp}) {
    const auto p1 = make_plan(a, b, "auto", o), p2 = make_plan(a, b, "auto", o);
    EXPECT_EQ(p1->chosen, p2->chosen);
    EXPECT_EQ(p1->chosen, fmt::format("{}/{}", to_string(b), rank_candidates(analyze(a), b, o).front().label));
    EXPECT_NE(p1->detail.find("model only"), std::string::npos) << p1->detail;
  }
}

TEST(Planner, RefusedFormatFallsBackToAWorkingKernel) {
  const Csr a = test::csr_from_lengths(std::vector<offset_t>(20000, 5), 20000, 3);
  PlanOptions o;
  o.products = 1'000'000;
  o.trial = false;
  o.memory_budget_bytes = 1;  // every format that allocates its own storage is refused
  ASSERT_NE(get_kernel(Backend::Omp, rank_candidates(analyze(a), Backend::Omp, o).front().kernel).format, "csr");
  const auto plan = make_plan(a, Backend::Omp, "auto", o);
  EXPECT_EQ(get_kernel(Backend::Omp, test::chosen_kernel(plan->chosen)).format, "csr") << plan->describe();
  EXPECT_NE(plan->detail.find("skipped: "), std::string::npos) << plan->detail;
  EXPECT_NE(plan->detail.find("would need"), std::string::npos) << plan->detail;
  expect_correct(a, *plan, 1, Layout::RowMajor, "fallback");
}

TEST(Planner, ComplexMatrixIsAClearError) {
  Csr a = test::csr_from_lengths({2, 1}, 3, 4);
  a.field = Field::Complex;
  a.imag.assign(a.val.size(), 1.0);
  try {
    make_plan(a, Backend::Omp);
    FAIL() << "a complex matrix was planned";
  } catch (const Unsupported& e) {
    EXPECT_NE(std::string(e.what()).find("complex"), std::string::npos) << e.what();
  }
}

TEST(Planner, PlanSaysWhatItChoseAndWhy) {
  const Csr a = test::edge_cases()[7].second;  // equal_rows
  const auto plan = make_plan(a, Backend::Omp);
  EXPECT_EQ(plan->chosen.rfind("omp/", 0), 0u) << plan->chosen;
  EXPECT_EQ(plan->describe().rfind("auto -> omp/", 0), 0u) << plan->describe();
  EXPECT_NE(plan->detail.find("trial "), std::string::npos) << plan->detail;
  EXPECT_NE(plan->detail.find("model rank "), std::string::npos) << plan->detail;
  EXPECT_NE(plan->detail.find(" (made in "), std::string::npos) << plan->detail;  // each candidate's making
  EXPECT_NE(plan->chosen.find(fmt::format(" threads={}", plan->chosen_threads)), std::string::npos) << plan->chosen;
}

TEST(Planner, EdgeCasesForEveryKAndLayout) {
  for (const auto& [name, a] : test::edge_cases())
    for (const Backend b : {Backend::Serial, Backend::Omp})
      for (const int k : {1, 3})
        for (const Layout layout : {Layout::RowMajor, Layout::ColMajor}) {
          if (k == 1 && layout == Layout::ColMajor) continue;
          PlanOptions o;
          o.k = k;
          o.layout = layout;
          const auto plan = make_plan(a, b, o);
          expect_correct(a, *plan, k, layout, fmt::format("{} {} k={}", name, to_string(b), k));
        }
}

TEST(Planner, EveryRealSharedMatrix) {
  const auto files = test::shared_matrix_files();
  ASSERT_GE(files.size(), test::shared_count(70, 14))
      << "MANIFEST.tsv missing or short in " << test::shared_matrices_dir();
  int checked = 0;
  for (const auto& [name, file] : files) {
    const Csr a = io::load_csr(file);
    if (a.is_complex()) continue;  // refused with a clear error: ComplexMatrixIsAClearError
    for (const int k : {1, 2}) {
      PlanOptions o;
      o.k = k;
      const auto plan = make_plan(a, Backend::Omp, o);
      expect_correct(a, *plan, k, Layout::RowMajor, fmt::format("{} k={}", name, k));
    }
    ++checked;
  }
  EXPECT_GE(checked, static_cast<int>(test::shared_count(70, 13)));
}

TEST(Planner, MatricesWithoutEntriesRankOnlyCsrAtFiniteCost) {
  for (const Csr& a :
       {test::csr_from_lengths({}, 0, 1), test::csr_from_lengths({}, 3, 1), test::csr_from_lengths({0, 0, 0}, 4, 1)})
    for (const Backend b : {Backend::Serial, Backend::Omp, Backend::Cuda}) {  // the model is host code
      const auto ranked = rank_candidates(analyze(a), b, PlanOptions{});
      ASSERT_FALSE(ranked.empty());
      for (const Candidate& c : ranked) {
        EXPECT_FALSE(c.converts) << c.label;
        EXPECT_TRUE(std::isfinite(c.cost(100))) << c.label;
      }
    }
}

// A plan whose products fail (a kernel error at run time), for the trial's fallback.
class FailingPlan final : public Plan {
 public:
  void set_x(std::span<const double>) override {}
  void run(int) override { throw Error("launch failed"); }
  void get_y(std::span<double>) override {}
};

TEST(Planner, ATrialThatFailsFallsBackAndSaysSo) {
  const Csr a = test::edge_cases()[7].second;  // equal_rows
  const auto ranked = rank_candidates(analyze(a), Backend::Omp, PlanOptions{});
  ASSERT_GE(ranked.size(), 2u);
  // The model's first choice fails in the trial; every other candidate is made as usual.
  const auto plan =
      detail::plan_auto(a, Backend::Omp, PlanOptions{}, [&](const Candidate& c, double&) -> std::unique_ptr<Plan> {
        if (c.label == ranked.front().label) return std::make_unique<FailingPlan>();
        return make_plan(a, Backend::Omp, c.kernel, c.opt);
      });
  EXPECT_NE(plan->chosen, "omp/" + ranked.front().label);
  EXPECT_NE(plan->detail.find("skipped: " + ranked.front().label + ": launch failed"), std::string::npos)
      << plan->detail;
  expect_correct(a, *plan, 1, Layout::RowMajor, "after a failed trial");
}

// A plan that does no work and reports scripted product times: `slow_calls` first timings at 10x,
// then `seconds` per product. Counts the products it was asked to time.
class ScriptedPlan final : public Plan {
 public:
  ScriptedPlan(double seconds, int slow_calls, int* products) : s_(seconds), slow_(slow_calls), products_(products) {}
  void set_x(std::span<const double>) override {}
  void run(int) override {}
  void get_y(std::span<double>) override {}
  double time_runs(int times) override {
    *products_ += times;
    return times * s_ * (calls_++ < slow_ ? 10.0 : 1.0);
  }

 private:
  double s_;
  int slow_, calls_ = 0;
  int* products_;
};

TEST(Planner, TrialKeepsTheMeasuredFastestThoughTheModelRanksItLower) {
  const Csr a = test::edge_cases()[8].second;  // irregular_5000
  const auto ranked = rank_candidates(analyze(a), Backend::Omp, PlanOptions{});
  ASSERT_GE(ranked.size(), 2u);
  int products = 0;
  // The model's first choice measures 3x slower than its second; the second is slow in its first
  // two timings (a clock ramping up), which the interleaved rounds' lower median must see through.
  const auto plan =
      detail::plan_auto(a, Backend::Omp, PlanOptions{}, [&](const Candidate& c, double&) -> std::unique_ptr<Plan> {
        if (c.label == ranked[0].label) return std::make_unique<ScriptedPlan>(3e-5, 0, &products);
        if (c.label == ranked[1].label) return std::make_unique<ScriptedPlan>(1e-5, 2, &products);
        return std::make_unique<ScriptedPlan>(5e-5, 0, &products);
      });
  EXPECT_EQ(plan->chosen, "omp/" + ranked[1].label) << plan->detail;
  EXPECT_NE(plan->detail.find(ranked[1].label + " 10.0 us"), std::string::npos) << plan->detail;
}

// A backend that queues products (CUDA) times the candidates' rounds through plan_auto's timer:
// its times decide, each candidate but the first (the budget's reference) is timed only there, and
// all of a stage's rounds take one call.
TEST(Planner, QueuedRoundsDecideAndTimeOnlyTheFirstCandidateAlone) {
  const Csr a = test::edge_cases()[8].second;  // irregular_5000: several candidates, small
  const auto ranked = rank_candidates(analyze(a), Backend::Omp, PlanOptions{});
  ASSERT_GE(ranked.size(), 3u);
  std::vector<int> alone(ranked.size(), 0);
  std::map<const Plan*, std::size_t> rank_of;
  const auto make = [&](const Candidate& c, double&) -> std::unique_ptr<Plan> {
    const std::size_t i =
        std::find_if(ranked.begin(), ranked.end(), [&](const Candidate& r) { return r.label == c.label; }) -
        ranked.begin();
    auto p = std::make_unique<ScriptedPlan>(1e-5, 0, &alone[i]);
    rank_of[p.get()] = i;
    return p;
  };
  int calls = 0, candidates = 0;
  const detail::RoundTimer timer = [&](std::span<Plan* const> plans, std::span<const int> batch, int rounds) {
    ++calls;
    candidates = static_cast<int>(plans.size());
    EXPECT_EQ(batch.size(), plans.size());
    std::vector<std::vector<double>> t;
    for (Plan* p : plans)  // the third of the model's candidates is the fastest, twice over
      t.push_back(std::vector<double>(static_cast<std::size_t>(rounds), rank_of.at(p) == 2 ? 1e-5 : 2e-5));
    return t;
  };
  const auto plan = detail::plan_auto(a, Backend::Omp, PlanOptions{}, make, timer);
  EXPECT_EQ(plan->chosen, "omp/" + ranked[2].label) << plan->detail;
  EXPECT_GE(candidates, 3);
  EXPECT_LE(calls, 2);  // small matrix: a round of one product each to size the batches, then the rounds
  EXPECT_GT(alone[0], 0);
  for (std::size_t i = 1; i < alone.size(); ++i) EXPECT_EQ(alone[i], 0) << ranked[i].label;
}

// A queueing timer that fails (a product errors) leaves the rounds to the one-by-one timing, which
// names the failing candidate and still times every other.
TEST(Planner, AQueuedRoundThatFailsFallsBackToTimingOneByOne) {
  const Csr a = test::edge_cases()[8].second;
  const auto ranked = rank_candidates(analyze(a), Backend::Omp, PlanOptions{});
  ASSERT_GE(ranked.size(), 3u);
  int products = 0;
  const auto plan = detail::plan_auto(
      a, Backend::Omp, PlanOptions{},
      [&](const Candidate& c, double&) -> std::unique_ptr<Plan> {
        if (c.label == ranked[1].label) return std::make_unique<FailingPlan>();
        return std::make_unique<ScriptedPlan>(c.label == ranked[2].label ? 1e-5 : 3e-5, 0, &products);
      },
      [](std::span<Plan* const>, std::span<const int>, int) -> std::vector<std::vector<double>> {
        throw Error("launch failed");
      });
  EXPECT_EQ(plan->chosen, "omp/" + ranked[2].label) << plan->detail;
  EXPECT_NE(plan->detail.find("skipped: " + ranked[1].label + ": launch failed"), std::string::npos) << plan->detail;
}

// A plan whose first `cold` products (untimed or timed) take 3x `seconds`: its data coming back into
// the caches after another plan's products. Counts its untimed and timed products in `n`.
struct ProductCounts {
  int untimed = 0, timed = 0;
};
class WarmingPlan final : public Plan {
 public:
  WarmingPlan(double seconds, int cold, ProductCounts* n) : s_(seconds), cold_(cold), n_(n) {}
  void set_x(std::span<const double>) override {}
  void run(int times) override { n_->untimed += times, done_ += times; }
  void get_y(std::span<double>) override {}
  double time_runs(int times) override {
    double t = 0;
    for (int i = 0; i < times; ++i) t += s_ * (done_++ < cold_ ? 3.0 : 1.0);
    n_->timed += times;
    return t;
  }

 private:
  double s_;
  int cold_, done_ = 0;
  ProductCounts* n_;
};

// A plan that pays `wake` seconds on a timing that follows another plan's products (threads of
// its team left idle by a plan of another thread count), `seconds` per product otherwise.
class WakingPlan final : public Plan {
 public:
  WakingPlan(int id, double seconds, double wake, int* last) : id_(id), s_(seconds), wake_(wake), last_(last) {}
  void set_x(std::span<const double>) override {}
  void run(int) override { *last_ = id_; }
  void get_y(std::span<double>) override {}
  double time_runs(int times) override {
    const double t = times * s_ + (*last_ != id_ ? wake_ : 0.0);
    *last_ = id_;
    return t;
  }

 private:
  int id_;
  double s_, wake_;
  int* last_;
};

TEST(Planner, SmallCpuTrialWakesEachCandidateBeforeTimingIt) {
  // The second candidate is the faster, but each of its timings right after another plan's would
  // carry 0.1 ms of waking its threads: timed that way, it would lose.
  const Csr a = test::edge_cases()[8].second;  // irregular_5000
  int last = -1, made = 0;
  std::vector<std::string> labels;
  const auto plan =
      detail::plan_auto(a, Backend::Omp, PlanOptions{}, [&](const Candidate& c, double&) -> std::unique_ptr<Plan> {
        labels.push_back(c.label);
        const int id = made++;
        return std::make_unique<WakingPlan>(id, id == 1 ? 0.8e-5 : 1e-5 * (1 + id), id == 1 ? 1e-4 : 0.0, &last);
      });
  ASSERT_GE(labels.size(), 2u) << plan->detail;
  EXPECT_EQ(plan->chosen, "omp/" + labels[1]) << plan->detail;
}

// 1.12M nonzeros: above tuning::large_nnz.
Csr large_matrix() { return test::csr_from_lengths(std::vector<offset_t>(70000, 16), 70000, 5); }

TEST(Planner, TrialOnALargeCpuMatrixTimesEachCandidateWarmAndAlone) {
  // Above a million nonzeros the CPU trial times each candidate alone after warm_cpu untimed
  // products (no rounds), at most max_large of them. The second candidate is the faster one once
  // warm, though its first warm_cpu products are 3x slower: judged cold, it would lose.
  const Csr a = large_matrix();
  ASSERT_GT(a.nnz(), tuning::large_nnz);
  const tuning::TrialPolicy policy;
  std::vector<ProductCounts> made;
  made.reserve(64);
  std::vector<std::string> labels;
  const auto plan =
      detail::plan_auto(a, Backend::Omp, PlanOptions{}, [&](const Candidate& c, double&) -> std::unique_ptr<Plan> {
        const double s = made.empty() ? 1e-4 : made.size() == 1 ? 0.8e-4 : 2e-4;
        const int cold = made.size() == 1 ? policy.warm_cpu : 0;
        made.emplace_back();
        labels.push_back(c.label);
        return std::make_unique<WarmingPlan>(s, cold, &made.back());
      });
  ASSERT_GE(made.size(), 2u) << plan->detail;
  EXPECT_LE(static_cast<int>(made.size()), policy.max_large);
  EXPECT_EQ(plan->chosen, "omp/" + labels[1]) << plan->detail;
  for (const ProductCounts& n : made) {
    EXPECT_EQ(n.untimed, policy.warm_cpu) << plan->detail;
    EXPECT_EQ(n.timed, policy.timed_cpu) << plan->detail;
  }
}

TEST(Planner, LargeCpuTrialMakesOnlyConversionsTheProductsCouldRepay) {
  // Rows of one length: ELL and HLL pad nothing, the model predicts their products about as fast
  // as CSR's and their conversions a few CSR products. Within 10 products even a product 1.3x
  // faster than predicted could not repay them: they are not made. Within a million they are.
  const Csr a = large_matrix();
  for (const long long products : {10LL, 1000000LL}) {
    PlanOptions opt;
    opt.products = products;
    std::vector<std::string> made;
    int timed = 0;
    const auto plan =
        detail::plan_auto(a, Backend::Omp, opt, [&](const Candidate& c, double&) -> std::unique_ptr<Plan> {
          made.push_back(c.kernel);
          return std::make_unique<ScriptedPlan>(1e-4, 0, &timed);
        });
    const bool padded =
        std::any_of(made.begin(), made.end(), [](const std::string& k) { return k == "ell" || k == "hll"; });
    EXPECT_EQ(padded, products > 10) << products << " products: " << plan->detail;
  }
}

// A plan whose products take `seconds` each on a clock that only products advance: the trial's
// time budget without the wall clock.
class TimedPlan final : public Plan {
 public:
  TimedPlan(double seconds, double* clock) : s_(seconds), clock_(clock) {}
  void set_x(std::span<const double>) override {}
  void run(int times) override { *clock_ += times * s_; }
  void get_y(std::span<double>) override {}
  double time_runs(int times) override {
    run(times);
    return times * s_;
  }

 private:
  double s_;
  double* clock_;
};

TEST(Planner, LargeCpuTrialBudgetsInProductsOfTheFastestFound) {
  // The second candidate is 10x faster than the first: the budget, budget_products of the fastest
  // product found, is then nearly spent, and a third candidate, whose trial the model prices at
  // several of the first's products, is not made. Priced in the first's products, it would be.
  const Csr a = large_matrix();
  std::vector<std::string> made;
  double clock = 0;
  const auto plan = detail::plan_auto(
      a, Backend::Omp, PlanOptions{},
      [&](const Candidate& c, double&) -> std::unique_ptr<Plan> {
        made.push_back(c.label);
        return std::make_unique<TimedPlan>(made.size() == 1 ? 1e-2 : 1e-3, &clock);
      },
      {}, {}, [&] { return clock; });
  ASSERT_GE(made.size(), 2u) << plan->detail;
  EXPECT_EQ(made.size(), 2u) << plan->detail;
  EXPECT_EQ(plan->chosen, "omp/" + made[1]) << plan->detail;
}

TEST(Planner, TrialOnALargeGpuMatrixTimesFewProducts) {
  // On CUDA the large trial is bounded in products: at most max_large candidates, each timed once
  // when made and once per round.
  const Csr a = large_matrix();
  const tuning::TrialPolicy policy;
  std::vector<int> products;
  products.reserve(64);
  const auto plan =
      detail::plan_auto(a, Backend::Cuda, PlanOptions{}, [&](const Candidate&, double&) -> std::unique_ptr<Plan> {
        products.push_back(0);
        return std::make_unique<ScriptedPlan>(1e-4, 0, &products.back());
      });
  EXPECT_LE(static_cast<int>(products.size()), policy.max_large);
  EXPECT_GE(products.size(), 2u) << plan->detail;
  for (const int p : products) {
    EXPECT_LE(p, 1 + policy.rounds_large) << plan->detail;
    EXPECT_GE(p, 2) << "a candidate judged by its first product alone: " << plan->detail;
  }
}

// Times its first product, then fails (a kernel error that shows only in the trial's rounds).
class FailsAfterFirstTiming final : public Plan {
 public:
  void set_x(std::span<const double>) override {}
  void run(int) override {}
  void get_y(std::span<double>) override {}
  double time_runs(int times) override {
    if (calls_++ > 0) throw Error("launch failed in a round");
    return times * 1e-5;
  }

 private:
  int calls_ = 0;
};

TEST(Planner, CandidatesThatAllFailInTheRoundsAreAClearError) {
  const Csr a = test::edge_cases()[8].second;  // irregular_5000
  try {
    detail::plan_auto(a, Backend::Omp, PlanOptions{}, [](const Candidate&, double&) -> std::unique_ptr<Plan> {
      return std::make_unique<FailsAfterFirstTiming>();
    });
    FAIL() << "a plan was returned though every candidate failed";
  } catch (const Unsupported& e) {
    EXPECT_NE(std::string(e.what()).find("launch failed in a round"), std::string::npos) << e.what();
  }
}

TEST(Planner, CompactFormatsAreCandidatesWhereValuesAreFewAndPayOnlyOverManyProducts) {
  // 1.2M nonzeros (large enough to sample values) of three values, and the same of many.
  Csr few = test::csr_from_lengths(std::vector<offset_t>(200000, 6), 200000, 3);
  for (std::size_t q = 0; q < few.val.size(); ++q) few.val[q] = 1.0 + static_cast<double>(q % 3);
  const MatrixFeatures f = analyze(few.view());
  EXPECT_EQ(f.values_sampled, tuning::value_samples);
  EXPECT_EQ(f.sampled_distinct, 3);
  Csr many = few;
  for (std::size_t q = 0; q < many.val.size(); ++q) many.val[q] = 1.0 + 1e-7 * static_cast<double>(q);
  const MatrixFeatures g = analyze(many.view());
  EXPECT_EQ(g.sampled_distinct, tuning::value_samples);
  const auto has = [](const std::vector<Candidate>& v, const char* kernel) {
    return std::any_of(v.begin(), v.end(), [&](const Candidate& c) { return c.kernel == kernel; });
  };
  PlanOptions o;
  o.products = 1'000'000'000;
  // The GPU's: ranked first over a billion products (3 bytes a nonzero against ELL's 12), behind
  // over a hundred (its conversion on the host); never for many values.
  const auto gpu = rank_candidates(f, Backend::Cuda, o);
  ASSERT_FALSE(gpu.empty());
  EXPECT_EQ(gpu.front().kernel, "hll-compact") << gpu.front().label;
  EXPECT_FALSE(has(rank_candidates(g, Backend::Cuda, o), "hll-compact"));
  o.products = 100;
  EXPECT_NE(rank_candidates(f, Backend::Cuda, o).front().kernel, "hll-compact");
  // The CPU's: not on the serial backend; in double precision only, on both.
  EXPECT_TRUE(has(rank_candidates(f, Backend::Omp, o), "csr-compact"));
  EXPECT_FALSE(has(rank_candidates(g, Backend::Omp, o), "csr-compact"));
  EXPECT_FALSE(has(rank_candidates(f, Backend::Serial, o), "csr-compact"));
  o.precision = Precision::Single;
  EXPECT_FALSE(has(rank_candidates(f, Backend::Omp, o), "csr-compact"));
  EXPECT_FALSE(has(rank_candidates(f, Backend::Cuda, o), "hll-compact"));
  // A small matrix is not sampled.
  EXPECT_EQ(analyze(test::csr_from_lengths(std::vector<offset_t>(1000, 6), 1000, 3).view()).values_sampled, 0);
}
