// The solvers (spmv/solvers.hpp) on host vectors: CG on symmetric positive definite shared
// matrices and BiCGStab on nonsymmetric ones converge to the known solution of A x = A * ones,
// with and without the Jacobi preconditioner, in double and mixed precision; the iteration limit
// and the refusals. The same on device vectors: tests/gpu/test_cuda_solvers.cpp.
#include <gtest/gtest.h>
#include <spmv/io.hpp>
#include <spmv/spmv.hpp>

#include <cmath>

#include "test_util.hpp"

using namespace spmv;

namespace {

struct Solved {
  SolverResult r;
  double error = 0;  // max |x - 1|
  double true_residual = 0;
};

// Solves A x = A * ones from x = 0 on `backend` with host vectors.
template <class Solver>
Solved solve(const Csr& a, Solver solver, Backend backend, bool jacobi, Precision p = Precision::Double,
             double tol = 1e-10, int max_it = 5000) {
  PlanOptions po;
  po.precision = p;
  po.threads = 2;
  const auto plan = make_plan(a, backend, "auto", po);
  const std::size_t n = static_cast<std::size_t>(a.rows);
  std::vector<double> b(n), x(n, 0.0), ax(n);
  plan->multiply(std::vector<double>(n, 1.0), b);
  const std::vector<double> m = jacobi ? inverse_diagonal(a) : std::vector<double>{};
  SolverOptions o;
  o.tolerance = tol;
  o.max_iterations = max_it;
  Solved s{solver(*plan, b, x, o, m)};
  plan->multiply(x, ax);
  double r2 = 0, b2 = 0;
  for (std::size_t i = 0; i < n; ++i) {
    s.error = std::max(s.error, std::abs(x[i] - 1.0));
    r2 += (b[i] - ax[i]) * (b[i] - ax[i]);
    b2 += b[i] * b[i];
  }
  s.true_residual = std::sqrt(r2 / b2);
  return s;
}

const auto kCg = [](Plan& p, std::span<const double> b, std::span<double> x, const SolverOptions& o,
                    std::span<const double> m) { return cg(p, b, x, o, m); };
const auto kBicgstab = [](Plan& p, std::span<const double> b, std::span<double> x, const SolverOptions& o,
                          std::span<const double> m) { return bicgstab(p, b, x, o, m); };

TEST(Solvers, CgConvergesOnSpdMatrices) {
  for (const char* name : {"bcsstk16", "Trefethen_500"})
    for (const bool jacobi : {false, true}) {
      const Csr a = test::shared_matrix(name);
      const Solved s = solve(a, kCg, Backend::Omp, jacobi);
      EXPECT_TRUE(s.r.converged) << name << " jacobi=" << jacobi << ": " << s.r.stopped << " after " << s.r.iterations;
      EXPECT_EQ(s.r.stopped, "converged");
      EXPECT_LE(s.r.residual, 1e-10);
      EXPECT_LT(s.true_residual, 1e-8) << name;
      EXPECT_LT(s.error, 1e-4) << name << " jacobi=" << jacobi;
      EXPECT_GT(s.r.iterations, 1);
      EXPECT_EQ(s.r.products, s.r.iterations);  // one product an iteration
      EXPECT_GT(s.r.product_seconds, 0);
      EXPECT_LE(s.r.product_seconds, s.r.seconds);
    }
}

// Jacobi helps on bcsstk16 (its diagonal spans orders of magnitude): fewer iterations.
TEST(Solvers, JacobiCutsIterationsOnBadlyScaledRows) {
  const Csr a = test::shared_matrix("bcsstk16");
  const Solved plain = solve(a, kCg, Backend::Omp, false), jacobi = solve(a, kCg, Backend::Omp, true);
  ASSERT_TRUE(plain.r.converged && jacobi.r.converged);
  EXPECT_LT(jacobi.r.iterations, plain.r.iterations);
}

TEST(Solvers, BicgstabConvergesOnNonsymmetricMatrices) {
  for (const char* name : {"cage9", "pde2961"}) {
    const Csr a = test::shared_matrix(name);
    for (const bool jacobi : {false, true}) {
      const Solved s = solve(a, kBicgstab, Backend::Omp, jacobi);
      EXPECT_TRUE(s.r.converged) << name << " jacobi=" << jacobi << ": " << s.r.stopped << " after " << s.r.iterations;
      EXPECT_LT(s.true_residual, 1e-8) << name;
      EXPECT_LT(s.error, 1e-6) << name << " jacobi=" << jacobi;
      EXPECT_EQ(s.r.products, 2 * s.r.iterations);  // two products an iteration
    }
  }
}

// A mixed plan (float values) serves the solver's double vectors: it converges to the float
// matrix's solution, within float's rounding of the values of the known answer.
TEST(Solvers, MixedPrecisionPlan) {
  const Csr a = test::shared_matrix("bcsstk16");
  const Solved s = solve(a, kCg, Backend::Omp, true, Precision::Mixed, 1e-9);
  EXPECT_TRUE(s.r.converged) << s.r.stopped;
  EXPECT_LT(s.error, 1e-2);
  EXPECT_GT(s.error, 0);
}

TEST(Solvers, IterationLimitAndRefusals) {
  const Csr a = test::shared_matrix("bcsstk16");
  const Solved s = solve(a, kCg, Backend::Omp, false, Precision::Double, 1e-12, 5);
  EXPECT_FALSE(s.r.converged);
  EXPECT_EQ(s.r.iterations, 5);
  EXPECT_EQ(s.r.stopped, "max_iterations");
  const std::size_t n = static_cast<std::size_t>(a.rows);
  std::vector<double> b(n, 1.0), x(n), short_x(n - 1);
  PlanOptions single;
  single.precision = Precision::Single;
  auto sp = make_plan(a, Backend::Omp, "csr", single);
  try {
    cg(*sp, b, x);
    ADD_FAILURE() << "a single-precision plan accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("make the plan in double or mixed precision"), std::string::npos) << e.what();
  }
  auto plan = make_plan(a, Backend::Omp, "csr");
  EXPECT_THROW(bicgstab(*plan, b, short_x), Error);
  try {
    cg(*plan, DeviceSpan<const double>(b.data(), n), DeviceSpan<double>(x.data(), n));
    ADD_FAILURE() << "device vectors accepted by a CPU plan";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("device vectors need a plan that runs on the GPU"), std::string::npos)
        << e.what();
  }
  // b = 0: x = 0 at once.
  std::vector<double> zero(n, 0.0), x0(n, 0.0);
  const SolverResult z = cg(*plan, zero, x0);
  EXPECT_TRUE(z.converged);
  EXPECT_EQ(z.iterations, 0);
}

