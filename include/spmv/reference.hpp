#pragma once
/// @file
/// The accurate reference product and the check every kernel result goes through.
#include <spmv/matrix.hpp>
#include <spmv/plan.hpp>

#include <span>
#include <vector>

namespace spmv {

/// y = A*x accumulated in long double with compensated (Kahan-Babuska) summation, plus
/// bound[i] = sum_j |a_ij * x_j| (the row's condition scale), which the tolerance is derived from.
struct Reference {
  std::vector<double> y;
  std::vector<double> bound;
  std::vector<double> abs_x;  ///< sum_j |x_j| over the row's entries: the scale of a value's absolute rounding
};
Reference reference_product(const CsrView& a, std::span<const double> x);
/// k right-hand sides; x and the returned y/bound use `layout`.
Reference reference_product(const CsrView& a, std::span<const double> x, int k, Layout layout);

struct CheckResult {
  bool passed = true;
  double max_rel_error = 0;     ///< max over components of |y - ref| / |ref| (components with ref != 0)
  double mean_rel_error = 0;    ///< mean of the same
  double max_scaled_error = 0;  ///< max of |y - ref| / (tol_i), passes iff <= 1
  offset_t worst_index = -1;
  offset_t failures = 0;
  offset_t overflows = 0;  ///< components whose terms add up past the double range (not compared)
  std::string message;     ///< first failure, human readable; when passed, a note on overflows or empty
};

/// Component i passes when |y_i - ref_i| <= tol_i: in double c * eps * (len_i + 1) * bound_i (+ a
/// denormal floor); with precision single or mixed the values' rounding to float (and, single, x's
/// and every sum's) is added: see check_product's definition. x is the one the plan was given
/// (a single plan's float x, widened exactly) so that only the product's own error is measured;
/// NaN/Inf in the reference must be reproduced exactly in kind (a row with +inf and -inf terms, or
/// a NaN, is NaN). A finite reference whose terms' magnitudes add up past the double range is an
/// overflow: any non-NaN result passes, counted in `overflows`. `k` and `layout` as above.
CheckResult check_product(const CsrView& a, const Reference& ref, std::span<const double> y, int k = 1,
                          Layout layout = Layout::RowMajor, Precision precision = Precision::Double);

/// One product of `plan` through multiply() in the plan's vector type, checked against the reference:
/// what `spmv run` and the benchmark do before they time a plan. A single plan's x is rounded to float
/// first and x is set to the rounded values, so that the reference sees what the plan saw (a finite
/// value beyond float's range is refused, naming it); y comes back widened to double. `ref`: the
/// reference of that x, where the caller has it already (else computed here).
struct CheckedProduct {
  std::vector<double> y;
  CheckResult check;
};
CheckedProduct checked_product(Plan& plan, const CsrView& a, std::vector<double>& x, int k = 1,
                               Layout layout = Layout::RowMajor, const Reference* ref = nullptr);

/// Deterministic input vectors: "ones", "random" or "random:SEED" (uniform in [-1, 1)).
std::vector<double> make_vector(const std::string& spec, std::size_t n);

}  // namespace spmv
