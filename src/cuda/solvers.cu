// The solvers on device vectors (spmv/solvers.hpp): every vector update fused with the dot products
// that follow it into one kernel, the recurrences' scalars kept on the device (each kernel reads
// the ones it needs), the dot products reduced in a fixed order (the same bits on every run), and
// the host reading the residual one iteration late through pinned memory, so that it queues
// iteration i+1 while the GPU runs iteration i.
#include <spmv/solvers.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>

#include <spmv/timing.hpp>

#include "cuda/csr_device.cuh"
#include "solve/device_solvers.hpp"

namespace spmv::cuda {

namespace {

constexpr int kBlock = 256;
constexpr int kMaxBlocks = 1024;
constexpr int kMaxDots = 3;

// The scalars on the device, by slot.
enum Slot : int {
  kBB,   // ||b||^2
  kRR,   // ||r||^2 after the last update
  kRZ0,  // CG: (r, M r), by iteration parity (two slots)
  kRZ1,
  kPQ,    // CG: (p, A p)
  kRho0,  // BiCGStab: (r0, r), by iteration parity (two slots)
  kRho1,
  kAlpha,  // BiCGStab: alpha, omega, (r0, v), (t, t), (t, s)
  kOmega,
  kR0V,
  kTT,
  kTS,
  kSlots
};

// Sums of D products over a block, then over the grid: each block writes its partial sums; the last
// block to arrive adds the partials in block order and stores them in out[slot[d]].
template <int D>
struct Dots {
  double* partial;  // D x gridDim.x
  unsigned* count;  // arrivals (reset by the last block)
  double* scalars;
  int slot[kMaxDots];
};

template <int D>
__device__ void finish_dots(double (&acc)[D], const Dots<D>& dots) {
  __shared__ double warp_sums[kBlock / 32][D > 0 ? D : 1];
  __shared__ bool last;
  if constexpr (D == 0) {
    return;
  } else {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
    for (int d = 0; d < D; ++d) {
      acc[d] = group_sum(acc[d], 32);
      if (lane == 0) warp_sums[warp][d] = acc[d];
    }
    __syncthreads();
    if (threadIdx.x == 0) {
#pragma unroll
      for (int d = 0; d < D; ++d) {
        double s = 0;
        for (int w = 0; w < kBlock / 32; ++w) s += warp_sums[w][d];
        dots.partial[d * gridDim.x + blockIdx.x] = s;
      }
      last = count_arrival(*dots.count) == gridDim.x - 1;  // publishes this block's partials
    }
    __syncthreads();
    if (!last || warp != 0) return;
#pragma unroll
    for (int d = 0; d < D; ++d) {
      double s = 0;
      for (unsigned b = lane; b < gridDim.x; b += 32) s += __ldcg(dots.partial + d * gridDim.x + b);
      s = group_sum(s, 32);
      if (lane == 0) dots.scalars[dots.slot[d]] = s;
    }
    if (lane == 0) *dots.count = 0;
  }
}

// One pass over n elements: op(i, acc) updates element i's vectors and adds its terms of the D dot
// products to acc.
template <int D, class Op>
__global__ void __launch_bounds__(kBlock) fused_kernel(std::size_t n, Op op, Dots<D> dots) {
  double acc[D > 0 ? D : 1] = {};
  const Op o = op;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * kBlock + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * kBlock)
    o(i, acc);
  if constexpr (D > 0) finish_dots<D>(acc, dots);
}

// Jacobi: M r = inv_diag .* r, or r itself without a preconditioner.
__device__ __forceinline__ double precond(const double* __restrict__ m, std::size_t i, double v) {
  return m ? m[i] * v : v;
}
// a / b, 0 where b is 0 (a breakdown or an exact solution: the iteration then stops moving).
__device__ __forceinline__ double ratio(double a, double b) { return b != 0 ? a / b : 0.0; }

// ---- CG ----

struct CgInit {  // z = M r, p = z; dots (r, z), (r, r), (b, b)
  const double *r, *b, *m;
  double* p;
  __device__ void operator()(std::size_t i, double* acc) const {
    const double ri = r[i], zi = precond(m, i, ri);
    p[i] = zi;
    acc[0] += ri * zi;
    acc[1] += ri * ri;
    acc[2] += b[i] * b[i];
  }
};
struct CgPq {  // (p, q)
  const double *p, *q;
  __device__ void operator()(std::size_t i, double* acc) const { acc[0] += p[i] * q[i]; }
};
struct CgUpdate {  // alpha = rz / pq; x += alpha p; r -= alpha q; dots (r, M r), (r, r)
  const double *p, *q, *m, *s;
  double *x, *r;
  int rz;  // this iteration's slot of (r, M r)
  __device__ void operator()(std::size_t i, double* acc) const {
    const double alpha = ratio(s[rz], s[kPQ]);
    x[i] += alpha * p[i];
    const double ri = r[i] - alpha * q[i];
    r[i] = ri;
    acc[0] += ri * precond(m, i, ri);
    acc[1] += ri * ri;
  }
};
struct CgDirection {  // beta = rz_new / rz; p = M r + beta p
  const double *r, *m, *s;
  double* p;
  int rz, rz_new;
  __device__ void operator()(std::size_t i, double*) const {
    p[i] = precond(m, i, r[i]) + ratio(s[rz_new], s[rz]) * p[i];
  }
};

// ---- BiCGStab ----

struct BiInit {  // r0 = r, p = v = 0; dots (r0, r), (r, r), (b, b)
  const double *r, *b;
  double *r0, *p, *v;
  __device__ void operator()(std::size_t i, double* acc) const {
    const double ri = r[i];
    r0[i] = ri;
    p[i] = v[i] = 0;
    acc[0] += ri * ri;
    acc[1] += ri * ri;
    acc[2] += b[i] * b[i];
  }
};
struct BiDirection {  // beta = (rho / rho_prev) (alpha / omega); p = r + beta (p - omega v); phat = M p
  const double *r, *v, *m, *s;
  double *p, *phat;
  int rho, rho_prev;
  __device__ void operator()(std::size_t i, double*) const {
    const double beta = ratio(s[rho], s[rho_prev]) * ratio(s[kAlpha], s[kOmega]);
    const double pi = r[i] + beta * (p[i] - s[kOmega] * v[i]);
    p[i] = pi;
    if (phat) phat[i] = precond(m, i, pi);
  }
};
struct BiR0V {  // (r0, v)
  const double *r0, *v;
  __device__ void operator()(std::size_t i, double* acc) const { acc[0] += r0[i] * v[i]; }
};
struct BiHalf {  // alpha = rho / (r0, v); s = r - alpha v (into r); shat = M s
  const double *v, *m, *s;
  double *r, *shat;
  int rho;
  __device__ void operator()(std::size_t i, double*) const {
    const double si = r[i] - ratio(s[rho], s[kR0V]) * v[i];
    r[i] = si;
    if (shat) shat[i] = precond(m, i, si);
  }
};
struct BiAlpha {  // alpha = rho / (r0, v), kept for the next direction (one thread)
  double* s;
  int rho;
  __device__ void operator()(std::size_t, double*) const { s[kAlpha] = ratio(s[rho], s[kR0V]); }
};
struct BiTT {  // (t, t), (t, s)
  const double *t, *r;
  __device__ void operator()(std::size_t i, double* acc) const {
    acc[0] += t[i] * t[i];
    acc[1] += t[i] * r[i];
  }
};
struct BiUpdate {  // omega = (t, s) / (t, t); x += alpha phat + omega shat; r = s - omega t; dots (r, r), (r0, r)
  const double *phat, *shat, *t, *r0, *s;
  double *x, *r;
  __device__ void operator()(std::size_t i, double* acc) const {
    const double omega = ratio(s[kTS], s[kTT]);
    x[i] += s[kAlpha] * phat[i] + omega * shat[i];
    const double ri = r[i] - omega * t[i];
    r[i] = ri;
    acc[0] += ri * ri;
    acc[1] += r0[i] * ri;
  }
};
struct BiOmega {  // omega for the next direction (one thread)
  double* s;
  __device__ void operator()(std::size_t, double*) const { s[kOmega] = ratio(s[kTS], s[kTT]); }
};

// ---- CGLS (vectors of A's rows: r, q; of its columns: x, s, p) ----

struct CglsInit {  // p = s; dots (s, s) twice: gamma and the residual
  const double* sv;
  double* p;
  __device__ void operator()(std::size_t i, double* acc) const {
    const double si = sv[i];
    p[i] = si;
    acc[0] += si * si;
    acc[1] += si * si;
  }
};
template <int D>
struct SquaredNorm {  // (v, v) into each of the D slots given
  const double* v;
  __device__ void operator()(std::size_t i, double* acc) const {
#pragma unroll
    for (int d = 0; d < D; ++d) acc[d] += v[i] * v[i];
  }
};
struct ScaledAdd {  // y += sign * (s[num] / s[den]) * v
  const double *v, *s;
  double* y;
  int num, den;
  double sign;
  __device__ void operator()(std::size_t i, double*) const { y[i] += sign * ratio(s[num], s[den]) * v[i]; }
};
struct CglsDirection {  // p = s + (gamma_new / gamma) p
  const double *sv, *s;
  double* p;
  int gamma, gamma_new;
  __device__ void operator()(std::size_t i, double*) const { p[i] = sv[i] + ratio(s[gamma_new], s[gamma]) * p[i]; }
};

// What both solvers share: the stream, the scalars, the reductions' scratch, the lagging residual
// read, the products' timing.
class Workspace {
 public:
  Workspace(std::size_t n, cudaStream_t stream, bool time_products)
      : n_(n), stream_(stream), timed_(time_products), grid_(grid_for(n)) {
    SPMV_CUDA_CHECK(cudaMalloc(&scalars_, kSlots * sizeof(double)));
    SPMV_CUDA_CHECK(cudaMalloc(&partial_, kMaxDots * grid_ * sizeof(double)));
    SPMV_CUDA_CHECK(cudaMalloc(&count_, sizeof(unsigned)));
    SPMV_CUDA_CHECK(cudaMemsetAsync(count_, 0, sizeof(unsigned), stream_));
    const double ones[kSlots] = {0, 0, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0};  // rho_prev, alpha, omega start at 1
    SPMV_CUDA_CHECK(cudaMemcpyAsync(scalars_, ones, sizeof ones, cudaMemcpyHostToDevice, stream_));
    SPMV_CUDA_CHECK(cudaMallocHost(&host_rr_, 2 * sizeof(double)));
    for (auto& e : rr_ready_) SPMV_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    for (auto& e : marks_) SPMV_CUDA_CHECK(cudaEventCreate(&e));
    SPMV_CUDA_CHECK(cudaStreamSynchronize(stream_));  // the constant host array above
  }
  Workspace(const Workspace&) = delete;
  Workspace& operator=(const Workspace&) = delete;
  ~Workspace() {
    cudaStreamSynchronize(stream_);
    cudaFree(scalars_);
    cudaFree(partial_);
    cudaFree(count_);
    cudaFreeHost(host_rr_);
    for (auto e : rr_ready_) cudaEventDestroy(e);
    for (auto e : marks_) cudaEventDestroy(e);
  }

