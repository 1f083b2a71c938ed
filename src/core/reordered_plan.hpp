#pragma once
// Internal: plans over a renumbered matrix (PlanOptions::reorder), for make_plan.
#include <spmv/plan.hpp>

#include <memory>

#include "core/transposed_plan.hpp"

namespace spmv::detail {

/// P A P^T made once (the permutation and the renumbered matrix, timed in convert_seconds, checked
/// against opt's memory budget), `make` run on it with opt.reorder None; the plan returned owns
/// both and takes x and gives y in A's numbering: x gathered through the permutation before each
/// product, y scattered back after it (on the device for device vectors).
std::unique_ptr<Plan> make_reordered_plan(const CsrView& a, const PlanOptions& opt, const PlanMaker& make);

}  // namespace spmv::detail
