// The solvers (spmv/solvers.hpp): the argument checks, the Jacobi preconditioner's diagonal, and
// the iterations on host vectors (OpenMP loops, each vector update fused with the dot products that
// follow it). Device vectors go to src/cuda/solvers.cu, which follows the same recurrences.
#include <spmv/solvers.hpp>
#include <spmv/timing.hpp>

#include <chrono>
#include <cmath>
#include <fmt/format.h>
#include <vector>

#include "solve/device_solvers.hpp"

namespace spmv {

namespace {

void check_args(const char* solver, const Plan& plan, std::size_t b, std::size_t x, std::size_t m, bool device) {
  if (plan.precision == Precision::Single)
    throw Error(fmt::format("{}: the solvers' vectors are double: make the plan in double or mixed precision", solver));
  if (device && !plan.on_device())
    throw Error(fmt::format("{}: device vectors need a plan that runs on the GPU (backend cuda)", solver));
  if (b != x) throw Error(fmt::format("{}: b has {} values, x {}", solver, b, x));
  if (m != 0 && m != b) throw Error(fmt::format("{}: the inverse diagonal has {} values, b {}", solver, m, b));
}

double ratio(double a, double b) { return b != 0 ? a / b : 0.0; }

// Vectors shorter than this are updated on one thread: a parallel region costs more than the loop
// (a 500-row matrix's iteration took 1.5 ms on 16 threads, a few us on one).
constexpr std::ptrdiff_t kParallelMin = 32768;

// Host vectors, the products timed apart where asked.
class HostWork {
 public:
  HostWork(Plan& plan, std::size_t n, const double* m, bool timed) : plan_(plan), n_(n), m_(m), timed_(timed) {}
  double pre(std::size_t i, double v) const { return m_ ? m_[i] * v : v; }
  void product(const std::vector<double>& x, std::vector<double>& y) { product_by(plan_, x, y); }
  // y = P x by another plan of the solve (CGLS's A^T), counted and timed with the plan's own.
  void product_by(Plan& p, const std::vector<double>& x, std::vector<double>& y) {
    const auto t0 = std::chrono::steady_clock::now();
    p.multiply(x, y);
    if (timed_) product_s_ += seconds_since(t0);
    ++products_;
  }
  // r = b - A x
  void residual(std::span<const double> b, std::span<const double> x, std::vector<double>& r) {
    r.assign(b.begin(), b.end());
    plan_.multiply(x, r, -1.0, 1.0);
  }
  SolverResult finish(SolverResult res, double rr, double bb, double goal,
                      std::chrono::steady_clock::time_point t0) const {
    res.seconds = seconds_since(t0);
    const double scale = bb > 0 ? std::sqrt(bb) : 1.0;
    res.residual = std::sqrt(rr) / scale;
    res.converged = std::isfinite(rr) && std::sqrt(rr) <= goal;
    if (res.converged)
      res.stopped = "converged";
    else if (!std::isfinite(rr))
      res.stopped = "breakdown (the residual is not finite)";
    else
      res.stopped = "max_iterations";
    res.product_seconds = product_s_;
    res.products = products_;
    return res;
  }
  std::ptrdiff_t n() const { return static_cast<std::ptrdiff_t>(n_); }