  // Over the workspace's n elements, or `items` of them (1..n; CGLS's vectors of two lengths).
  template <int D, class Op>
  void run(Op op, std::initializer_list<int> slots, std::size_t items = 0) {
    launch<D>(op, slots, items ? items : n_, grid_for(items ? items : n_));
  }
  // One thread's scalar update.
  template <class Op>
  void scalar(Op op) {
    launch<0>(op, {}, 1, 1);
  }
  double* s() { return scalars_; }
  cudaStream_t stream() const { return stream_; }

  // y = A x on the stream, timed apart where asked (iteration parity `it`, product j of the
  // iteration); x and y of n elements, or of nx and ny.
  void product(Plan& plan, const double* x, double* y, int it, int j, std::size_t nx = 0, std::size_t ny = 0) {
    const int e = 4 * (it & 1) + 2 * j;
    if (timed_) SPMV_CUDA_CHECK(cudaEventRecord(marks_[e], stream_));
    plan.multiply(DeviceSpan<const double>(x, nx ? nx : n_), DeviceSpan<double>(y, ny ? ny : n_), 1.0, 0.0, stream_);
    if (timed_) SPMV_CUDA_CHECK(cudaEventRecord(marks_[e + 1], stream_));
    ++products_;
  }
  // Queues the copy of ||r||^2 after iteration `it` (marks its end).
  void send_residual(int it) {
    SPMV_CUDA_CHECK(
        cudaMemcpyAsync(host_rr_ + (it & 1), scalars_ + kRR, sizeof(double), cudaMemcpyDeviceToHost, stream_));
    SPMV_CUDA_CHECK(cudaEventRecord(rr_ready_[it & 1], stream_));
  }
  // ||r||^2 after iteration `it` (waits for it), adding its products' times.
  double residual(int it, int products_per_iteration) {
    SPMV_CUDA_CHECK(cudaEventSynchronize(rr_ready_[it & 1]));
    if (timed_)
      for (int j = 0; j < products_per_iteration; ++j) {
        float ms = 0;
        const int e = 4 * (it & 1) + 2 * j;
        SPMV_CUDA_CHECK(cudaEventElapsedTime(&ms, marks_[e], marks_[e + 1]));
        product_s_ += ms * 1e-3;
      }
    return host_rr_[it & 1];
  }
  double read(int slot) {
    double v = 0;
    SPMV_CUDA_CHECK(cudaMemcpyAsync(&v, scalars_ + slot, sizeof v, cudaMemcpyDeviceToHost, stream_));
    SPMV_CUDA_CHECK(cudaStreamSynchronize(stream_));
    return v;
  }
  double product_seconds() const { return product_s_; }
  int products() const { return products_; }

