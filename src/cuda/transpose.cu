// Dense transposition on the device: column-major X and Y for kernels that work row-major
// (cuda_plan.cuh's product()). 32 x 32 tiles through shared memory, so that both the reads and the
// writes are coalesced; the padding column keeps the tile's columns in different banks. A side of
// at most kSkinny (X or Y of up to 4 right-hand sides) would leave most of a tile's threads idle:
// there a thread moves one line of the long side, its loads (or stores) coalesced across the warp
// and its stores (or loads) one contiguous run of at most kSkinny doubles (at 16 the strided
// runs cost more than the tiles' idle threads).
#include <algorithm>

#include "cuda/cuda_plan.cuh"

namespace spmv::cuda {

namespace {

constexpr int kTile = 32, kRowsPerPass = 8, kSkinny = 4;

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

// in: rows x cols row-major, out: cols x rows row-major, one of the two at most kSkinny.
__global__ void transpose_skinny_kernel(const double* __restrict__ in, double* __restrict__ out, long long rows,
                                        long long cols) {
  const long long t = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (rows <= cols) {  // few rows: thread t gathers column t, writes out's row t
    if (t >= cols) return;
    for (long long r = 0; r < rows; ++r) out[t * rows + r] = __ldg(in + r * cols + t);
  } else {  // few columns: thread t reads row t, scatters it to out's column t
    if (t >= rows) return;
    for (long long c = 0; c < cols; ++c) out[c * rows + t] = __ldg(in + t * cols + c);
  }
}

}  // namespace

void transpose_async(const double* in, double* out, long long rows, long long cols) {
  if (rows == 0 || cols == 0) return;
  if (std::min(rows, cols) <= kSkinny) {
    const long long lines = std::max(rows, cols);
    transpose_skinny_kernel<<<static_cast<unsigned>((lines + 255) / 256), 256>>>(in, out, rows, cols);
    SPMV_CUDA_CHECK_LAUNCH();
    return;
  }
  const long long col_tiles = (cols + kTile - 1) / kTile, row_tiles = (rows + kTile - 1) / kTile;
  transpose_kernel<<<static_cast<unsigned>(col_tiles * row_tiles), dim3(kTile, kRowsPerPass)>>>(in, out, rows, cols,
                                                                                               col_tiles);
  SPMV_CUDA_CHECK_LAUNCH();
}

}  // namespace spmv::cuda
