#pragma once
// Shared plumbing of CUDA plans. A product runs on the device vectors of a Launch: the caller's
// (multiply on device memory: as they are, on the caller's stream), or the plan's own (the resident
// products the benchmark times with CUDA events around the kernels only, and multiply on host
// memory, staged through pinned buffers). alpha and beta go into the kernels' stores (Epilogue). X
// and Y stay in the layout the user gave. A kernel that works row-major only, given column-major X
// and Y (k > 1), gets them transposed on the device within each product, and so within its time
// (device_transpose_), or X only where the kernel writes column-major Y itself (transpose_y_
// cleared); plans that take column-major operands natively (cuSPARSE, CSR5 SpMM, the CSR SpMM's
// column-major kernel, ELL and HLL where their trial reads them in place) clear device_transpose_.
// Precision: x and y are in the plan's vector type (float for single, double for double and mixed),
// the matrix's values in its value type; kernels are templates on the two (MV, VV), instantiated
// for (double, double), (float, float) and (float, double), and a plan's launch picks them with
// with_types.
#include <spmv/plan.hpp>

#include <memory>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "core/float_range.hpp"
#include "cuda/cuda_check.cuh"

namespace spmv::cuda {

// A trial's time of one of the plan's products: a warm-up, then the mean of three (the plans'
// trials among their modes, and among plans).
inline double trial_seconds(Plan& p) {
  p.time_runs(1);
  return p.time_runs(3) / 3;
}

// The store of every kernel: y[i] = alpha * s + beta * y[i] (VV: the vectors' type). put() stores a
// row's sum (beta == 0 does not read y, so NaN there is overwritten); empty() puts an empty row's
// 0; add() adds a further part of a row already put (rows that kernels finish in two passes).
template <class VV>
struct Epilogue {
  VV alpha = 1, beta = 0;
  __device__ __forceinline__ VV value(VV s, const VV* y, long long i) const {
    return beta == VV(0) ? alpha * s : alpha * s + beta * y[i];
  }
  __device__ __forceinline__ void put(VV* y, long long i, VV s) const { y[i] = value(s, y, i); }
  __device__ __forceinline__ void empty(VV* y, long long i) const { y[i] = beta == VV(0) ? VV(0) : beta * y[i]; }
  __device__ __forceinline__ void add(VV* y, long long i, VV s) const { y[i] += alpha * s; }
};

// One product's operands as the kernels take them: x and y on the device in the plan's vector type
// (untyped here; xv<VV>(), yv<VV>() type them), alpha and beta, and the stream it is queued on.
struct Launch {
  const void* x = nullptr;
  void* y = nullptr;
  double alpha = 1.0, beta = 0.0;
  cudaStream_t stream = nullptr;
  template <class VV>
  const VV* xv() const {
    return static_cast<const VV*>(x);
  }
  template <class VV>
  VV* yv() const {
    return static_cast<VV*>(y);
  }
  template <class VV>
  Epilogue<VV> ep() const {
    return {static_cast<VV>(alpha), static_cast<VV>(beta)};
  }
  bool plain() const { return alpha == 1.0 && beta == 0.0; }
};

// out (cols x rows, row-major) = in (rows x cols, row-major) through `ep` (out = alpha * in^T + beta
// * out), queued on `stream`; for double and float (transpose.cu).
template <class T>
void transpose_async(const T* in, T* out, long long rows, long long cols, cudaStream_t stream, Epilogue<T> ep = {});
// y[0..n) = beta * y (zero where beta == 0) on `stream`: the product of a matrix with no entries.
template <class T>
void scale_async(T* y, std::size_t n, T beta, cudaStream_t stream);

// Calls f.template operator()<Value, Vector>() with the C++ types of precision p (spmv/types.hpp:
// the matrix's values; x, y and the sums), so that one launch site instantiates its kernel for the
// three precisions: with_types(p, [&]<class MV, class VV>() { kernel<MV, VV><<<...>>>(...); }).
template <class F>
decltype(auto) with_types(Precision p, F&& f) {
  switch (p) {
    case Precision::Single: return f.template operator()<float, float>();
    case Precision::Mixed: return f.template operator()<float, double>();
    default: return f.template operator()<double, double>();
  }
}

// out[i] = in[i] converted, on the host's cores (x and y given in the other type, values rounded to
// float once when a plan is made).
template <class S, class D>
void convert_on_host(const S* in, D* out, std::size_t n) {
  const auto m = static_cast<std::ptrdiff_t>(n);
#pragma omp parallel for schedule(static) if (m > (1 << 16))
  for (std::ptrdiff_t i = 0; i < m; ++i) out[i] = static_cast<D>(in[i]);
}

// Host values to the device as T, converted on the host where their type differs.
template <class H, class T>
void upload_as(std::span<const H> host, DeviceBuffer<T>& d) {
  if constexpr (std::is_same_v<H, T>) {
    d.upload(host.data(), host.size());
  } else {
    std::vector<T> c(host.size());
    convert_on_host(host.data(), c.data(), c.size());
    d.upload(c.data(), c.size());
  }
}

// A matrix's values on the device: double (f64) for double plans, float (f32) for single and mixed
// ones; the other array stays empty. get<MV>() is the plan's.
struct DeviceValues {
  DeviceBuffer<double> f64;
  DeviceBuffer<float> f32;
  template <class T>
  DeviceBuffer<T>& get() {
    if constexpr (std::is_same_v<T, float>)
      return f32;
    else
      return f64;
  }
  template <class T>
  const T* data() const {
    if constexpr (std::is_same_v<T, float>)
      return f32.data();
    else
      return f64.data();
  }
  // n slots of the type a precision stores (float_values).
  void resize(std::size_t n, bool as_float) {
    if (as_float)
      f32.resize(n);
    else
      f64.resize(n);
  }
};
inline bool float_values(Precision p) { return p != Precision::Double; }

// x and y on the device in the plan's vector type: double (double and mixed plans) or float
// (single); the other pair stays empty. Plans of the same product may share them (the planner's
// candidates, all of one precision: one allocation instead of one per candidate).
struct DeviceVectors {
  DeviceVectors(std::size_t nx, std::size_t ny, Precision p) : single(p == Precision::Single) {
    if (single)
      xf.resize(nx), yf.resize(ny);
    else
      x.resize(nx), y.resize(ny);
  }
  bool single;
  DeviceBuffer<double> x, y;
  DeviceBuffer<float> xf, yf;
};
using SharedVectors = std::shared_ptr<DeviceVectors>;

// Pinned host buffers and events for products on host vectors (cuda_plan.cu), made at the first.
struct HostStaging;

class CudaPlan : public Plan {
 public:
  // `shared`: vectors of the right sizes and type to use instead of allocating (else nullptr).
  CudaPlan(index_t rows, index_t cols, const PlanOptions& opt, SharedVectors shared = nullptr);
  ~CudaPlan() override;