 private:
  static unsigned grid_for(std::size_t items) {
    return static_cast<unsigned>(std::clamp<std::size_t>((items + kBlock - 1) / kBlock, 1, kMaxBlocks));
  }
  template <int D, class Op>
  void launch(Op op, std::initializer_list<int> slots, std::size_t items, unsigned grid) {
    Dots<D> dots{partial_, count_, scalars_, {}};
    int d = 0;
    for (const int s : slots) dots.slot[d++] = s;
    fused_kernel<D><<<grid, kBlock, 0, stream_>>>(items, op, dots);
    SPMV_CUDA_CHECK_LAUNCH();
  }

  std::size_t n_;
  cudaStream_t stream_;
  bool timed_;
  unsigned grid_;
  double* scalars_ = nullptr;
  double* partial_ = nullptr;
  unsigned* count_ = nullptr;
  double* host_rr_ = nullptr;
  cudaEvent_t rr_ready_[2]{};
  cudaEvent_t marks_[8]{};  // per parity, two products, start and end
  double product_s_ = 0;
  int products_ = 0;
};

// Device scratch vectors of n doubles, freed on the stream's completion (the workspace syncs first).
struct Vectors {
  Vectors(std::size_t n, int count) {
    for (int i = 0; i < count; ++i) {
      double* p = nullptr;
      SPMV_CUDA_CHECK(cudaMalloc(&p, std::max<std::size_t>(n, 1) * sizeof(double)));
      v.push_back(p);
    }
  }
  Vectors(const Vectors&) = delete;
  Vectors& operator=(const Vectors&) = delete;
  ~Vectors() {
    for (double* p : v) cudaFree(p);
  }
  std::vector<double*> v;
};

// The iterations: step(it) queues iteration it. Two are in flight at most: the host reads the
// residual of iteration it while iteration it + 1 runs, and stops queueing once one has converged (the
// one behind it still runs: its x and residual are returned).
template <class Step>
SolverResult iterate(Workspace& w, const SolverOptions& opt, int products_per_iteration, double bb, double rr0,
                     Step step) {
  SolverResult res;
  const double bnorm = std::sqrt(bb), scale = bnorm > 0 ? bnorm : 1.0;
  const double goal = opt.tolerance * scale;
  double rr = rr0;
  res.stopped = "max_iterations";
  const auto t0 = std::chrono::steady_clock::now();
  if (std::sqrt(rr) <= goal) {
    res.stopped = "converged";
  } else {
    int queued = 0, read = 0;
    for (;;) {
      if (queued < opt.max_iterations && queued - read < 2) {
        step(queued);
        w.send_residual(queued++);
        continue;
      }
      if (read == queued) break;
      rr = w.residual(read++, products_per_iteration);
      if (!std::isfinite(rr)) {
        res.stopped = "breakdown (the residual is not finite)";
        break;
      }
      if (std::sqrt(rr) <= goal) {
        res.stopped = "converged";
        break;
      }
    }
    if (queued > read) rr = w.residual(queued - 1, products_per_iteration);
    res.iterations = queued;
  }
  SPMV_CUDA_CHECK(cudaStreamSynchronize(w.stream()));
  res.seconds = seconds_since(t0);
  res.residual = std::sqrt(rr) / scale;
  res.converged = std::isfinite(rr) && std::sqrt(rr) <= goal;
  if (res.converged) res.stopped = "converged";
  res.product_seconds = w.product_seconds();
  res.products = w.products();
  return res;
}

}  // namespace

