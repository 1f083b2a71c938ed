#pragma once
// The benchmark's time budget: sample lengths fitted so that a sweep over the suite takes about the
// time a user gave it, on whatever machine. Pure arithmetic on the elapsed times it is given, so
// its decisions can be tested without a clock.
#include <spmv/bench/bench.hpp>

#include <cstddef>

namespace spmv::bench {

class TimeBudget {
 public:
  // The shortest sample the budget chooses (seconds): samples last at least 10 ms (the README's
  // promise), however tight the budget. A sweep that asked for shorter ones (--min-sample-ms,
  // --quick) keeps its own.
  static constexpr double kShortestSample = 0.010;

  // seconds 0: no budget. adapt false: the user fixed the sample length, so only the cut past
  // 1.5x the budget applies.
  TimeBudget(double seconds, bool adapt) : seconds_(seconds), adapt_(seconds > 0 && adapt) {}

  // Before anything is measured: where (repeat + 3) samples per configuration would overrun 80%
  // of the budget over `total` configurations, shortens the samples (kShortestSample at least),
  // drops two repeats (3 at least) unless `repeat_fixed`, and caps the timed work per configuration.
  void first_estimate(SweepConfig& cfg, std::size_t total, bool repeat_fixed);

  // Before each matrix, `elapsed` seconds into the run and `sweep_elapsed` into the sweep, with
  // `done` of `total` configurations measured: the sample length that spends 95% of the budget
  // on the rest, after the observed overhead per configuration (plan making, checks,
  // oversubscribed threads), between kShortestSample and the first estimate's length.
  void before_matrix(SweepConfig& cfg, double elapsed, double sweep_elapsed, std::size_t done, std::size_t total);

  // Far over budget (past 1.5x): the remaining matrices are listed as skipped, not measured.
  bool exhausted(double elapsed) const { return seconds_ > 0 && elapsed > 1.5 * seconds_; }

  bool adapts() const { return adapt_; }
  double seconds() const { return seconds_; }
  // The shortest and longest sample length used (seconds), for the run's last line.
  double shortest_sample() const { return shortest_; }
  double longest_sample() const { return longest_; }

 private:
  double seconds_ = 0;
  bool adapt_ = false;
  double max_sample_ = 0, max_config_ = 0;  // the first estimate's, never exceeded later
  double shortest_ = 0, longest_ = 0;
};

}  // namespace spmv::bench
