// Row lengths: per-row random draws, then a correction to the requested mean and std with
// reductions in a fixed order, so the lengths do not depend on the thread count.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "gen/row_rng.hpp"
#include "gen/shapes.hpp"

namespace spmv::gen::detail {

namespace {

constexpr std::int64_t kChunk = 1 << 16;  // rows per partial sum: fixes the reduction order

// Sum of f(r) over rows in a fixed order (parallel partials per fixed chunk, then sequential).
template <class F>
double ordered_sum(index_t rows, F f) {
  const std::int64_t chunks = (rows + kChunk - 1) / kChunk;
  std::vector<double> part(chunks, 0.0);
#pragma omp parallel for schedule(dynamic, 1) if (chunks > 1)
  for (std::int64_t c = 0; c < chunks; ++c) {
    double s = 0;
    const index_t e = static_cast<index_t>(std::min<std::int64_t>(rows, (c + 1) * kChunk));
    for (index_t r = static_cast<index_t>(c * kChunk); r < e; ++r) s += f(r);
    part[c] = s;
  }
  double s = 0;
  for (double p : part) s += p;
  return s;
}

// Distributes `diff` (+/- 1 per visit) over rows in a coprime stride order.
void adjust_total(std::vector<offset_t>& len, const std::vector<char>& fixed, offset_t diff, offset_t min_len,
                  offset_t max_len) {
  const std::int64_t n = static_cast<std::int64_t>(len.size());
  if (n == 0 || diff == 0) return;
  std::int64_t stride = 7919;
  while (std::gcd(stride, n) != 1) stride += 2;
  std::int64_t pos = 0, idle = 0;
  while (diff != 0 && idle < n) {
    pos = (pos + stride) % n;
    if (!fixed.empty() && fixed[pos]) {
      ++idle;
      continue;
    }
    if (diff > 0 && len[pos] < max_len) {
      ++len[pos];
      --diff;
      idle = 0;
    } else if (diff < 0 && len[pos] > min_len) {
      --len[pos];
      ++diff;
      idle = 0;
    } else
      ++idle;
  }
}

// Heavy tails: a sample of a lognormal has a smaller spread than its law (the tail is barely
// sampled), so the draws (logs in d) are raised to the power p whose sample CV equals want_cv,
// found by bisection in [0.25, 4]; mean: the sample mean of exp(p d).
double tail_power(const double* d, index_t n, double want_cv, double& mean) {
  auto cv_of = [&](double p, double* mean_out) {
    const double m1 = ordered_sum(n, [&](index_t r) { return std::exp(p * d[r]); }) / n;
    const double m2 = ordered_sum(n, [&](index_t r) { return std::exp(2 * p * d[r]); }) / n;
    *mean_out = m1;
    return std::sqrt(std::max(0.0, m2 - m1 * m1)) / std::max(m1, 1e-300);
  };
  double lo = 0.25, hi = 4.0, m1 = 0;
  for (int it = 0; it < 20; ++it) {
    const double mid = 0.5 * (lo + hi);
    (cv_of(mid, &m1) < want_cv ? lo : hi) = mid;
  }
  const double p = 0.5 * (lo + hi);
  cv_of(p, &mean);
  return p;
}

}  // namespace

Lengths row_lengths(const GenSpec& s, index_t cols, offset_t target) {
  const index_t n = s.rows;
  Lengths L;
  L.len.assign(n, 0);
  if (n == 0) return L;
  const double mean = static_cast<double>(target) / n;
  const offset_t max_len = cols;
  const offset_t min_len = std::min<offset_t>(1, max_len);
  std::vector<double> d(n);

  // Circuit: h long rows carry the variance, the short rows the rest of the nonzeros.
  offset_t h = 0, long_len = 0;
  double short_mean = mean;
  const double var_total = static_cast<double>(n) * s.std * s.std;
  const double l0 = std::min(0.9 * cols, 100000.0);
  // Only a variance worth at least a quarter of one long row calls for long rows.
  if (s.kind == Kind::Circuit && var_total >= 0.25 * l0 * l0) {
    h = std::clamp<offset_t>(std::llround(var_total / (l0 * l0)), 1, std::max<offset_t>(1, n / 100));
    long_len = std::min<offset_t>(cols, std::llround(std::sqrt(var_total / h)));
    // Keep at least one entry per short row.
    long_len = std::min<offset_t>(long_len, std::max<offset_t>(1, (target - (n - h)) / h));
    short_mean = static_cast<double>(target - h * long_len) / std::max<offset_t>(1, n - h);
    L.fixed.assign(n, 0);
    for (offset_t j = 0; j < h; ++j) L.fixed[static_cast<std::size_t>((2 * j + 1) * n / (2 * h))] = 1;
  }

  const bool heavy = s.kind == Kind::Powerlaw;
  // Lognormal 1 + D with E[D] = mean - 1 and sd(D) = std: lengths >= 1 with a long tail.
  const double dm = std::max(mean - 1.0, 1e-3);
  const double sig2 = std::log1p((s.std * s.std) / (dm * dm));
  const double mu = std::log(dm) - 0.5 * sig2, sig = std::sqrt(sig2);
  const double short_std = s.kind == Kind::Circuit ? 0.5 * short_mean : s.std;
#pragma omp parallel for schedule(static)
  for (index_t r = 0; r < n; ++r) {
    Rng g = row_rng(s.seed, r, 1);
    d[r] = heavy ? mu + sig * g.normal() : g.normal();  // heavy: the log of the draw
  }
  // Correct to the exact mean (and, for normal draws, the exact std) over the whole matrix.
  const double* dp = d.data();
  const std::vector<char>& fx = L.fixed;
  auto is_free = [&](index_t r) { return fx.empty() || !fx[r]; };
  const double cnt = ordered_sum(n, [&](index_t r) { return is_free(r) ? 1.0 : 0.0; });
  const double sm = ordered_sum(n, [&](index_t r) { return is_free(r) ? dp[r] : 0.0; }) / std::max(cnt, 1.0);
  const double sv =
      ordered_sum(n, [&](index_t r) { return is_free(r) ? (dp[r] - sm) * (dp[r] - sm) : 0.0; }) / std::max(cnt, 1.0);
  const double sd = std::sqrt(sv);
  double target_std = s.kind == Kind::Circuit && h > 0 ? short_std : s.std;
  // Stochastic rounding adds about 1/12 to the variance; take it out beforehand.
  if (target_std * target_std > 1.0 / 12) target_std = std::sqrt(target_std * target_std - 1.0 / 12);

  // Heavy tails: a sample of a lognormal has a smaller spread than its law (the tail is barely
  // sampled), so raise the draws to the power p whose sample CV equals the target CV.
  double pw = 1.0, pm = sm;
  if (heavy && s.std > 0)
    pw = tail_power(dp, n, s.std / dm, pm);
  else if (heavy)
    pm = ordered_sum(n, [&](index_t r) { return std::exp(dp[r]); }) / n;
#pragma omp parallel for schedule(static)
  for (index_t r = 0; r < n; ++r) {
    if (!is_free(r)) {
      L.len[r] = long_len;
      continue;
    }
    double v;
    if (heavy)
      v = 1.0 + std::exp(pw * dp[r]) * (short_mean - 1.0) / std::max(pm, 1e-300);
    else
      v = short_mean + (sd > 0 ? (dp[r] - sm) * (target_std / sd) : 0.0);
    Rng g = row_rng(s.seed, r, 2);
    const double rounded = std::floor(v + g.uniform());  // stochastic rounding keeps the mean
    L.len[r] = std::clamp<offset_t>(static_cast<offset_t>(std::max(rounded, -1.0)), min_len, max_len);
  }
  offset_t sum = 0;
  for (offset_t v : L.len) sum += v;
  adjust_total(L.len, L.fixed, target - sum, min_len, max_len);
  return L;
}

}  // namespace spmv::gen::detail
