// The benchmark's time budget (spmv/bench/budget.hpp).
#include <spmv/bench/budget.hpp>

#include <algorithm>

namespace spmv::bench {

void TimeBudget::first_estimate(SweepConfig& cfg, std::size_t total, bool repeat_fixed) {
  if (adapt_ && total > 0) {
    const double allowed = 0.8 * seconds_ / static_cast<double>(total);
    if ((cfg.repeat + 3) * cfg.min_sample_seconds > allowed) {
      // Never below kShortestSample, nor longer than asked.
      const double floor = std::min(kShortestSample, cfg.min_sample_seconds);
      cfg.min_sample_seconds = std::max(floor, allowed / (cfg.repeat + 3));
      if ((cfg.repeat + 3) * cfg.min_sample_seconds > allowed && !repeat_fixed)
        cfg.repeat = std::max(3, cfg.repeat - 2);
      cfg.max_config_seconds = std::min(cfg.max_config_seconds, std::max(allowed, 0.1));
    }
  }
  max_sample_ = shortest_ = longest_ = cfg.min_sample_seconds;
  max_config_ = cfg.max_config_seconds;
}

void TimeBudget::before_matrix(SweepConfig& cfg, double elapsed, double sweep_elapsed, std::size_t done,
                               std::size_t total) {
  if (!adapt_ || done == 0 || done >= total) return;
  const double left = std::max(0.0, 0.95 * seconds_ - elapsed);
  const double per = left / static_cast<double>(total - done);
  const double overhead =
      std::max(0.0, sweep_elapsed / static_cast<double>(done) - (cfg.repeat + 2) * cfg.min_sample_seconds);
  cfg.min_sample_seconds =
      std::clamp((per - overhead) / (cfg.repeat + 2), std::min(kShortestSample, max_sample_), max_sample_);
  cfg.max_config_seconds = std::clamp(2 * per, std::min(0.05, max_config_), max_config_);
  shortest_ = std::min(shortest_, cfg.min_sample_seconds);
  longest_ = std::max(longest_, cfg.min_sample_seconds);
}

}  // namespace spmv::bench