SolverResult device_cg(Plan& plan, DeviceSpan<const double> b, DeviceSpan<double> x, const SolverOptions& opt,
                       DeviceSpan<const double> inv_diag, cudaStream_t stream) {
  const std::size_t n = b.size();
  Workspace w(n, stream, opt.time_products);
  Vectors v(n, 3);
  double *r = v.v[0], *p = v.v[1], *q = v.v[2];
  const double* m = inv_diag.empty() ? nullptr : inv_diag.data();
  double* s = w.s();
  // r = b - A x
  SPMV_CUDA_CHECK(cudaMemcpyAsync(r, b.data(), n * sizeof(double), cudaMemcpyDeviceToDevice, stream));
  plan.multiply(DeviceSpan<const double>(x.data(), n), DeviceSpan<double>(r, n), -1.0, 1.0, stream);
  w.run<3>(CgInit{r, b.data(), m, p}, {kRZ0, kRR, kBB});
  const double bb = w.read(kBB), rr0 = w.read(kRR);
  return iterate(w, opt, 1, bb, rr0, [&](int it) {
    const int rz = it & 1 ? kRZ1 : kRZ0, rz_new = it & 1 ? kRZ0 : kRZ1;
    w.product(plan, p, q, it, 0);
    w.run<1>(CgPq{p, q}, {kPQ});
    w.run<2>(CgUpdate{p, q, m, s, x.data(), r, rz}, {rz_new, kRR});
    w.run<0>(CgDirection{r, m, s, p, rz, rz_new}, {});
  });
}

