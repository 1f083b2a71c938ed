// Read a matrix and multiply: y = A * x with the kernel the planner picks on the fastest backend.
#include <spmv/spmv.hpp>

#include <cstdio>
#include <vector>

int main(int argc, char** argv) try {
  if (argc != 2) return std::fprintf(stderr, "usage: multiply MATRIX.mtx[.gz]\n"), 2;
  const spmv::Csr a = spmv::io::load_csr(argv[1]);
  const auto plan = spmv::make_plan(a);  // made once: format, kernel, threads chosen for `a`
  std::vector<double> x(a.cols, 1.0), y(a.rows);
  plan->multiply(x, y);  // run as often as needed
  std::printf("%d x %d, %lld nonzeros: y[0] = %.6g (%s)\n", a.rows, a.cols, static_cast<long long>(a.nnz()),
              a.rows > 0 ? y[0] : 0.0, plan->describe().c_str());
} catch (const std::exception& e) {  // a missing or bad file: its message, exit 1
  std::fprintf(stderr, "%s\n", e.what());
  return 1;
}
