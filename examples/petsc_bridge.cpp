// PETSc's KSP on our distributed product: a MatShell whose MatMult is a spmv::DistributedPlan,
// solved with CG beside the same solve on PETSc's own MATMPIAIJ of the same rows. Exits 0 when
// both converge within 1% of the same iterations, their residuals agree to 1e-10 over the first
// 20 iterations (later, rounding grows through CG's recurrences differently for the two orders of
// additions) and their solutions within 100 rtol; prints MatMult's time and the time per
// iteration of both.
//
//   mpirun -np 4 petsc_bridge A.mtx.gz|stencil7:N|stencil27:N [--backend omp|cuda] [--rtol 1e-8] [--max-it 20000]
//
// A must be symmetric positive definite (stencilP:N: the P-point Laplacian of an N^3 grid, each
// rank's rows made in place); b = A * ones, x0 = 0, no preconditioner (both solves run
// the same arithmetic but for the product's order of additions).
#include <petscksp.h>
#include <spmv/distributed.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace {

// y = A x through the plan: PETSc's local arrays are the plan's blocks (rows and x alike).
PetscErrorCode shell_mult(Mat m, Vec x, Vec y) {
  spmv::DistributedPlan* plan = nullptr;
  PetscCall(MatShellGetContext(m, &plan));
  const PetscScalar* xa = nullptr;
  PetscScalar* ya = nullptr;
  PetscInt nx = 0, ny = 0;
  PetscCall(VecGetLocalSize(x, &nx));
  PetscCall(VecGetLocalSize(y, &ny));
  PetscCall(VecGetArrayRead(x, &xa));
  PetscCall(VecGetArrayWrite(y, &ya));
  try {  // no C++ exception through PETSc's C frames
    plan->multiply(std::span<const double>(xa, static_cast<std::size_t>(nx)),
                   std::span<double>(ya, static_cast<std::size_t>(ny)));
  } catch (const std::exception& e) {
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_LIB, "spmv: %s", e.what());
  }
  PetscCall(VecRestoreArrayRead(x, &xa));
  PetscCall(VecRestoreArrayWrite(y, &ya));
  return 0;
}

struct Solve {
  PetscInt iterations = 0;
  KSPConvergedReason reason{};
  std::vector<PetscReal> residuals;
  double seconds = 0;
  Vec x = nullptr;
};

