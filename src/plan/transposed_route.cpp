// A transposed plan of kernel "auto": A^T made once then the planner on it, or the scatter kernel on
// A as stored (src/core/transposed_plan.hpp). The scatter makes nothing but runs each product slower;
// the transpose costs its making and a second copy of the matrix. Chosen by the model's cost over
// the products expected, and by the memory budget; on the GPU the scatter adds with atomics, so it
// is a choice only where PlanOptions::kernel.deterministic is off.
#include <spmv/formats/transpose.hpp>

#include <algorithm>
#include <chrono>
#include <fmt/format.h>

#include <spmv/timing.hpp>

#include "core/transposed_plan.hpp"
#include "plan/model_tuning.hpp"

namespace spmv::detail {

namespace {

struct Route {
  bool scatter = false;
  std::string why;
};

// Seconds predicted for making A^T, and for one product of each route.
struct Costs {
  double make = 0, row = 0, scatter = 0;
};

Costs predict(const CsrView& a, Backend b, const PlanOptions& opt) {
  const tuning::TransposeModel m;
  const double nnz = static_cast<double>(a.nnz()), vb = vector_bytes(opt.precision);
  const int threads = b == Backend::Serial ? 1 : plan_threads(opt);
  const double bytes = (4.0 + value_bytes(opt.precision)) * nnz + 8.0 * (a.cols + 1.0) + vb * (a.rows + a.cols) * opt.k;
  Costs c;
  c.make = (m.make_fixed_us + m.make_ns_per_nnz * 1e-3 * nnz / std::min(threads, m.make_threads_useful)) * 1e-6;
  if (b == Backend::Cuda) {
    c.row = (m.gpu_fixed_us + bytes / (m.gpu_gbs * 1e3)) * 1e-6;
    c.scatter = (m.gpu_fixed_us + m.gpu_scatter_lag * bytes / (m.gpu_gbs * 1e3)) * 1e-6;
    return c;
  }
  const double gbs = m.cpu_gbs * std::min(1.0, threads / 16.0);
  const double copies = vb * a.cols * opt.k * 2.0 * threads;  // each thread's copy of y written, then summed
  const double random_us = m.cpu_random_ns_per_nnz * 1e-3 * nnz / threads;
  const auto beyond_cache = [&](index_t n) { return vb * n > m.cpu_core_cache_bytes ? random_us : 0.0; };
  c.row = (m.cpu_fixed_us + bytes / (gbs * 1e3) + beyond_cache(a.rows)) * 1e-6;  // gathers x: A's rows
  c.scatter = (m.cpu_fixed_us + m.cpu_scatter_lag * (bytes + copies) / (gbs * 1e3) + beyond_cache(a.cols)) * 1e-6;
  return c;
}

Route choose(const CsrView& a, Backend b, const PlanOptions& opt) {
  std::string refused;  // why A^T does not fit
  try {
    check_format_memory("the transpose", transpose_bytes(a), a, convert_options(opt));
  } catch (const Unsupported& e) {
    refused = e.what();
  }
  const bool may_scatter = b != Backend::Cuda || !opt.kernel.deterministic;
  if (!refused.empty()) {
    if (!may_scatter)
      throw Unsupported(refused +
                        "; csr-scatter needs no copy of A but adds with atomics: set deterministic=false "
                        "for it");
    return {true, "A^T by scatter: " + refused};
  }
  const Costs c = predict(a, b, opt);
  const double products = static_cast<double>(std::max<long long>(opt.products, 1));
  const double lag = c.scatter / std::max(c.row, 1e-12);
  if (may_scatter && c.scatter <= c.row)
    return {true, fmt::format("A^T by scatter: predicted {:.2f}x a product on A^T, which would gather x of {} "
                              "values at random",
                              lag, a.rows)};
  if (may_scatter && products * (c.scatter - c.row) < c.make)
    return {true, fmt::format("A^T by scatter: {} products do not repay making A^T (predicted {:.2f} ms; the "
                              "scatter {:.1f}x a product on A^T)",
                              opt.products, c.make * 1e3, lag)};
  return {false, may_scatter
                     ? fmt::format("repaid within {} products: the scatter predicted {:.1f}x slower", opt.products, lag)
                     : "the scatter on the GPU adds with atomics (deterministic is set)"};
}

}  // namespace

std::unique_ptr<Plan> plan_transposed(const CsrView& a, Backend b, const PlanOptions& opt, const PlanMaker& make) {
  const auto t0 = std::chrono::steady_clock::now();
  const Route r = choose(a, b, opt);
  if (!r.scatter) return make_transposed_plan(a, opt, make, r.why);
  const double choosing = seconds_since(t0);
  auto plan = make_plan(a, b, "csr-scatter", opt);
  plan->chosen = fmt::format("{}/csr-scatter{}", to_string(b),
                             b == Backend::Omp ? fmt::format(" threads={}", plan_threads(opt)) : "");
  plan->chosen_threads = b == Backend::Omp ? plan_threads(opt) : 0;
  plan->planning_seconds = choosing;
  plan->setup_seconds += choosing;
  plan->detail = r.why + "; " + plan->detail;
  return plan;
}

}  // namespace spmv::detail
