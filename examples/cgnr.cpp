// Least squares, min ||A x - b||, by conjugate gradients on the normal equations A^T A x = A^T b
// (spmv::cgls: A^T A is never formed), with two plans made once: one of A and one of A^T
// (PlanOptions::operation). b = A * ones, so on a matrix of full column rank the answer is ones.
// On the GPU the vectors live on the device (spmv::DeviceVector): nothing crosses the bus per
// iteration; on the CPU they are host vectors.
//
//   cgnr MATRIX.mtx[.gz] [omp|cuda|serial] [TOLERANCE=1e-10] [MAX_ITERATIONS=5000]
#include <spmv/spmv.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

int main(int argc, char** argv) try {
  if (argc < 2) return std::fprintf(stderr, "usage: cgnr MATRIX.mtx[.gz] [omp|cuda|serial] [TOL] [MAXIT]\n"), 2;
  const spmv::Csr a = spmv::io::load_csr(argv[1]);
  const spmv::Backend backend = argc > 2 ? spmv::parse_backend(argv[2]) : spmv::default_backend();
  spmv::SolverOptions opt;
  opt.tolerance = argc > 3 ? std::atof(argv[3]) : 1e-10;
  opt.max_iterations = argc > 4 ? std::atoi(argv[4]) : 5000;
  spmv::PlanOptions po;
  po.products = opt.max_iterations;
  const auto A = spmv::make_plan(a, backend, "auto", po);
  po.operation = spmv::Operation::Transpose;
  const auto At = spmv::make_plan(a, backend, "auto", po);  // A^T: made once, or read as stored

  const std::size_t m = static_cast<std::size_t>(a.rows), n = static_cast<std::size_t>(a.cols);
  std::vector<double> b(m), x(n, 0.0);
  A->multiply(std::vector<double>(n, 1.0), b);  // b = A * ones
  spmv::SolverResult r;
  if (A->on_device()) {
    spmv::DeviceVector<double> db(b), dx(x);
    r = spmv::cgls(*A, *At, db, dx, opt);
    dx.download(x);
  } else {
    r = spmv::cgls(*A, *At, b, x, opt);
  }
  double err = 0;
  for (const double v : x) err = std::max(err, std::abs(v - 1.0));
  std::printf("%s: %d x %d, %lld nonzeros\n  A:   %s\n  A^T: %s\n", argv[1], a.rows, a.cols,
              static_cast<long long>(a.nnz()), A->describe().c_str(), At->describe().c_str());
  std::printf(
      "cgls %s after %d iterations: ||A^T r|| / ||A^T b|| %.3g, max |x - 1| %.3g, %.2f us per iteration "
      "(products %.2f us)%s\n",
      r.stopped.c_str(), r.iterations, r.residual, err, r.iterations ? r.seconds / r.iterations * 1e6 : 0.0,
      r.iterations ? r.product_seconds / r.iterations * 1e6 : 0.0, A->on_device() ? ", device vectors" : "");
  return r.converged ? 0 : 1;
} catch (const std::exception& e) {
  std::fprintf(stderr, "%s\n", e.what());
  return 1;
}