SolverResult device_bicgstab(Plan& plan, DeviceSpan<const double> b, DeviceSpan<double> x, const SolverOptions& opt,
                             DeviceSpan<const double> inv_diag, cudaStream_t stream) {
  const std::size_t n = b.size();
  const bool pre = !inv_diag.empty();
  Workspace w(n, stream, opt.time_products);
  Vectors v(n, pre ? 7 : 5);
  double *r = v.v[0], *r0 = v.v[1], *p = v.v[2], *vv = v.v[3], *t = v.v[4];
  double* phat = pre ? v.v[5] : nullptr;
  double* shat = pre ? v.v[6] : nullptr;
  const double* m = pre ? inv_diag.data() : nullptr;
  double* s = w.s();
  SPMV_CUDA_CHECK(cudaMemcpyAsync(r, b.data(), n * sizeof(double), cudaMemcpyDeviceToDevice, stream));
  plan.multiply(DeviceSpan<const double>(x.data(), n), DeviceSpan<double>(r, n), -1.0, 1.0, stream);
  w.run<3>(BiInit{r, b.data(), r0, p, vv}, {kRho0, kRR, kBB});
  const double bb = w.read(kBB), rr0 = w.read(kRR);
  return iterate(w, opt, 2, bb, rr0, [&](int it) {
    const int rho = it & 1 ? kRho1 : kRho0, rho_prev = it & 1 ? kRho0 : kRho1;
    w.run<0>(BiDirection{r, vv, m, s, p, phat, rho, rho_prev}, {});
    w.product(plan, pre ? phat : p, vv, it, 0);
    w.run<1>(BiR0V{r0, vv}, {kR0V});
    w.run<0>(BiHalf{vv, m, s, r, shat, rho}, {});
    w.scalar(BiAlpha{s, rho});
    w.product(plan, pre ? shat : r, t, it, 1);
    w.run<2>(BiTT{t, r}, {kTT, kTS});
    w.run<2>(BiUpdate{pre ? phat : p, pre ? shat : r, t, r0, s, x.data(), r}, {kRR, rho_prev});
    w.scalar(BiOmega{s});
  });
}

