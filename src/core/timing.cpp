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
  // Grow n towards 1.1 x sample_seconds from the last batch's time per product until a batch lasts
  // sample_seconds (a few rounds: the first batches of a GPU plan or a cold CPU run over-estimate it).
  Batch b{1, plan.time_runs(1)};
  for (int round = 0; round < 8 && b.t < sample_seconds && b.n < 100'000'000; ++round) {
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

SampleStats sample_stats(std::span<const double> samples) {
  SampleStats s;
  const std::size_t n = samples.size();
  if (n == 0) return s;
  std::vector<double> v(samples.begin(), samples.end());
  s.median_s = median(v);  // sorts v
  s.min_s = v.front();
  s.max_s = v.back();
  double sum = 0;
  for (double x : v) sum += x;
  s.mean_s = sum / static_cast<double>(n);
  if (n < 2) return s;
  double sq = 0;
  for (double x : v) sq += (x - s.mean_s) * (x - s.mean_s);
  s.cv = s.mean_s > 0 ? std::sqrt(sq / static_cast<double>(n - 1)) / s.mean_s : 0;
  const std::size_t h = n / 2;
  std::vector<double> first(samples.begin(), samples.begin() + static_cast<std::ptrdiff_t>(h));
  std::vector<double> last(samples.end() - static_cast<std::ptrdiff_t>(h), samples.end());
  s.drift = s.median_s > 0 ? std::abs(median(first) - median(last)) / s.median_s : 0;
  return s;
}

ProductTiming time_products(Plan& plan, double sample_seconds, int samples, double max_seconds) {
  Batch b = calibrate(plan, sample_seconds);
  ProductTiming r;
  std::vector<double> ts;
  for (int attempt = 0;; ++attempt) {
    const double per = std::max(b.t / b.n, 1e-12);
    r.samples = std::max(1, samples);
    if (max_seconds > 0 && r.samples * b.n * per > max_seconds)
      r.samples = std::max(std::min(3, r.samples), static_cast<int>(max_seconds / (b.n * per)));
    ts.assign(static_cast<std::size_t>(r.samples), 0.0);
    for (double& s : ts) s = plan.time_runs(b.n) / b.n;
    std::vector<double> sorted = ts;
    const double med = median(sorted);
    // A calibration batch slowed down (preempted, clocks ramping up) leaves the samples shorter
    // than asked: grow the batch from the samples' own median and take them again.
    if (med * b.n >= sample_seconds || attempt == 2 || b.n >= 100'000'000) break;
    const double want = std::min(sample_seconds / std::max(med, 1e-12) * 1.1, 1e8);
    b.n = std::max(b.n + 1, static_cast<int>(std::ceil(want)));
    b.t = med * b.n;
  }
  r.products_per_sample = b.n;
  static_cast<SampleStats&>(r) = sample_stats(ts);
  r.sample_times_s = std::move(ts);
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
