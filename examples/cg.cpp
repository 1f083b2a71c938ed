// Conjugate gradients with a Jacobi preconditioner on a symmetric positive definite matrix, the
// product A*p through a plan made once (OpenMP or CUDA): the iterative use a plan is made for.
// Solves A x = b for b = A * ones, so the answer is known.
//
//   cg MATRIX.mtx[.gz] [omp|cuda|serial] [TOLERANCE=1e-8] [MAX_ITERATIONS=20000]
#include <spmv/spmv.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

double dot(const std::vector<double>& a, const std::vector<double>& b) {
  double s = 0;
#pragma omp parallel for reduction(+ : s)
  for (std::size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

}  // namespace

int main(int argc, char** argv) try {
  if (argc < 2) return std::fprintf(stderr, "usage: cg MATRIX.mtx[.gz] [omp|cuda|serial] [TOL] [MAXIT]\n"), 2;
  const spmv::Csr a = spmv::io::load_csr(argv[1]);
  const spmv::Backend backend = argc > 2 ? spmv::parse_backend(argv[2]) : spmv::default_backend();
  const double tol = argc > 3 ? std::atof(argv[3]) : 1e-8;
  const int max_it = argc > 4 ? std::atoi(argv[4]) : 20000;
  if (a.rows != a.cols) throw spmv::Error("cg needs a square matrix");

  const std::size_t n = static_cast<std::size_t>(a.rows);
  std::vector<double> inv_diag(n, 1.0);  // Jacobi: 1 / A(i,i)
  for (spmv::index_t r = 0; r < a.rows; ++r)
    for (spmv::offset_t p = a.row_ptr[r]; p < a.row_ptr[r + 1]; ++p)
      if (a.col[p] == r && a.val[p] != 0) inv_diag[r] = 1.0 / a.val[p];

  spmv::PlanOptions opt;
  opt.products = max_it;  // the planner may convert when that many products repay it
  const auto plan = spmv::make_plan(a, backend, "auto", opt);

  std::vector<double> x(n, 0.0), b(n), r(n), z(n), p(n), ap(n);
  plan->multiply(std::vector<double>(n, 1.0), b);  // b = A * ones
  r = b;
  for (std::size_t i = 0; i < n; ++i) p[i] = z[i] = inv_diag[i] * r[i];
  double rz = dot(r, z);
  const double b_norm = std::sqrt(dot(b, b));
  int it = 0;
  double res = std::sqrt(dot(r, r)) / b_norm;
  const auto t0 = std::chrono::steady_clock::now();
  while (it < max_it && res > tol) {
    plan->multiply(p, ap);
    const double alpha = rz / dot(p, ap);
#pragma omp parallel for
    for (std::size_t i = 0; i < n; ++i) {
      x[i] += alpha * p[i];
      r[i] -= alpha * ap[i];
      z[i] = inv_diag[i] * r[i];
    }
    const double rz_next = dot(r, z);
    const double beta = rz_next / rz;
    rz = rz_next;
#pragma omp parallel for
    for (std::size_t i = 0; i < n; ++i) p[i] = z[i] + beta * p[i];
    res = std::sqrt(dot(r, r)) / b_norm;
    ++it;
  }
  const double seconds = spmv::seconds_since(t0);

  // The true residual ||b - A x|| / ||b|| and the error against the known answer.
  plan->multiply(x, ap);
  double true_res = 0, err = 0;
  for (std::size_t i = 0; i < n; ++i) {
    true_res += (b[i] - ap[i]) * (b[i] - ap[i]);
    err = std::max(err, std::abs(x[i] - 1.0));
  }
  std::printf("%s: %d rows, %lld nonzeros, %s\n", argv[1], a.rows, static_cast<long long>(a.nnz()),
              plan->describe().c_str());
  std::printf("%s after %d iterations: relative residual %.3g (true %.3g), max |x - 1| %.3g, %.2f us per iteration\n",
              res <= tol ? "converged" : "NOT converged", it, res, std::sqrt(true_res) / b_norm, err,
              it > 0 ? seconds / it * 1e6 : 0.0);
  return res <= tol ? 0 : 1;
} catch (const std::exception& e) {
  std::fprintf(stderr, "%s\n", e.what());
  return 1;
}
