// Y = A * X with k right-hand sides in one product (SpMM), X and Y row-major (k values per row),
// checked against the reference product.
#include <spmv/spmv.hpp>

#include <cstdio>
#include <cstdlib>
#include <vector>

int main(int argc, char** argv) try {
  if (argc < 2) return std::fprintf(stderr, "usage: spmm MATRIX.mtx[.gz] [K=8]\n"), 2;
  const spmv::Csr a = spmv::io::load_csr(argv[1]);
  const int k = argc > 2 ? std::atoi(argv[2]) : 8;
  spmv::PlanOptions opt;
  opt.k = k;
  opt.layout = spmv::Layout::RowMajor;
  const auto plan = spmv::make_plan(a, opt);
  std::vector<double> x(static_cast<std::size_t>(a.cols) * k), y(static_cast<std::size_t>(a.rows) * k);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = 1.0 + static_cast<double>(i % 7);
  plan->multiply(x, y);
  const spmv::CheckResult check =
      spmv::check_product(a, spmv::reference_product(a, x, k, opt.layout), y, k, opt.layout);
  std::printf("k = %d: %s (%s)\n", k, check.passed ? "matches the reference" : check.message.c_str(),
              plan->describe().c_str());
  return check.passed ? 0 : 1;
} catch (const std::exception& e) {  // a missing or bad file: its message, exit 1
  std::fprintf(stderr, "%s\n", e.what());
  return 1;
}
