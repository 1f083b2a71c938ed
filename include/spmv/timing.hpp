#pragma once
/// @file
/// Timing plans: what the benchmark, `spmv run`, the bench tools and users timing their own products
/// share.
#include <spmv/plan.hpp>

#include <chrono>
#include <span>
#include <vector>

namespace spmv {

/// Wall-clock seconds since a steady_clock time point.
inline double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

/// The spread of a set of timed samples (seconds each, e.g. per product).
struct SampleStats {
  double mean_s = 0, median_s = 0, min_s = 0, max_s = 0;
  /// Coefficient of variation: the samples' standard deviation (n - 1) over their mean; 0 for
  /// fewer than two samples.
  double cv = 0;
  /// Disagreement of the first and the last part: |median of the first half - median of the last
  /// half| / median of all (the middle sample of an odd count left out); 0 for fewer than two. A
  /// trend (load that starts or stops while the samples are taken) shows here even where the
  /// spread of each half is small.
  double drift = 0;
  /// cv or drift above `threshold` (a fraction: 0.05 = 5%); never where threshold <= 0.
  bool noisy(double threshold) const { return threshold > 0 && (cv > threshold || drift > threshold); }
};
/// The statistics of `samples`, in the order they were taken (empty: all 0).
SampleStats sample_stats(std::span<const double> samples);

/// A sample is a batch of back-to-back products lasting at least `sample_seconds`, so that clock
/// resolution and launch overhead do not dominate small matrices; times are per product. The
/// statistics (SampleStats) are over the samples.
struct ProductTiming : SampleStats {
  int products_per_sample = 1, samples = 0;
  std::vector<double> sample_times_s;  ///< each sample's time per product, in the order taken
};
/// Warms the plan up, then grows the batch until one lasts sample_seconds: the products per
/// sample (1 .. 10^8).
int products_per_sample(Plan& plan, double sample_seconds);
/// products_per_sample, then `samples` samples (fewer, but at least 3, where they would take more
/// than max_seconds; 0: no cap): their statistics per product. Where the samples' median came out
/// shorter than sample_seconds (the calibration batch was slowed down), the batch grows and the
/// samples are taken again (twice at most), so that samples last at least sample_seconds.
ProductTiming time_products(Plan& plan, double sample_seconds, int samples, double max_seconds = 0);
/// What a user's loop pays per product through multiply() (Plan::multiply), beside the kernel's own
/// time (time_products): on host vectors, and for a GPU plan also on the same host vectors pinned
/// (PinnedHost: copied straight over the bus, not staged) and on device vectors (DeviceVector; the
/// loop ends by waiting for the device). Calls of the plan's vector type (float for single plans,
/// double otherwise) on random x; each sample a calibrated batch of calls lasting at least
/// sample_seconds, timed by the steady clock; statistics per call. For a GPU plan, `copies_s`: one
/// copy of x to the device and one of y back between pinned memory and the device
/// (device::cuda_host_copies_seconds), what a product on host vectors must spend on the bus. The
/// GPU-only parts are empty (samples 0) for CPU plans.
struct LoopTiming {
  ProductTiming host, pinned, device;
  double copies_s = 0;
};
/// nx, ny: x's and y's values (cols*k, rows*k).
LoopTiming time_multiply_loops(Plan& plan, std::size_t nx, std::size_t ny, double sample_seconds, int samples);

/// Plans compared on the same work, interleaved: `rounds` rounds, each timing one batch (about
/// batch_seconds, after a quarter as many untimed products, at least 3, that bring the plan's data
/// back into the caches) of every plan, in an order that rotates from round to round, so that clock
/// drift and background load hit all alike. Returns per plan the median over the rounds of its time per
/// product divided by plans[0]'s in the same round (1 for plans[0]). Steadier than comparing
/// medians taken one plan after another, and free of the bias of a best-of-many taken that way.
std::vector<double> interleaved_ratios(std::span<Plan* const> plans, double batch_seconds, int rounds);

}  // namespace spmv
