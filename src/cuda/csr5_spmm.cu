// CSR5 SpMM on the GPU, Y = A*X with K right-hand sides in either layout (the "csr5" kernel at
// k > 1): csr5.cu's two-pass product with C right-hand sides a lane. A warp per tile and a lane per
// tile column as there; each entry's value is loaded once and multiplied by C elements of X's row
// (row-major: one or two double2 loads; column-major: C loads), every segment carries C sums, and
// the segmented suffix scan runs once per column. Blocks of C columns are the grid's second
// dimension, so A is read K/C times. Rows that cross tiles leave their carries in first (C per
// tile), summed in tile order by the fix-up kernel: deterministic, as the SpMV's modes but atomic.
// The incomplete last tile is done by CSR after the tiles, a thread per row.
// Precision: templates on the values' type MV and X's, Y's, the sums' and the carries'
// VV, launched for the plan's precision (double, single, mixed); X's rows of float are read as
// float4 / float2 vectors (load_x).
#include <algorithm>
#include <string>

#include "cuda/csr5_device.cuh"
#include "cuda/cuda_kernels.hpp"
#include "cuda/padded_spmm.cuh"
#include "cuda/tuning.hpp"

namespace spmv::cuda::csr5 {

namespace {

// X and Y by strides (element (i, c) of X is x[i*xr + c*xc], of Y y[i*yr + c*yc]), K, the
// carries: (tiles + 1) rows of K; all of the vectors' type VV; and Y's store (alpha, beta).
template <class VV>
struct DenseOps {
  const VV* x;
  long long xr, xc;
  VV* y;
  long long yr, yc;
  int k;
  VV* first;
  Epilogue<VV> ep;
};

template <int C, class VV>
__device__ __forceinline__ void put(const DenseOps<VV>& o, long long row, int c0, const VV (&s)[C]) {
#pragma unroll
  for (int j = 0; j < C; ++j) o.ep.put(o.y, row * o.yr + (c0 + j) * o.yc, s[j]);
}

template <int C, class VV>
__device__ __forceinline__ void zero_rows(const DenseOps<VV>& o, long long from, long long to, int c0) {
  for (long long r = from; r < to; ++r)
#pragma unroll
    for (int j = 0; j < C; ++j) o.ep.empty(o.y, r * o.yr + (c0 + j) * o.yc);
}

// Empty rows just before row r that starts at `start` (hinted tiles only).
template <int C, class MV, class VV>
__device__ __forceinline__ void zero_empty_before(const DevCsr5<MV>& m, const DenseOps<VV>& o, index_t r,
                                                  long long start, int c0) {
  index_t e = r;
  while (e > 0 && m.rp[e - 1] == start) --e;
  zero_rows<C>(o, e, r, c0);
}

// A CSR row's C sums.
template <int C, bool XRow, class MV, class VV>
__device__ __forceinline__ void row_sums(const DevCsr5<MV>& m, const DenseOps<VV>& o, long long b, long long e, int c0,
                                         VV (&s)[C]) {
#pragma unroll
  for (int j = 0; j < C; ++j) s[j] = VV(0);
  for (long long p = b; p < e; ++p) {
    const VV v = static_cast<VV>(__ldg(m.val + p));
    VV xs[C];
    cuda::load_x<C, !XRow>(o.x, __ldg(m.col + p), c0, o.k, o.xc, xs);
#pragma unroll
    for (int j = 0; j < C; ++j) s[j] += v * xs[j];
  }
}

// Segment kseg of tile t has sums s. reaches_end: it may continue in tile t+1.
template <int C, class MV, class VV>
__device__ __forceinline__ void close_segment(const DevCsr5<MV>& m, const DenseOps<VV>& o, long long t, index_t row0,
                                              bool hinted, bool begins, int kseg, const VV (&s)[C], bool reaches_end,
                                              int c0) {
  if (kseg == 0) {
    if (begins && !reaches_end) {  // row0 lies wholly in this tile
      if (hinted) zero_empty_before<C>(m, o, row0, t * m.te, c0);
      put<C>(o, row0, c0, s);
    } else {
#pragma unroll
      for (int j = 0; j < C; ++j) o.first[t * o.k + c0 + j] = s[j];
    }
    return;
  }
  index_t row = row0 + kseg;
  if (hinted) {
    const index_t* eo = m.eo + m.eo_ptr[t];
    row = row0 + eo[kseg];
    zero_rows<C>(o, row0 + eo[kseg - 1] + 1, row, c0);
  }
  put<C>(o, row, c0, s);
}

// MaxThreads: 256 for the default blocks (registers unbounded: C = 4 needs more than 64), 1024 for
// larger blocks, which then launch at the cost of spills.
template <int KB, int C, bool XRow, int MaxThreads, class MV, class VV>
__global__ void __launch_bounds__(MaxThreads) csr5_spmm_main(DevCsr5<MV> m, DenseOps<VV> o) {
  const long long t = (static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const int lane = threadIdx.x & 31;
  const int c0 = static_cast<int>(blockIdx.y) * C;
  if (t >= m.tiles) {  // the tail: item 0 its carry into row rb-1, item i >= 1 row rb+i-1
    const long long i = (t - m.tiles) * 32 + lane;
    VV s[C];
    if (i == 0) {
      const bool carry = m.rb > 0 && m.rp[m.rb] > m.tb;
      row_sums<C, XRow>(m, o, m.tb, carry ? m.rp[m.rb] : m.tb, c0, s);
#pragma unroll
      for (int j = 0; j < C; ++j) o.first[m.tiles * o.k + c0 + j] = s[j];
    } else if (m.rb + i - 1 < m.rows) {
      const long long r = m.rb + i - 1;
      row_sums<C, XRow>(m, o, m.rp[r], m.rp[r + 1], c0, s);
      put<C>(o, r, c0, s);
    }
    return;
  }
  const TileColumn tc = tile_column(m, t, lane);
  int seg = tc.seg;
  VV sum[C] = {}, red[C] = {};
  bool seen = false;
  const long long base = t * m.te;
  const MV* v = m.val + base + lane;
  const index_t* ci = m.col + base + lane;
  const int sigma = m.sigma;
  for (int i0 = 0; i0 < sigma; i0 += KB) {
    VV p[KB][C];  // KB entries' products, their loads issued together
#pragma unroll
    for (int u = 0; u < KB; ++u) {
      const int i = i0 + u;
      if (i < sigma) {
        const VV a = static_cast<VV>(__ldg(v + i * 32));
        cuda::load_x<C, !XRow>(o.x, __ldg(ci + i * 32), c0, o.k, o.xc, p[u]);
#pragma unroll
        for (int j = 0; j < C; ++j) p[u][j] *= a;
      }
    }
#pragma unroll
    for (int u = 0; u < KB; ++u) {
      const int i = i0 + u;
      if (i >= sigma) break;
      if ((tc.flags >> i) & 1) {
        if (!seen) {
#pragma unroll
          for (int j = 0; j < C; ++j) red[j] = sum[j];
          seen = true;
        } else {
          close_segment<C>(m, o, t, tc.row0, tc.hinted, tc.begins, seg, sum, false, c0);
        }
        ++seg;
#pragma unroll
        for (int j = 0; j < C; ++j) sum[j] = VV(0);
      }
#pragma unroll
      for (int j = 0; j < C; ++j) sum[j] += p[u][j];
    }
  }
  if (!seen)
#pragma unroll
    for (int j = 0; j < C; ++j) red[j] = sum[j];
#pragma unroll
  for (int j = 0; j < C; ++j) sum[j] += right_of_column(red[j], seen, lane);
  if (seen)
    close_segment<C>(m, o, t, tc.row0, tc.hinted, tc.begins, seg, sum, lane + static_cast<int>(tc.seg_off) >= 31, c0);
}

// csr5_fixup (csr5.cu) for C columns: thread t in [0, tiles] sums the carries it owns
// (carry_owner) in tile order.
template <int C, class MV, class VV>
__global__ void csr5_spmm_fixup(DevCsr5<MV> m, DenseOps<VV> o) {
  const long long t = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int lane = threadIdx.x & 31;
  const int c0 = static_cast<int>(blockIdx.y) * C;
  const CarryOwner c = carry_owner(m, t);
  const auto store = [&](const VV(&s)[C]) {
    if (c.assign) {
      if (c.hinted) zero_empty_before<C>(m, o, c.r, c.start, c0);
      put<C>(o, c.r, c0, s);
    } else {
#pragma unroll
      for (int j = 0; j < C; ++j) o.ep.add(o.y, c.r * o.yr + (c0 + j) * o.yc, s[j]);
    }
  };
  const bool wide = c.own && c.b - t >= 32;
  if (c.own && !wide) {
    VV s[C] = {};
    for (long long u = t; u <= c.b; ++u)
#pragma unroll
      for (int j = 0; j < C; ++j) s[j] += o.first[u * o.k + c0 + j];
    store(s);
  }
  // Rows over 32 tiles: the warp sums their carries together, one row at a time.
  for (unsigned mask = __ballot_sync(kFull, wide); mask; mask &= mask - 1) {
    const int src = __ffs(mask) - 1;
    const long long a0 = __shfl_sync(kFull, t, src), b0 = __shfl_sync(kFull, c.b, src);
    VV s[C] = {};
    for (long long u = a0 + lane; u <= b0; u += 32)
#pragma unroll
      for (int j = 0; j < C; ++j) s[j] += o.first[u * o.k + c0 + j];
#pragma unroll
    for (int j = 0; j < C; ++j) s[j] = group_sum(s[j], 32);
    if (lane == src) store(s);
  }
}

class Csr5SpmmPlan final : public CudaPlan {
 public:
  Csr5SpmmPlan(const CsrView& a, const PlanOptions& opt, const SharedDeviceCsr& dev, int sigma)
      : CudaPlan(a.rows, a.cols, opt, vectors_of(dev, opt)),
        block_(checked_block_size(opt)),
        c_(opt.k % 4 == 0   ? 4
           : opt.k % 2 == 0 ? 2
                            : 1),
        m_(a, sigma, convert_options(opt), opt.precision, dev.get()) {
    device_transpose_ = false;  // both layouts through strides
    if (k_ / c_ > 65535)        // blocks of columns on the grid's second dimension
      throw Unsupported("csr5 on CUDA: at most 65535 blocks of right-hand sides (k = " + std::to_string(k_) +
                        " takes " + std::to_string(k_ / c_) + ")");
    convert_seconds = m_.convert_seconds;
    setup_seconds = m_.upload_seconds;
    const auto& f = m_.meta;
    if (opt.kernel.block_size == 0) block_ = tuning::csr5_block(f.sigma);
    tb_ = f.tail_begin();
    rb_ = static_cast<index_t>(std::lower_bound(a.row_ptr.begin(), a.row_ptr.end(), tb_) - a.row_ptr.begin());
    first_.resize((static_cast<std::size_t>(f.tiles) + 1) * k_, prec_ == Precision::Single);  // VV carries
    bytes_per_product = m_.product_bytes(a, k_);
    stored_entries = a.nnz();
    detail = "omega=32 sigma=" + std::to_string(f.sigma) + " tiles=" + std::to_string(f.tiles) +
             " block=" + std::to_string(block_) + " rhs_per_lane=" + std::to_string(c_) + " two-pass device-conversion";
  }

 protected:
  void launch(const Launch& l) override {
    if (rows_ == 0) return;
    with_types(prec_, [&]<class MV, class VV>() { launch_as<MV, VV>(l); });
  }

 private:
  // One product with the values' type MV and the vectors' VV (the plan's precision).
  template <class MV, class VV>
  void launch_as(const Launch& l) {
    const auto& f = m_.meta;
    const DevCsr5<MV> m = m_.view<MV>(rows_, rb_, tb_);
    const bool rm = layout_ == Layout::RowMajor;
    const DenseOps<VV> o{l.xv<VV>(),     rm ? k_ : 1, rm ? 1 : cols_,          l.yv<VV>(), rm ? k_ : 1,
                         rm ? 1 : rows_, k_,          first_.get<VV>().data(), l.ep<VV>()};
    const offset_t tail_rows = static_cast<offset_t>(rows_) - rb_;
    const dim3 grid(grid_for((f.tiles + (tail_rows + 1 + 31) / 32) * 32, block_), static_cast<unsigned>(k_ / c_));
    const auto kernel = c_ == 4   ? main_kernel<4, 4, MV, VV>(rm)
                        : c_ == 2 ? main_kernel<8, 2, MV, VV>(rm)
                                  : main_kernel<8, 1, MV, VV>(rm);
    kernel<<<grid, block_, 0, l.stream>>>(m, o);
    SPMV_CUDA_CHECK_LAUNCH();
    if (f.tiles == 0) return;
    const dim3 fix(grid_for(f.tiles + 1, block_), static_cast<unsigned>(k_ / c_));
    const auto fixup = c_ == 4   ? csr5_spmm_fixup<4, MV, VV>
                       : c_ == 2 ? csr5_spmm_fixup<2, MV, VV>
                                 : csr5_spmm_fixup<1, MV, VV>;
    fixup<<<fix, block_, 0, l.stream>>>(m, o);
    SPMV_CUDA_CHECK_LAUNCH();
  }

  template <class MV, class VV>
  using Kernel = void (*)(DevCsr5<MV>, DenseOps<VV>);
  template <int KB, int C, class MV, class VV>
  Kernel<MV, VV> main_kernel(bool rm) const {
    if (block_ > 256)
      return rm ? csr5_spmm_main<KB, C, true, 1024, MV, VV> : csr5_spmm_main<KB, C, false, 1024, MV, VV>;
    return rm ? csr5_spmm_main<KB, C, true, 256, MV, VV> : csr5_spmm_main<KB, C, false, 256, MV, VV>;
  }

  int block_;
  int c_;  // right-hand sides a lane
  DeviceCsr5 m_;
  offset_t tb_ = 0;
  index_t rb_ = 0;
  DeviceValues first_;  // the carries, of the vectors' type (f32 for single)
};

}  // namespace

std::unique_ptr<Plan> make_csr5_spmm(const CsrView& a, const PlanOptions& opt, const SharedDeviceCsr& dev, int sigma) {
  return std::make_unique<Csr5SpmmPlan>(a, opt, dev, sigma);
}

}  // namespace spmv::cuda::csr5
