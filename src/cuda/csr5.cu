// CSR5 SpMV on the GPU (omega = 32): a warp per full tile, a lane per tile column.
//
// Each lane walks its sigma entries (step i of all lanes is one coalesced load), closing a
// segment at every row-start flag. Columns' leading parts ("red": the end of a segment opened to
// the left) are combined with a segmented suffix scan over the warp (5 shuffle steps): the
// segment still open at the bottom of column c gets red[c+1 .. first flagged column]. The
// scan adds only values of the same row, so no cancellation between rows as with the paper's
// plain prefix-sum differences.
//
// Rows spanning tiles (deterministic mode, the default, three kernels):
//   1. tiles: interior segments and a tile's last segment (when it is not segment 0) are stored
//      directly; segment 0's sum goes to first[t];
//   2. combine: the warp of the first tile of each run of tiles starting in the same row sums
//      first[] over the run in a fixed order and assigns (the run begins the row) or adds (the
//      row began in the previous tile's last segment);
//   3. tail: the incomplete last tile by CSR, one thread per row.
// Atomic mode: y zeroed, segment 0 and a tile's last segment added with atomicAdd, then the tail.
#include <spmv/formats/csr5.hpp>

#include <chrono>

#include "cuda/csr_device.cuh"
#include "cuda/cuda_kernels.hpp"

