// Dense transposition on the device: column-major X and Y for kernels that work row-major
// (cuda_plan.cuh's product()). 32 x 32 tiles through shared memory, so that both the reads and the
// writes are coalesced; the padding column keeps the tile's columns in different banks.
#include "cuda/cuda_plan.cuh"

namespace spmv::cuda {

namespace {

constexpr int kTile = 32, kRowsPerPass = 8;

// One block per tile, numbered row-tile major in a 1-D grid (either side may exceed a 2-D grid's
// 65535 limit: millions of rows by a few right-hand sides).
__global__ void transpose_kernel(const double* __restrict__ in, double* __restrict__ out, long long rows, long long cols,
                                 long long col_tiles) {
  __shared__ double tile[kTile][kTile + 1];
  const long long c0 = (blockIdx.x % col_tiles) * kTile, r0 = (blockIdx.x / col_tiles) * kTile;
  for (int i = threadIdx.y; i < kTile; i += kRowsPerPass) {
    const long long r = r0 + i, c = c0 + threadIdx.x;
    if (r < rows && c < cols) tile[i][threadIdx.x] = in[r * cols + c];
  }
  __syncthreads();
  for (int i = threadIdx.y; i < kTile; i += kRowsPerPass) {
    const long long c = c0 + i, r = r0 + threadIdx.x;  // out row c, column r
    if (r < rows && c < cols) out[c * rows + r] = tile[threadIdx.x][i];
  }
}

}  // namespace

void transpose_async(const double* in, double* out, long long rows, long long cols) {
  if (rows == 0 || cols == 0) return;
  const long long col_tiles = (cols + kTile - 1) / kTile, row_tiles = (rows + kTile - 1) / kTile;
  transpose_kernel<<<static_cast<unsigned>(col_tiles * row_tiles), dim3(kTile, kRowsPerPass)>>>(in, out, rows, cols,
                                                                                               col_tiles);
  SPMV_CUDA_CHECK_LAUNCH();
}

}  // namespace spmv::cuda
