// CudaPlan's products as multiply() is called (cuda_plan.cuh): on device vectors, queued on the
// caller's stream after checking that they are device memory; on host vectors, straight from and to
// them where they are pinned, else through pinned staging buffers, the host's copies into and out
// of them overlapped with the bus transfers.
#include <omp.h>

#include <algorithm>
#include <cstring>

#include "cuda/cuda_plan.cuh"

namespace spmv::cuda {

namespace {

// y = beta * y (beta != 0; beta == 0 is a memset).
template <class T>
__global__ void scale_kernel(T* __restrict__ y, std::size_t n, T beta) {
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    y[i] *= beta;
}

// Host-to-host copy on several threads where it is large enough to be worth a team (one thread
// copies at a fraction of the bus's speed). Eight at most, and the same eight for every chunk of
// one staged copy: teams of varying sizes (under OMP_PROC_BIND) made a staged copy several times
// slower (bench/results/README.md).
void host_copy(void* dst, const void* src, std::size_t bytes) {
  constexpr std::size_t kPerThread = std::size_t{256} << 10;
  const int parts = static_cast<int>(std::min<std::size_t>(std::min(8, omp_get_max_threads()), bytes / kPerThread));
  if (parts <= 1) {
    std::memcpy(dst, src, bytes);
    return;
  }
#pragma omp parallel for schedule(static) num_threads(parts)
  for (int p = 0; p < parts; ++p) {
    const std::size_t b = bytes * p / parts, e = bytes * (p + 1) / parts;
    std::memcpy(static_cast<char*>(dst) + b, static_cast<const char*>(src) + b, e - b);
  }
}

// Bytes a staged copy moves at a time: the host copies one chunk while the bus moves the one before.
constexpr std::size_t kChunk = std::size_t{4} << 20;

// Whether the `bytes` at p are pinned host memory (cudaMallocHost, cudaHostRegister, PinnedHost):
// then the bus reads and writes them directly.
bool pinned(const void* p, std::size_t bytes) {
  const auto is_host = [](const void* q) {
    cudaPointerAttributes a{};
    if (cudaPointerGetAttributes(&a, q) != cudaSuccess) {
      cudaGetLastError();
      return false;
    }
    return a.type == cudaMemoryTypeHost;
  };
  return bytes > 0 && is_host(p) && is_host(static_cast<const char*>(p) + bytes - 1);
}

}  // namespace

template <class T>
void scale_async(T* y, std::size_t n, T beta, cudaStream_t stream) {
  if (n == 0) return;
  if (beta == T(0)) {
    SPMV_CUDA_CHECK(cudaMemsetAsync(y, 0, n * sizeof(T), stream));
    return;
  }
  const unsigned grid = static_cast<unsigned>(std::min<std::size_t>((n + 255) / 256, 65535));
  scale_kernel<<<grid, 256, 0, stream>>>(y, n, beta);
  SPMV_CUDA_CHECK_LAUNCH();
}
template void scale_async<double>(double*, std::size_t, double, cudaStream_t);
template void scale_async<float>(float*, std::size_t, float, cudaStream_t);

// Pinned host buffers for x and y (each made at its first use), and an event per chunk of y coming
// back.
struct HostStaging {
  HostStaging() = default;
  HostStaging(const HostStaging&) = delete;
  HostStaging& operator=(const HostStaging&) = delete;
  ~HostStaging() {
    for (cudaEvent_t e : events) cudaEventDestroy(e);
    if (x) cudaFreeHost(x);
    if (y) cudaFreeHost(y);
  }
  static void* buffer(void*& b, std::size_t bytes) {
    if (!b) SPMV_CUDA_CHECK(cudaMallocHost(&b, std::max<std::size_t>(bytes, 1)));
    return b;
  }
  // Host `src` to device `dst` on the default stream: chunk by chunk through `pinned` (the host's copy of
  // a chunk, then its transfer queued), or straight from `src` where it is pinned.
  static void upload(void* dst, const void* src, std::size_t bytes, void*& pinned_buffer) {
    if (pinned(src, bytes)) {
      SPMV_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, nullptr));
      return;
    }
    char* p = static_cast<char*>(buffer(pinned_buffer, bytes));
    for (std::size_t b = 0; b < bytes; b += kChunk) {
      const std::size_t n = std::min(kChunk, bytes - b);
      host_copy(p + b, static_cast<const char*>(src) + b, n);
      SPMV_CUDA_CHECK(cudaMemcpyAsync(static_cast<char*>(dst) + b, p + b, n, cudaMemcpyHostToDevice, nullptr));
    }
  }
  // Device `src` to host `dst` behind the work queued on the default stream; returns when `dst` holds
  // it: straight into `dst` where it is pinned, else every chunk's transfer queued into the pinned
  // buffer, then each copied out as soon as it has arrived.
  void download(void* dst, const void* src, std::size_t bytes) {
    if (pinned(dst, bytes)) {
      SPMV_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, nullptr));
      SPMV_CUDA_CHECK(cudaStreamSynchronize(nullptr));
      return;
    }
    const std::size_t chunks = (bytes + kChunk - 1) / kChunk;
    while (events.size() < chunks) {
      cudaEvent_t e{};
      SPMV_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
      events.push_back(e);
    }
    char* p = static_cast<char*>(buffer(y, bytes));
    for (std::size_t i = 0, b = 0; b < bytes; b += kChunk, ++i) {
      SPMV_CUDA_CHECK(cudaMemcpyAsync(p + b, static_cast<const char*>(src) + b, std::min(kChunk, bytes - b),
                                      cudaMemcpyDeviceToHost, nullptr));
      SPMV_CUDA_CHECK(cudaEventRecord(events[i], nullptr));
    }
    for (std::size_t i = 0, b = 0; b < bytes; b += kChunk, ++i) {
      SPMV_CUDA_CHECK(cudaEventSynchronize(events[i]));
      host_copy(static_cast<char*>(dst) + b, p + b, std::min(kChunk, bytes - b));
    }
  }
  void* x = nullptr;
  void* y = nullptr;
  std::vector<cudaEvent_t> events;
};