  bool on_device() const override { return true; }
  // x and y in either type, converted on the host where it differs from the plan's.
  void set_x(std::span<const double> x) override { put_x(x); }
  void set_x(std::span<const float> x) override { put_x(x); }
  void get_y(std::span<double> y) override { take_y(y); }
  void get_y(std::span<float> y) override { take_y(y); }
  void run(int times) override {
    to_default_stream();
    for (int t = 0; t < times; ++t) product(own());
    SPMV_CUDA_CHECK(cudaDeviceSynchronize());
  }
  // Queues `times` products on the default stream and returns without waiting (the planner's
  // rounds, timed with events of their own).
  void enqueue(int times) {
    to_default_stream();
    for (int t = 0; t < times; ++t) product(own());
  }
  // A short batch of short products starts behind one untimed product, so that its first timed
  // product does not wait for the host's launch (a few microseconds: a small matrix's product).
  double time_runs(int times) override;

 protected:
  // multiply(): device vectors as they are, host ones through the plan's own (cuda_plan.cu).
  void apply(const Operands& o) override;
  // Enqueue one product y = alpha * A*x + beta * y on l.stream; no host synchronisation inside.
  virtual void launch(const Launch& l) = 0;
  // One product as the user sees it: launch(), with column-major X and Y transposed around it on
  // the device when the kernel works row-major.
  void product(const Launch& l) {
    if (!device_transpose_) return launch(l);
    if (prec_ == Precision::Single)
      transposed_product(l, xtf_, ytf_);
    else
      transposed_product(l, xt_, yt_);
  }
  // The plan's own x and y (the resident products: run, time_runs, the trial), y = A*x.
  Launch own(double alpha = 1.0, double beta = 0.0) {
    if (prec_ == Precision::Single) return {xf_.data(), yf_.data(), alpha, beta, nullptr};
    return {x_.data(), y_.data(), alpha, beta, nullptr};
  }
  // y = beta * y without the matrix (matrices with no stored entries).
  void zero_y(const Launch& l) {
    const std::size_t n = ny_;
    if (n == 0) return;
    if (prec_ == Precision::Single)
      scale_async(l.yv<float>(), n, static_cast<float>(l.beta), l.stream);
    else
      scale_async(l.yv<double>(), n, l.beta, l.stream);
  }
  // A trial's time of one product in the current mode.
  double trial_product_seconds() { return trial_seconds(*this); }
  // After a trial among modes: frees the transposed copies the kept mode does not use.
  void release_unused_transposes() {
    if (!device_transpose_) xt_ = DeviceBuffer<double>(), xtf_ = DeviceBuffer<float>();
    if (!device_transpose_ || !transpose_y_) yt_ = DeviceBuffer<double>(), ytf_ = DeviceBuffer<float>();
  }
  index_t rows_, cols_;
  int k_;
  Layout layout_;
  const Precision prec_;           // the arithmetic: the types the kernels are launched with (with_types)
  bool device_transpose_;          // column-major X and Y for a kernel that works row-major (product())
  bool transpose_y_ = true;        // ... Y too (else the kernel writes column-major Y itself)
  DeviceBuffer<double> xt_, yt_;   // their row-major copies (only then), double and mixed plans
  DeviceBuffer<float> xtf_, ytf_;  // ... single plans
  std::size_t nx_, ny_;            // elements of X and Y
  SharedVectors v_;
  DeviceBuffer<double>& x_;  // double and mixed plans
  DeviceBuffer<double>& y_;
  DeviceBuffer<float>& xf_;  // single plans
  DeviceBuffer<float>& yf_;
  cudaEvent_t start_{}, stop_{};
  double last_product_s_ = 0;  // per product, as last timed (0: never)

