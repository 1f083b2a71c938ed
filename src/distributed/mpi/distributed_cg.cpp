// Conjugate gradients over MPI ranks on a DistributedPlan (include/spmv/distributed.hpp): each
// rank its blocks of the vectors, every dot product summed over the ranks.
#include <spmv/distributed.hpp>

#include <fmt/format.h>

#include <cmath>
#include <vector>

#include "distributed/mpi/mpi_util.hpp"
#if SPMV_HAVE_CUDA
#include "cuda/vector_ops.hpp"
#endif

namespace spmv {
namespace {

// The recurrence, whatever holds the vectors: V supplies dot (this rank's part), axpy, xpby
// (y = x + b y), residual (r = b - r, r holding A x), copy, `product` (y = A x) and `finish`
// (returns when the work queued is done).
template <class V>
SolverResult cg_over_ranks(DistributedPlan& a, V& v, MPI_Comm comm, const SolverOptions& opt) {
  const auto sum = [comm](double local) {
    double all = 0;
    mpi::check(MPI_Allreduce(&local, &all, 1, MPI_DOUBLE, MPI_SUM, comm), "MPI_Allreduce");
    return all;
  };
  SolverResult res;
  MPI_Barrier(comm);
  const double t0 = MPI_Wtime();
  const auto timed_product = [&](auto in, auto out) {
    const double t = opt.time_products ? MPI_Wtime() : 0;
    v.product(a, in, out);
    ++res.products;
    if (opt.time_products) {
      v.finish();  // on the device: the product done (the dot product after it waits for it anyway)
      res.product_seconds += MPI_Wtime() - t;
    }
  };
  timed_product(v.x, v.r);  // r = A x
  v.residual();             // r = b - A x
  v.copy(v.r, v.p);
  double rr = sum(v.dot(v.r, v.r));
  const double bb = sum(v.dot(v.b, v.b));
  const double stop = opt.tolerance * opt.tolerance * (bb > 0 ? bb : 1.0);
  res.stopped = "max_iterations";
  while (res.iterations < opt.max_iterations) {
    if (rr <= stop) {
      res.converged = true;
      res.stopped = "converged";
      break;
    }
    timed_product(v.p, v.q);
    const double pq = sum(v.dot(v.p, v.q));
    if (!(pq > 0)) {
      res.stopped = fmt::format("breakdown: (p, A p) = {} (A not positive definite?)", pq);
      break;
    }
    const double alpha = rr / pq;
    v.axpy(alpha, v.p, v.x);
    v.axpy(-alpha, v.q, v.r);
    const double rr_new = sum(v.dot(v.r, v.r));
    v.xpby(v.r, rr_new / rr, v.p);
    rr = rr_new;
    ++res.iterations;
  }
  if (!res.converged && rr <= stop) {
    res.converged = true;
    res.stopped = "converged";
  }
  res.residual = std::sqrt(rr / (bb > 0 ? bb : 1.0));
  MPI_Barrier(comm);
  res.seconds = MPI_Wtime() - t0;
  return res;
}

struct HostVectors {
  std::span<const double> b;
  std::span<double> x;
  std::vector<double> r_, p_, q_;
  double *r, *p, *q;
  HostVectors(std::span<const double> b, std::span<double> x)
      : b(b), x(x), r_(b.size()), p_(b.size()), q_(b.size()), r(r_.data()), p(p_.data()), q(q_.data()) {}
  std::size_t n() const { return b.size(); }
  double dot(const double* u, const double* w) const {
    double s = 0;
#pragma omp parallel for reduction(+ : s) schedule(static)
    for (std::size_t i = 0; i < n(); ++i) s += u[i] * w[i];
    return s;
  }
  double dot(std::span<const double> u, std::span<const double> w) const { return dot(u.data(), w.data()); }
  void axpy(double a, const double* u, double* w) const {
#pragma omp parallel for schedule(static)
    for (std::size_t i = 0; i < n(); ++i) w[i] += a * u[i];
  }
  void axpy(double a, const double* u, std::span<double> w) const { axpy(a, u, w.data()); }
  void xpby(const double* u, double c, double* w) const {
#pragma omp parallel for schedule(static)
    for (std::size_t i = 0; i < n(); ++i) w[i] = u[i] + c * w[i];
  }
  void residual() const {
#pragma omp parallel for schedule(static)
    for (std::size_t i = 0; i < n(); ++i) r[i] = b[i] - r[i];
  }
  void copy(const double* u, double* w) const { std::copy(u, u + n(), w); }
  void product(DistributedPlan& a, const double* in, double* out) const {
    a.multiply(std::span<const double>(in, n()), std::span<double>(out, n()));
  }
  void product(DistributedPlan& a, std::span<double> in, double* out) const { product(a, in.data(), out); }
  void finish() const {}
};

#if SPMV_HAVE_CUDA
struct DeviceVectors {
  DeviceSpan<const double> b;
  DeviceSpan<double> x;
  DeviceVector<double> r_, p_, q_;
  double *r, *p, *q;
  CudaStream s;
  DeviceVectors(DeviceSpan<const double> b, DeviceSpan<double> x, CudaStream s)
      : b(b), x(x), r_(b.size()), p_(b.size()), q_(b.size()), r(r_.data()), p(p_.data()), q(q_.data()), s(s) {}
  std::size_t n() const { return b.size(); }
  double dot(const double* u, const double* w) const { return cuda::dot(u, w, n(), s); }
  double dot(DeviceSpan<const double> u, DeviceSpan<const double> w) const { return dot(u.data(), w.data()); }
  void axpy(double a, const double* u, double* w) const { cuda::axpy(a, u, w, n(), s); }
  void axpy(double a, const double* u, DeviceSpan<double> w) const { axpy(a, u, w.data()); }
  void xpby(const double* u, double c, double* w) const { cuda::xpby(u, c, w, n(), s); }
  void residual() const { cuda::x_minus_y(b.data(), r, n(), s); }
  void copy(const double* u, double* w) const { cuda::copy(u, w, n(), s); }
  void product(DistributedPlan& a, const double* in, double* out) const {
    a.multiply(DeviceSpan<const double>(in, n()), DeviceSpan<double>(out, n()), 1.0, 0.0, s);
  }
  void product(DistributedPlan& a, DeviceSpan<double> in, double* out) const { product(a, in.data(), out); }
  void finish() const { device::synchronize(s); }
};
#endif

void check_square(const DistributedPlan& a, std::size_t nb, std::size_t nx) {
  if (a.global_rows() != a.global_cols() || a.x_size() != a.y_size() || a.k() != 1)
    throw Error("cg: a square matrix whose x and y blocks match, k = 1");
  if (nb != static_cast<std::size_t>(a.y_size()) || nx != static_cast<std::size_t>(a.x_size()))
    throw Error(
        fmt::format("cg: b has {} values and x {} on rank {}; this rank's block has {}", nb, nx, a.rank(), a.x_size()));
}

}  // namespace

SolverResult cg(DistributedPlan& a, std::span<const double> b, std::span<double> x, const SolverOptions& opt) {
  check_square(a, b.size(), x.size());
  HostVectors v(b, x);
  return cg_over_ranks(a, v, a.communicator(), opt);
}

SolverResult cg(DistributedPlan& a, DeviceSpan<const double> b, DeviceSpan<double> x, const SolverOptions& opt,
                CudaStream stream) {
  check_square(a, b.size(), x.size());
  if (!a.on_device()) throw Error("cg: device vectors given to a plan whose blocks run on the CPU");
#if SPMV_HAVE_CUDA
  DeviceVectors v(b, x, stream);
  return cg_over_ranks(a, v, a.communicator(), opt);
#else
  (void)opt, (void)stream;
  return {};
#endif
}

}  // namespace spmv
