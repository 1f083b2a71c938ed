#pragma once
// Internal: Reorder::Auto, the planner's choice of renumbering a matrix by RCM before planning it
// (src/plan/reorder_route.cpp).
#include <spmv/plan.hpp>

#include <string>

namespace spmv::detail {

struct ReorderChoice {
  bool rcm = false;
  std::string why;  ///< for the plan's detail; empty where the matrix was not a candidate at all
};
/// Whether a plan of backend b over `a` with `opt` (kernel "auto") repays renumbering by RCM within
/// opt.products, the two permutations of each product counted.
ReorderChoice choose_reorder(const CsrView& a, Backend b, const PlanOptions& opt);

}  // namespace spmv::detail
