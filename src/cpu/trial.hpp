#pragma once
// Choosing among equivalent ways of a product when a plan is made: the timed trial, the CPU
// kernels' variant grammar, and the choices of the SpMV inner loop and the column-major SpMM path.
#include <spmv/params.hpp>
#include <spmv/plan.hpp>
#include <spmv/timing.hpp>

#include <algorithm>
#include <chrono>
#include <fmt/format.h>
#include <string>
#include <vector>

#include "cpu/tuning.hpp"

namespace spmv::cpu {

// Times n equivalent ways of doing the product when a plan is made: apply(c) switches the plan to
// candidate c, run() does one product. Candidates are timed round-robin (tuning::trial_timing:
// rounds of ~0.1 ms or at least one run each, after a warm-up), so drifting clock speed or
// background load hits all alike; returns the fastest single run of each. Tiny products get many
// runs, so microsecond noise does not decide. After the first round, candidates far slower than
// the fastest (drop_ratio) are left out. now(): the clock in seconds (tests pass one that their
// run() advances).
inline double steady_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
template <class Apply, class Run, class Now = double (*)()>
std::vector<double> trial_candidates(int n, Apply apply, Run run, Now now = steady_seconds) {
  const auto& timing = tuning::trial_timing;
  std::vector<double> best(static_cast<std::size_t>(n), 1e300);
  for (int round = 0; round < timing.rounds; ++round)
    for (int c = 0; c < n; ++c) {
      if (round > 0 && best[c] > timing.drop_ratio * *std::min_element(best.begin(), best.end())) continue;
      apply(c);
      if (round == 0) run();  // warm-up: first touch of y, caches, thread team of this size
      double spent = 0;
      for (int rep = 0; rep < timing.max_runs && (rep < 1 || spent < timing.min_seconds); ++rep) {
        const double t0 = now();
        run();
        const double sec = now() - t0;
        best[c] = std::min(best[c], sec);
        spent += sec;
      }
    }
  return best;
}

// The CPU row kernels' variant words: a schedule (CSR's "csr" only), the SpMV inner loop, and the
// column-major SpMM path: "native" (rows_spmm<false>) or "transpose" (X copied row-major, the
// row-major kernel, Y written back from per-thread tiles: rows_spmm_transposed); row-major and k = 1
// have only the one path, so there that group changes nothing. What is not given is chosen per
// matrix by a timed trial when the plan is made.
inline std::vector<VariantGroup> row_variants(bool schedule) {
  std::vector<VariantGroup> g;
  if (schedule) g.push_back({"schedule", {"dynamic", "balanced"}, "rows dealt in chunks, or split by nonzeros"});
  g.push_back({"inner", {"simd", "scalar"}, "the SpMV inner loop"});
  g.push_back(
      {"column-major", {"native", "transpose"}, "column-major SpMM: X read in place, or copied row-major", true});
  return g;
}
struct RowVariant {
  std::string schedule = "auto";
  int inner = -1;  // -1: trial, 0: scalar, 1: simd
  int via = -1;    // column-major SpMM: -1: trial, 0: native, 1: transpose
};
// The row kernels' words of a variant read against a kernel's groups (which may hold more).
inline RowVariant row_variant(const VariantChoice& c) {
  RowVariant v;
  if (c.given("schedule")) v.schedule = std::string(c["schedule"]);
  if (c.given("inner")) v.inner = c["inner"] == "simd";
  if (c.given("column-major")) v.via = c["column-major"] == "transpose";
  return v;
}
inline RowVariant row_variant(const std::string& text, bool schedule, const std::string& kernel) {
  return row_variant(parse_variant(kernel, row_variants(schedule), text));
}

// Chooses the SpMV inner loop: forced by the variant, else the faster of the two in a trial.
// `set(bool simd)` switches the plan, `run()` does one product. Returns the choice.
template <class Set, class Run>
bool choose_inner(int forced, Set set, Run run) {
  if (forced >= 0) {
    set(forced == 1);
    return forced == 1;
  }
  const auto t = trial_candidates(
      2, [&](int c) { set(c == 1); }, run);  // 0: scalar, 1: simd
  set(t[1] <= t[0]);
  return t[1] <= t[0];
}

// Chooses the column-major SpMM path: forced by the variant, else the faster in a trial.
// `set(bool transpose)` switches the plan, `run()` does one product. Returns the choice and fills
// `trial` with the timings (empty when forced).
template <class Set, class Run>
bool choose_via(int forced, Set set, Run run, std::string& trial) {
  if (forced >= 0) {
    set(forced == 1);
    return forced == 1;
  }
  const auto t = trial_candidates(
      2, [&](int c) { set(c == 1); }, run);  // 0: native, 1: transpose
  trial = fmt::format(" (trial us: native {:.1f}, transpose {:.1f})", t[0] * 1e6, t[1] * 1e6);
  set(t[1] < t[0]);
  return t[1] < t[0];
}

}  // namespace spmv::cpu
