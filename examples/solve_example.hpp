// What the solver examples (cg.cpp, bicgstab.cpp) share: read A, make the plan once, solve
// A x = b for b = A * ones (so the answer is known) with the solver given, on device vectors where
// the plan runs on the GPU (nothing crosses the bus inside the iterations) and host vectors on the
// CPU, then report iterations, residuals, the error and the time per iteration with the products'
// share of it. "rcm": iterate in the matrix's RCM numbering (P A P^T, made once; b and x there
// too), as a user does who keeps their vectors in it: no permutation in any product. The answer is
// still all ones.
//
//   NAME MATRIX.mtx[.gz] [omp|cuda|serial] [TOLERANCE=1e-8] [MAX_ITERATIONS=20000] [mixed] [rcm]
#pragma once
#include <spmv/formats/reorder.hpp>
#include <spmv/spmv.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

template <class Host, class Device>
int solve_example(int argc, char** argv, const char* name, Host host_solver, Device device_solver) try {
  if (argc < 2)
    return std::fprintf(stderr, "usage: %s MATRIX.mtx[.gz] [omp|cuda|serial] [TOL] [MAXIT] [mixed] [rcm]\n", name), 2;
  spmv::Csr a = spmv::io::load_csr(argv[1]);
  const spmv::Backend backend = argc > 2 ? spmv::parse_backend(argv[2]) : spmv::default_backend();
  spmv::SolverOptions opt;
  opt.tolerance = argc > 3 ? std::atof(argv[3]) : 1e-8;
  opt.max_iterations = argc > 4 ? std::atoi(argv[4]) : 20000;
  if (a.rows != a.cols) throw spmv::Error(std::string(name) + " needs a square matrix");

  spmv::PlanOptions po;
  po.products = opt.max_iterations;  // the planner may convert when that many products repay it
  for (int i = 5; i < argc; ++i)
    if (std::strcmp(argv[i], "mixed") == 0) {
      po.precision = spmv::Precision::Mixed;
    } else if (std::strcmp(argv[i], "rcm") == 0) {  // A renumbered once; the solve stays there
      const spmv::index_t before = spmv::bandwidth(a);
      a = spmv::permute(a, spmv::rcm(a));
      po.reorder = spmv::Reorder::None;
      std::printf("in the RCM numbering: bandwidth %d -> %d\n", before, spmv::bandwidth(a));
    } else {
      throw spmv::Error(std::string("unknown argument '") + argv[i] + "' (mixed or rcm)");
    }
  const auto plan = spmv::make_plan(a, backend, "auto", po);
  const std::size_t n = static_cast<std::size_t>(a.rows);
  const std::vector<double> inv_diag = spmv::inverse_diagonal(a);  // Jacobi
  std::vector<double> b(n), x(n, 0.0);
  plan->multiply(std::vector<double>(n, 1.0), b);  // b = A * ones

  spmv::SolverResult r;
  if (plan->on_device()) {  // b, x and the preconditioner on the GPU, once
    spmv::DeviceVector<double> db(b), dx(x), dm(inv_diag);
    r = device_solver(*plan, db, dx, opt, dm);
    dx.download(x);
  } else {
    r = host_solver(*plan, b, x, opt, inv_diag);
  }

  // The true residual ||b - A x|| / ||b|| and the error against the known answer.
  std::vector<double> ax(n);
  plan->multiply(x, ax);
  double res2 = 0, b2 = 0, err = 0;
  for (std::size_t i = 0; i < n; ++i) {
    res2 += (b[i] - ax[i]) * (b[i] - ax[i]);
    b2 += b[i] * b[i];
    err = std::max(err, std::abs(x[i] - 1.0));
  }
  std::printf("%s: %d rows, %lld nonzeros, %s\n", argv[1], a.rows, static_cast<long long>(a.nnz()),
              plan->describe().c_str());
  const double per_it = r.iterations > 0 ? r.seconds / r.iterations : 0.0;
  std::printf("%s on %s vectors: %s after %d iterations: relative residual %.3g (true %.3g), max |x - 1| %.3g\n", name,
              plan->on_device() ? "device" : "host", r.stopped.c_str(), r.iterations, r.residual,
              std::sqrt(res2 / std::max(b2, 1e-300)), err);
  std::printf("%.2f us per iteration, products %.1f%% of it (%d products, %.2f us each)\n", per_it * 1e6,
              r.seconds > 0 ? 100 * r.product_seconds / r.seconds : 0.0, r.products,
              r.products > 0 ? r.product_seconds / r.products * 1e6 : 0.0);
  return r.converged ? 0 : 1;
} catch (const std::exception& e) {
  std::fprintf(stderr, "%s\n", e.what());
  return 1;
}