SolverResult device_cgls(Plan& a, Plan& at, DeviceSpan<const double> b, DeviceSpan<double> x, const SolverOptions& opt,
                         cudaStream_t stream) {
  const std::size_t m = b.size(), n = x.size();
  if (m == 0 || n == 0) {  // A^T r = 0 from the start: x is the answer as it is
    SolverResult res;
    res.converged = true;
    res.stopped = "converged";
    return res;
  }
  Workspace w(std::max(m, n), stream, opt.time_products);
  Vectors rows(m, 2), cols(n, 2);
  double *r = rows.v[0], *q = rows.v[1], *sv = cols.v[0], *p = cols.v[1];
  double* s = w.s();
  // r = b - A x, s = A^T r
  SPMV_CUDA_CHECK(cudaMemcpyAsync(r, b.data(), m * sizeof(double), cudaMemcpyDeviceToDevice, stream));
  a.multiply(DeviceSpan<const double>(x.data(), n), DeviceSpan<double>(r, m), -1.0, 1.0, stream);
  at.multiply(DeviceSpan<const double>(r, m), DeviceSpan<double>(sv, n), 1.0, 0.0, stream);
  w.run<2>(CglsInit{sv, p}, {kRZ0, kRR}, n);
  const double gamma0 = w.read(kRZ0);
  return iterate(w, opt, 2, gamma0, gamma0, [&](int it) {
    const int gamma = it & 1 ? kRZ1 : kRZ0, gamma_new = it & 1 ? kRZ0 : kRZ1;
    w.product(a, p, q, it, 0, n, m);
    w.run<1>(SquaredNorm<1>{q}, {kPQ}, m);
    w.run<0>(ScaledAdd{p, s, x.data(), gamma, kPQ, 1.0}, {}, n);
    w.run<0>(ScaledAdd{q, s, r, gamma, kPQ, -1.0}, {}, m);
    w.product(at, r, sv, it, 1, m, n);
    w.run<2>(SquaredNorm<2>{sv}, {gamma_new, kRR}, n);
    w.run<0>(CglsDirection{sv, s, p, gamma, gamma_new}, {}, n);
  });
}

}  // namespace spmv::cuda
