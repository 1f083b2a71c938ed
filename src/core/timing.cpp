// Timing a plan: calibrated batches of back-to-back products, median over samples.
#include <spmv/device.hpp>
#include <spmv/reference.hpp>
#include <spmv/timing.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <vector>

namespace spmv {

namespace {

struct Batch {
  int n;     // products per sample
  double t;  // seconds of the last batch of n
};

// Seconds of n back-to-back products (or calls).
using Timed = std::function<double(int n)>;

// Grow n towards 1.1 x sample_seconds from the last batch's time per product until a batch lasts
// sample_seconds (a few rounds: the first batches of a GPU plan or a cold CPU run over-estimate it).
Batch calibrate(const Timed& timed, double sample_seconds) {
  Batch b{1, timed(1)};
  for (int round = 0; round < 8 && b.t < sample_seconds && b.n < 100'000'000; ++round) {
    const double per = std::max(b.t / b.n, 1e-9);
    const double want = std::min(sample_seconds / per * 1.1, 1e8);
    b.n = std::max(b.n + 1, static_cast<int>(std::ceil(want)));
    b.t = timed(b.n);
  }
  return b;
}

Batch calibrate(Plan& plan, double sample_seconds) {
  plan.run(1);  // warm-up: first touch, caches, lazy module loading
  return calibrate([&](int n) { return plan.time_runs(n); }, sample_seconds);
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

namespace {

ProductTiming time_batches(const Timed& timed, Batch b, double sample_seconds, int samples, double max_seconds) {
  ProductTiming r;
  std::vector<double> ts;
  for (int attempt = 0;; ++attempt) {
    const double per = std::max(b.t / b.n, 1e-12);
    r.samples = std::max(1, samples);
    if (max_seconds > 0 && r.samples * b.n * per > max_seconds)
      r.samples = std::max(std::min(3, r.samples), static_cast<int>(max_seconds / (b.n * per)));
    ts.assign(static_cast<std::size_t>(r.samples), 0.0);
    for (double& s : ts) s = timed(b.n) / b.n;
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

// Calls of multiply() on vectors of type T: host ones, and device ones for a GPU plan.
template <class T>
LoopTiming loops_of(Plan& plan, std::size_t nx, std::size_t ny, double sample_seconds, int samples) {
  const std::vector<double> xd = make_vector("random:1", nx);
  const std::vector<T> x(xd.begin(), xd.end());
  std::vector<T> y(ny);
  const auto measure = [&](const Timed& timed) {
    timed(1);  // warm-up: the staging buffers, the pointer checks
    return time_batches(timed, calibrate(timed, sample_seconds), sample_seconds, samples, 0);
  };
  LoopTiming r;
  const auto host_loop = [&](int n) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < n; ++i) plan.multiply(std::span<const T>(x), std::span<T>(y));
    return seconds_since(t0);
  };
  r.host = measure(host_loop);
  if (plan.on_device()) {
    {
      const PinnedHost px(x), py(y);
      r.pinned = measure(host_loop);
    }
    r.copies_s = device::cuda_host_copies_seconds(nx * sizeof(T), ny * sizeof(T));
    DeviceVector<T> dx(x), dy(ny);
    r.device = measure([&](int n) {
      const auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < n; ++i) plan.multiply(dx, dy);
      device::synchronize();
      return seconds_since(t0);
    });
  }
  return r;
}

}  // namespace

ProductTiming time_products(Plan& plan, double sample_seconds, int samples, double max_seconds) {
  return time_batches([&](int n) { return plan.time_runs(n); }, calibrate(plan, sample_seconds), sample_seconds,
                      samples, max_seconds);
}

LoopTiming time_multiply_loops(Plan& plan, std::size_t nx, std::size_t ny, double sample_seconds, int samples) {
  if (plan.precision == Precision::Single) return loops_of<float>(plan, nx, ny, sample_seconds, samples);
  return loops_of<double>(plan, nx, ny, sample_seconds, samples);
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
