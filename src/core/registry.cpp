// The kernel registry. Each backend file provides one register_* function; this list is the only
// place that names them.
#include <spmv/device.hpp>
#include <spmv/params.hpp>
#include <spmv/plan.hpp>

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <fmt/format.h>
#include <mutex>
#include <stdexcept>

#include "core/float_range.hpp"
#include "core/forwarding_plan.hpp"
#include "core/register.hpp"

namespace spmv {

namespace {

std::vector<KernelSpec>& storage() {
  static std::vector<KernelSpec> v;
  return v;
}

void register_all() {
  detail::register_auto_kernels();
  detail::register_serial_kernels();
  detail::register_omp_kernels();
#ifdef SPMV_HAVE_CUDA
  detail::register_cuda_auto_kernel();
  detail::register_cuda_kernels();
#endif
}

}  // namespace

void add_kernel(KernelSpec spec) {
  for (const std::string& p : spec.params)  // a kernel takes settings the catalog describes
    if (!find_param(p)) throw std::logic_error(fmt::format("kernel '{}': no setting '{}' in kernel_params()", spec.name, p));
  storage().push_back(std::move(spec));
}

const std::vector<KernelSpec>& kernels() {
  static std::once_flag once;
  std::call_once(once, register_all);
  return storage();
}

const KernelSpec* find_kernel(Backend b, std::string_view name) {
  for (const auto& k : kernels())
    if (k.backend == b && k.name == name) return &k;
  return nullptr;
}

const KernelSpec& get_kernel(Backend b, std::string_view name) {
  if (const KernelSpec* k = find_kernel(b, name)) return *k;
  std::string known;
  for (const auto& k : kernels())
    if (k.backend == b) known += (known.empty() ? "" : ", ") + k.name;
  if (known.empty())
    throw Unsupported(fmt::format("backend '{}' is not available in this build", to_string(b)));
  throw Unsupported(fmt::format("no kernel '{}' on backend '{}' (available: {})", name,
                                to_string(b), known));
}

void validate_plan(const KernelSpec& spec, const CsrView& a, const PlanOptions& opt,
                   const std::vector<KernelSpec>& registry, bool check_values) {
  const Backend b = spec.backend;
  if (b == Backend::Cuda && device::cuda_device_count() == 0)  // a clean message, not the first CUDA call's error
    throw Unsupported(fmt::format("backend 'cuda': no usable GPU ({})", device::cuda_unavailable_reason()));
  require_real(a, fmt::format("kernel '{}' ({})", spec.name, to_string(b)));
  if (opt.k < 1) throw Unsupported("the number of right-hand sides k must be at least 1");
  if (opt.k > 1 && !spec.spmm)
    throw Unsupported(fmt::format("kernel '{}' ({}) computes one right-hand side only",
                                  spec.name, to_string(b)));
  if (!supports(spec, opt.precision)) {
    std::string with;
    for (const auto& k : registry)
      if (k.backend == b && supports(k, opt.precision)) with += (with.empty() ? "" : ", ") + k.name;
    throw Unsupported(fmt::format("kernel '{}' ({}) has no {} precision (kernels that have: {})", spec.name,
                                  to_string(b), to_string(opt.precision), with.empty() ? "none" : with));
  }
  // A float matrix (CsrView::val_f32) is planned in float as it is; double plans would need a
  // widened copy, which is the caller's to make.
  if (a.values_in_float() && opt.precision == Precision::Double)
    throw Unsupported(fmt::format("kernel '{}' ({}) in double precision: the matrix's values are in float: plan it in "
                                  "single or mixed precision, or widen it with to_double",
                                  spec.name, to_string(b)));
  if (check_values && opt.precision != Precision::Double) require_float_range(a);
  for (const ParamSpec& p : kernel_params())
    if (p.get && takes(spec, p.name))
      if (const long long v = p.get(opt); !p.invalid(v).empty())
        throw Unsupported(fmt::format("kernel '{}' ({}): {} {} {}", spec.name, to_string(b), p.name, v, p.invalid(v)));
}

std::unique_ptr<Plan> make_plan(const CsrView& a, Backend b, std::string_view kernel,
                                const PlanOptions& opt) {
  const KernelSpec& spec = get_kernel(b, kernel);
  validate_plan(spec, a, opt);
  auto plan = spec.make(a, opt);
  plan->precision = opt.precision;
  return plan;
}

bool supports(const KernelSpec& spec, Precision p) {
  return std::find(spec.precisions.begin(), spec.precisions.end(), p) != spec.precisions.end();
}

void require_float_range(const CsrView& a) {
  if (a.values_in_float()) return;  // float already: nothing to round
  const double* v = a.val.data();
  const offset_t n = static_cast<offset_t>(a.val.size());
  constexpr double top = std::numeric_limits<float>::max();
  offset_t first = n;
#pragma omp parallel for schedule(static) reduction(min : first) if (n > (1 << 16))
  for (offset_t i = 0; i < n; ++i)
    if (detail::beyond_float(v[i]) && i < first) first = i;
  if (first == n) return;
  const auto row = std::upper_bound(a.row_ptr.begin(), a.row_ptr.end(), first) - a.row_ptr.begin() - 1;
  throw Unsupported(fmt::format("value {:.17g} at row {}, column {} (1-based) does not fit in single precision "
                                "(largest {:.7g}); compute in double precision",
                                v[first], row + 1, a.col[first] + 1, top));
}

std::unique_ptr<Plan> make_plan(const CsrView& a, Backend b, const PlanOptions& opt) {
  return make_plan(a, b, "auto", opt);
}

Backend default_backend() {
  return find_kernel(Backend::Cuda, "auto") && device::cuda_device_count() > 0 ? Backend::Cuda : Backend::Omp;
}

std::unique_ptr<Plan> make_plan(const CsrView& a, const PlanOptions& opt) {
  return make_plan(a, default_backend(), "auto", opt);
}

namespace {

// A plan over a CsrView32: the row offsets widened to 64 bits live here, as long as the plan made
// over them (the inner plan goes first, see the destructor); everything else is forwarded.
class WidenedPlan final : public detail::ForwardingPlan {
 public:
  explicit WidenedPlan(const CsrView32& a) : row_ptr_(a.row_ptr.begin(), a.row_ptr.end()) {}
  ~WidenedPlan() override { inner_.reset(); }  // before row_ptr_, which it may read
  CsrView view(const CsrView32& a) const { return {a.rows, a.cols, Field::Real, Symmetry::General, row_ptr_, a.col, a.val, {}, {}}; }
  void adopt(std::unique_ptr<Plan> p, double widen_seconds) {
    inner_ = std::move(p);
    convert_seconds = inner_->convert_seconds;
    setup_seconds = inner_->setup_seconds + widen_seconds;
    bytes_per_product = inner_->bytes_per_product;
    stored_entries = inner_->stored_entries;
    precision = inner_->precision;
    detail = inner_->detail;
    chosen = inner_->chosen;
    planning_seconds = inner_->planning_seconds;
    chosen_threads = inner_->chosen_threads;
  }

 private:
  std::vector<offset_t> row_ptr_;
};

}  // namespace

std::unique_ptr<Plan> make_plan(const CsrView32& a, Backend b, std::string_view kernel, const PlanOptions& opt) {
  if (a.rows < 0 || a.row_ptr.size() != static_cast<std::size_t>(a.rows) + 1)
    throw Error(fmt::format("row_ptr has {} entries, rows + 1 = {}", a.row_ptr.size(), offset_t{a.rows} + 1));
  const auto t0 = std::chrono::steady_clock::now();
  auto plan = std::make_unique<WidenedPlan>(a);
  const double widen = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  plan->adopt(make_plan(plan->view(a), b, kernel, opt), widen);
  return plan;
}

int max_threads() { return std::max(256, 2 * omp_get_num_procs()); }

int resolve_threads(int requested) { return std::clamp(requested > 0 ? requested : omp_get_max_threads(), 1, max_threads()); }

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
  if (o.single) apply_resident<float>(*this, o.x, o.nx, o.y, o.ny, o.alpha, o.beta);
  else apply_resident<double>(*this, o.x, o.nx, o.y, o.ny, o.alpha, o.beta);
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