CudaPlan::CudaPlan(index_t rows, index_t cols, const PlanOptions& opt, SharedVectors shared)
    : rows_(rows),
      cols_(cols),
      k_(opt.k),
      layout_(opt.layout),
      prec_(opt.precision),
      device_transpose_(opt.k > 1 && opt.layout == Layout::ColMajor),
      nx_(static_cast<std::size_t>(cols) * opt.k),
      ny_(static_cast<std::size_t>(rows) * opt.k),
      v_(shared ? std::move(shared) : std::make_shared<DeviceVectors>(nx_, ny_, opt.precision)),
      x_(v_->x),
      y_(v_->y),
      xf_(v_->xf),
      yf_(v_->yf) {
  if (v_->single != (prec_ == Precision::Single)) throw Error("CUDA plan: shared vectors of another precision");
  precision = prec_;
  SPMV_CUDA_CHECK(cudaEventCreate(&start_));
  SPMV_CUDA_CHECK(cudaEventCreate(&stop_));
  SPMV_CUDA_CHECK(cudaEventCreateWithFlags(&ready_, cudaEventDisableTiming));
  SPMV_CUDA_CHECK(cudaEventCreateWithFlags(&done_, cudaEventDisableTiming));
}

CudaPlan::~CudaPlan() {
  // The last product on a stream of the user's may still run: its arrays are freed after it.
  if (last_stream_) cudaEventSynchronize(done_);
  cudaEventDestroy(start_);
  cudaEventDestroy(stop_);
  cudaEventDestroy(ready_);
  cudaEventDestroy(done_);
}

void CudaPlan::to_default_stream() {
  if (!last_stream_) return;
  SPMV_CUDA_CHECK(cudaStreamWaitEvent(nullptr, done_, 0));
  last_stream_ = nullptr;
}

double CudaPlan::time_runs(int times) {
  to_default_stream();
  if (times <= 4 && last_product_s_ < 2e-5) product(own());
  SPMV_CUDA_CHECK(cudaEventRecord(start_));
  for (int t = 0; t < times; ++t) product(own());
  SPMV_CUDA_CHECK(cudaEventRecord(stop_));
  SPMV_CUDA_CHECK(cudaEventSynchronize(stop_));
  float ms = 0;
  SPMV_CUDA_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
  if (times > 0) last_product_s_ = ms * 1e-3 / times;
  return ms * 1e-3;
}