namespace spmv::cuda {

namespace {

constexpr unsigned long long kHint = 1ull << 63;
constexpr unsigned kFull = 0xffffffffu;

struct DevCsr5 {
  int sigma, y_bits, seg_bits, desc_words;
  long long tiles, tile_entries;
  const unsigned long long* tile_ptr;
  const unsigned* desc;
  const long long* eo_ptr;
  const index_t* eo;
  const long long* rp;
  const index_t* col;
  const double* val;
};

// Stores segment k >= 1 of tile t (row0 = its first row), zeroing the empty rows before it.
__device__ __forceinline__ void store_segment(const DevCsr5& m, long long t, index_t row0, bool hinted,
                                              int k, double s, double* y, bool atomic) {
  index_t row = row0 + k;
  if (hinted) {
    const index_t* eo = m.eo + m.eo_ptr[t];
    row = row0 + eo[k];
    if (!atomic)  // atomic mode zeroed y beforehand
      for (index_t r = row0 + eo[k - 1] + 1; r < row; ++r) y[r] = 0.0;
  }
  if (atomic) atomicAdd(y + row, s);
  else y[row] = s;
}

__global__ void csr5_tiles(DevCsr5 m, const double* __restrict__ x, double* __restrict__ y,
                           double* __restrict__ first, bool atomic) {
  const long long t = (static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const int lane = threadIdx.x & 31;
  if (t >= m.tiles) return;  // whole warps leave together (blockDim is a multiple of 32)
  const unsigned long long tp = m.tile_ptr[t];
  const index_t row0 = static_cast<index_t>(tp & ~kHint);
  const bool hinted = (tp & kHint) != 0;
  unsigned long long d = m.desc[t * m.desc_words * 32 + lane];
  if (m.desc_words == 2) d |= static_cast<unsigned long long>(m.desc[(t * m.desc_words + 1) * 32 + lane]) << 32;
  unsigned long long flags = d >> (m.y_bits + m.seg_bits);
  if (lane == 0) flags |= 1;  // segment 0 always opens at the tile's first entry
  int seg = static_cast<int>(d & ((1ull << m.y_bits) - 1)) - 1;
  const unsigned seg_off = static_cast<unsigned>((d >> m.y_bits) & ((1ull << m.seg_bits) - 1));
  double sum = 0, red = 0;
  bool seen = false;
  const long long base = t * m.tile_entries;
  const double* v = m.val + base + lane;
  const index_t* ci = m.col + base + lane;
  for (int i = 0; i < m.sigma; ++i) {
    if ((flags >> i) & 1) {
      if (!seen) {
        red = sum;
        seen = true;
      } else if (seg == 0) {
        if (atomic) atomicAdd(y + row0, sum);
        else first[t] = sum;
      } else {
        store_segment(m, t, row0, hinted, seg, sum, y, false);
      }
      ++seg;
      sum = 0;
    }
    sum += __ldg(v + i * 32) * __ldg(x + __ldg(ci + i * 32));
  }
  if (!seen) red = sum;
  // Segmented suffix scan: acc[c] = red[c] + red[c+1] + ... up to the first lane that has a flag
  // (or lane 31), inclusive.
  double acc = red;
  int stop = seen || lane == 31;
  for (int off = 1; off < 32; off *= 2) {
    const double a = __shfl_down_sync(kFull, acc, off);
    const int s = __shfl_down_sync(kFull, stop, off);
    if (lane + off < 32 && !stop) {
      acc += a;
      stop = s;
    }
  }
  double right = __shfl_down_sync(kFull, acc, 1);
  if (lane == 31) right = 0;
  if (seen) {
    const double total = sum + right;
    const bool reaches_end = lane + static_cast<int>(seg_off) >= 31;  // may continue in tile t+1
    if (seg == 0) {
      if (atomic) atomicAdd(y + row0, total);
      else first[t] = total;
    } else {
      store_segment(m, t, row0, hinted, seg, total, y, atomic && reaches_end);
    }
  }
}

// Deterministic combination of segment-0 sums: one warp per tile, active only on the first tile
// of each run of tiles sharing tile_ptr.
__global__ void csr5_combine(DevCsr5 m, const double* __restrict__ first, double* __restrict__ y) {
  const long long t = (static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const int lane = threadIdx.x & 31;
  if (t >= m.tiles) return;
  const unsigned long long tp = m.tile_ptr[t];
  const index_t r = static_cast<index_t>(tp & ~kHint);
  if (t > 0 && static_cast<index_t>(m.tile_ptr[t - 1] & ~kHint) == r) return;
  double s = 0;
  for (long long u0 = t;; u0 += 32) {
    const long long u = u0 + lane;
    const bool in = u < m.tiles && static_cast<index_t>(m.tile_ptr[u] & ~kHint) == r;
    if (in) s += first[u];
    if (__ballot_sync(kFull, in) != kFull) break;  // the run ends inside this chunk
  }
  s = group_sum(s, 32);
  if (lane != 0) return;
  const long long base = t * m.tile_entries;
  if (m.rp[r] == base) {  // the run begins row r
    if (tp & kHint)
      for (index_t e = r - 1; e >= 0 && m.rp[e] == base; --e) y[e] = 0.0;
    y[r] = s;
  } else {
    y[r] += s;
  }
}

// The incomplete last tile: item 0 adds the rest of the row straddling the tail start; item
// i >= 1 assigns row rb + i - 1 (rows starting at or after the tail, trailing empty rows too).
__global__ void csr5_tail(DevCsr5 m, index_t rows, index_t rb, long long tb, const double* __restrict__ x,
                          double* __restrict__ y) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i == 0) {
    if (rb > 0 && rb <= rows && m.rp[rb] > tb) {
      double s = 0;
      for (long long p = tb; p < m.rp[rb]; ++p) s += m.val[p] * __ldg(x + m.col[p]);
      y[rb - 1] += s;
    }
    return;
  }
  const long long r = rb + i - 1;
  if (r >= rows) return;
  double s = 0;
  for (long long p = m.rp[r]; p < m.rp[r + 1]; ++p) s += m.val[p] * __ldg(x + m.col[p]);
  y[r] = s;
}

class Csr5Plan final : public CudaPlan {
 public:
  Csr5Plan(const Csr& a, const PlanOptions& opt)
      : CudaPlan(a.rows, a.cols, opt), block_(checked_block_size(opt)), atomic_(!opt.deterministic) {
    const int omega = opt.csr5_omega > 0 ? opt.csr5_omega : csr5_omega_for(Backend::Cuda);
    if (omega != 32) throw Unsupported("csr5 on CUDA: omega must be 32 (a warp), got " + std::to_string(omega));
    const double per_row = a.rows > 0 ? static_cast<double>(a.nnz()) / a.rows : 0.0;
    const int sigma = opt.csr5_sigma > 0 ? opt.csr5_sigma : csr5_sigma_for(per_row, Backend::Cuda);
    auto t0 = std::chrono::steady_clock::now();
    f_ = csr_to_csr5(a, omega, sigma, opt);
    convert_seconds = seconds_since(t0);
    t0 = std::chrono::steady_clock::now();
    tile_ptr_.upload(reinterpret_cast<const unsigned long long*>(f_.tile_ptr.data()), f_.tile_ptr.size());
    desc_.upload(f_.tile_desc.data(), f_.tile_desc.size());
    eo_ptr_.upload(reinterpret_cast<const long long*>(f_.empty_offset_ptr.data()), f_.empty_offset_ptr.size());
    eo_.upload(f_.empty_offset);
    rp_.upload(reinterpret_cast<const long long*>(f_.row_ptr.data()), f_.row_ptr.size());
    col_.upload(f_.col);
    val_.upload(f_.val);
    first_.resize(static_cast<std::size_t>(f_.tiles));
    SPMV_CUDA_CHECK(cudaDeviceSynchronize());
    setup_seconds = seconds_since(t0);
    const auto& rp = f_.row_ptr;
    tb_ = f_.tail_begin();
    rb_ = static_cast<index_t>(std::lower_bound(rp.begin(), rp.end(), tb_) - rp.begin());
    bytes_per_product = csr_product_bytes(a, 1) + static_cast<offset_t>(f_.tile_desc.size()) * 4 +
                        static_cast<offset_t>(f_.tile_ptr.size()) * 8;
    stored_entries = a.nnz();
    detail = "omega=32 sigma=" + std::to_string(sigma) + " tiles=" + std::to_string(f_.tiles) +
             (atomic_ ? " atomic" : " two-pass");
  }

