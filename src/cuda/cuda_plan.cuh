#pragma once
// Shared plumbing of CUDA plans: x and y resident on the device, products timed with CUDA events
// around the kernels only (transfers are never inside the timed region). X and Y stay on the
// device in the layout the user gave. A kernel that works row-major only, given column-major X
// and Y (k > 1), gets them transposed on the device within each product, and so within its time
// (device_transpose_), or X only where the kernel writes column-major Y itself (transpose_y_
// cleared); plans that take column-major operands natively (cuSPARSE, CSR5 SpMM, the CSR SpMM's
// column-major kernel, ELL and HLL where their trial reads them in place) clear device_transpose_.
// Precision (issue 18): x and y are kept in the plan's vector type (float for single, double for
// double and mixed), the matrix's values in its value type; kernels are templates on the two
// (MV, VV), instantiated for (double, double), (float, float) and (float, double), and a plan's
// launch picks them with with_types.
#include <spmv/plan.hpp>

#include <memory>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "core/float_range.hpp"
#include "cuda/cuda_check.cuh"

namespace spmv::cuda {

// out (cols x rows, row-major) = in (rows x cols, row-major), queued on the default stream; for
// double and float (transpose.cu).
template <class T>
void transpose_async(const T* in, T* out, long long rows, long long cols);

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

// Sets a device array to 0 without a kernel.
template <class T>
void zero_async(DeviceBuffer<T>& y) {
  if (y.size()) SPMV_CUDA_CHECK(cudaMemsetAsync(y.data(), 0, y.size() * sizeof(T)));
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
    if constexpr (std::is_same_v<T, float>) return f32;
    else return f64;
  }
  template <class T>
  const T* data() const {
    if constexpr (std::is_same_v<T, float>) return f32.data();
    else return f64.data();
  }
  // n slots of the type a precision stores (float_values).
  void resize(std::size_t n, bool as_float) {
    if (as_float) f32.resize(n);
    else f64.resize(n);
  }
};
inline bool float_values(Precision p) { return p != Precision::Double; }

// x and y on the device in the plan's vector type: double (double and mixed plans) or float
// (single); the other pair stays empty. Plans of the same product may share them (the planner's
// candidates, all of one precision: one allocation instead of one per candidate).
struct DeviceVectors {
  DeviceVectors(std::size_t nx, std::size_t ny, Precision p) : single(p == Precision::Single) {
    if (single) xf.resize(nx), yf.resize(ny);
    else x.resize(nx), y.resize(ny);
  }
  bool single;
  DeviceBuffer<double> x, y;
  DeviceBuffer<float> xf, yf;
};
using SharedVectors = std::shared_ptr<DeviceVectors>;

class CudaPlan : public Plan {
 public:
  // `shared`: vectors of the right sizes and type to use instead of allocating (else nullptr).
  CudaPlan(index_t rows, index_t cols, const PlanOptions& opt, SharedVectors shared = nullptr)
      : rows_(rows), cols_(cols), k_(opt.k), layout_(opt.layout), prec_(opt.precision),
        device_transpose_(opt.k > 1 && opt.layout == Layout::ColMajor),
        nx_(static_cast<std::size_t>(cols) * opt.k), ny_(static_cast<std::size_t>(rows) * opt.k),
        v_(shared ? std::move(shared) : std::make_shared<DeviceVectors>(nx_, ny_, opt.precision)),
        x_(v_->x), y_(v_->y), xf_(v_->xf), yf_(v_->yf) {
    if (v_->single != (prec_ == Precision::Single)) throw Error("CUDA plan: shared vectors of another precision");
    precision = prec_;
    SPMV_CUDA_CHECK(cudaEventCreate(&start_));
    SPMV_CUDA_CHECK(cudaEventCreate(&stop_));
  }
  ~CudaPlan() override {
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
  }

  // x and y in either type, converted on the host where it differs from the plan's.
  void set_x(std::span<const double> x) override { put_x(x); }
  void set_x(std::span<const float> x) override { put_x(x); }
  void get_y(std::span<double> y) override { take_y(y); }
  void get_y(std::span<float> y) override { take_y(y); }
  void run(int times) override {
    for (int t = 0; t < times; ++t) product();
    SPMV_CUDA_CHECK(cudaDeviceSynchronize());
  }
  // Queues `times` products on the default stream and returns without waiting (the planner's
  // rounds, timed with events of their own).
  void enqueue(int times) {
    for (int t = 0; t < times; ++t) product();
  }
  // A short batch of short products starts behind one untimed product, so that its first timed
  // product does not wait for the host's launch (a few microseconds: a small matrix's product).
  double time_runs(int times) override {
    if (times <= 4 && last_product_s_ < 2e-5) product();
    SPMV_CUDA_CHECK(cudaEventRecord(start_));
    for (int t = 0; t < times; ++t) product();
    SPMV_CUDA_CHECK(cudaEventRecord(stop_));
    SPMV_CUDA_CHECK(cudaEventSynchronize(stop_));
    float ms = 0;
    SPMV_CUDA_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
    if (times > 0) last_product_s_ = ms * 1e-3 / times;
    return ms * 1e-3;
  }