void CudaPlan::apply(const Operands& o) {
  if (o.nx != nx_) throw Error("x has " + std::to_string(o.nx) + " values, expected " + std::to_string(nx_));
  if (o.ny != ny_) throw Error("y has room for " + std::to_string(o.ny) + " values, expected " + std::to_string(ny_));
  if (o.device)
    device_apply(o);
  else
    host_apply(o);
}

void CudaPlan::require_device(const char* what, const void* p, std::size_t n, Checked& checked) {
  if (n == 0 || (p && checked.has(p))) return;
  cudaPointerAttributes a{};
  if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
    cudaGetLastError();
    a.type = cudaMemoryTypeUnregistered;
  }
  if (a.type == cudaMemoryTypeDevice || a.type == cudaMemoryTypeManaged) {
    int dev = 0;
    SPMV_CUDA_CHECK(cudaGetDevice(&dev));
    if (a.type == cudaMemoryTypeDevice && a.device != dev)
      throw Error(std::string("multiply: ") + what + " is memory of device " + std::to_string(a.device) +
                  "; this plan's matrix is on device " + std::to_string(dev));
    checked.add(p);
    return;
  }
  throw Error(std::string("multiply: ") + what + " is " +
              (a.type == cudaMemoryTypeHost ? "pinned host memory" : "host memory") +
              ", not device memory: a DeviceSpan must view cudaMalloc'd (or managed) memory; pass host vectors as "
              "std::span instead");
}

void CudaPlan::device_apply(const Operands& o) {
  const bool single = prec_ == Precision::Single;
  if (o.single != single)
    throw Error(std::string("multiply: a ") + to_string(prec_) + " precision plan takes " +
                (single ? "float" : "double") + " x and y on the device (DeviceSpan<" + (single ? "float" : "double") +
                ">), not " + (o.single ? "float" : "double"));
  require_device("x", o.x, o.nx, checked_x_);
  require_device("y", o.y, o.ny, checked_y_);
  const cudaStream_t s = o.stream;
  if (s != last_stream_) {  // after this plan's products on another stream
    if (!last_stream_) SPMV_CUDA_CHECK(cudaEventRecord(done_, nullptr));
    SPMV_CUDA_CHECK(cudaStreamWaitEvent(s, done_, 0));
    last_stream_ = s;
  }
  product({o.x, o.y, o.alpha, o.beta, s});
  if (s) SPMV_CUDA_CHECK(cudaEventRecord(done_, s));
}

void CudaPlan::host_apply(const Operands& o) {
  to_default_stream();
  const bool single = prec_ == Precision::Single;
  if (o.single != single) {  // the other type: converted on the host, as set_x and get_y do
    if (o.single)
      put_x(std::span<const float>(static_cast<const float*>(o.x), o.nx));
    else
      put_x(std::span<const double>(static_cast<const double*>(o.x), o.nx));
    if (o.beta != 0) {
      if (single)
        upload_as(std::span<const double>(static_cast<const double*>(o.y), o.ny), yf_);
      else
        upload_as(std::span<const float>(static_cast<const float*>(o.y), o.ny), y_);
    }
    product(own(o.alpha, o.beta));
    if (o.single)
      take_y(std::span<float>(static_cast<float*>(o.y), o.ny));
    else
      take_y(std::span<double>(static_cast<double*>(o.y), o.ny));
    return;
  }
  const std::size_t vb = single ? sizeof(float) : sizeof(double);
  const std::size_t xb = nx_ * vb, yb = ny_ * vb;
  if (!staging_) staging_ = std::make_unique<HostStaging>();
  const Launch l = own(o.alpha, o.beta);
  HostStaging::upload(const_cast<void*>(l.x), o.x, xb, staging_->x);
  if (o.beta != 0) HostStaging::upload(l.y, o.y, yb, staging_->y);
  product(l);
  staging_->download(o.y, l.y, yb);
}

}  // namespace spmv::cuda
