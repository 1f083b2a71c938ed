// Plans over a renumbered matrix (src/core/reordered_plan.hpp).
#include "core/reordered_plan.hpp"

#include <spmv/formats/reorder.hpp>

#include <fmt/format.h>

#include <chrono>

#if SPMV_HAVE_CUDA
#include "cuda/vector_ops.hpp"
#endif

namespace spmv::detail {
namespace {

// out = in renumbered (gather: out[i] = in[order[i]]; scatter: out[order[i]] = in[i]), n entries
// of k values, row- or column-major.
template <class T>
void permute_host(const T* in, T* out, const std::vector<index_t>& order, int k, bool col_major, bool scatter,
                  int threads) {
  const std::size_t n = order.size(), kk = static_cast<std::size_t>(k);
#pragma omp parallel for schedule(static) num_threads(threads) if (n * kk > 65536)
  for (std::size_t e = 0; e < n; ++e) {
    const auto o = static_cast<std::size_t>(order[e]);
    for (std::size_t j = 0; j < kk; ++j) {
      const std::size_t at = col_major ? j * n + e : e * kk + j, from = col_major ? j * n + o : o * kk + j;
      if (scatter)
        out[from] = in[at];
      else
        out[at] = in[from];
    }
  }
}

class ReorderedPlan : public Plan {
 public:
  ReorderedPlan(Permutation p, Csr b, const PlanOptions& opt)
      : p_(std::move(p)),
        b_(std::move(b)),
        k_(std::max(1, opt.k)),
        col_major_(opt.layout == Layout::ColMajor),
        threads_(plan_threads(opt)) {}
  ~ReorderedPlan() override {
    if (device_used_) device::synchronize(last_stream_);  // the last product done with the buffers
  }

  void adopt(std::unique_ptr<Plan> inner) { inner_ = std::move(inner); }
  const Csr& matrix() const { return b_; }

  void set_x(std::span<const double> x) override { inner_->set_x(to_new(x, xd_)); }
  void set_x(std::span<const float> x) override { inner_->set_x(to_new(x, xf_)); }
  void run(int times) override { inner_->run(times); }
  void get_y(std::span<double> y) override { get_back(y, yd_); }
  void get_y(std::span<float> y) override { get_back(y, yf_); }
  double time_runs(int times) override { return inner_->time_runs(times); }
  int threads_used() const override { return inner_->threads_used(); }
  bool on_device() const override { return inner_->on_device(); }

 protected:
  void apply(const Operands& o) override {
    const std::size_t n = p_.order.size() * static_cast<std::size_t>(k_);
    if (o.nx != n) throw Error(fmt::format("x has {} values, expected {}", o.nx, n));
    if (o.ny != n) throw Error(fmt::format("y has room for {} values, expected {}", o.ny, n));
    if (o.device) {
      if (o.single)
        device_product(static_cast<const float*>(o.x), static_cast<float*>(o.y), o, dxf_, dyf_);
      else
        device_product(static_cast<const double*>(o.x), static_cast<double*>(o.y), o, dxd_, dyd_);
    } else if (o.single) {
      host_product(static_cast<const float*>(o.x), static_cast<float*>(o.y), o, xf_, yf_);
    } else {
      host_product(static_cast<const double*>(o.x), static_cast<double*>(o.y), o, xd_, yd_);
    }
  }

