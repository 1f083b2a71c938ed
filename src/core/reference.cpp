// The accurate reference product and the tolerance check.
#include <spmv/reference.hpp>

#include <cmath>
#include <fmt/format.h>
#include <limits>
#include <random>

#include "core/float_range.hpp"
#include "core/values.hpp"

namespace spmv {

namespace {

// Index of component (i, c) of a rows x k multivector.
inline std::size_t at(std::size_t i, int c, std::size_t n, int k, Layout layout) {
  return layout == Layout::RowMajor ? i * k + c : static_cast<std::size_t>(c) * n + i;
}

// The reference's sums over a's rows, reading its values from `val` (double, or a float matrix's).
template <class V>
void accumulate(const CsrView& a, const V* val, std::span<const double> x, int k, Layout layout, Reference& ref) {
#pragma omp parallel for schedule(dynamic, 64)
  for (index_t r = 0; r < a.rows; ++r) {
    for (int c = 0; c < k; ++c) {
      // Neumaier-compensated summation in long double: exact enough that the reference error is
      // far below any kernel's double-precision rounding. Infinite and NaN terms are kept apart
      // (in the compensation inf - inf would turn a correct +-inf into NaN): the result is NaN for
      // a NaN term or infinities of both signs, else the infinity's sign.
      long double s = 0, comp = 0, b = 0, ax = 0;
      bool nan = false, pos_inf = false, neg_inf = false;
      for (offset_t p = a.row_ptr[r]; p < a.row_ptr[r + 1]; ++p) {
        const double xj = x[at(a.col[p], c, a.cols, k, layout)];
        const long double t = static_cast<long double>(val[p]) * static_cast<long double>(xj);
        ax += std::fabs(static_cast<long double>(xj));
        if (!std::isfinite(t)) {
          nan |= std::isnan(t);
          pos_inf |= t > 0;
          neg_inf |= t < 0;
          continue;
        }
        const long double u = s + t;
        if (std::fabs(s) >= std::fabs(t))
          comp += (s - u) + t;
        else
          comp += (t - u) + s;
        s = u;
        b += std::fabs(t);
      }
      const std::size_t o = at(r, c, a.rows, k, layout);
      constexpr double inf = std::numeric_limits<double>::infinity();
      if (nan || (pos_inf && neg_inf))
        ref.y[o] = std::numeric_limits<double>::quiet_NaN();
      else if (pos_inf || neg_inf)
        ref.y[o] = pos_inf ? inf : -inf;
      else
        ref.y[o] = static_cast<double>(s + comp);
      if (nan || pos_inf || neg_inf) b = inf;
      ref.bound[o] = static_cast<double>(b);
      ref.abs_x[o] = static_cast<double>(ax);
    }
  }
}

}  // namespace

Reference reference_product(const CsrView& a, std::span<const double> x) {
  return reference_product(a, x, 1, Layout::RowMajor);
}

Reference reference_product(const CsrView& a, std::span<const double> x, int k, Layout layout) {
  require_real(a, "the reference product");
  if (x.size() != static_cast<std::size_t>(a.cols) * k)
    throw Error(fmt::format("x has {} values, expected {} (cols {} x k {})", x.size(),
                            static_cast<std::size_t>(a.cols) * k, a.cols, k));
  Reference ref;
  ref.y.assign(static_cast<std::size_t>(a.rows) * k, 0.0);
  ref.bound.assign(ref.y.size(), 0.0);
  ref.abs_x.assign(ref.y.size(), 0.0);
  // The values in their stored type: a float matrix's are widened exactly.
  detail::visit_values(a, [&](const auto* val) { accumulate(a, val, x, k, layout, ref); });
  return ref;
}

CheckResult check_product(const CsrView& a, const Reference& ref, std::span<const double> y, int k, Layout layout,
                          Precision precision) {
  CheckResult res;
  if (y.size() != ref.y.size()) {
    res.passed = false;
    res.failures = 1;
    res.message = fmt::format("result has {} values, expected {}", y.size(), ref.y.size());
    return res;
  }
  // Unit round-offs: of the sums (float for single), and of each stored value (float for single
  // and mixed: |fl(a) - a| <= u|a| + 2^-149 (below FLT_MIN the spacing of float's denormals), at
  // most u * bound + 2^-149 * sum|x_j| over a row); a single plan's x was rounded before the
  // reference saw it. The floor: a denormal result of the accumulator's type.
  constexpr double eps = std::numeric_limits<double>::epsilon();
  constexpr double eps_f = std::numeric_limits<float>::epsilon();
  const bool single = precision == Precision::Single;
  const double sum_eps = single ? eps_f : eps;
  const double value_eps = precision == Precision::Double ? 0.0 : eps_f;
  const double value_tiny = precision == Precision::Double ? 0.0 : std::ldexp(1.0, -149);
  const double floor =
      single ? static_cast<double>(std::numeric_limits<float>::min()) : std::numeric_limits<double>::min();
  const double top =
      single ? static_cast<double>(std::numeric_limits<float>::max()) : std::numeric_limits<double>::max();
  double sum_rel = 0;
  offset_t n_rel = 0;
  for (index_t r = 0; r < a.rows; ++r) {
    const offset_t len = a.row_length(r);
    for (int c = 0; c < k; ++c) {
      const std::size_t o = at(r, c, a.rows, k, layout);
      const double want = ref.y[o], got = y[o];
      bool ok;
      double scaled = 0;
      if (!std::isfinite(want)) {
        // NaN must stay NaN; an infinity must keep its sign.
        ok = std::isnan(want) ? std::isnan(got) : got == want;
      } else if (!std::isfinite(ref.bound[o]) || ref.bound[o] > top) {
        // Finite, but the row's terms add up past the accumulator's range: a kernel's partial sums
        // may overflow (1e308 + 1e308 - 1e308 is inf in double, 1e308 exactly): any finite value or
        // infinity passes, and the component is counted as an overflow. In float, partial sums of
        // both signs may overflow to +inf and -inf and meet (a tree reduction): NaN passes too.
        ok = single || !std::isnan(got);
        ++res.overflows;
      } else {
        // Any summation order is within about len*eps*sum|a_ij x_j| of the exact sum (Higham,
        // ch. 3); allow 2x that, plus the values' rounding, plus a floor per term for denormals.
        const double tol = 2.0 * (sum_eps * static_cast<double>(len + 1) + value_eps) * ref.bound[o] +
                           2.0 * value_tiny * ref.abs_x[o] + floor * static_cast<double>(len + 1);
        const double err = std::fabs(got - want);
        ok = err <= tol;  // false for NaN got
        scaled = err / tol;
        if (want != 0) {
          const double rel = err / std::fabs(want);
          if (std::isfinite(rel)) {
            res.max_rel_error = std::max(res.max_rel_error, rel);
            sum_rel += rel;
            ++n_rel;
          }
        }
      }
      if (!std::isfinite(scaled)) scaled = std::numeric_limits<double>::infinity();
      if (!ok) {
        if (res.failures == 0) {
          res.worst_index = static_cast<offset_t>(o);
          res.message = fmt::format(
              "row {} (rhs {}): got {:.17g}, reference {:.17g}, "
              "row bound {:.3g}, row length {}",
              r, c, got, want, ref.bound[o], len);
        }
        ++res.failures;
        res.passed = false;
      }
      res.max_scaled_error = std::max(res.max_scaled_error, scaled);
    }
  }
  res.mean_rel_error = n_rel ? sum_rel / static_cast<double>(n_rel) : 0.0;
  if (res.passed && res.overflows)
    res.message = fmt::format("{} component{} overflow the {} range in their partial sums: not compared", res.overflows,
                              res.overflows == 1 ? "" : "s", single ? "float" : "double");
  return res;
}

std::vector<double> make_vector(const std::string& spec, std::size_t n) {
  std::vector<double> v(n);
  if (spec == "ones") {
    std::fill(v.begin(), v.end(), 1.0);
    return v;
  }
  if (spec == "random" || spec.rfind("random:", 0) == 0) {
    std::uint64_t seed = 42;
    if (spec.size() > 7) {
      try {
        std::size_t used = 0;
        seed = std::stoull(spec.substr(7), &used);
        if (used != spec.size() - 7) throw std::invalid_argument("trailing");
      } catch (const std::exception&) {
        throw Error(fmt::format("bad vector spec '{}': expected random:SEED with an integer seed", spec));
      }
    }
    std::mt19937_64 gen(seed);
    std::uniform_real_distribution<double> dist(-1.0, 1.0);
    for (auto& e : v) e = dist(gen);
    return v;
  }
  throw Error(fmt::format("bad vector spec '{}': expected ones, random, random:SEED or a file", spec));
}

CheckedProduct checked_product(Plan& plan, const CsrView& a, std::vector<double>& x, int k, Layout layout,
                               const Reference* ref) {
  CheckedProduct r;
  r.y.assign(static_cast<std::size_t>(a.rows) * k, 0.0);
  if (plan.precision == Precision::Single) {
    detail::require_x_in_float_range(x);
    std::vector<float> xf(x.begin(), x.end()), yf(r.y.size());
    x.assign(xf.begin(), xf.end());
    plan.multiply(std::span<const float>(xf), std::span<float>(yf));
    std::copy(yf.begin(), yf.end(), r.y.begin());
  } else {
    plan.multiply(x, r.y);  // mixed: double x and y, float values (the check allows their rounding)
  }
  const Reference own = ref ? Reference{} : reference_product(a, x, k, layout);
  r.check = check_product(a, ref ? *ref : own, r.y, k, layout, plan.precision);
  return r;
}

}  // namespace spmv
