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

double steady_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

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
int batch_for(double batch_s, double t) {
  return static_cast<int>(std::clamp(batch_s / std::max(t, 1e-9), 1.0, 1000.0));
}

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

// One call of the planner: the matrix's features and the model's ranking, then the trial (the
// candidates made in order while the budget lasts, each timed once, then interleaved rounds), then
// the choice and its account.
class Planner {
 public:
  Planner(const CsrView& a, Backend b, const PlanOptions& opt, const CandidateMaker& make,
          const RoundTimer& time_rounds, const Analyzer& analyzer, const Clock& now)
      : b_(b), opt_(opt), make_(make), time_rounds_(time_rounds), now_(now ? now : Clock(steady_seconds)), t0_(now_()) {
    const MatrixFeatures f = analyzer ? analyzer(shared_) : analyze(a);
    analysis_ = since(t0_) - shared_;
    ranked_ = rank_candidates(f, b, opt);
    n_ = std::max(1LL, opt.products);
    large_ = f.nnz > tuning::large_nnz;
    max_trials_ = !opt.trial ? 1 : large_ ? policy_.max_large : policy_.max_small;
    alone_ = large_ && b != Backend::Cuda;
    trial_start_ = now_();
  }

  // Candidates are made in trial order, each timed once (a first estimate, which may be slow: the
  // lower median of the rounds discounts it), while the budget lasts; a candidate holding its own
  // copy of the matrix lowers the memory the next ones may take, since all are alive until the
  // rounds end.
  void make_candidates() {
    for (std::size_t i : trial_order()) {
      if (static_cast<int>(trial_.size()) >= max_trials_) break;
      const Candidate& c = ranked_[i];
      if (!trial_.empty()) {
        if (c.cost(n_) > (large_ ? policy_.prune : policy_.prune_small) * ranked_.front().cost(n_)) continue;
        if (over_budget()) break;
        if (!fits(c) || (alone_ && predicted_trial_s(c) > left())) continue;
      }
      make_one(i);
    }
  }

  // Interleaved rounds: every candidate times one batch per round, so a clock ramp or a stall
  // touches them all alike; each keeps the lower median of its times.
  void rounds() {
    if (!opt_.trial || trial_.size() < 2 || alone_) return;
    const double t = now_();
    const bool queued = time_rounds_ && queued_rounds(trial_, time_rounds_, policy_, large_, [this] { return left(); });
    timing_ += since(t);
    if (!queued) rounds_one_by_one();
  }

  // The candidate of lowest conversion + n products, with the planner's account of its choice.
  std::unique_ptr<Plan> choose() {
    if (trial_.empty()) {  // none could be made, or every one failed in the rounds
      std::string why;
      for (const auto& r : skipped_) why += "; " + r;
      const std::string in =
          opt_.precision == Precision::Double ? "" : fmt::format(" in {} precision", to_string(opt_.precision));
      throw Unsupported(fmt::format("auto ({}): no candidate could be made{}{}", to_string(b_), in, why));
    }
    std::size_t best = 0;
    double best_cost = 0;
    std::vector<std::string> said;
    for (std::size_t j = 0; j < trial_.size(); ++j) {
      const Entry& e = trial_[j];
      const double t = e.times.empty() ? 0 : lower_median(e.times);
      const double cost = e.plan->convert_seconds + static_cast<double>(n_) * t;
      if (j == 0 || cost < best_cost) best = j, best_cost = cost;
      said.push_back(fmt::format("{} {}{} (made in {:.2f} ms)", ranked_[e.rank].label, us(t),
                                 e.plan->convert_seconds > 0 && opt_.trial
                                     ? fmt::format(" + conversion {:.2f} ms", e.plan->convert_seconds * 1e3)
                                     : "",
                                 e.made_s * 1e3));
    }
    const std::size_t best_rank = trial_[best].rank;
    std::unique_ptr<Plan> chosen = std::move(trial_[best].plan);
    trial_.clear();  // the other candidates' data is freed before the plan is handed over
    return account(std::move(chosen), best_rank, said);
  }

 private:
  double since(double t) const { return now_() - t; }

