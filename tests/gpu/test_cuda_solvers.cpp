// The solvers on device vectors (spmv/solvers.hpp): CG on symmetric positive definite and BiCGStab
// on nonsymmetric shared matrices converge to the known solution of A x = A * ones, on the default
// stream and on a stream of the caller's, with about the iterations of the host solvers (the
// device runs one more: it reads each residual one iteration late); the same bits on every run.
#include <gtest/gtest.h>
#include <spmv/io.hpp>
#include <spmv/spmv.hpp>

#include <cuda_runtime.h>

#include <cmath>

#include "test_util.hpp"

using namespace spmv;

namespace {

#define REQUIRE_GPU() \
  ASSERT_GT(device::cuda_device_count(), 0) << "no usable CUDA device: the gpu tests must run on a machine with a GPU"

struct Outcome {
  SolverResult r;
  std::vector<double> x;
  double error = 0;  // max |x - 1|
};

// A x = A * ones from x = 0, with the Jacobi preconditioner; on device vectors where `device`.
Outcome solve(const Csr& a, bool bicg, bool device, cudaStream_t stream = nullptr) {
  const auto plan = make_plan(a, device ? Backend::Cuda : Backend::Omp, "auto");
  const std::size_t n = static_cast<std::size_t>(a.rows);
  std::vector<double> b(n), x(n, 0.0);
  plan->multiply(std::vector<double>(n, 1.0), b);
  const std::vector<double> m = inverse_diagonal(a);
  SolverOptions o;
  o.tolerance = 1e-10;
  o.max_iterations = 5000;
  Outcome run;
  if (device) {
    DeviceVector<double> db(b), dx(x), dm(m);
    run.r = bicg ? bicgstab(*plan, db, dx, o, dm, stream) : cg(*plan, db, dx, o, dm, stream);
    dx.download(x);
  } else {
    run.r = bicg ? bicgstab(*plan, b, x, o, m) : cg(*plan, b, x, o, m);
  }
  for (const double v : x) run.error = std::max(run.error, std::abs(v - 1.0));
  run.x = std::move(x);
  return run;
}

TEST(CudaSolvers, CgAndBicgstabOnDeviceVectors) {
  REQUIRE_GPU();
  for (const auto& [name, bicg] : {std::pair{"bcsstk16", false}, std::pair{"Trefethen_500", false},
                                   std::pair{"cage9", true}, std::pair{"pde2961", true}}) {
    const Csr a = test::shared_matrix(name);
    const Outcome host = solve(a, bicg, false), dev = solve(a, bicg, true);
    ASSERT_TRUE(host.r.converged) << name;
    EXPECT_TRUE(dev.r.converged) << name << ": " << dev.r.stopped << " after " << dev.r.iterations;
    EXPECT_LE(dev.r.residual, 1e-10) << name;
    EXPECT_LT(dev.error, 1e-4) << name;
    EXPECT_GE(dev.r.iterations, host.r.iterations - 2) << name;
    EXPECT_LE(dev.r.iterations, host.r.iterations + 3) << name;
    EXPECT_EQ(dev.r.products, (bicg ? 2 : 1) * dev.r.iterations) << name;
    EXPECT_GT(dev.r.product_seconds, 0) << name;
    EXPECT_LT(dev.r.product_seconds, dev.r.seconds) << name;
  }
}

TEST(CudaSolvers, OnACallersStreamTheSameBitsEveryRun) {
  REQUIRE_GPU();
  const Csr a = test::shared_matrix("bcsstk16");
  cudaStream_t s{};
  ASSERT_EQ(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
  const Outcome first = solve(a, false, true, s), second = solve(a, false, true, s);
  cudaStreamDestroy(s);
  EXPECT_TRUE(first.r.converged);
  EXPECT_EQ(first.r.iterations, second.r.iterations);
  EXPECT_EQ(first.x, second.x);
}

TEST(CudaSolvers, HostVectorsOnAGpuPlanAndMaxIterations) {
  REQUIRE_GPU();
  const Csr a = test::shared_matrix("bcsstk16");
  const auto plan = make_plan(a, Backend::Cuda, "auto");
  const std::size_t n = static_cast<std::size_t>(a.rows);
  std::vector<double> b(n), x(n, 0.0);
  plan->multiply(std::vector<double>(n, 1.0), b);
  SolverOptions o;
  o.max_iterations = 7;
  o.tolerance = 1e-14;
  const SolverResult h = cg(*plan, b, x, o);  // host vectors: every product crosses the bus
  EXPECT_FALSE(h.converged);
  EXPECT_EQ(h.iterations, 7);
  DeviceVector<double> db(b), dx(n);
  const SolverResult d = cg(*plan, db, dx, o);
  EXPECT_FALSE(d.converged);
  EXPECT_EQ(d.iterations, 7);
  EXPECT_EQ(d.stopped, "max_iterations");
  EXPECT_NEAR(d.residual, h.residual, 1e-6 * h.residual);
}

// CGLS on device vectors with a CUDA plan of A and one of A^T: about the host's iterations and
// x = ones on well1033.
TEST(CudaSolvers, CglsOnDeviceVectors) {
  REQUIRE_GPU();
  const Csr a = test::shared_matrix("well1033");
  const std::size_t m = static_cast<std::size_t>(a.rows), n = static_cast<std::size_t>(a.cols);
  PlanOptions po;
  const auto pa = make_plan(a, Backend::Cuda, "auto", po);
  po.operation = Operation::Transpose;
  const auto pat = make_plan(a, Backend::Cuda, "auto", po);
  std::vector<double> b(m), xh(n, 0.0);
  pa->multiply(std::vector<double>(n, 1.0), b);
  const SolverOptions o{.tolerance = 1e-12, .max_iterations = 2000};
  const SolverResult host = cgls(*pa, *pat, b, xh, o);
  DeviceVector<double> db(b), dx(n);
  const SolverResult dev = cgls(*pa, *pat, db, dx, o);
  ASSERT_TRUE(host.converged) << host.stopped;
  EXPECT_TRUE(dev.converged) << dev.stopped << " after " << dev.iterations;
  // CGLS works on A^T A (the condition number squared): the device's dot products, summed by
  // blocks, round differently from the host's, which moves convergence by a few iterations
  // (190 on the host, 187 on the device on the H200).
  EXPECT_GE(dev.iterations, host.iterations - 8);
  EXPECT_LE(dev.iterations, host.iterations + 8);
  EXPECT_EQ(dev.products, 2 * dev.iterations);
  double err = 0;
  for (const double v : dx.to_host()) err = std::max(err, std::abs(v - 1.0));
  EXPECT_LT(err, 1e-6);
}

}  // namespace
