// Dense transposition on the device: column-major X and Y for kernels that work row-major
// (cuda_plan.cuh's product()); the output is stored through the product's Epilogue (alpha, beta)
// where it is Y. 32 x 32 tiles through shared memory, so that both the reads and the
// writes are coalesced; the padding column keeps the tile's columns in different banks. A side of
// at most kSkinny (X or Y of up to 4 right-hand sides) would leave most of a tile's threads idle:
// there a block moves a run of lines of the long side (at 16 the tiles win). Double and float (the
// single-precision plans' X and Y).
#include <algorithm>

#include "cuda/cuda_plan.cuh"

namespace spmv::cuda {

namespace {

constexpr int kTile = 32, kRowsPerPass = 8, kSkinny = 4;

// One block per tile, numbered row-tile major in a 1-D grid (either side may exceed a 2-D grid's
// 65535 limit: millions of rows by a few right-hand sides).
template <class T>
__global__ void transpose_kernel(const T* __restrict__ in, T* __restrict__ out, long long rows, long long cols,
                                 long long col_tiles, Epilogue<T> ep) {
  __shared__ T tile[kTile][kTile + 1];
  const long long c0 = (blockIdx.x % col_tiles) * kTile, r0 = (blockIdx.x / col_tiles) * kTile;
  for (int i = threadIdx.y; i < kTile; i += kRowsPerPass) {
    const long long r = r0 + i, c = c0 + threadIdx.x;
    if (r < rows && c < cols) tile[i][threadIdx.x] = in[r * cols + c];
  }
  __syncthreads();
  for (int i = threadIdx.y; i < kTile; i += kRowsPerPass) {
    const long long c = c0 + i, r = r0 + threadIdx.x;  // out row c, column r
    if (r < rows && c < cols) ep.put(out, c * rows + r, tile[threadIdx.x][i]);
  }
}

// in: rows x cols row-major, out: cols x rows row-major, one of the two (N) at most kSkinny. A
// block moves kLines lines of the long side through shared memory: the N short lines are read (or
// written) coalesced along the long side, the block's contiguous run of kLines * N doubles on the
// other side likewise; a thread moving its own line of N doubles would touch a part of a sector per
// warp instruction.
constexpr int kLines = 256;
template <class T, int N>
__global__ void transpose_skinny_kernel(const T* __restrict__ in, T* __restrict__ out, long long rows, long long cols,
                                        Epilogue<T> ep) {
  __shared__ T buf[kLines * N];
  const long long first = static_cast<long long>(blockIdx.x) * kLines;
  const long long lines = rows <= cols ? cols : rows;
  const int n = static_cast<int>(min(static_cast<long long>(kLines), lines - first));
  const int t = threadIdx.x;
  if (rows <= cols) {  // N rows: gather columns first.. of each, write out's rows first.. whole
    if (t < n)
#pragma unroll
      for (int r = 0; r < N; ++r) buf[t * N + r] = __ldg(in + r * cols + first + t);
    __syncthreads();
    for (int i = t; i < n * N; i += kLines) ep.put(out, first * N + i, buf[i]);
  } else {  // N columns: read rows first.. whole, scatter them to out's N rows
    for (int i = t; i < n * N; i += kLines) buf[i] = __ldg(in + first * N + i);
    __syncthreads();
    if (t < n)
#pragma unroll
      for (int c = 0; c < N; ++c) ep.put(out, c * rows + first + t, buf[t * N + c]);
  }
}

}  // namespace

template <class T>
void transpose_async(const T* in, T* out, long long rows, long long cols, cudaStream_t stream, Epilogue<T> ep) {
  if (rows == 0 || cols == 0) return;
  if (std::min(rows, cols) <= kSkinny) {
    const unsigned grid = static_cast<unsigned>((std::max(rows, cols) + kLines - 1) / kLines);
    switch (std::min(rows, cols)) {
      case 1: transpose_skinny_kernel<T, 1><<<grid, kLines, 0, stream>>>(in, out, rows, cols, ep); break;
      case 2: transpose_skinny_kernel<T, 2><<<grid, kLines, 0, stream>>>(in, out, rows, cols, ep); break;
      case 3: transpose_skinny_kernel<T, 3><<<grid, kLines, 0, stream>>>(in, out, rows, cols, ep); break;
      default: transpose_skinny_kernel<T, 4><<<grid, kLines, 0, stream>>>(in, out, rows, cols, ep);
    }
    SPMV_CUDA_CHECK_LAUNCH();
    return;
  }
  const long long col_tiles = (cols + kTile - 1) / kTile, row_tiles = (rows + kTile - 1) / kTile;
  transpose_kernel<<<static_cast<unsigned>(col_tiles * row_tiles), dim3(kTile, kRowsPerPass), 0, stream>>>(
      in, out, rows, cols, col_tiles, ep);
  SPMV_CUDA_CHECK_LAUNCH();
}

template void transpose_async<double>(const double*, double*, long long, long long, cudaStream_t, Epilogue<double>);
template void transpose_async<float>(const float*, float*, long long, long long, cudaStream_t, Epilogue<float>);

}  // namespace spmv::cuda
