// Kernel "auto": analysis, model, bounded trial; the plan it returns runs the winner.
#include "plan/auto_plan.hpp"

#include <algorithm>
#include <chrono>
#include <fmt/format.h>

#include "plan/model_tuning.hpp"

namespace spmv::detail {

namespace {

using clock = std::chrono::steady_clock;

double since(clock::time_point t0) { return std::chrono::duration<double>(clock::now() - t0).count(); }

// Forwards everything to the chosen plan; keeps the planner's account of its choice.
class AutoPlan final : public Plan {
 public:
  explicit AutoPlan(std::unique_ptr<Plan> p) : p_(std::move(p)) {
    bytes_per_product = p_->bytes_per_product;
    stored_entries = p_->stored_entries;
  }
  void set_x(std::span<const double> x) override { p_->set_x(x); }
  void run(int times) override { p_->run(times); }
  void get_y(std::span<double> y) override { p_->get_y(y); }
  double time_runs(int times) override { return p_->time_runs(times); }

 private:
  std::unique_ptr<Plan> p_;
};

// Seconds per product of a freshly made plan, on its own resident x: the first product is a
// warm-up (page faults, lazy module loading) unless products are long enough to time one by one;
// short products run 1 ms first (a device or cores left idle by the analysis run clocked down, and
// the first candidate would pay for it), then are timed in batches of about 0.3 ms, the best of three.
double trial_seconds(Plan& p) {
  double t = p.time_runs(1);
  if (t >= 2e-3) return std::min(t, p.time_runs(1));
  t = p.time_runs(1);
  if (t >= 3e-4) return std::min(t, p.time_runs(1));
  const int batch = static_cast<int>(std::clamp(3e-4 / std::max(t, 1e-8), 1.0, 1000.0));
  double warm = 0;
  for (int i = 0; i < 100 && warm < 1e-3; ++i) warm += p.time_runs(batch);
  t = p.time_runs(batch) / batch;
  for (int i = 0; i < 2; ++i) t = std::min(t, p.time_runs(batch) / batch);
  return t;
}

std::string us(double s) { return fmt::format("{:.1f} us", s * 1e6); }

}  // namespace

std::unique_ptr<Plan> plan_auto(const Csr& a, Backend b, const PlanOptions& opt, const CandidateMaker& make) {
  const auto t0 = clock::now();
  const tuning::TrialPolicy policy;
  const MatrixFeatures f = analyze(a);
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
  const bool large = f.nnz > policy.large_nnz;
  const int max_trials = !opt.trial ? 1 : large ? policy.max_large : policy.max_small;

  std::unique_ptr<Plan> best;
  std::size_t best_rank = 0;
  double best_cost = 0, best_t = 0, shared = 0;
  std::vector<std::string> trial, skipped;
  // Restarted after the first candidate: one-time costs of the process (CUDA loads a kernel's
  // module at its first launch) are not the trial's.
  auto trial_start = clock::now();
  double shared_at_start = 0;  // the shared upload made before the restart is not the trial's either
  int tried = 0;
  for (std::size_t i : order) {
    if (tried >= max_trials) break;
    const Candidate& c = ranked[i];
    if (best && c.cost(n) > (large ? policy.prune : policy.prune_small) * ranked.front().cost(n)) continue;
    if (best && (large ? since(trial_start) - (shared - shared_at_start) >
                             std::max(policy.budget_products * best_t, policy.large_budget_floor_s)
                       : since(trial_start) > policy.small_budget_s))
      break;
    std::unique_ptr<Plan> p;
    double t = 0;
    try {
      p = make(c, shared);
      if (opt.trial) t = trial_seconds(*p);
    } catch (const std::bad_alloc&) {
      skipped.push_back(c.label + ": out of memory");
      continue;
    } catch (const std::exception& e) {  // refused (memory, size) or failed: the next one
      skipped.push_back(fmt::format("{}: {}", c.label, e.what()));
      continue;
    }
    if (++tried == 1) trial_start = clock::now(), shared_at_start = shared;
    const double cost = p->convert_seconds + static_cast<double>(n) * t;
    trial.push_back(p->convert_seconds > 0 && opt.trial
                        ? fmt::format("{} {} + conversion {:.2f} ms", c.label, us(t), p->convert_seconds * 1e3)
                        : fmt::format("{} {}", c.label, us(t)));
    if (!best || cost < best_cost) {
      best = std::move(p);  // the previous best is freed here: one candidate's data at a time
      best_cost = cost, best_t = t, best_rank = i;
    }
  }
  if (!best) {
    std::string why;
    for (const auto& r : skipped) why += "; " + r;
    throw Unsupported(fmt::format("auto ({}): no candidate could be made{}", to_string(b), why));
  }

  // Whole wall time = conversion + setup; planning is what is left after the chosen plan's own
  // conversion and setup and the shared upload, which any choice needs.
  const Candidate& c = ranked[best_rank];
  const double total = since(t0), conv = best->convert_seconds;
  const double planning = std::max(0.0, total - conv - best->setup_seconds - shared);
  std::string line = opt.trial ? fmt::format("trial {}", fmt::join(trial, " vs ")) : "model only (no trial)";
  line += fmt::format("; model rank {} of {}; planning {:.2f} ms", best_rank + 1, ranked.size(), planning * 1e3);
  if (!skipped.empty()) line += fmt::format("; skipped: {}", fmt::join(skipped, "; "));
  if (!best->detail.empty()) line += fmt::format("; {}: {}", c.kernel, best->detail);
  auto plan = std::make_unique<AutoPlan>(std::move(best));
  plan->chosen = fmt::format("{}/{}", to_string(b), c.label);
  plan->detail = std::move(line);
  plan->convert_seconds = conv;
  plan->setup_seconds = total - conv;
  plan->planning_seconds = planning;
  if (b != Backend::Cuda) plan->chosen_threads = b == Backend::Serial ? 1 : plan_threads(c.opt);
  return plan;
}

}  // namespace spmv::detail
