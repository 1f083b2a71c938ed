// Kernel "auto": analysis, model, bounded trial; the plan it returns runs the winner.
#include "plan/auto_plan.hpp"

#include <algorithm>
#include <chrono>
#include <fmt/format.h>

#include <spmv/formats/limits.hpp>

#include "core/forwarding_plan.hpp"
#include "plan/model_tuning.hpp"

namespace spmv::detail {

namespace {

using clock = std::chrono::steady_clock;

double since(clock::time_point t0) { return std::chrono::duration<double>(clock::now() - t0).count(); }

// Runs the chosen plan; keeps the planner's account of its choice.
class AutoPlan final : public ForwardingPlan {
 public:
  explicit AutoPlan(std::unique_ptr<Plan> p) : ForwardingPlan(std::move(p)) {
    bytes_per_product = inner_->bytes_per_product;
    stored_entries = inner_->stored_entries;
  }
};

// The lower median: robust to a round slowed by a stall or by clocks still ramping up.
double lower_median(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + (v.size() - 1) / 2, v.end());
  return v[(v.size() - 1) / 2];
}

// A candidate in the trial: its plan and its product times, one per round.
struct Entry {
  std::size_t rank;
  std::unique_ptr<Plan> plan;
  std::vector<double> times;
  int batch = 1;
  double made_s = 0;  // making it, conversion included, the shared upload not
};

std::string us(double s) { return fmt::format("{:.1f} us", s * 1e6); }

// Products per timed batch: about batch_s of them at t seconds each.
int batch_for(double batch_s, double t) { return static_cast<int>(std::clamp(batch_s / std::max(t, 1e-9), 1.0, 1000.0)); }

// The rounds through a queueing timer: as many of the policy's rounds as the budget left is
// predicted to hold (one at least), queued together. Where batches last more than one product (small
// matrices) they are sized from a queued round of one product each for the candidates not yet timed;
// else the rounds alone (products timed by the device's events, back to back, vary little: the
// lower median of two is enough). False when a product failed: the caller times them one by one,
// which names the candidate that fails.
template <typename Left>
bool queued_rounds(std::vector<Entry>& trial, const RoundTimer& time_rounds, const tuning::TrialPolicy& policy,
                   bool large, const Left& left) {
  std::vector<Plan*> plans;
  for (auto& e : trial) plans.push_back(e.plan.get());
  const double batch_s = large ? policy.batch_s_large : policy.batch_s_small;
  const int wanted = large ? policy.rounds_large : policy.rounds_small;
  std::vector<int> batch(trial.size(), 1);
  try {
    if (batch_s > 0) {
      const auto first = time_rounds(plans, batch, 1);
      for (std::size_t i = 0; i < trial.size(); ++i)
        if (trial[i].times.empty()) trial[i].times.push_back(first[i].at(0));
    }
    double round_s = 0;
    for (std::size_t i = 0; i < trial.size(); ++i) {
      const double t = std::max(trial[i].times.empty() ? trial[0].times.at(0) : trial[i].times[0], 1e-9);
      batch[i] = trial[i].batch = batch_for(batch_s, t);
      round_s += batch[i] * t;
    }
    const int rounds = std::clamp(static_cast<int>(left() / std::max(round_s, 1e-9)), 1, wanted);
    const auto times = time_rounds(plans, batch, rounds);
    for (std::size_t i = 0; i < trial.size(); ++i)
      trial[i].times.insert(trial[i].times.end(), times[i].begin(), times[i].end());
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

}  // namespace

std::unique_ptr<Plan> plan_auto(const CsrView& a, Backend b, const PlanOptions& opt, const CandidateMaker& make,
                                const RoundTimer& time_rounds, const Analyzer& analyzer) {
  const auto t0 = clock::now();
  const tuning::TrialPolicy policy;
  double shared = 0, making = 0, timing = 0, held = 0, reference = 0;
  const MatrixFeatures f = analyzer ? analyzer(shared) : analyze(a);
  const double analysis = since(t0) - shared;
  const std::vector<Candidate> ranked = rank_candidates(f, b, opt);
  // Trial order: each kernel's best setting first, in rank order, then the other settings, so that
  // the settings of one kernel (CSR's schedules and inner loops) cannot crowd out another kernel.
  std::vector<std::size_t> order;
  for (const int pass : {0, 1})
    for (std::size_t i = 0; i < ranked.size(); ++i) {
      const bool first = std::none_of(ranked.begin(), ranked.begin() + i,
                                      [&](const Candidate& c) { return c.kernel == ranked[i].kernel; });
      if (first == (pass == 0)) order.push_back(i);
    }
  const long long n = std::max(1LL, opt.products);
  const bool large = f.nnz > tuning::large_nnz;
  const int max_trials = !opt.trial ? 1 : large ? policy.max_large : policy.max_small;

  std::vector<Entry> trial;
  std::vector<std::string> skipped;
  // The budget clock starts after the first candidate: one-time costs of the process (CUDA loads a
  // kernel's module at its first launch) are not the trial's, nor is the shared upload.
  auto trial_start = clock::now();
  double shared_at_start = 0;
  // Large matrices: the budget is in products of the fastest candidate measured so far (what the
  // plan will run), so a trial that has found a much faster product stops sooner.
  double fastest = 0;
  const auto left = [&] {
    const double spent = since(trial_start) - (shared - shared_at_start);
    return (large ? policy.budget_products * fastest : policy.small_budget_s) - spent;
  };
  const auto over_budget = [&] { return left() < 0; };
  // The model's prediction of the first candidate's product (what its measured `reference` scales).
  const auto first_predicted = [&] { return std::max(ranked[trial.front().rank].predicted_s, 1e-12); };
  // On large matrices a converting candidate is tried only if n products could repay its conversion,
  // were its product `optimism` times faster than the model predicts. Of those, one whose conversion
  // the model expects to overrun what is left of the budget only if it predicts a product about as
  // fast as the first candidate's (close): there it cannot tell them apart, and the products may
  // repay the conversion (CSR5 on rows of very different lengths). The first candidate is always
  // tried: it is the model's choice. Predictions are scaled to the first candidate's measured product.
  const auto fits = [&](const Candidate& c) {
    if (!large || c.predicted_convert_s == 0 || reference == 0) return true;
    const double first = first_predicted();
    if (c.predicted_convert_s > static_cast<double>(n) * (first - c.predicted_s / policy.optimism)) return false;
    return c.predicted_convert_s / first * reference <= left() || c.predicted_s <= policy.close * first;
  };
  // CPU, large: warm products first, then alone (see TrialPolicy); no rounds. CPU, small: one
  // untimed product before each batch, which wakes the threads a plan of another thread count left
  // idle (that can take longer than a small matrix's whole batch).
  const bool alone = large && b != Backend::Cuda;
  const auto timed = [&](Entry& e) {
    const auto t = clock::now();
    if (b != Backend::Cuda) e.plan->run(alone ? policy.warm_cpu : 1);
    for (int i = 0; i < (alone ? policy.timed_cpu : 1); ++i) e.times.push_back(e.plan->time_runs(e.batch) / e.batch);
    timing += since(t);
  };
  const auto skip = [&](const Candidate& c, const char* why) { skipped.push_back(c.label + ": " + why); };
  // CPU, large: what trying c would cost (its conversion, its warm and timed products), predicted
  // and scaled to the first candidate's measured product; a candidate it would take past the budget
  // is not made.
  const auto predicted_trial_s = [&](const Candidate& c) {
    return (c.predicted_convert_s + (policy.warm_cpu + policy.timed_cpu) * c.predicted_s) / first_predicted() * reference;
  };

  // Candidates are made in trial order, each timed once (a first estimate, which may be slow: the
  // lower median of the rounds discounts it), while the budget lasts; a candidate holding its own
  // copy of the matrix lowers the memory the next ones may take, since all are alive until the
  // rounds end.
  for (std::size_t i : order) {
    if (static_cast<int>(trial.size()) >= max_trials) break;
    const Candidate& c = ranked[i];
    if (!trial.empty() && c.cost(n) > (large ? policy.prune : policy.prune_small) * ranked.front().cost(n)) continue;
    if (!trial.empty() && over_budget()) break;
    if (!trial.empty() && !fits(c)) continue;
    if (!trial.empty() && alone && predicted_trial_s(c) > left()) continue;
    Candidate within = c;
    if (held > 0) {
      within.opt.memory_budget_bytes = std::max(1.0, format_memory_budget(convert_options(opt)) - held);
    }
    Entry e{i, nullptr, {}, 1};
    try {
      const auto t = clock::now();
      const double shared_before = shared;
      e.plan = make(within, shared);
      e.made_s = since(t) - (shared - shared_before);
      making += e.made_s;
      // A first estimate (CUDA: behind an untimed product). With a queueing timer only the first
      // candidate's (the budget's reference): the others' come from one queued round below.
      if (opt.trial && (trial.empty() || !time_rounds)) timed(e);
    } catch (const std::bad_alloc&) {
      skip(c, "out of memory");
      continue;
    } catch (const std::exception& ex) {  // refused (memory, size) or failed: the next one
      skip(c, ex.what());
      continue;
    }
    if (trial.empty()) trial_start = clock::now(), shared_at_start = shared, reference = e.times.empty() ? 0 : e.times[0];
    if (!e.times.empty()) {
      const double t = lower_median(e.times);
      fastest = fastest > 0 ? std::min(fastest, t) : t;
    }
    if (e.plan->convert_seconds > 0) held += static_cast<double>(e.plan->bytes_per_product);
    trial.push_back(std::move(e));
  }

  // Interleaved rounds: every candidate times one batch per round, so a clock ramp or a stall
  // touches them all alike; each keeps the lower median of its times.
  if (opt.trial && trial.size() > 1 && !alone) {
    const auto t = clock::now();
    const bool queued = time_rounds && queued_rounds(trial, time_rounds, policy, large, left);
    timing += since(t);
    if (!queued) {
      const double batch_s = large ? policy.batch_s_large : policy.batch_s_small;
      const int rounds = large ? policy.rounds_large : policy.rounds_small;
      // One round at least: a first estimate alone can be a cold product (a CSR5 plan's first
      // product right after its conversion). A candidate without an estimate yet (the queueing
      // timer failed) gets one first.
      for (int r = 0; r < rounds && (r == 0 || !over_budget()); ++r)
        for (auto it = trial.begin(); it != trial.end();) {
          try {
            if (it->times.empty()) timed(*it);
            if (r == 0) it->batch = batch_for(batch_s, it->times[0]);
            timed(*it);
            ++it;
          } catch (const std::exception& ex) {
            skip(ranked[it->rank], ex.what());
            it = trial.erase(it);
          }
        }
    }
  }

  if (trial.empty()) {  // none could be made, or every one failed in the rounds
    std::string why;
    for (const auto& r : skipped) why += "; " + r;
    const std::string in = opt.precision == Precision::Double ? "" : fmt::format(" in {} precision", to_string(opt.precision));
    throw Unsupported(fmt::format("auto ({}): no candidate could be made{}{}", to_string(b), in, why));
  }

  std::size_t best = 0;
  double best_cost = 0;
  std::vector<std::string> said;
  for (std::size_t j = 0; j < trial.size(); ++j) {
    const Entry& e = trial[j];
    const double t = e.times.empty() ? 0 : lower_median(e.times);
    const double cost = e.plan->convert_seconds + static_cast<double>(n) * t;
    if (j == 0 || cost < best_cost) best = j, best_cost = cost;
    const std::string& label = ranked[e.rank].label;
    said.push_back(fmt::format("{} {}{} (made in {:.2f} ms)", label, us(t),
                               e.plan->convert_seconds > 0 && opt.trial
                                   ? fmt::format(" + conversion {:.2f} ms", e.plan->convert_seconds * 1e3)
                                   : "",
                               e.made_s * 1e3));
  }
  const std::size_t best_rank = trial[best].rank;
  std::unique_ptr<Plan> chosen = std::move(trial[best].plan);
  trial.clear();  // the other candidates' data is freed before the plan is handed over

  // Whole wall time = conversion + setup; planning is what is left after the chosen plan's own
  // conversion and setup and the shared upload, which any choice needs.
  const Candidate& c = ranked[best_rank];
  const double total = since(t0), conv = chosen->convert_seconds;
  const double planning = std::max(0.0, total - conv - chosen->setup_seconds - shared);
  std::string line = opt.trial ? fmt::format("trial {}", fmt::join(said, " vs ")) : "model only (no trial)";
  const double others = std::max(0.0, making - conv - chosen->setup_seconds);
  line += fmt::format(
      "; model rank {} of {}; planning {:.2f} ms (analysis {:.2f}, other candidates' making {:.2f}, trial products "
      "{:.2f}, the rest {:.2f})",
      best_rank + 1, ranked.size(), planning * 1e3, analysis * 1e3, others * 1e3, timing * 1e3,
      std::max(0.0, planning - analysis - others - timing) * 1e3);
  if (!skipped.empty()) line += fmt::format("; skipped: {}", fmt::join(skipped, "; "));
  if (!chosen->detail.empty()) line += fmt::format("; {}: {}", c.kernel, chosen->detail);
  auto plan = std::make_unique<AutoPlan>(std::move(chosen));
  plan->chosen = fmt::format("{}/{}", to_string(b), c.label);
  plan->detail = std::move(line);
  plan->convert_seconds = conv;
  plan->setup_seconds = total - conv;
  plan->planning_seconds = planning;
  if (b != Backend::Cuda) plan->chosen_threads = b == Backend::Serial ? 1 : plan_threads(c.opt);
  return plan;
}

}  // namespace spmv::detail