  // Trial order: each kernel's best setting first, in rank order, then the other settings, so that
  // the settings of one kernel (CSR's schedules and inner loops) cannot crowd out another kernel.
  std::vector<std::size_t> trial_order() const {
    std::vector<std::size_t> order;
    for (const int pass : {0, 1})
      for (std::size_t i = 0; i < ranked_.size(); ++i) {
        const bool first = std::none_of(ranked_.begin(), ranked_.begin() + i,
                                        [&](const Candidate& c) { return c.kernel == ranked_[i].kernel; });
        if (first == (pass == 0)) order.push_back(i);
      }
    return order;
  }

  // The budget left. It is counted from after the first candidate: one-time costs of the process
  // (CUDA loads a kernel's module at its first launch) are not the trial's, nor is the shared upload.
  // Large matrices: the budget is in products of the fastest candidate measured so far (what the
  // plan will run), so a trial that has found a much faster product stops sooner.
  double left() const {
    const double spent = since(trial_start_) - (shared_ - shared_at_start_);
    return (large_ ? policy_.budget_products * fastest_ : policy_.small_budget_s) - spent;
  }
  bool over_budget() const { return left() < 0; }
  // The model's prediction of the first candidate's product (what its measured `reference_` scales).
  double first_predicted() const { return std::max(ranked_[trial_.front().rank].predicted_s, 1e-12); }

  // On large matrices a converting candidate is tried only if n products could repay its conversion,
  // were its product `optimism` times faster than the model predicts. Of those, one whose conversion
  // the model expects to overrun what is left of the budget only if it predicts a product about as
  // fast as the first candidate's (close): there it cannot tell them apart, and the products may
  // repay the conversion (CSR5 on rows of very different lengths). The first candidate is always
  // tried: it is the model's choice. Predictions are scaled to the first candidate's measured product.
  bool fits(const Candidate& c) const {
    if (!large_ || c.predicted_convert_s == 0 || reference_ == 0) return true;
    const double first = first_predicted();
    if (c.predicted_convert_s > static_cast<double>(n_) * (first - c.predicted_s / policy_.optimism)) return false;
    return c.predicted_convert_s / first * reference_ <= left() || c.predicted_s <= policy_.close * first;
  }

  // CPU, large: what trying c would cost (its conversion, its warm and timed products), predicted
  // and scaled to the first candidate's measured product; a candidate it would take past the budget
  // is not made.
  double predicted_trial_s(const Candidate& c) const {
    return (c.predicted_convert_s + (policy_.warm_cpu + policy_.timed_cpu) * c.predicted_s) / first_predicted() *
           reference_;
  }

  // CPU, large: warm products first, then alone (see TrialPolicy); no rounds. CPU, small: one
  // untimed product before each batch, which wakes the threads a plan of another thread count left
  // idle (that can take longer than a small matrix's whole batch).
  void timed(Entry& e) {
    const double t = now_();
    if (b_ != Backend::Cuda) e.plan->run(alone_ ? policy_.warm_cpu : 1);
    for (int i = 0; i < (alone_ ? policy_.timed_cpu : 1); ++i) e.times.push_back(e.plan->time_runs(e.batch) / e.batch);
    timing_ += since(t);
  }

  void skip(const Candidate& c, const char* why) { skipped_.push_back(c.label + ": " + why); }

  // Makes ranked candidate i within the memory the candidates already made leave, with its first
  // estimate (CUDA: behind an untimed product; with a queueing timer only the first candidate's,
  // the budget's reference: the others' come from one queued round). Refused or failed: skipped.
  void make_one(std::size_t i) {
    const Candidate& c = ranked_[i];
    Candidate within = c;
    if (held_ > 0) within.opt.memory_budget_bytes = std::max(1.0, format_memory_budget(convert_options(opt_)) - held_);
    Entry e{i, nullptr, {}, 1};
    try {
      const double t = now_();
      const double shared_before = shared_;
      e.plan = make_(within, shared_);
      e.made_s = since(t) - (shared_ - shared_before);
      making_ += e.made_s;
      if (opt_.trial && (trial_.empty() || !time_rounds_)) timed(e);
    } catch (const std::bad_alloc&) {
      return skip(c, "out of memory");
    } catch (const std::exception& ex) {  // refused (memory, size) or failed: the next one
      return skip(c, ex.what());
    }
    if (trial_.empty())
      trial_start_ = now_(), shared_at_start_ = shared_, reference_ = e.times.empty() ? 0 : e.times[0];
    if (!e.times.empty()) {
      const double t = lower_median(e.times);
      fastest_ = fastest_ > 0 ? std::min(fastest_, t) : t;
    }
    if (e.plan->convert_seconds > 0) held_ += static_cast<double>(e.plan->bytes_per_product);
    trial_.push_back(std::move(e));
  }

