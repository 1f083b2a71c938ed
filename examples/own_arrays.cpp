// A matrix in the caller's own CSR arrays, multiplied without copying them: the 1-D Laplacian
// tridiag(-1, 2, -1) built in place, 32-bit row offsets as many codes (and scipy) keep them.
#include <spmv/spmv.hpp>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 1000000;
  if (n < 2) return std::fprintf(stderr, "usage: own_arrays [ROWS >= 2]\n"), 2;
  std::vector<std::int32_t> row_ptr{0};
  std::vector<std::int32_t> col;
  std::vector<double> val;
  for (int r = 0; r < n; ++r) {
    for (int c = r - 1; c <= r + 1; ++c)
      if (c >= 0 && c < n) col.push_back(c), val.push_back(c == r ? 2.0 : -1.0);
    row_ptr.push_back(static_cast<std::int32_t>(col.size()));
  }
  // The view borrows the arrays (they must outlive the plan); a plan made over it reads col and
  // val in place on the CPU's CSR kernels (64-bit offsets: spmv::CsrView, borrowed as well).
  const spmv::CsrView32 a{.rows = n, .cols = n, .row_ptr = row_ptr, .col = col, .val = val};
  if (const auto e = spmv::csr_structure_error(a); !e.empty()) return std::fprintf(stderr, "%s\n", e.c_str()), 1;
  const auto plan = spmv::make_plan(a, spmv::Backend::Omp);
  std::vector<double> x(n, 1.0), y(n);
  plan->multiply(x, y);  // A * ones = (1, 0, ..., 0, 1)
  double err = std::abs(y[0] - 1) + std::abs(y[n - 1] - 1);
  for (int r = 1; r < n - 1; ++r) err += std::abs(y[r]);
  std::printf("%d x %d Laplacian from the caller's arrays: |A*1 - (1,0,...,0,1)|_1 = %g (%s)\n", n, n, err,
              plan->describe().c_str());
  return err == 0 ? 0 : 1;
}
