// Reorder::Auto. A mesh-like matrix (rows of even length, several entries each) whose columns lie
// far from its rows (a numbering that lost its locality) runs about `lag` times slower than the same
// matrix renumbered by RCM; a graph's rows gain little or lose (tuning::ReorderModel). Renumbered
// where the products expected repay the renumbering's making: each saves the model's product time
// x (lag - 1) less its two permutations of the vectors.
#include "plan/reorder_route.hpp"

#include <spmv/planner.hpp>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <fmt/format.h>

#include "plan/model_tuning.hpp"

namespace spmv::detail {

namespace {

// Mean |column - row| / rows over the entries of `samples` rows spread evenly.
double column_scatter(const CsrView& a, int samples) {
  double sum = 0;
  offset_t count = 0;
  for (int i = 0; i < samples; ++i) {
    const index_t r = static_cast<index_t>(static_cast<offset_t>(a.rows) * i / samples);
    for (offset_t q = a.row_ptr[r]; q < a.row_ptr[r + 1]; ++q, ++count) sum += std::abs(a.col[q] - r);
  }
  return count ? sum / static_cast<double>(count) / a.rows : 0;
}

// The coefficient of variation of the columns' entry counts (a power-law graph's hubs: well above
// 1), on `threads` threads.
double in_degree_cv(const CsrView& a, int threads) {
  std::vector<offset_t> count(static_cast<std::size_t>(a.cols), 0);
  const offset_t nnz = a.nnz();
#pragma omp parallel for schedule(static) num_threads(threads)
  for (offset_t q = 0; q < nnz; ++q) {
    std::atomic_ref<offset_t> c(count[static_cast<std::size_t>(a.col[q])]);
    c.fetch_add(1, std::memory_order_relaxed);
  }
  const double mean = static_cast<double>(nnz) / a.cols;
  double s2 = 0;
#pragma omp parallel for schedule(static) num_threads(threads) reduction(+ : s2)
  for (index_t c = 0; c < a.cols; ++c)
    s2 += std::pow(static_cast<double>(count[static_cast<std::size_t>(c)]) - mean, 2);
  return mean > 0 ? std::sqrt(s2 / a.cols) / mean : 0;
}

}  // namespace

ReorderChoice choose_reorder(const CsrView& a, Backend b, const PlanOptions& opt) {
  const tuning::ReorderModel m;
  if (a.rows != a.cols || a.nnz() <= m.min_nnz) return {};
  const double scatter = column_scatter(a, tuning::value_samples);
  if (scatter < m.min_scatter) return {false, fmt::format("none (columns near their rows: scatter {:.3f})", scatter)};
  const MatrixFeatures f = analyze(a);
  if (f.cv() > m.max_cv || f.mean < m.min_mean)
    return {false, fmt::format("none (rows unlike a mesh's: {:.1f} +- {:.1f} entries)", f.mean, f.std)};
  if (const double cv = in_degree_cv(a, plan_threads(opt)); cv > m.max_cv)
    return {false, fmt::format("none (columns unlike a mesh's: in-degree cv {:.2f})", cv)};
  PlanOptions o = opt;
  o.reorder = Reorder::None;
  const std::vector<Candidate> ranked = rank_candidates(f, b, o);
  if (ranked.empty()) return {};
  const int threads = b == Backend::Serial ? 1 : plan_threads(opt);
  const double share = static_cast<double>(m.fitted_threads) / std::max(1, threads);
  const double per_entry_ns = b == Backend::Cuda ? m.gpu_permute_ns_per_entry : m.cpu_permute_ns_per_entry * share;
  const double k = std::max(1, opt.k);
  const double saved = ranked.front().predicted_s * (m.lag - 1) - per_entry_ns * 1e-9 * (a.rows + a.cols) * k;
  const double make = m.make_ns_per_nnz * 1e-9 * static_cast<double>(a.nnz()) * std::min(share, m.make_max_share);
  if (saved <= 0) return {false, fmt::format("none (the permutations cost more than the renumbering saves a product)")};
  const double repaid = make / saved;
  const bool rcm = static_cast<double>(std::max(1LL, opt.products)) > repaid;
  return {rcm, fmt::format("{} (scattered columns: predicted {:.1f} us saved a product, the renumbering {:.2f} s, "
                           "repaid after {:.0f} of the {} products expected)",
                           rcm ? "rcm" : "none", saved * 1e6, make, repaid, opt.products)};
}

}  // namespace spmv::detail
