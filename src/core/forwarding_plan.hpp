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
  std::unique_ptr<Plan> inner_;
};

}  // namespace spmv::detail
