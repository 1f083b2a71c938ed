// CSR merge-path (Merrill & Garland, SC'16): the merge of the row ends with the nonzero indices is
// cut into equal tiles of rows+nnz items, so a row of 100k entries next to rows of 2 costs the same
// per item. Tile coordinates are found once, on the device (a binary search per tile). A block stages its tile (products val*x
// and row ends) in shared memory with coalesced loads, each thread walks IPT items of the path,
// partial sums of rows cut between threads are joined by a warp-shuffle segmented scan in a fixed order, and
// each block's carry-out (the row still open at its end) is added by a second small kernel that
// sums each row's carries in block order: no atomics, the same bits on every run.
#include "cuda/csr_device.cuh"
#include "cuda/cuda_kernels.hpp"

#include <algorithm>
#include "core/register.hpp"

namespace spmv::cuda {

namespace {

// Inclusive segmented scan over the block of each thread's (open row, partial) carry, keyed by row;
// rows never decrease with the thread index, so equal keys are contiguous. Warps scan with
// shuffles, then warp 0 scans the warp totals: two barriers, a fixed order of additions. Returns
// the thread's full inclusive value; s_crow and s_cval hold each warp's last row and its total.
template <class VV>
__device__ __forceinline__ VV block_segmented_scan(int row, VV v, int* s_crow, VV* s_cval) {
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, n_warps = blockDim.x >> 5;
  for (int off = 1; off < 32; off *= 2) {
    const int pr = __shfl_up_sync(0xffffffffu, row, off);
    const VV pv = __shfl_up_sync(0xffffffffu, v, off);
    if (lane >= off && pr == row) v += pv;
  }
  if (lane == 31) {
    s_crow[warp] = row;
    s_cval[warp] = v;
  }
  __syncthreads();
  if (warp == 0) {
    int wr = lane < n_warps ? s_crow[lane] : 0x7fffffff;
    VV wv = lane < n_warps ? s_cval[lane] : VV(0);
    for (int off = 1; off < 32; off *= 2) {
      const int pr = __shfl_up_sync(0xffffffffu, wr, off);
      const VV pv = __shfl_up_sync(0xffffffffu, wv, off);
      if (lane >= off && pr == wr) wv += pv;
    }
    if (lane < n_warps) s_cval[lane] = wv;
  }
  __syncthreads();
  // The earlier warps' carry of the same row (if this thread's row equals it, every earlier lane
  // of the warp has that row too).
  if (warp > 0 && s_crow[warp - 1] == row) v += s_cval[warp - 1];
  return v;
}

// MV: the matrix's value type, VV: x's, y's, the sums' and the staged products'.
template <class MV, class VV, typename OffT>
__global__ void csr_merge_kernel(int ipt, const index_t* __restrict__ tile_row, const OffT* __restrict__ tile_nz,
                                 const OffT* __restrict__ rp, const index_t* __restrict__ col,
                                 const MV* __restrict__ val, const VV* __restrict__ x, VV* __restrict__ y,
                                 index_t* __restrict__ carry_row, VV* __restrict__ carry_val, Epilogue<VV> ep) {
  const int nt = blockDim.x, tid = threadIdx.x, tile = nt * ipt;
  VV* s_prod = dynamic_shared<VV>();                  // tile
  VV* s_cval = s_prod + tile;                         // 32: per-warp carries
  int* s_rend = reinterpret_cast<int*>(s_cval + 32);  // tile: row ends relative to the tile's first entry
  int* s_crow = s_rend + tile;                        // 32
  const index_t r0 = tile_row[blockIdx.x], r1 = tile_row[blockIdx.x + 1];
  const OffT z0 = tile_nz[blockIdx.x], z1 = tile_nz[blockIdx.x + 1];
  const int nr = r1 - r0, nz = static_cast<int>(z1 - z0), len = nr + nz;
  for (int i = tid; i < nr; i += nt) s_rend[i] = static_cast<int>(rp[r0 + i + 1] - z0);
#pragma unroll 4
  for (int i = tid; i < nz; i += nt) s_prod[i] = static_cast<VV>(__ldg(val + z0 + i)) * __ldg(x + __ldg(col + z0 + i));
  __syncthreads();

  // This thread's start on the block's path: rows consumed + entries consumed = dl.
  const int dl = min(tid * ipt, len);
  int lo = max(dl - nz, 0), hi = min(dl, nr);
  while (lo < hi) {
    const int mid = (lo + hi) >> 1;
    if (s_rend[mid] <= dl - mid - 1)
      lo = mid + 1;
    else
      hi = mid;
  }
  int row = lo, k = dl - lo;
  const int end = min(dl + ipt, len);
  VV acc = 0, first_val = 0;
  int first_row = -1;
  for (int d = dl; d < end; ++d) {
    if (row < nr && k >= s_rend[row]) {  // the row ends here
      if (first_row < 0) {               // may have started in an earlier thread: written after the scan
        first_row = row;
        first_val = acc;
      } else {
        ep.put(y, r0 + row, acc);
      }
      acc = 0;
      ++row;
    } else {
      acc += s_prod[k++];
    }
  }
  const int lane = tid & 31, warp = tid >> 5;
  const VV v = block_segmented_scan(row, acc, s_crow, s_cval);
  // The carry into this thread is the full inclusive value of the thread before it.
  int prev_row = __shfl_up_sync(0xffffffffu, row, 1);
  VV prev_val = __shfl_up_sync(0xffffffffu, v, 1);
  if (lane == 0) {
    prev_row = warp > 0 ? s_crow[warp - 1] : -1;
    prev_val = warp > 0 ? s_cval[warp - 1] : VV(0);
  }
  if (first_row >= 0) ep.put(y, r0 + first_row, first_val + (prev_row == first_row ? prev_val : VV(0)));
  if (tid == nt - 1) {
    carry_row[blockIdx.x] = r0 + row;
    carry_val[blockIdx.x] = v;
  }
}

// Adds each row's block carries, in block order, once per row (the first block of a run does it),
// to the row the main kernel put (the row ends in a later block).
template <class VV>
__global__ void csr_merge_fixup(int n_blocks, index_t rows, const index_t* __restrict__ carry_row,
                                const VV* __restrict__ carry_val, VV* __restrict__ y, Epilogue<VV> ep) {
  const int b = blockIdx.x * blockDim.x + threadIdx.x;
  if (b >= n_blocks) return;
  const index_t r = carry_row[b];
  if (r >= rows || (b > 0 && carry_row[b - 1] == r)) return;
  VV s = 0;
  for (int j = b; j < n_blocks && carry_row[j] == r; ++j) s += carry_val[j];
  ep.add(y, r, s);
}

// Tile b's start on the merge path: the diagonal b * tile split into rows consumed and entries
// consumed (the first row whose end lies beyond the entries the diagonal leaves).
template <typename OffT>
__global__ void merge_partition_kernel(const OffT* __restrict__ rp, long long rows, long long nnz, long long tile,
                                       long long n_blocks, index_t* __restrict__ tile_row, OffT* __restrict__ tile_nz) {
  const long long b = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (b > n_blocks) return;
  const long long diag = min(b * tile, rows + nnz);
  long long lo = max(diag - nnz, 0LL), hi = min(diag, rows);
  while (lo < hi) {
    const long long mid = (lo + hi) / 2;
    if (static_cast<long long>(rp[mid + 1]) <= diag - mid - 1)
      lo = mid + 1;
    else
      hi = mid;
  }
  tile_row[b] = static_cast<index_t>(lo);
  tile_nz[b] = static_cast<OffT>(diag - lo);
}

class CsrMerge final : public CsrDevicePlan {
 public:
  CsrMerge(const CsrView& a, const PlanOptions& opt, SharedDeviceCsr dev = nullptr)
      : CsrDevicePlan(a, opt, std::move(dev)) {
    const auto t0 = std::chrono::steady_clock::now();
    // Items per thread: as many as fit comfortably in 48 KiB of shared memory.
    ipt_ = tuning::csr_merge_items_per_thread(block_);
    const offset_t tile = static_cast<offset_t>(block_) * ipt_;
    const offset_t nnz = a.nnz(), total = a.rows + nnz;
    const offset_t n_blocks = (total + tile - 1) / tile;
    if (n_blocks >= std::numeric_limits<int>::max()) throw Unsupported("csr-merge: too many tiles");
    n_blocks_ = static_cast<int>(n_blocks);
    tile_row_.resize(n_blocks + 1);
    const unsigned grid = grid_for(n_blocks + 1, tuning::setup_block);
    if (m_.wide) {
      tile_nz64_.resize(n_blocks + 1);
      merge_partition_kernel<<<grid, tuning::setup_block>>>(m_.rp64.data(), a.rows, nnz, tile, n_blocks,
                                                            tile_row_.data(), tile_nz64_.data());
    } else {
      tile_nz32_.resize(n_blocks + 1);
      merge_partition_kernel<<<grid, tuning::setup_block>>>(m_.rp32.data(), a.rows, nnz, tile, n_blocks,
                                                            tile_row_.data(), tile_nz32_.data());
    }
    SPMV_CUDA_CHECK_LAUNCH();
    carry_row_.resize(n_blocks_);
    carry_val_.resize(n_blocks_);
    SPMV_CUDA_CHECK(cudaDeviceSynchronize());
    setup_seconds += seconds_since(t0);
    bytes_per_product += (4 + m_.offset_bytes()) * (n_blocks + 1);
    detail = "items_per_thread=" + std::to_string(ipt_) + " tiles=" + std::to_string(n_blocks_);
  }

