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

/// A sample is a batch of back-to-back products lasting at least `sample_seconds`, so that clock
/// resolution and launch overhead do not dominate small matrices; times are per product.
struct ProductTiming {
  double median_s = 0, min_s = 0;
  int products_per_sample = 1, samples = 0;
};
/// Warms the plan up, then grows the batch until one lasts sample_seconds: the products per
/// sample (1 .. 10^8).
int products_per_sample(Plan& plan, double sample_seconds);
/// products_per_sample, then `samples` samples (fewer, but at least 3, where they would take more
/// than max_seconds; 0: no cap): the median and minimum time of one product.
ProductTiming time_products(Plan& plan, double sample_seconds, int samples, double max_seconds = 0);
/// Plans compared on the same work, interleaved: `rounds` rounds, each timing one batch (about
/// batch_seconds, after a quarter as many untimed products, at least 3, that bring the plan's data
/// back into the caches) of every plan, in an order that rotates from round to round, so that clock
/// drift and background load hit all alike. Returns per plan the median over the rounds of its time per
/// product divided by plans[0]'s in the same round (1 for plans[0]). Steadier than comparing
/// medians taken one plan after another, and free of the bias of a best-of-many taken that way.
std::vector<double> interleaved_ratios(std::span<Plan* const> plans, double batch_seconds, int rounds);

}  // namespace spmv