  // The rounds without a queueing timer, or where it failed. One round at least: a first estimate
  // alone can be a cold product (a CSR5 plan's first product right after its conversion). A
  // candidate without an estimate yet (the queueing timer failed) gets one first; one that fails is
  // dropped, named among the skipped.
  void rounds_one_by_one() {
    const double batch_s = large_ ? policy_.batch_s_large : policy_.batch_s_small;
    const int rounds = large_ ? policy_.rounds_large : policy_.rounds_small;
    for (int r = 0; r < rounds && (r == 0 || !over_budget()); ++r)
      for (auto it = trial_.begin(); it != trial_.end();) {
        try {
          if (it->times.empty()) timed(*it);
          if (r == 0) it->batch = batch_for(batch_s, it->times[0]);
          timed(*it);
          ++it;
        } catch (const std::exception& ex) {
          skip(ranked_[it->rank], ex.what());
          it = trial_.erase(it);
        }
      }
  }

  // The plan handed back: the chosen one, with what the planner did. Whole wall time = conversion +
  // setup; planning is what is left after the chosen plan's own conversion and setup and the shared
  // upload, which any choice needs.
  std::unique_ptr<Plan> account(std::unique_ptr<Plan> chosen, std::size_t best_rank,
                                const std::vector<std::string>& said) {
    const Candidate& c = ranked_[best_rank];
    const double total = since(t0_), conv = chosen->convert_seconds;
    const double planning = std::max(0.0, total - conv - chosen->setup_seconds - shared_);
    std::string line = opt_.trial ? fmt::format("trial {}", fmt::join(said, " vs ")) : "model only (no trial)";
    const double others = std::max(0.0, making_ - conv - chosen->setup_seconds);
    line += fmt::format(
        "; model rank {} of {}; planning {:.2f} ms (analysis {:.2f}, other candidates' making {:.2f}, trial products "
        "{:.2f}, the rest {:.2f})",
        best_rank + 1, ranked_.size(), planning * 1e3, analysis_ * 1e3, others * 1e3, timing_ * 1e3,
        std::max(0.0, planning - analysis_ - others - timing_) * 1e3);
    if (!skipped_.empty()) line += fmt::format("; skipped: {}", fmt::join(skipped_, "; "));
    if (!chosen->detail.empty()) line += fmt::format("; {}: {}", c.kernel, chosen->detail);
    auto plan = std::make_unique<AutoPlan>(std::move(chosen));
    plan->chosen = fmt::format("{}/{}", to_string(b_), c.label);
    plan->detail = std::move(line);
    plan->convert_seconds = conv;
    plan->setup_seconds = total - conv;
    plan->planning_seconds = planning;
    if (b_ != Backend::Cuda) plan->chosen_threads = b_ == Backend::Serial ? 1 : plan_threads(c.opt);
    return plan;
  }

  const Backend b_;
  const PlanOptions& opt_;
  const CandidateMaker& make_;
  const RoundTimer& time_rounds_;
  const tuning::TrialPolicy policy_;
  const Clock now_;
  const double t0_;
  std::vector<Candidate> ranked_;
  long long n_ = 1;  // the products the plan will serve
  bool large_ = false, alone_ = false;
  int max_trials_ = 1;
  std::vector<Entry> trial_;
  std::vector<std::string> skipped_;
  double trial_start_ = 0;
  // Seconds: the shared upload, making candidates, timing them, the analysis; the trial's shared
  // seconds when it started; the first candidate's measured product; the fastest measured so far.
  double shared_ = 0, making_ = 0, timing_ = 0, analysis_ = 0, shared_at_start_ = 0, reference_ = 0, fastest_ = 0;
  double held_ = 0;  // bytes the candidates made so far hold of their own
};

}  // namespace

std::unique_ptr<Plan> plan_auto(const CsrView& a, Backend b, const PlanOptions& opt, const CandidateMaker& make,
                                const RoundTimer& time_rounds, const Analyzer& analyzer, const Clock& now) {
  Planner planner(a, b, opt, make, time_rounds, analyzer, now);
  planner.make_candidates();
  planner.rounds();
  return planner.choose();
}

}  // namespace spmv::detail