 private:
  Plan& plan_;
  std::size_t n_;
  const double* m_;
  bool timed_;
  double product_s_ = 0;
  int products_ = 0;
};

double goal_of(const SolverOptions& opt, double bb) { return opt.tolerance * (bb > 0 ? std::sqrt(bb) : 1.0); }

SolverResult host_cg(Plan& plan, std::span<const double> b, std::span<double> x, const SolverOptions& opt,
                     const double* m) {
  HostWork w(plan, b.size(), m, opt.time_products);
  const std::ptrdiff_t n = w.n();
  std::vector<double> r, p(b.size()), q(b.size());
  w.residual(b, x, r);
  double rz = 0, rr = 0, bb = 0;
#pragma omp parallel for reduction(+ : rz, rr, bb) if (n > kParallelMin)
  for (std::ptrdiff_t i = 0; i < n; ++i) {
    p[i] = w.pre(i, r[i]);
    rz += r[i] * p[i];
    rr += r[i] * r[i];
    bb += b[i] * b[i];
  }
  const double goal = goal_of(opt, bb);
  SolverResult res;
  const auto t0 = std::chrono::steady_clock::now();
  while (res.iterations < opt.max_iterations && std::isfinite(rr) && std::sqrt(rr) > goal) {
    w.product(p, q);
    double pq = 0;
#pragma omp parallel for reduction(+ : pq) if (n > kParallelMin)
    for (std::ptrdiff_t i = 0; i < n; ++i) pq += p[i] * q[i];
    const double alpha = ratio(rz, pq);
    double rz_new = 0;
    rr = 0;
#pragma omp parallel for reduction(+ : rz_new, rr) if (n > kParallelMin)
    for (std::ptrdiff_t i = 0; i < n; ++i) {
      x[i] += alpha * p[i];
      r[i] -= alpha * q[i];
      rz_new += r[i] * w.pre(i, r[i]);
      rr += r[i] * r[i];
    }
    const double beta = ratio(rz_new, rz);
    rz = rz_new;
#pragma omp parallel for if (n > kParallelMin)
    for (std::ptrdiff_t i = 0; i < n; ++i) p[i] = w.pre(i, r[i]) + beta * p[i];
    ++res.iterations;
  }
  return w.finish(res, rr, bb, goal, t0);
}

SolverResult host_bicgstab(Plan& plan, std::span<const double> b, std::span<double> x, const SolverOptions& opt,
                           const double* m) {
  HostWork w(plan, b.size(), m, opt.time_products);
  const std::ptrdiff_t n = w.n();
  std::vector<double> r, r0, p(b.size(), 0.0), v(b.size(), 0.0), phat(b.size()), shat(b.size()), t(b.size());
  w.residual(b, x, r);
  r0 = r;
  double rho = 0, rr = 0, bb = 0;
#pragma omp parallel for reduction(+ : rho, bb) if (n > kParallelMin)
  for (std::ptrdiff_t i = 0; i < n; ++i) {
    rho += r[i] * r[i];
    bb += b[i] * b[i];
  }
  rr = rho;
  double rho_prev = 1, alpha = 1, omega = 1;
  const double goal = goal_of(opt, bb);
  SolverResult res;
  const auto t0 = std::chrono::steady_clock::now();
  while (res.iterations < opt.max_iterations && std::isfinite(rr) && std::sqrt(rr) > goal) {
    const double beta = ratio(rho, rho_prev) * ratio(alpha, omega);
#pragma omp parallel for if (n > kParallelMin)
    for (std::ptrdiff_t i = 0; i < n; ++i) {
      p[i] = r[i] + beta * (p[i] - omega * v[i]);
      phat[i] = w.pre(i, p[i]);
    }
    w.product(phat, v);
    double r0v = 0;
#pragma omp parallel for reduction(+ : r0v) if (n > kParallelMin)
    for (std::ptrdiff_t i = 0; i < n; ++i) r0v += r0[i] * v[i];
    alpha = ratio(rho, r0v);
#pragma omp parallel for if (n > kParallelMin)
    for (std::ptrdiff_t i = 0; i < n; ++i) {
      r[i] -= alpha * v[i];  // s
      shat[i] = w.pre(i, r[i]);
    }
    w.product(shat, t);
    double tt = 0, ts = 0;
#pragma omp parallel for reduction(+ : tt, ts) if (n > kParallelMin)
    for (std::ptrdiff_t i = 0; i < n; ++i) {
      tt += t[i] * t[i];
      ts += t[i] * r[i];
    }
    omega = ratio(ts, tt);
    double rho_next = 0;
    rr = 0;
#pragma omp parallel for reduction(+ : rr, rho_next) if (n > kParallelMin)
    for (std::ptrdiff_t i = 0; i < n; ++i) {
      x[i] += alpha * phat[i] + omega * shat[i];
      r[i] -= omega * t[i];
      rr += r[i] * r[i];
      rho_next += r0[i] * r[i];
    }
    rho_prev = rho;
    rho = rho_next;
    ++res.iterations;
  }
  return w.finish(res, rr, bb, goal, t0);
}

// CGLS: r = b - A x, s = A^T r, p = s; then q = A p, alpha = |s|^2 / |q|^2, x += alpha p,
// r -= alpha q, s = A^T r, p = s + (|s_new|^2 / |s|^2) p.
SolverResult host_cgls(Plan& a, Plan& at, std::span<const double> b, std::span<double> x, const SolverOptions& opt) {
  const std::ptrdiff_t m = static_cast<std::ptrdiff_t>(b.size()), n = static_cast<std::ptrdiff_t>(x.size());
  HostWork w(a, x.size(), nullptr, opt.time_products);
  std::vector<double> r(b.begin(), b.end()), q(b.size()), s(x.size()), p(x.size());
  a.multiply(x, r, -1.0, 1.0);
  at.multiply(r, s);
  double gamma = 0;
#pragma omp parallel for reduction(+ : gamma) if (n > kParallelMin)
  for (std::ptrdiff_t i = 0; i < n; ++i) {
    p[i] = s[i];
    gamma += s[i] * s[i];
  }
  const double gamma0 = gamma, goal = goal_of(opt, gamma0);
  SolverResult res;
  const auto t0 = std::chrono::steady_clock::now();
  while (res.iterations < opt.max_iterations && std::isfinite(gamma) && std::sqrt(gamma) > goal) {
    w.product(p, q);
    double qq = 0;
#pragma omp parallel for reduction(+ : qq) if (m > kParallelMin)
    for (std::ptrdiff_t i = 0; i < m; ++i) qq += q[i] * q[i];
    const double alpha = ratio(gamma, qq);
#pragma omp parallel for if (n > kParallelMin)
    for (std::ptrdiff_t i = 0; i < n; ++i) x[i] += alpha * p[i];
#pragma omp parallel for if (m > kParallelMin)
    for (std::ptrdiff_t i = 0; i < m; ++i) r[i] -= alpha * q[i];
    w.product_by(at, r, s);
    double next = 0;
#pragma omp parallel for reduction(+ : next) if (n > kParallelMin)
    for (std::ptrdiff_t i = 0; i < n; ++i) next += s[i] * s[i];
    const double beta = ratio(next, gamma);
    gamma = next;
#pragma omp parallel for if (n > kParallelMin)
    for (std::ptrdiff_t i = 0; i < n; ++i) p[i] = s[i] + beta * p[i];
    ++res.iterations;
  }
  return w.finish(res, gamma, gamma0, goal, t0);
}

void check_pair(const Plan& a, const Plan& at, bool device) {
  for (const Plan* p : {&a, &at}) {
    if (p->precision == Precision::Single)
      throw Error("cgls: the solvers' vectors are double: make the plans in double or mixed precision");
    if (device && !p->on_device()) throw Error("cgls: device vectors need plans that run on the GPU (backend cuda)");
  }
}

}  // namespace

std::vector<double> inverse_diagonal(const CsrView& a) {
  std::vector<double> d(static_cast<std::size_t>(a.rows), 1.0);
#pragma omp parallel for schedule(static)
  for (index_t r = 0; r < a.rows; ++r)
    for (offset_t p = a.row_ptr[r]; p < a.row_ptr[r + 1]; ++p)
      if (a.col[p] == r) {
        const double v = a.values_in_float() ? a.val_f32[p] : a.val[p];
        if (v != 0) d[r] = 1.0 / v;
      }
  return d;
}

SolverResult cg(Plan& plan, std::span<const double> b, std::span<double> x, const SolverOptions& opt,
                std::span<const double> inv_diag) {
  check_args("cg", plan, b.size(), x.size(), inv_diag.size(), false);
  return host_cg(plan, b, x, opt, inv_diag.empty() ? nullptr : inv_diag.data());
}

SolverResult bicgstab(Plan& plan, std::span<const double> b, std::span<double> x, const SolverOptions& opt,
                      std::span<const double> inv_diag) {
  check_args("bicgstab", plan, b.size(), x.size(), inv_diag.size(), false);
  return host_bicgstab(plan, b, x, opt, inv_diag.empty() ? nullptr : inv_diag.data());
}

SolverResult cgls(Plan& a, Plan& at, std::span<const double> b, std::span<double> x, const SolverOptions& opt) {
  check_pair(a, at, false);
  return host_cgls(a, at, b, x, opt);
}

SolverResult cgls(Plan& a, Plan& at, DeviceSpan<const double> b, DeviceSpan<double> x, const SolverOptions& opt,
                  CudaStream stream) {
  check_pair(a, at, true);
#ifdef SPMV_HAVE_CUDA
  return cuda::device_cgls(a, at, b, x, opt, stream);
#else
  (void)b, (void)x, (void)opt, (void)stream;
  throw Unsupported("cgls on device vectors: this build has no CUDA backend");
#endif
}

SolverResult cg(Plan& plan, DeviceSpan<const double> b, DeviceSpan<double> x, const SolverOptions& opt,
                DeviceSpan<const double> inv_diag, CudaStream stream) {
  check_args("cg", plan, b.size(), x.size(), inv_diag.size(), true);
#ifdef SPMV_HAVE_CUDA
  return cuda::device_cg(plan, b, x, opt, inv_diag, stream);
#else
  (void)opt, (void)stream;
  throw Unsupported("cg on device vectors: this build has no CUDA backend");
#endif
}

SolverResult bicgstab(Plan& plan, DeviceSpan<const double> b, DeviceSpan<double> x, const SolverOptions& opt,
                      DeviceSpan<const double> inv_diag, CudaStream stream) {
  check_args("bicgstab", plan, b.size(), x.size(), inv_diag.size(), true);
#ifdef SPMV_HAVE_CUDA
  return cuda::device_bicgstab(plan, b, x, opt, inv_diag, stream);
#else
  (void)opt, (void)stream;
  throw Unsupported("bicgstab on device vectors: this build has no CUDA backend");
#endif
}

}  // namespace spmv
