#pragma once
// Shared plumbing of CUDA plans: x and y resident on the device, products timed with CUDA events
// around the kernels only (transfers are never inside the timed region). Our SpMM kernels read X
// and write Y row-major on the device; column-major X and Y (k > 1) are transposed on the host
// as they are uploaded and downloaded, outside the timed products. Plans that take column-major
// operands natively (cuSPARSE) clear host_transpose_.
#include <spmv/plan.hpp>

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "cuda/cuda_check.cuh"

namespace spmv::cuda {

// x and y on the device. Plans of the same product may share them (the planner's candidates: one
// allocation instead of one per candidate).
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
        host_transpose_(opt.k > 1 && opt.layout == Layout::ColMajor),
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
    if (!host_transpose_) return x_.upload(x.data(), x.size());
    std::vector<double> t(x.size());
    transpose(x, cols_, k_, t);  // column j of X holds x[j*cols ..]; the device gets rows of k
    x_.upload(t.data(), t.size());
  }
  void get_y(std::span<double> y) override {
    if (y.size() != y_.size())
      throw Error("y has room for " + std::to_string(y.size()) + " values, expected " + std::to_string(y_.size()));
    SPMV_CUDA_CHECK(cudaDeviceSynchronize());
    if (!host_transpose_) return y_.download(y.data(), y.size());
    std::vector<double> t(y.size());
    y_.download(t.data(), t.size());
    transpose(t, k_, rows_, y);  // the device's rows of k -> column j of Y at y[j*rows ..]
  }
  void run(int times) override {
    for (int t = 0; t < times; ++t) launch();
    SPMV_CUDA_CHECK(cudaDeviceSynchronize());
  }
  // Queues `times` products on the default stream and returns without waiting (the planner's
  // rounds, timed with events of their own).
  void enqueue(int times) {
    for (int t = 0; t < times; ++t) launch();
  }
  // A short batch of short products starts behind one untimed product, so that its first timed
  // product does not wait for the host's launch (a few microseconds: a small matrix's product).
  double time_runs(int times) override {
    if (times <= 4 && last_product_s_ < 2e-5) launch();
    SPMV_CUDA_CHECK(cudaEventRecord(start_));
    for (int t = 0; t < times; ++t) launch();
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
  // v holds an n x m matrix column-major; out gets it row-major.
  static void transpose(std::span<const double> v, std::size_t n, std::size_t m, std::span<double> out) {
    for (std::size_t j = 0; j < m; ++j)
      for (std::size_t i = 0; i < n; ++i) out[i * m + j] = v[j * n + i];
  }
  index_t rows_, cols_;
  int k_;
  Layout layout_;
  bool host_transpose_;  // column-major X and Y for a kernel that works row-major
  SharedVectors v_;
  DeviceBuffer<double>& x_;
  DeviceBuffer<double>& y_;
  cudaEvent_t start_{}, stop_{};
  double last_product_s_ = 0;  // per product, as last timed (0: never)
};

}  // namespace spmv::cuda
