#pragma once
// Shared plumbing of CUDA plans: x and y resident on the device, products timed with CUDA events
// around the kernels only (transfers are never inside the timed region). X and Y stay on the
// device in the layout the user gave. A kernel that works row-major only, given column-major X
// and Y (k > 1), gets them transposed on the device within each product, and so within its time
// (device_transpose_), or X only where the kernel writes column-major Y itself (transpose_y_
// cleared); plans that take column-major operands natively (cuSPARSE, CSR5 SpMM, the CSR SpMM's
// column-major kernel, ELL and HLL where their trial reads them in place) clear device_transpose_.
#include <spmv/plan.hpp>

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "cuda/cuda_check.cuh"

namespace spmv::cuda {

// x and y on the device. Plans of the same product may share them (the planner's candidates: one
// allocation instead of one per candidate).
// out (cols x rows, row-major) = in (rows x cols, row-major), queued on the default stream.
void transpose_async(const double* in, double* out, long long rows, long long cols);

struct DeviceVectors {
  DeviceBuffer<double> x, y;
  DeviceVectors(std::size_t nx, std::size_t ny) : x(nx), y(ny) {}
};
using SharedVectors = std::shared_ptr<DeviceVectors>;

class CudaPlan : public Plan {
 public:
  // `shared`: vectors of the right sizes to use instead of allocating (else nullptr).
  CudaPlan(index_t rows, index_t cols, const PlanOptions& opt, SharedVectors shared = nullptr)
      : rows_(rows), cols_(cols), k_(opt.k), layout_(opt.layout),
        device_transpose_(opt.k > 1 && opt.layout == Layout::ColMajor),
        v_(shared ? std::move(shared)
                  : std::make_shared<DeviceVectors>(static_cast<std::size_t>(cols) * opt.k,
                                                    static_cast<std::size_t>(rows) * opt.k)),
        x_(v_->x), y_(v_->y) {
    SPMV_CUDA_CHECK(cudaEventCreate(&start_));
    SPMV_CUDA_CHECK(cudaEventCreate(&stop_));
  }
  ~CudaPlan() override {
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
  }

  void set_x(std::span<const double> x) override {
    if (x.size() != x_.size())
      throw Error("x has " + std::to_string(x.size()) + " values, expected " + std::to_string(x_.size()));
    x_.upload(x.data(), x.size());
  }
  void get_y(std::span<double> y) override {
    if (y.size() != y_.size())
      throw Error("y has room for " + std::to_string(y.size()) + " values, expected " + std::to_string(y_.size()));
    SPMV_CUDA_CHECK(cudaDeviceSynchronize());
    y_.download(y.data(), y.size());
  }
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
  // the device when the kernel works row-major (x_ and y_ then hold the row-major copies while
  // launch() is queued).
  void product() {
    if (!device_transpose_) return launch();
    xt_.resize(x_.size());
    transpose_async(x_.data(), xt_.data(), k_, cols_);  // X: k rows of cols -> cols rows of k
    x_.swap(xt_);
    if (transpose_y_) {
      yt_.resize(y_.size());
      y_.swap(yt_);
    }
    launch();
    x_.swap(xt_);
    if (transpose_y_) {
      y_.swap(yt_);
      transpose_async(yt_.data(), y_.data(), rows_, k_);  // Y: rows of k -> k rows of rows
    }
  }
  // A trial's time of one product in the current mode: a warm-up, then the mean of three.
  double trial_product_seconds() {
    time_runs(1);
    return time_runs(3) / 3;
  }
  // After a trial among modes: frees the transposed copies the kept mode does not use.
  void release_unused_transposes() {
    if (!device_transpose_) xt_ = DeviceBuffer<double>();
    if (!device_transpose_ || !transpose_y_) yt_ = DeviceBuffer<double>();
  }
  index_t rows_, cols_;
  int k_;
  Layout layout_;
  bool device_transpose_;  // column-major X and Y for a kernel that works row-major (product())
  bool transpose_y_ = true;  // ... Y too (else the kernel writes column-major Y itself)
  DeviceBuffer<double> xt_, yt_;  // their row-major copies (only then)
  SharedVectors v_;
  DeviceBuffer<double>& x_;
  DeviceBuffer<double>& y_;
  cudaEvent_t start_{}, stop_{};
  double last_product_s_ = 0;  // per product, as last timed (0: never)
};

}  // namespace spmv::cuda
