#pragma once
// Internal: transposed products (PlanOptions::operation), for make_plan.
#include <spmv/plan.hpp>

#include <functional>
#include <memory>
#include <string>

namespace spmv::detail {

/// make_plan of one kernel over a matrix and options.
using PlanMaker = std::function<std::unique_ptr<Plan>(const CsrView&, const PlanOptions&)>;

/// A^T made once (formats/transpose.hpp, within opt's memory limits), then `make` over it with the
/// other operation (A^T x by a row kernel on A^T; A x by a scatter kernel on A^T); the plan
/// returned owns A^T and reports its making in convert_seconds and its detail (with `why` where given).
std::unique_ptr<Plan> make_transposed_plan(const CsrView& a, const PlanOptions& opt, const PlanMaker& make,
                                           const std::string& why = {});

/// A transposed plan of kernel "auto" (`make`: the planner): A^T made once and the planner run on
/// it, or backend b's "csr-scatter" on A as stored, whichever the model predicts cheaper over
/// opt.products products within the memory budget (src/plan/transposed_route.cpp); the plan's
/// detail says which and why.
std::unique_ptr<Plan> plan_transposed(const CsrView& a, Backend b, const PlanOptions& opt, const PlanMaker& make);

}  // namespace spmv::detail