 protected:
  void launch() override {
    if (rows_ == 0) return;
    const DevCsr5 m{f_.sigma, f_.y_bits, f_.seg_bits, f_.desc_words, f_.tiles, f_.tile_entries(),
                    tile_ptr_.data(), desc_.data(), eo_ptr_.data(), eo_.data(), rp_.data(), col_.data(), val_.data()};
    if (f_.tiles > 0) {
      const unsigned grid = grid_for(f_.tiles * 32, block_);
      if (atomic_) zero_async(y_);
      csr5_tiles<<<grid, block_>>>(m, x_.data(), y_.data(), first_.data(), atomic_);
      SPMV_CUDA_CHECK_LAUNCH();
      if (!atomic_) {
        csr5_combine<<<grid, block_>>>(m, first_.data(), y_.data());
        SPMV_CUDA_CHECK_LAUNCH();
      }
    }
    const offset_t items = static_cast<offset_t>(rows_) - rb_ + 1;
    csr5_tail<<<grid_for(items, block_), block_>>>(m, rows_, rb_, tb_, x_.data(), y_.data());
    SPMV_CUDA_CHECK_LAUNCH();
  }

 private:
  int block_;
  bool atomic_;
  Csr5 f_;
  offset_t tb_ = 0;
  index_t rb_ = 0;
  DeviceBuffer<unsigned long long> tile_ptr_;
  DeviceBuffer<unsigned> desc_;
  DeviceBuffer<long long> eo_ptr_;
  DeviceBuffer<index_t> eo_;
  DeviceBuffer<long long> rp_;
  DeviceBuffer<index_t> col_;
  DeviceBuffer<double> val_;
  DeviceBuffer<double> first_;
};

}  // namespace

void register_csr5() {
  add_kernel({.name = "csr5",
              .backend = Backend::Cuda,
              .format = "csr5",
              .description = "CSR5 tiles (32 x sigma, sigma from nnz/row), a warp per tile; "
                             "two-pass combination when deterministic, atomics otherwise",
              .params = {"block_size", "csr5_sigma", "deterministic"},
              .make = [](const Csr& a, const PlanOptions& o) -> std::unique_ptr<Plan> {
                return std::make_unique<Csr5Plan>(a, o);
              }});
}

}  // namespace spmv::cuda
