#pragma once
// Internal: the transposed product by an explicit transpose (PlanOptions::operation), for make_plan.
#include <spmv/plan.hpp>

#include <functional>
#include <memory>
#include <string_view>

namespace spmv::detail {

/// A^T made once (formats/transpose.hpp, within opt's memory limits), then `make` (make_plan of the
/// kernel) over it with the operation A; the plan returned owns A^T and reports its making in
/// convert_seconds and its detail.
std::unique_ptr<Plan> make_transposed_plan(
    const CsrView& a, const PlanOptions& opt,
    const std::function<std::unique_ptr<Plan>(const CsrView&, const PlanOptions&)>& make);

}  // namespace spmv::detail
