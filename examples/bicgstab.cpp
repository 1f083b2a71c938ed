// BiCGStab with a Jacobi preconditioner on a nonsymmetric matrix, the products A*p and A*s through
// a plan made once; on the GPU every vector stays on the device.
//
//   bicgstab MATRIX.mtx[.gz] [omp|cuda|serial] [TOLERANCE=1e-8] [MAX_ITERATIONS=20000] [mixed]
#include "solve_example.hpp"

int main(int argc, char** argv) {
  return solve_example(
      argc, argv, "bicgstab",
      [](spmv::Plan& p, const std::vector<double>& b, std::vector<double>& x, const spmv::SolverOptions& o,
         const std::vector<double>& m) { return spmv::bicgstab(p, b, x, o, m); },
      [](spmv::Plan& p, const spmv::DeviceVector<double>& b, spmv::DeviceVector<double>& x,
         const spmv::SolverOptions& o, const spmv::DeviceVector<double>& m) { return spmv::bicgstab(p, b, x, o, m); });
}
