// Least squares, min ||A x - b||, by conjugate gradients on the normal equations A^T A x = A^T b
// (CGLS: A^T A is never formed), with two plans made once: one of A and one of A^T
// (PlanOptions::operation). b = A * ones, so on a matrix of full column rank the answer is ones.
// The vectors stay on the host: on the GPU each product copies them over the bus.
//
//   cgnr MATRIX.mtx[.gz] [omp|cuda|serial] [TOLERANCE=1e-10] [MAX_ITERATIONS=5000]
#include <spmv/spmv.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

double dot(const std::vector<double>& a, const std::vector<double>& b) {
  double s = 0;
  for (std::size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

// y += alpha * x
void axpy(double alpha, const std::vector<double>& x, std::vector<double>& y) {
  for (std::size_t i = 0; i < y.size(); ++i) y[i] += alpha * x[i];
}

}  // namespace

int main(int argc, char** argv) try {
  if (argc < 2) return std::fprintf(stderr, "usage: cgnr MATRIX.mtx[.gz] [omp|cuda|serial] [TOL] [MAXIT]\n"), 2;
  const spmv::Csr a = spmv::io::load_csr(argv[1]);
  const spmv::Backend backend = argc > 2 ? spmv::parse_backend(argv[2]) : spmv::default_backend();
  const double tol = argc > 3 ? std::atof(argv[3]) : 1e-10;
  const int max_it = argc > 4 ? std::atoi(argv[4]) : 5000;
  spmv::PlanOptions po;
  po.products = max_it;
  const auto A = spmv::make_plan(a, backend, "auto", po);
  po.operation = spmv::Operation::Transpose;
  const auto At = spmv::make_plan(a, backend, "auto", po);  // makes A^T once

  const std::size_t m = static_cast<std::size_t>(a.rows), n = static_cast<std::size_t>(a.cols);
  std::vector<double> b(m), x(n, 0.0), r(m), s(n), p(n), q(m);
  A->multiply(std::vector<double>(n, 1.0), b);  // b = A * ones
  r = b;                                        // r = b - A x, x = 0
  At->multiply(r, s);                           // s = A^T r
  p = s;
  double gamma = dot(s, s);
  const double stop = tol * std::sqrt(gamma);
  const auto t0 = std::chrono::steady_clock::now();
  int it = 0;
  while (it < max_it && std::sqrt(gamma) > stop) {
    A->multiply(p, q);  // q = A p
    const double alpha = gamma / dot(q, q);
    axpy(alpha, p, x);
    axpy(-alpha, q, r);
    At->multiply(r, s);  // s = A^T r: the normal equations' residual
    const double next = dot(s, s);
    for (std::size_t i = 0; i < n; ++i) p[i] = s[i] + next / gamma * p[i];
    gamma = next;
    ++it;
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  double err = 0;
  for (const double v : x) err = std::max(err, std::abs(v - 1.0));
  std::printf("%s: %d x %d, %lld nonzeros\n  A:   %s\n  A^T: %s\n", argv[1], a.rows, a.cols,
              static_cast<long long>(a.nnz()), A->describe().c_str(), At->describe().c_str());
  std::printf(
      "cgnr %s after %d iterations: ||A^T r|| / ||A^T b|| %.3g, ||r|| / ||b|| %.3g, max |x - 1| %.3g, "
      "%.2f us per iteration\n",
      std::sqrt(gamma) <= stop ? "converged" : "stopped", it, std::sqrt(gamma) / (stop / tol),
      std::sqrt(dot(r, r) / std::max(dot(b, b), 1e-300)), err, it ? seconds / it * 1e6 : 0.0);
  return std::sqrt(gamma) <= stop ? 0 : 1;
} catch (const std::exception& e) {
  std::fprintf(stderr, "%s\n", e.what());
  return 1;
}