TEST(Solvers, InverseDiagonal) {
  Csr a;
  a.rows = a.cols = 3;
  a.row_ptr = {0, 2, 3, 4};
  a.col = {0, 1, 0, 2};
  a.val = {4.0, 1.0, 2.0, -0.5};
  EXPECT_EQ(inverse_diagonal(a), (std::vector<double>{0.25, 1.0, -2.0}));  // row 1 has no diagonal
}

// Least squares by CGLS with a plan of A and one of A^T: on well1033 (1033 x 320, full column
// rank) b = A * ones has x = ones as its exact least-squares solution; on a matrix with more
// equations than consistent, the solution satisfies the normal equations A^T (b - A x) = 0.
TEST(Solvers, CglsSolvesLeastSquaresWithPlansOfAAndItsTranspose) {
  const Csr a = test::shared_matrix("well1033");
  const std::size_t m = static_cast<std::size_t>(a.rows), n = static_cast<std::size_t>(a.cols);
  for (const Backend backend : {Backend::Serial, Backend::Omp}) {
    PlanOptions po{.threads = 2};
    const auto pa = make_plan(a, backend, "auto", po);
    po.operation = Operation::Transpose;
    const auto pat = make_plan(a, backend, "auto", po);
    std::vector<double> b(m), x(n, 0.0);
    pa->multiply(std::vector<double>(n, 1.0), b);
    const SolverResult r = cgls(*pa, *pat, b, x, {.tolerance = 1e-12, .max_iterations = 2000});
    EXPECT_TRUE(r.converged) << r.stopped;
    EXPECT_LE(r.residual, 1e-12);
    EXPECT_EQ(r.products, 2 * r.iterations);
    double err = 0;
    for (const double v : x) err = std::max(err, std::abs(v - 1.0));
    EXPECT_LT(err, 1e-6) << to_string(backend);
    // b not in A's range: A^T (b - A x) = 0 at the solution, b - A x itself not.
    for (std::size_t i = 0; i < m; i += 7) b[i] += 1.0;
    std::fill(x.begin(), x.end(), 0.0);
    const SolverResult r2 = cgls(*pa, *pat, b, x, {.tolerance = 1e-12, .max_iterations = 2000});
    EXPECT_TRUE(r2.converged) << r2.stopped;
    std::vector<double> res = b, normal(n), atb(n);
    pa->multiply(x, res, -1.0, 1.0);
    pat->multiply(res, normal);
    pat->multiply(b, atb);
    double nn = 0, rr = 0, bb = 0;
    for (const double v : normal) nn += v * v;
    for (const double v : res) rr += v * v;
    for (const double v : atb) bb += v * v;
    EXPECT_GT(std::sqrt(rr), 1.0);                    // inconsistent: a residual remains
    EXPECT_LT(std::sqrt(nn), 1e-10 * std::sqrt(bb));  // ... orthogonal to A's columns
  }
  // Single-precision plans are refused (the vectors are double), as are device vectors on CPU plans.
  const auto single = make_plan(a, Backend::Omp, "csr", {.precision = Precision::Single});
  std::vector<double> b(m, 1.0), x(n, 0.0);
  EXPECT_THROW(cgls(*single, *single, b, x), Error);
}

}  // namespace
