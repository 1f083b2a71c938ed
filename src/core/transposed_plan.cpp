// A^T in CSR, made once and owned by the plan, and a kernel on it (src/core/transposed_plan.hpp).
#include "core/transposed_plan.hpp"

#include <spmv/formats/transpose.hpp>

#include <chrono>
#include <fmt/format.h>

#include "core/forwarding_plan.hpp"

namespace spmv::detail {

namespace {

class TransposedPlan final : public ForwardingPlan {
 public:
  ~TransposedPlan() override { inner_.reset(); }  // before the transpose it reads
  // A^T in the matrix's value type.
  CsrView make_transpose(const CsrView& a, const ConvertOptions& opt) {
    at_ = transpose_as_stored(a, opt);
    return at_.view();
  }
  void adopt(std::unique_ptr<Plan> p, double transpose_seconds, const std::string& why) {
    adopt_inner(std::move(p));
    convert_seconds += transpose_seconds;
    detail =
        fmt::format("A^T made once ({:.2f} ms{}); {}", transpose_seconds * 1e3, why.empty() ? "" : "; " + why, detail);
  }

 private:
  Transposed at_;
};

}  // namespace

std::unique_ptr<Plan> make_transposed_plan(const CsrView& a, const PlanOptions& opt, const PlanMaker& make,
                                           const std::string& why) {
  auto plan = std::make_unique<TransposedPlan>();
  const auto t0 = std::chrono::steady_clock::now();
  const CsrView at = plan->make_transpose(a, convert_options(opt));
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  PlanOptions inner = opt;
  inner.operation = opt.operation == Operation::Transpose ? Operation::NoTranspose : Operation::Transpose;
  plan->adopt(make(at, inner), seconds, why);
  return plan;
}

}  // namespace spmv::detail
