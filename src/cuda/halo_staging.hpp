#pragma once
// Internal: a distributed product's halo on the device (src/distributed/mpi, one GPU per rank):
// x's entries that other ranks need gathered on the GPU and staged through pinned host memory for
// MPI (which here has no CUDA support), the halo received copied back; for A^T the reverse, the
// contributions received added into y neighbour by neighbour (no atomics: the same bits every run).
#include <spmv/device.hpp>
#include <spmv/types.hpp>

#include <cstddef>
#include <memory>
#include <span>

namespace spmv::cuda {

class HaloStaging {
 public:
  /// send: the local indices of x's entries sent, every neighbour's list one after the other
  /// (segments[q]..segments[q+1] the q-th); halo: entries received; k values per entry; rows: the
  /// rows the off-diagonal block keeps where it is stored compressed (empty: all rows).
  HaloStaging(std::span<const index_t> send, std::span<const std::size_t> segments, std::size_t halo, int k,
              std::span<const index_t> rows);
  ~HaloStaging();
  HaloStaging(const HaloStaging&) = delete;
  HaloStaging& operator=(const HaloStaging&) = delete;

  double* send_host();
  double* halo_host();
  double* halo_device();
  /// Waits for the product marked last (mark) to be done with the buffers.
  void wait_previous();
  /// Marks the end of this product's work on s.
  void mark(CudaStream s);

  // A product's staging runs on a stream of its own, of the highest priority, so that it overlaps
  // the diagonal block's product queued on the caller's stream: begin(s) makes it wait for the
  // work queued on s so far (x ready), finish_host() waits for what it has queued to reach the host.
  void begin(CudaStream s);
  /// The staging stream (for A^T's off-diagonal product).
  CudaStream side();
  /// x's entries at `send` into send_host(), queued on the staging stream.
  void gather(const double* x);
  /// halo_device() to halo_host(), queued on the staging stream.
  void halo_to_host();
  /// Returns when the staging stream's work is done (send_host() or halo_host() filled).
  void finish_host();
  /// halo_host() to halo_device() on the staging stream; s waits for it.
  void halo_to_device(CudaStream s);
  /// y[send[i]] += send_host()[i] (k values each), neighbour by neighbour: the copy to the device
  /// on the staging stream, the adds queued on s after it.
  void scatter_add(double* y, CudaStream s);
  /// The compressed off-diagonal block's vector (k values per kept row), on the device.
  double* rows_device();
  /// rows_device()[i] = x[rows[i]] (A^T: x's kept rows), queued on s.
  void gather_rows(const double* x, CudaStream s);
  /// y[rows[i]] += rows_device()[i] (A: the block's product into y's kept rows), queued on s.
  void add_rows(double* y, CudaStream s);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Makes device (local_rank modulo the GPUs) this thread's current one; returns it (-1: no GPU).
int select_device(int local_rank);

}  // namespace spmv::cuda