 protected:
  // Enqueue one product y_ = A * x_ on the default stream; no host synchronisation inside.
  virtual void launch() = 0;
  // One product as the user sees it: launch(), with column-major X and Y transposed around it on
  // the device when the kernel works row-major (x and y then hold the row-major copies while
  // launch() is queued).
  void product() {
    if (!device_transpose_) return launch();
    if (prec_ == Precision::Single) transposed_product(xf_, yf_, xtf_, ytf_);
    else transposed_product(x_, y_, xt_, yt_);
  }
  // The device x and y of the plan's vector type V (double: x_, y_; float: xf_, yf_).
  template <class V>
  V* xv() {
    if constexpr (std::is_same_v<V, float>) return xf_.data();
    else return x_.data();
  }
  template <class V>
  V* yv() {
    if constexpr (std::is_same_v<V, float>) return yf_.data();
    else return y_.data();
  }
  // y = 0 without a kernel (matrices with no stored entries).
  void zero_y() {
    if (prec_ == Precision::Single) zero_async(yf_);
    else zero_async(y_);
  }
  // A trial's time of one product in the current mode: a warm-up, then the mean of three.
  double trial_product_seconds() {
    time_runs(1);
    return time_runs(3) / 3;
  }
  // After a trial among modes: frees the transposed copies the kept mode does not use.
  void release_unused_transposes() {
    if (!device_transpose_) xt_ = DeviceBuffer<double>(), xtf_ = DeviceBuffer<float>();
    if (!device_transpose_ || !transpose_y_) yt_ = DeviceBuffer<double>(), ytf_ = DeviceBuffer<float>();
  }
  index_t rows_, cols_;
  int k_;
  Layout layout_;
  const Precision prec_;  // the arithmetic: the types the kernels are launched with (with_types)
  bool device_transpose_;  // column-major X and Y for a kernel that works row-major (product())
  bool transpose_y_ = true;  // ... Y too (else the kernel writes column-major Y itself)
  DeviceBuffer<double> xt_, yt_;  // their row-major copies (only then), double and mixed plans
  DeviceBuffer<float> xtf_, ytf_;  // ... single plans
  std::size_t nx_, ny_;  // elements of X and Y
  SharedVectors v_;
  DeviceBuffer<double>& x_;  // double and mixed plans
  DeviceBuffer<double>& y_;
  DeviceBuffer<float>& xf_;  // single plans
  DeviceBuffer<float>& yf_;
  cudaEvent_t start_{}, stop_{};
  double last_product_s_ = 0;  // per product, as last timed (0: never)

 private:
  template <class V>
  void transposed_product(DeviceBuffer<V>& x, DeviceBuffer<V>& y, DeviceBuffer<V>& xt, DeviceBuffer<V>& yt) {
    xt.resize(x.size());
    transpose_async(x.data(), xt.data(), k_, cols_);  // X: k rows of cols -> cols rows of k
    x.swap(xt);
    if (transpose_y_) {
      yt.resize(y.size());
      y.swap(yt);
    }
    launch();
    x.swap(xt);
    if (transpose_y_) {
      y.swap(yt);
      transpose_async(yt.data(), y.data(), rows_, k_);  // Y: rows of k -> k rows of rows
    }
  }
  template <class H>
  void put_x(std::span<const H> x) {
    if (x.size() != nx_)
      throw Error("x has " + std::to_string(x.size()) + " values, expected " + std::to_string(nx_));
    if constexpr (std::is_same_v<H, double>)
      if (prec_ == Precision::Single) spmv::detail::require_x_in_float_range(x);
    if (prec_ == Precision::Single) upload_as(x, xf_);
    else upload_as(x, x_);
  }
  template <class H>
  void take_y(std::span<H> y) {
    if (y.size() != ny_)
      throw Error("y has room for " + std::to_string(y.size()) + " values, expected " + std::to_string(ny_));
    SPMV_CUDA_CHECK(cudaDeviceSynchronize());
    const bool single = prec_ == Precision::Single;
    if (single == std::is_same_v<H, float>) {
      if constexpr (std::is_same_v<H, float>) yf_.download(y.data(), y.size());
      else y_.download(y.data(), y.size());
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
};

}  // namespace spmv::cuda