 protected:
  void launch(const Launch& l) override {
    if (trivial()) return zero_y(l);
    with_types(prec_, [&]<class MV, class VV>() {
      // Per item: a product and a row end (int); per warp: a carry and its row.
      const std::size_t per = sizeof(VV) + sizeof(int);
      const std::size_t shmem = static_cast<std::size_t>(block_) * ipt_ * per + 32 * per;
      VV* carry_val = reinterpret_cast<VV*>(carry_val_.data());  // a double array holds as many floats
      if (m_.wide)
        csr_merge_kernel<<<n_blocks_, block_, shmem, l.stream>>>(
            ipt_, tile_row_.data(), tile_nz64_.data(), m_.rp64.data(), m_.col.data(), m_.val.data<MV>(), l.xv<VV>(),
            l.yv<VV>(), carry_row_.data(), carry_val, l.ep<VV>());
      else
        csr_merge_kernel<<<n_blocks_, block_, shmem, l.stream>>>(
            ipt_, tile_row_.data(), tile_nz32_.data(), m_.rp32.data(), m_.col.data(), m_.val.data<MV>(), l.xv<VV>(),
            l.yv<VV>(), carry_row_.data(), carry_val, l.ep<VV>());
      SPMV_CUDA_CHECK_LAUNCH();
      csr_merge_fixup<<<grid_for(n_blocks_, tuning::setup_block), tuning::setup_block, 0, l.stream>>>(
          n_blocks_, rows_, carry_row_.data(), static_cast<const VV*>(carry_val), l.yv<VV>(), l.ep<VV>());
    });
    SPMV_CUDA_CHECK_LAUNCH();
  }
  int ipt_ = 7, n_blocks_ = 0;
  DeviceBuffer<index_t> tile_row_;
  DeviceBuffer<int> tile_nz32_;
  DeviceBuffer<long long> tile_nz64_;
  DeviceBuffer<index_t> carry_row_;
  DeviceBuffer<double> carry_val_;  // in the plan's vector type
};

}  // namespace

std::unique_ptr<Plan> make_csr_merge(const CsrView& a, const PlanOptions& opt, SharedDeviceCsr dev) {
  return std::make_unique<CsrMerge>(a, opt, std::move(dev));
}

void register_csr_merge() {
  add_kernel({.name = "csr-merge",
              .backend = Backend::Cuda,
              .format = "csr",
              .description = "CSR merge-path: equal rows+nnz tiles, deterministic carry fix-up",
              .precisions = {Precision::Double, Precision::Single, Precision::Mixed},
              .params = {"block_size"},
              .make = [](const CsrView& a, const PlanOptions& o) { return make_csr_merge(a, o, nullptr); }});
}

}  // namespace spmv::cuda