PetscErrorCode solve(Mat a, Vec b, PetscReal rtol, PetscInt max_it, Solve& out) {
  KSP ksp;
  PC pc;
  PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
  PetscCall(KSPSetOperators(ksp, a, a));
  PetscCall(KSPSetType(ksp, KSPCG));
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(PCSetType(pc, PCNONE));
  PetscCall(KSPSetTolerances(ksp, rtol, PETSC_DEFAULT, PETSC_DEFAULT, max_it));
  out.residuals.assign(static_cast<std::size_t>(max_it) + 1, 0);
  PetscCall(KSPSetResidualHistory(ksp, out.residuals.data(), max_it + 1, PETSC_TRUE));
  PetscCall(VecDuplicate(b, &out.x));
  PetscCall(VecSet(out.x, 0.0));
  PetscCall(KSPSetUp(ksp));
  MPI_Barrier(PETSC_COMM_WORLD);
  const double t0 = MPI_Wtime();
  PetscCall(KSPSolve(ksp, b, out.x));
  MPI_Barrier(PETSC_COMM_WORLD);
  out.seconds = MPI_Wtime() - t0;
  PetscCall(KSPGetIterationNumber(ksp, &out.iterations));
  PetscCall(KSPGetConvergedReason(ksp, &out.reason));
  PetscInt n = 0;
  PetscCall(KSPGetResidualHistory(ksp, nullptr, &n));
  out.residuals.resize(static_cast<std::size_t>(n));
  PetscCall(KSPDestroy(&ksp));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  PetscCall(PetscInitialize(&argc, &argv, nullptr, nullptr));
  int rank = 0;
  MPI_Comm_rank(PETSC_COMM_WORLD, &rank);
  if (argc < 2 || argv[1][0] == '-') {
    if (rank == 0)
      std::fprintf(stderr, "usage: mpirun -np N %s A.mtx[.gz] [--backend omp|cuda] [--rtol R] [--max-it N]\n", argv[0]);
    PetscCall(PetscFinalize());
    return 2;
  }
  std::string backend = "omp";
  PetscReal rtol = 1e-8;
  PetscInt max_it = 20000;
  for (int i = 2; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--backend")) backend = argv[i + 1];
    if (!std::strcmp(argv[i], "--rtol")) rtol = std::atof(argv[i + 1]);
    if (!std::strcmp(argv[i], "--max-it")) max_it = std::atoi(argv[i + 1]);
  }
  int status = 0;
  try {
    // The rows: rank 0 reads, every rank gets its block; our plan and PETSc's matrix of them.
    const std::string source = argv[1];
    const bool stencil = source.rfind("stencil", 0) == 0 && source.find(':') != std::string::npos;
    const spmv::RankRows rows =
        stencil ? spmv::stencil_rows(PETSC_COMM_WORLD, std::atoi(source.c_str() + source.find(':') + 1),
                                     std::atoi(source.c_str() + 7))
                : spmv::read_rows(PETSC_COMM_WORLD, source);
    spmv::PlanOptions opt;
    opt.products = max_it;
    const auto plan = spmv::DistributedPlan::make(PETSC_COMM_WORLD, rows, spmv::parse_backend(backend), "auto", opt);
    if (rows.rows.nnz() > PETSC_MAX_INT) throw spmv::Error("a rank's rows pass PetscInt's range");
    const PetscInt m = rows.rows.rows, n = plan->x_size();
    std::vector<PetscInt> ptr(rows.rows.row_ptr.begin(), rows.rows.row_ptr.end()),
        col(rows.rows.col.begin(), rows.rows.col.end());
    Mat own, shell;
    PetscCall(MatCreateMPIAIJWithArrays(PETSC_COMM_WORLD, m, n, rows.global_rows, rows.global_cols, ptr.data(),
                                        col.data(), rows.rows.val.data(), &own));
    PetscCall(MatCreateShell(PETSC_COMM_WORLD, m, n, rows.global_rows, rows.global_cols, plan.get(), &shell));
    PetscCall(MatShellSetOperation(shell, MATOP_MULT, reinterpret_cast<void (*)(void)>(shell_mult)));
    Vec ones, b;
    PetscCall(MatCreateVecs(own, &ones, &b));
    PetscCall(VecSet(ones, 1.0));
    PetscCall(MatMult(own, ones, b));

    // The product alone, PETSc's MatMult on each (interleaved rounds, the median of each).
    double product_us[2] = {0, 0};
    {
      Vec y;
      PetscCall(VecDuplicate(b, &y));
      std::vector<double> samples[2];
      for (int round = 0; round < 7; ++round)
        for (int which = 0; which < 2; ++which) {
          MPI_Barrier(PETSC_COMM_WORLD);
          const double t0 = MPI_Wtime();
          for (int i = 0; i < 100; ++i) PetscCall(MatMult(which ? shell : own, ones, y));
          MPI_Barrier(PETSC_COMM_WORLD);
          samples[which].push_back((MPI_Wtime() - t0) / 100 * 1e6);
        }
      for (int which = 0; which < 2; ++which) {
        std::sort(samples[which].begin(), samples[which].end());
        product_us[which] = samples[which][samples[which].size() / 2];
      }
      PetscCall(VecDestroy(&y));
    }

    Solve theirs, ours;
    PetscCall(solve(own, b, rtol, max_it, theirs));
    PetscCall(solve(shell, b, rtol, max_it, ours));
    // Agreement: residuals equal within rounding while rounding has not yet grown through CG's
    // recurrences (the first 20 iterations), the same iterations (1%), solutions within the tolerance.
    const std::size_t common = std::min(theirs.residuals.size(), ours.residuals.size());
    double early = 0, all = 0;
    for (std::size_t i = 0; i < common; ++i) {
      const double d = std::abs(theirs.residuals[i] - ours.residuals[i]) / theirs.residuals[i];
      all = std::max(all, d);
      if (i < 20) early = std::max(early, d);
    }
    Vec diff;
    PetscReal dnorm = 0, xnorm = 0;
    PetscCall(VecDuplicate(theirs.x, &diff));
    PetscCall(VecWAXPY(diff, -1.0, theirs.x, ours.x));
    PetscCall(VecNorm(diff, NORM_2, &dnorm));
    PetscCall(VecNorm(theirs.x, NORM_2, &xnorm));
    const bool converged = theirs.reason > 0 && ours.reason > 0;
    const bool same_iterations =
        std::abs(static_cast<long>(theirs.iterations - ours.iterations)) <= std::max<long>(1, theirs.iterations / 100);
    const bool residuals_agree = early <= 1e-10;
    const bool solutions_agree = dnorm <= 100 * rtol * xnorm;
    if (rank == 0) {
      std::printf("matrix: %s\nranks: %d\nplan: %s\n", argv[1], plan->ranks(), plan->describe().c_str());
      std::printf("MatMult: PETSc MATMPIAIJ %.2f us, spmv MatShell %.2f us (median of 7 rounds of 100)\n",
                  product_us[0], product_us[1]);
      std::printf("PETSc MATMPIAIJ: %d iterations (reason %d), %.2f us/iteration\n",
                  static_cast<int>(theirs.iterations), static_cast<int>(theirs.reason),
                  theirs.seconds / std::max<PetscInt>(1, theirs.iterations) * 1e6);
      std::printf("spmv MatShell:   %d iterations (reason %d), %.2f us/iteration\n", static_cast<int>(ours.iterations),
                  static_cast<int>(ours.reason), ours.seconds / std::max<PetscInt>(1, ours.iterations) * 1e6);
      std::printf("residuals' largest relative difference: %.3g over the first 20 iterations, %.3g over all %zu\n",
                  early, all, common);
      std::printf("|x_spmv - x_petsc| / |x_petsc|: %.3g\n", static_cast<double>(dnorm / xnorm));
    }
    status = converged && same_iterations && residuals_agree && solutions_agree ? 0 : 1;
    if (rank == 0 && status)
      std::printf("FAILED: converged %d, same iterations %d, residuals agree %d, solutions agree %d\n", converged,
                  same_iterations, residuals_agree, solutions_agree);
    PetscCall(VecDestroy(&diff));
    PetscCall(VecDestroy(&theirs.x));
    PetscCall(VecDestroy(&ours.x));
    PetscCall(VecDestroy(&ones));
    PetscCall(VecDestroy(&b));
    PetscCall(MatDestroy(&own));
    PetscCall(MatDestroy(&shell));
  } catch (const std::exception& e) {
    if (rank == 0) std::fprintf(stderr, "error: %s\n", e.what());
    status = 1;
  }
  PetscCall(PetscFinalize());
  return status;
}
