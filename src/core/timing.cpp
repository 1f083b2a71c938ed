// Timing a plan: calibrated batches of back-to-back products, median over samples.
#include <spmv/timing.hpp>

#include <algorithm>
#include <cmath>
#include <vector>

namespace spmv {

namespace {

struct Batch {
  int n;     // products per sample
  double t;  // seconds of the last batch of n
};

Batch calibrate(Plan& plan, double sample_seconds) {
  plan.run(1);  // warm-up: first touch, caches, lazy module loading
  // Grow n towards sample_seconds from the last batch's time per product (a few rounds: the first
  // batches of a GPU plan or a cold CPU run over-estimate it).
  Batch b{1, plan.time_runs(1)};
  for (int round = 0; round < 6 && b.t < 0.8 * sample_seconds; ++round) {
    const double per = std::max(b.t / b.n, 1e-9);
    const double want = std::min(sample_seconds / per * 1.1, 1e8);
    b.n = std::max(b.n + 1, static_cast<int>(std::ceil(want)));
    b.t = plan.time_runs(b.n);
  }
  return b;
}

// The median of v (sorted in place); v is not empty.
double median(std::vector<double>& v) {
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

}  // namespace

int products_per_sample(Plan& plan, double sample_seconds) { return calibrate(plan, sample_seconds).n; }

ProductTiming time_products(Plan& plan, double sample_seconds, int samples, double max_seconds) {
  const Batch b = calibrate(plan, sample_seconds);
  const double per = std::max(b.t / b.n, 1e-12);
  ProductTiming r;
  r.products_per_sample = b.n;
  r.samples = std::max(1, samples);
  if (max_seconds > 0 && r.samples * b.n * per > max_seconds)
    r.samples = std::max(std::min(3, r.samples), static_cast<int>(max_seconds / (b.n * per)));
  std::vector<double> ts(static_cast<std::size_t>(r.samples));
  for (double& s : ts) s = plan.time_runs(b.n) / b.n;
  r.median_s = median(ts);
  r.min_s = ts.front();
  return r;
}

std::vector<double> interleaved_ratios(std::span<Plan* const> plans, double batch_seconds, int rounds) {
  const std::size_t n = plans.size();
  std::vector<int> batch(n);
  for (std::size_t i = 0; i < n; ++i) batch[i] = calibrate(*plans[i], batch_seconds).n;  // also warms up
  std::vector<std::vector<double>> ratios(n);
  std::vector<double> t(n);
  for (int r = 0; r < rounds; ++r) {
    for (std::size_t j = 0; j < n; ++j) {
      const std::size_t i = (j + static_cast<std::size_t>(r)) % n;
      plans[i]->run(std::max(3, batch[i] / 4));  // back in the caches after the other plans' batches
      t[i] = plans[i]->time_runs(batch[i]) / batch[i];
    }
    for (std::size_t i = 0; i < n; ++i) ratios[i].push_back(t[0] > 0 ? t[i] / t[0] : 0);
  }
  std::vector<double> out(n, 1.0);
  for (std::size_t i = 1; i < n && rounds > 0; ++i) out[i] = median(ratios[i]);
  return out;
}

}  // namespace spmv
