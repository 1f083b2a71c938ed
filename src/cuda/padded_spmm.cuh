#pragma once
// SpMM on the padded formats (ELL, HLL), X and Y row-major on the device (column-major ones are
// transposed around it by CudaPlan): KL lanes per row along the right-hand sides, each keeping C
// consecutive columns of its Y row in registers and reading X's rows as double2 vectors, so a row's
// slots are read once per KL*C columns. The lanes of a row load the same slot (one broadcast) and
// the rows of a warp are consecutive, so with column-major slots a warp's slot loads are one run.
// KL = 1, C = K is the report's thread per row; C = 1, KL = K its thread per element of Y.
#include "cuda/csr_device.cuh"

namespace spmv::cuda {

// C consecutive doubles from p (p 16-byte aligned when C > 1).
template <int C>
__device__ __forceinline__ void load_row(const double* __restrict__ p, double (&v)[C]) {
  if constexpr (C == 1) {
    v[0] = __ldg(p);
  } else {
#pragma unroll
    for (int j = 0; j < C; j += 2) {
      const double2 t = __ldg(reinterpret_cast<const double2*>(p + j));
      v[j] = t.x;
      v[j + 1] = t.y;
    }
  }
}

// C consecutive doubles to p (p 16-byte aligned when C > 1).
template <int C>
__device__ __forceinline__ void store_row(double* __restrict__ p, const double (&v)[C]) {
  if constexpr (C == 1) {
    p[0] = v[0];
  } else {
#pragma unroll
    for (int j = 0; j < C; j += 2) *reinterpret_cast<double2*>(p + j) = make_double2(v[j], v[j + 1]);
  }
}

// A row's slots in a padded format: n of them, slot j at base + j * stride.
struct PaddedRow {
  long long base;
  index_t stride;
  index_t n;
};

// Entries a lane has in flight: 4 over 2 gave 1811 -> 1892 GFLOPS on a 27-point stencil at K = 4
// (ELL), +4-22% on ML_Laplace, nlpkkt80, thermal2 alikes (bench/results/README.md).
constexpr int kUnroll = 4;

// Rows: a device-copyable description with `index_t rows` and `PaddedRow row(index_t r) const`.
template <int C, typename Rows>
__global__ void padded_spmm_kernel(Rows rows, int k, int kl, const index_t* __restrict__ col,
                                   const double* __restrict__ val, const double* __restrict__ x, double* __restrict__ y) {
  const long long t = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  const long long r = t / kl;
  if (r >= rows.rows) return;
  const int lane = static_cast<int>(t - r * kl);
  const PaddedRow row = rows.row(static_cast<index_t>(r));
  for (int c = lane * C; c < k; c += kl * C) {
    double acc[C] = {};
    index_t j = 0;
    for (; j + kUnroll - 1 < row.n; j += kUnroll) {  // kUnroll entries a step: their loads in flight together
      double v[kUnroll], xs[kUnroll][C];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const long long p = row.base + static_cast<long long>(j + u) * row.stride;
        v[u] = __ldg(val + p);
        load_row<C>(x + static_cast<long long>(__ldg(col + p)) * k + c, xs[u]);
      }
#pragma unroll
      for (int u = 0; u < kUnroll; ++u)
#pragma unroll
        for (int i = 0; i < C; ++i) acc[i] += v[u] * xs[u][i];
    }
    for (; j < row.n; ++j) {
      const long long p = row.base + static_cast<long long>(j) * row.stride;
      const double v = __ldg(val + p);
      double xr[C];
      load_row<C>(x + static_cast<long long>(__ldg(col + p)) * k + c, xr);
#pragma unroll
      for (int i = 0; i < C; ++i) acc[i] += v * xr[i];
    }
    store_row<C>(y + r * k + c, acc);
  }
}

// C: 4, 2 or 1 (the widest dividing k); KL: enough lanes for k / C columns, at most 32.
template <typename Rows>
void launch_padded_spmm(const Rows& rows, int k, int block, const index_t* col, const double* val, const double* x,
                        double* y) {
  const int c = k % 4 == 0 ? 4 : k % 2 == 0 ? 2 : 1;
  int kl = 1;
  while (kl < 32 && kl * c < k) kl *= 2;
  const unsigned grid = grid_for(static_cast<offset_t>(rows.rows) * kl, block);
  if (c == 4) padded_spmm_kernel<4><<<grid, block>>>(rows, k, kl, col, val, x, y);
  else if (c == 2) padded_spmm_kernel<2><<<grid, block>>>(rows, k, kl, col, val, x, y);
  else padded_spmm_kernel<1><<<grid, block>>>(rows, k, kl, col, val, x, y);
}

}  // namespace spmv::cuda