 private:
  template <class V>
  void transposed_product(const Launch& l, DeviceBuffer<V>& xt, DeviceBuffer<V>& yt) {
    scratch(xt, nx_, l.stream);
    transpose_async(l.xv<V>(), xt.data(), k_, cols_, l.stream);  // X: k rows of cols -> cols rows of k
    if (!transpose_y_) return launch({xt.data(), l.y, l.alpha, l.beta, l.stream});  // the kernel writes Y itself
    scratch(yt, ny_, l.stream);
    launch({xt.data(), yt.data(), 1.0, 0.0, l.stream});
    transpose_async(yt.data(), l.yv<V>(), rows_, k_, l.stream, l.ep<V>());  // Y: rows of k -> k rows of rows
  }
  // b holds n elements; one allocated now (from the default stream's pool) is ready for `stream`
  // before anything queued on it later.
  template <class V>
  void scratch(DeviceBuffer<V>& b, std::size_t n, cudaStream_t stream) {
    if (b.size() == n && b.data()) return;
    b.resize(n);
    if (stream) {
      SPMV_CUDA_CHECK(cudaEventRecord(ready_, nullptr));
      SPMV_CUDA_CHECK(cudaStreamWaitEvent(stream, ready_, 0));
    }
  }
  // The default stream's next work waits for this plan's last product on another stream.
  void to_default_stream();
  void device_apply(const Operands& o);
  void host_apply(const Operands& o);
  // Pointers found to be device memory, the last few of an argument (a solver alternates several).
  struct Checked {
    const void* p[4] = {};
    int next = 0;
    bool has(const void* q) const { return q == p[0] || q == p[1] || q == p[2] || q == p[3]; }
    void add(const void* q) { p[next++ & 3] = q; }
  };
  // Device memory for argument `what` (x or y) of n elements at p, checked once per pointer.
  void require_device(const char* what, const void* p, std::size_t n, Checked& checked);
  template <class H>
  void put_x(std::span<const H> x) {
    to_default_stream();
    if (x.size() != nx_) throw Error("x has " + std::to_string(x.size()) + " values, expected " + std::to_string(nx_));
    if constexpr (std::is_same_v<H, double>)
      if (prec_ == Precision::Single) spmv::detail::require_x_in_float_range(x);
    if (prec_ == Precision::Single)
      upload_as(x, xf_);
    else
      upload_as(x, x_);
  }
  template <class H>
  void take_y(std::span<H> y) {
    if (y.size() != ny_)
      throw Error("y has room for " + std::to_string(y.size()) + " values, expected " + std::to_string(ny_));
    to_default_stream();
    SPMV_CUDA_CHECK(cudaDeviceSynchronize());
    const bool single = prec_ == Precision::Single;
    if (single == std::is_same_v<H, float>) {
      if constexpr (std::is_same_v<H, float>)
        yf_.download(y.data(), y.size());
      else
        y_.download(y.data(), y.size());
      return;
    }
    // The other type: download, then convert on the host.
    if (single) {
      std::vector<float> d(y.size());
      yf_.download(d.data(), d.size());
      convert_on_host(d.data(), y.data(), d.size());
    } else {
      std::vector<double> d(y.size());
      y_.download(d.data(), d.size());
      convert_on_host(d.data(), y.data(), d.size());
    }
  }
  cudaEvent_t ready_{};  // scratch allocated for another stream
  // Products on several streams run in call order: after a product on a stream of the user's, done_
  // marks its end; a product on another stream first waits for it (for the default stream, done_ is
  // recorded at the switch).
  cudaEvent_t done_{};
  cudaStream_t last_stream_ = nullptr;
  Checked checked_x_, checked_y_;
  std::unique_ptr<HostStaging> staging_;
};

}  // namespace spmv::cuda
