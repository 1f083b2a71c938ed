#pragma once
// Shared plumbing of CUDA plans: x and y resident on the device, products timed with CUDA events
// around the kernels only (transfers are never inside the timed region).
#include <spmv/plan.hpp>

#include <string>

#include "cuda/cuda_check.cuh"

namespace spmv::cuda {

class CudaPlan : public Plan {
 public:
  CudaPlan(index_t rows, index_t cols, const PlanOptions& opt)
      : rows_(rows), cols_(cols), k_(opt.k), layout_(opt.layout),
        x_(static_cast<std::size_t>(cols) * opt.k), y_(static_cast<std::size_t>(rows) * opt.k) {
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
    for (int t = 0; t < times; ++t) launch();
    SPMV_CUDA_CHECK(cudaDeviceSynchronize());
  }
  double time_runs(int times) override {
    SPMV_CUDA_CHECK(cudaEventRecord(start_));
    for (int t = 0; t < times; ++t) launch();
    SPMV_CUDA_CHECK(cudaEventRecord(stop_));
    SPMV_CUDA_CHECK(cudaEventSynchronize(stop_));
    float ms = 0;
    SPMV_CUDA_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
    return ms * 1e-3;
  }

 protected:
  // Enqueue one product y_ = A * x_ on the default stream; no host synchronisation inside.
  virtual void launch() = 0;
  index_t rows_, cols_;
  int k_;
  Layout layout_;
  DeviceBuffer<double> x_, y_;
  cudaEvent_t start_{}, stop_{};
};

}  // namespace spmv::cuda
