// The halo of a distributed product on the device (src/cuda/halo_staging.hpp).
#include "cuda/cuda_check.cuh"
#include "cuda/halo_staging.hpp"

#include <vector>

namespace spmv::cuda {
namespace {

__global__ void gather_kernel(const double* __restrict__ x, const index_t* __restrict__ idx, std::size_t n, int k,
                              double* __restrict__ out) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n * k;
       i += std::size_t{gridDim.x} * blockDim.x) {
    const std::size_t e = i / k, j = i % k;
    out[i] = x[static_cast<std::size_t>(idx[e]) * k + j];
  }
}

// Within one neighbour's list every index occurs once: plain adds.
__global__ void scatter_add_kernel(const double* __restrict__ in, const index_t* __restrict__ idx, std::size_t n, int k,
                                   double* __restrict__ y) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n * k;
       i += std::size_t{gridDim.x} * blockDim.x) {
    const std::size_t e = i / k, j = i % k;
    y[static_cast<std::size_t>(idx[e]) * k + j] += in[i];
  }
}

unsigned grid_for(std::size_t values) {
  return static_cast<unsigned>(std::max<std::size_t>(1, std::min<std::size_t>((values + 255) / 256, 4096)));
}

struct PinnedArray {
  double* p = nullptr;
  explicit PinnedArray(std::size_t n) {
    SPMV_CUDA_CHECK(cudaMallocHost(&p, std::max<std::size_t>(n, 1) * sizeof(double)));
  }
  ~PinnedArray() { cudaFreeHost(p); }
  PinnedArray(const PinnedArray&) = delete;
  PinnedArray& operator=(const PinnedArray&) = delete;
};

}  // namespace

struct HaloStaging::Impl {
  Impl(std::span<const index_t> send, std::span<const std::size_t> seg, std::size_t halo, int k,
       std::span<const index_t> kept)
      : k(k),
        nsend(send.size()),
        nhalo(halo),
        segments(seg.begin(), seg.end()),
        idx(std::vector<index_t>(send.begin(), send.end())),
        rows(std::vector<index_t>(kept.begin(), kept.end())),
        nrows(kept.size()),
        send_d(nsend * k),
        halo_d(nhalo * k),
        rows_d(nrows * k),
        send_h(nsend * k),
        halo_h(nhalo * k) {
    SPMV_CUDA_CHECK(cudaEventCreateWithFlags(&done, cudaEventDisableTiming));
    SPMV_CUDA_CHECK(cudaEventCreateWithFlags(&ready, cudaEventDisableTiming));
    SPMV_CUDA_CHECK(cudaEventCreateWithFlags(&staged, cudaEventDisableTiming));
    int least = 0, greatest = 0;
    SPMV_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    SPMV_CUDA_CHECK(cudaStreamCreateWithPriority(&stream, cudaStreamNonBlocking, greatest));
  }
  ~Impl() {
    cudaStreamDestroy(stream);
    cudaEventDestroy(staged);
    cudaEventDestroy(ready);
    cudaEventDestroy(done);
  }
  // The staging stream's copies done; s waits for them.
  void join(CudaStream s) {
    SPMV_CUDA_CHECK(cudaEventRecord(staged, stream));
    SPMV_CUDA_CHECK(cudaStreamWaitEvent(s, staged, 0));
  }
  int k;
  std::size_t nsend, nhalo;
  std::vector<std::size_t> segments;
  DeviceBuffer<index_t> idx, rows;
  std::size_t nrows;
  DeviceBuffer<double> send_d, halo_d, rows_d;
  PinnedArray send_h, halo_h;
  cudaEvent_t done{}, ready{}, staged{};
  cudaStream_t stream{};
  bool pending = false;
};

HaloStaging::HaloStaging(std::span<const index_t> send, std::span<const std::size_t> segments, std::size_t halo, int k,
                         std::span<const index_t> rows)
    : impl_(std::make_unique<Impl>(send, segments, halo, k, rows)) {}
HaloStaging::~HaloStaging() {
  if (impl_->pending) cudaEventSynchronize(impl_->done);  // the last product done with the buffers
}

