// The kernel registry and make_plan: each backend file provides one register_* function (this list
// is the only place that names them), and a plan is made from a kernel's description after
// validate_plan's checks.
#include <spmv/device.hpp>
#include <spmv/params.hpp>
#include <spmv/plan.hpp>

#include <algorithm>
#include <chrono>
#include <limits>
#include <fmt/format.h>
#include <mutex>
#include <stdexcept>

#include "core/float_range.hpp"
#include "core/forwarding_plan.hpp"
#include "core/register.hpp"
#include "core/reordered_plan.hpp"
#include "plan/reorder_route.hpp"
#include "core/transposed_plan.hpp"

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
  const bool lists_variant = std::find(spec.params.begin(), spec.params.end(), "variant") != spec.params.end();
  if (lists_variant)  // the variant is described by its words, not named
    throw std::logic_error(
        fmt::format("kernel '{}': give its variant words (KernelSpec::variants), not \"variant\"", spec.name));
  if (!spec.variants.empty()) spec.params.push_back("variant");
  for (const std::string& p : spec.params)  // a kernel takes settings the catalog describes
    if (!find_param(p))
      throw std::logic_error(fmt::format("kernel '{}': no setting '{}' in kernel_params()", spec.name, p));
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
  if (known.empty()) throw Unsupported(fmt::format("backend '{}' is not available in this build", to_string(b)));
  throw Unsupported(fmt::format("no kernel '{}' on backend '{}' (available: {})", name, to_string(b), known));
}

void validate_plan(const KernelSpec& spec, const CsrView& a, const PlanOptions& opt,
                   const std::vector<KernelSpec>& registry, bool check_values) {
  const Backend b = spec.backend;
  if (b == Backend::Cuda && device::cuda_device_count() == 0)  // a clean message, not the first CUDA call's error
    throw Unsupported(fmt::format("backend 'cuda': no usable GPU ({})", device::cuda_unavailable_reason()));
  require_real(a, fmt::format("kernel '{}' ({})", spec.name, to_string(b)));
  if (opt.k < 1) throw Unsupported("the number of right-hand sides k must be at least 1");
  if (opt.k > 1 && !spec.spmm)
    throw Unsupported(fmt::format("kernel '{}' ({}) computes one right-hand side only", spec.name, to_string(b)));
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
    throw Unsupported(
        fmt::format("kernel '{}' ({}) in double precision: the matrix's values are in float: plan it in "
                    "single or mixed precision, or widen it with to_double",
                    spec.name, to_string(b)));
  if (check_values && opt.precision != Precision::Double) require_float_range(a);
  for (const ParamSpec& p : kernel_params())
    if (p.get && takes(spec, p.name))
      if (const long long v = p.get(opt); !p.invalid(v).empty())
        throw Unsupported(fmt::format("kernel '{}' ({}): {} {} {}", spec.name, to_string(b), p.name, v, p.invalid(v)));
  if (!spec.variants.empty()) parse_variant(spec.name, spec.variants, opt.kernel.variant);
}

std::unique_ptr<Plan> make_plan(const CsrView& a, Backend b, std::string_view kernel, const PlanOptions& opt) {
  const KernelSpec& spec = get_kernel(b, kernel);
  validate_plan(spec, a, opt);
  return make_validated_plan(spec, a, opt);
}

std::unique_ptr<Plan> make_validated_plan(const KernelSpec& spec, const CsrView& a, const PlanOptions& opt) {
  if (opt.reorder == Reorder::Auto) {  // the planner's choice (kernel auto), else none
    PlanOptions o = opt;
    const detail::ReorderChoice c =
        spec.name == "auto" ? detail::choose_reorder(a, spec.backend, opt) : detail::ReorderChoice{};
    o.reorder = c.rcm ? Reorder::Rcm : Reorder::None;
    std::unique_ptr<Plan> plan = make_validated_plan(spec, a, o);
    if (!c.why.empty()) plan->detail += (plan->detail.empty() ? "" : "; ") + ("reorder auto: " + c.why);
    return plan;
  }
  if (opt.reorder == Reorder::Rcm)  // the renumbered matrix, then this same path on it
    return detail::make_reordered_plan(
        a, opt, [&spec](const CsrView& m, const PlanOptions& o) { return make_validated_plan(spec, m, o); });
  const auto make = [&spec](const CsrView& m, const PlanOptions& o) {
    auto plan = spec.make(m, o);
    plan->precision = o.precision;
    return plan;
  };
  const bool transposed = opt.operation == Operation::Transpose;
  if (transposed && spec.name == "auto") return detail::plan_transposed(a, spec.backend, opt, make);
  // A row kernel reads the rows of op(A), a scatter kernel those of op(A)^T: where that is not A as
  // stored, A^T is made once. A library's kernel takes A as it is.
  const bool copy = !spec.transposes && spec.scatters != transposed;
  return copy ? detail::make_transposed_plan(a, opt, make) : make(a, opt);
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
  throw Unsupported(
      fmt::format("value {:.17g} at row {}, column {} (1-based) does not fit in single precision "
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
  CsrView view(const CsrView32& a) const {
    return {a.rows, a.cols, Field::Real, Symmetry::General, row_ptr_, a.col, a.val, {}, {}};
  }
  void adopt(std::unique_ptr<Plan> p, double widen_seconds) {
    adopt_inner(std::move(p));
    setup_seconds += widen_seconds;
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

}  // namespace spmv
