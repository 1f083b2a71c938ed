// What every plan shares: the threads a plan asks for, its conversion options, the host
// multiply() entry points and their staging for plans whose vectors are their own (set_x, run,
// get_y), timing a run, a CSR product's bytes.
#include <spmv/device.hpp>
#include <spmv/plan.hpp>

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <vector>

namespace spmv {

int max_threads() { return std::max(256, 2 * omp_get_num_procs()); }

int resolve_threads(int requested) {
  return std::clamp(requested > 0 ? requested : omp_get_max_threads(), 1, max_threads());
}

int plan_threads(const PlanOptions& opt) { return resolve_threads(opt.threads); }

ConvertOptions convert_options(const PlanOptions& opt) {
  return {plan_threads(opt), opt.memory_budget_bytes, opt.max_ratio_to_csr};
}

void Plan::multiply(std::span<const double> x, std::span<double> y, double alpha, double beta) {
  apply({x.data(), x.size(), y.data(), y.size(), false, false, alpha, beta, nullptr});
}

void Plan::multiply(std::span<const float> x, std::span<float> y, float alpha, float beta) {
  apply({x.data(), x.size(), y.data(), y.size(), true, false, alpha, beta, nullptr});
}

void Plan::multiply(DeviceSpan<const double> x, DeviceSpan<double> y, double alpha, double beta, CudaStream stream) {
  apply({x.data(), x.size(), y.data(), y.size(), false, true, alpha, beta, stream});
}

void Plan::multiply(DeviceSpan<const float> x, DeviceSpan<float> y, float alpha, float beta, CudaStream stream) {
  apply({x.data(), x.size(), y.data(), y.size(), true, true, alpha, beta, stream});
}

namespace {

// y = alpha * p + beta * y; beta == 0 never reads y.
template <class T>
void combine(const std::vector<T>& p, T* y, double alpha, double beta) {
  const auto n = static_cast<std::ptrdiff_t>(p.size());
  const T a = static_cast<T>(alpha), b = static_cast<T>(beta);
#pragma omp parallel for schedule(static) if (n > (1 << 16))
  for (std::ptrdiff_t i = 0; i < n; ++i) y[i] = a * p[i] + (b == T(0) ? T(0) : b * y[i]);
}

template <class T>
void apply_resident(Plan& plan, const void* xp, std::size_t nx, void* yp, std::size_t ny, double alpha, double beta) {
  plan.set_x(std::span<const T>(static_cast<const T*>(xp), nx));
  plan.run(1);
  T* y = static_cast<T*>(yp);
  if (alpha == 1.0 && beta == 0.0) return plan.get_y(std::span<T>(y, ny));
  std::vector<T> p(ny);
  plan.get_y(std::span<T>(p));
  combine(p, y, alpha, beta);
}

}  // namespace

void Plan::apply(const Operands& o) {
  if (o.device)
    throw Error("multiply: this plan runs on the host; x and y must be host memory (std::span), not device memory");
  if (o.single)
    apply_resident<float>(*this, o.x, o.nx, o.y, o.ny, o.alpha, o.beta);
  else
    apply_resident<double>(*this, o.x, o.nx, o.y, o.ny, o.alpha, o.beta);
}

void Plan::set_x(std::span<const float> x) {
  const std::vector<double> wide(x.begin(), x.end());
  set_x(std::span<const double>(wide));
}

void Plan::get_y(std::span<float> y) {
  std::vector<double> wide(y.size());
  get_y(std::span<double>(wide));
  std::transform(wide.begin(), wide.end(), y.begin(), [](double d) { return static_cast<float>(d); });
}

double Plan::time_runs(int times) {
  const auto t0 = std::chrono::steady_clock::now();
  run(times);
  const auto t1 = std::chrono::steady_clock::now();
  return std::chrono::duration<double>(t1 - t0).count();
}

offset_t csr_product_bytes(const CsrView& a, int k, Precision p) {
  return (4 + value_bytes(p)) * a.nnz() + 8 * (static_cast<offset_t>(a.rows) + 1) +
         vector_bytes(p) * (static_cast<offset_t>(a.cols) + a.rows) * k;
}

}  // namespace spmv