double* HaloStaging::send_host() { return impl_->send_h.p; }
double* HaloStaging::halo_host() { return impl_->halo_h.p; }
double* HaloStaging::halo_device() { return impl_->halo_d.data(); }
double* HaloStaging::rows_device() { return impl_->rows_d.data(); }

void HaloStaging::gather_rows(const double* x, CudaStream s) {
  Impl& m = *impl_;
  if (m.nrows == 0) return;
  gather_kernel<<<grid_for(m.nrows * m.k), 256, 0, s>>>(x, m.rows.data(), m.nrows, m.k, m.rows_d.data());
  SPMV_CUDA_CHECK_LAUNCH();
}

void HaloStaging::add_rows(double* y, CudaStream s) {
  Impl& m = *impl_;
  if (m.nrows == 0) return;
  scatter_add_kernel<<<grid_for(m.nrows * m.k), 256, 0, s>>>(m.rows_d.data(), m.rows.data(), m.nrows, m.k, y);
  SPMV_CUDA_CHECK_LAUNCH();
}

void HaloStaging::wait_previous() {
  if (impl_->pending) SPMV_CUDA_CHECK(cudaEventSynchronize(impl_->done));
  impl_->pending = false;
}

void HaloStaging::begin(CudaStream s) {
  SPMV_CUDA_CHECK(cudaEventRecord(impl_->ready, s));
  SPMV_CUDA_CHECK(cudaStreamWaitEvent(impl_->stream, impl_->ready, 0));
}

CudaStream HaloStaging::side() { return impl_->stream; }

void HaloStaging::gather(const double* x) {
  Impl& m = *impl_;
  const std::size_t n = m.nsend * m.k;
  if (n == 0) return;
  gather_kernel<<<grid_for(n), 256, 0, m.stream>>>(x, m.idx.data(), m.nsend, m.k, m.send_d.data());
  SPMV_CUDA_CHECK_LAUNCH();
  SPMV_CUDA_CHECK(cudaMemcpyAsync(m.send_h.p, m.send_d.data(), n * sizeof(double), cudaMemcpyDeviceToHost, m.stream));
}

void HaloStaging::finish_host() { SPMV_CUDA_CHECK(cudaStreamSynchronize(impl_->stream)); }

void HaloStaging::halo_to_device(CudaStream s) {
  Impl& m = *impl_;
  if (m.nhalo == 0) return;
  SPMV_CUDA_CHECK(
      cudaMemcpyAsync(m.halo_d.data(), m.halo_h.p, m.nhalo * m.k * sizeof(double), cudaMemcpyHostToDevice, m.stream));
  m.join(s);
}

void HaloStaging::mark(CudaStream s) {
  SPMV_CUDA_CHECK(cudaEventRecord(impl_->done, s));
  impl_->pending = true;
}

int select_device(int local_rank) {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
    cudaGetLastError();
    return -1;
  }
  const int d = local_rank % n;
  SPMV_CUDA_CHECK(cudaSetDevice(d));
  return d;
}

void HaloStaging::halo_to_host() {
  Impl& m = *impl_;
  if (m.nhalo == 0) return;
  SPMV_CUDA_CHECK(
      cudaMemcpyAsync(m.halo_h.p, m.halo_d.data(), m.nhalo * m.k * sizeof(double), cudaMemcpyDeviceToHost, m.stream));
}

void HaloStaging::scatter_add(double* y, CudaStream s) {
  Impl& m = *impl_;
  if (m.nsend == 0) return;
  SPMV_CUDA_CHECK(
      cudaMemcpyAsync(m.send_d.data(), m.send_h.p, m.nsend * m.k * sizeof(double), cudaMemcpyHostToDevice, m.stream));
  m.join(s);
  for (std::size_t q = 0; q + 1 < m.segments.size(); ++q) {
    const std::size_t b = m.segments[q], n = m.segments[q + 1] - b;
    if (n == 0) continue;
    scatter_add_kernel<<<grid_for(n * m.k), 256, 0, s>>>(m.send_d.data() + b * m.k, m.idx.data() + b, n, m.k, y);
    SPMV_CUDA_CHECK_LAUNCH();
  }
}

}  // namespace spmv::cuda