 private:
  std::size_t values() const { return p_.order.size() * static_cast<std::size_t>(k_); }
  template <class T>
  std::span<const T> to_new(std::span<const T> x, std::vector<T>& buf) {
    if (x.size() != values()) throw Error(fmt::format("x has {} values, expected {}", x.size(), values()));
    buf.resize(x.size());
    permute_host(x.data(), buf.data(), p_.order, k_, col_major_, false, threads_);
    return buf;
  }
  template <class T>
  void get_back(std::span<T> y, std::vector<T>& buf) {
    if (y.size() != values()) throw Error(fmt::format("y has room for {} values, expected {}", y.size(), values()));
    buf.resize(y.size());
    inner_->get_y(std::span<T>(buf));
    permute_host(buf.data(), y.data(), p_.order, k_, col_major_, true, threads_);
  }
  template <class T>
  void host_product(const T* x, T* y, const Operands& o, std::vector<T>& xb, std::vector<T>& yb) {
    xb.resize(o.nx);
    yb.resize(o.ny);
    permute_host(x, xb.data(), p_.order, k_, col_major_, false, threads_);
    if (o.beta != 0) permute_host(y, yb.data(), p_.order, k_, col_major_, false, threads_);
    inner_->multiply(std::span<const T>(xb), std::span<T>(yb), static_cast<T>(o.alpha), static_cast<T>(o.beta));
    permute_host(yb.data(), y, p_.order, k_, col_major_, true, threads_);
  }
  template <class T>
  void device_product([[maybe_unused]] const T* x, [[maybe_unused]] T* y, [[maybe_unused]] const Operands& o,
                      [[maybe_unused]] DeviceVector<T>& xb, [[maybe_unused]] DeviceVector<T>& yb) {
#if SPMV_HAVE_CUDA
    if (!inner_->on_device())
      throw Error("multiply: device vectors given to a plan whose products run on the CPU; pass host vectors");
    // The plan's buffers serve one product at a time: a product on another stream waits for the last.
    if (device_used_ && o.stream != last_stream_) device::synchronize(last_stream_);
    device_used_ = true;
    last_stream_ = o.stream;
    if (!order_) order_ = std::make_unique<cuda::DeviceOrder>(p_.order);
    if (xb.size() != o.nx) xb = DeviceVector<T>(o.nx);
    if (yb.size() != o.ny) yb = DeviceVector<T>(o.ny);
    order_->gather(x, xb.data(), k_, col_major_, o.stream);
    if (o.beta != 0) order_->gather(static_cast<const T*>(y), yb.data(), k_, col_major_, o.stream);
    inner_->multiply(DeviceSpan<const T>(xb.data(), o.nx), DeviceSpan<T>(yb.data(), o.ny), static_cast<T>(o.alpha),
                     static_cast<T>(o.beta), o.stream);
    order_->scatter(static_cast<const T*>(yb.data()), y, k_, col_major_, o.stream);
#else
    throw Error("multiply: device vectors given to a plan without the CUDA backend");
#endif
  }

  Permutation p_;
  Csr b_;  // the renumbered matrix (CPU plans of CSR kernels borrow it)
  int k_;
  bool col_major_;
  int threads_;  // the permutations' on the host
  bool device_used_ = false;
  CudaStream last_stream_ = nullptr;
  std::unique_ptr<Plan> inner_;
  std::vector<double> xd_, yd_;
  std::vector<float> xf_, yf_;
  DeviceVector<double> dxd_, dyd_;
  DeviceVector<float> dxf_, dyf_;
#if SPMV_HAVE_CUDA
  std::unique_ptr<cuda::DeviceOrder> order_;
#endif
};

}  // namespace

std::unique_ptr<Plan> make_reordered_plan(const CsrView& a, const PlanOptions& opt, const PlanMaker& make) {
  const auto t0 = std::chrono::steady_clock::now();
  const ConvertOptions copt = convert_options(opt);
  Permutation p = rcm(a, copt);
  const index_t before = bandwidth(a);
  Csr b = permute(a, p, copt);
  const index_t after = bandwidth(b.view());
  const double made = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  auto plan = std::make_unique<ReorderedPlan>(std::move(p), std::move(b), opt);
  PlanOptions inner = opt;
  inner.reorder = Reorder::None;
  CsrView bv = plan->matrix().view();
  if (a.values_in_float()) {  // a float matrix's values came widened: plans in single or mixed round them back
    bv.val_f32 = {};
  }
  std::unique_ptr<Plan> in = make(bv, inner);
  // What the inner plan reports, and the renumbering's part.
  plan->convert_seconds = in->convert_seconds + made;
  plan->setup_seconds = in->setup_seconds;
  plan->bytes_per_product = in->bytes_per_product;
  plan->stored_entries = in->stored_entries;
  plan->precision = in->precision;
  plan->planning_seconds = in->planning_seconds;
  plan->chosen = in->chosen;
  plan->chosen_threads = in->chosen_threads;
  plan->detail = fmt::format("{}{}reordered rcm: bandwidth {} -> {} ({:.1f} ms)", in->detail,
                             in->detail.empty() ? "" : "; ", before, after, made * 1e3);
  plan->adopt(std::move(in));
  return plan;
}

}  // namespace spmv::detail
