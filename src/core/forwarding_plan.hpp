#pragma once
// A plan that runs another one: products (multiply's and the resident set_x, run, get_y,
// time_runs), on_device and threads_used go to the inner plan; what the outer plan reports (its
// public fields) is for its maker to set. Used by "auto" (the planner's choice) and by
// make_plan(CsrView32) (the widened row offsets' owner).
#include <spmv/plan.hpp>

#include <memory>

namespace spmv::detail {

class ForwardingPlan : public Plan {
 public:
  explicit ForwardingPlan(std::unique_ptr<Plan> inner = nullptr) : inner_(std::move(inner)) {}
  void set_x(std::span<const double> x) override { inner_->set_x(x); }
  void set_x(std::span<const float> x) override { inner_->set_x(x); }
  void run(int times) override { inner_->run(times); }
  void get_y(std::span<double> y) override { inner_->get_y(y); }
  void get_y(std::span<float> y) override { inner_->get_y(y); }
  double time_runs(int times) override { return inner_->time_runs(times); }
  int threads_used() const override { return inner_->threads_used(); }
  bool on_device() const override { return inner_->on_device(); }

 protected:
  void apply(const Operands& o) override { inner_->apply(o); }
  /// Takes `p` as the inner plan and reports what it reports (costs, sizes, precision, detail, the
  /// planner's choice); the maker adds its own part after.
  void adopt_inner(std::unique_ptr<Plan> p) {
    inner_ = std::move(p);
    convert_seconds = inner_->convert_seconds;
    setup_seconds = inner_->setup_seconds;
    bytes_per_product = inner_->bytes_per_product;
    stored_entries = inner_->stored_entries;
    precision = inner_->precision;
    detail = inner_->detail;
    chosen = inner_->chosen;
    planning_seconds = inner_->planning_seconds;
    chosen_threads = inner_->chosen_threads;
  }
  std::unique_ptr<Plan> inner_;
};

}  // namespace spmv::detail
