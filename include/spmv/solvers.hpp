#pragma once
/// @file
/// Krylov solvers on a plan, where its products run: conjugate gradients (symmetric positive
/// definite A) and BiCGStab (any nonsingular A), with an optional Jacobi preconditioner; and least
/// squares by CGLS on a plan of A and one of A^T. On host
/// vectors (CPU plans: OpenMP loops; CUDA plans copy every product's vectors, so prefer device
/// vectors there) or on device vectors (CUDA plans: every vector, dot product and update stays on
/// the GPU, on the stream given; the scalars of the recurrences too, so that an iteration never waits
/// for the host, which reads the residual one iteration late to decide when to stop).
///
/// The plan's products are y = A*x in its precision; the solvers' vectors and sums are double, so
/// plans of double or mixed precision (float values, double vectors) serve them.
#include <spmv/device.hpp>
#include <spmv/plan.hpp>

#include <span>
#include <string>
#include <vector>

namespace spmv {

struct SolverOptions {
  double tolerance = 1e-8;  ///< stop when ||b - A x|| <= tolerance * ||b|| (the recurrence's residual)
  int max_iterations = 10000;
  /// Time the products apart (CUDA events around each on the device, the steady clock on the host):
  /// SolverResult::product_seconds.
  bool time_products = true;
};

struct SolverResult {
  bool converged = false;
  int iterations = 0;
  double residual = 0;         ///< the recurrence's ||r|| / ||b|| after the last iteration
  double seconds = 0;          ///< the iterations' wall time (setup and the final copy of x excluded)
  double product_seconds = 0;  ///< the products' part of it (0 when not timed)
  int products = 0;            ///< products run by the iterations
  std::string stopped;         ///< why it stopped: "converged", "max_iterations", or the breakdown
};

/// The inverse of A's diagonal (1 where a row has no diagonal entry or a zero one): the Jacobi
/// preconditioner the solvers take.
std::vector<double> inverse_diagonal(const CsrView& a);

/// Conjugate gradients on A x = b, x holding the initial guess and receiving the solution;
/// `inv_diag` (empty: no preconditioner) holds A's inverse diagonal, in the same memory as b.
SolverResult cg(Plan& plan, std::span<const double> b, std::span<double> x, const SolverOptions& opt = {},
                std::span<const double> inv_diag = {});
SolverResult cg(Plan& plan, DeviceSpan<const double> b, DeviceSpan<double> x, const SolverOptions& opt = {},
                DeviceSpan<const double> inv_diag = {}, CudaStream stream = nullptr);
/// BiCGStab (van der Vorst), right preconditioned by `inv_diag` where given.
SolverResult bicgstab(Plan& plan, std::span<const double> b, std::span<double> x, const SolverOptions& opt = {},
                      std::span<const double> inv_diag = {});
SolverResult bicgstab(Plan& plan, DeviceSpan<const double> b, DeviceSpan<double> x, const SolverOptions& opt = {},
                      DeviceSpan<const double> inv_diag = {}, CudaStream stream = nullptr);

/// Least squares, min ||b - A x||, by CGLS: conjugate gradients on A^T A x = A^T b without forming
/// A^T A, each iteration one product of `a` (a plan of A) and one of `at` (a plan of A^T:
/// PlanOptions::operation). b has A's rows, x (the initial guess, receiving the solution) its
/// columns. Stops when ||A^T r|| <= tolerance * ||A^T r0|| (SolverResult::residual is that ratio;
/// r = b - A x, r0 the initial guess's). Both plans on the host, or both on the GPU with device
/// vectors (every vector and scalar on the device, as cg's).
SolverResult cgls(Plan& a, Plan& at, std::span<const double> b, std::span<double> x, const SolverOptions& opt = {});
SolverResult cgls(Plan& a, Plan& at, DeviceSpan<const double> b, DeviceSpan<double> x, const SolverOptions& opt = {},
                  CudaStream stream = nullptr);

}  // namespace spmv
