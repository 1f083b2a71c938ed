// CSR5 SpMV on the GPU (omega = 32): a warp per full tile, a lane per tile column, the matrix
// converted to CSR5 on the device.
//
// Product, one main kernel (+ a small fix-up kernel in deterministic mode):
//  - warps [0, tiles): a tile each. A lane loads its sigma entries in batches of kBatch (8 unless
//    the option variant says b4 or b16; step i of
//    all lanes is one coalesced 256-byte load; the batch keeps kBatch independent x gathers in
//    flight per lane instead of one), closing a segment at every row-start flag. The columns'
//    leading parts ("red", the end of a segment opened to the left) are combined by a segmented
//    suffix scan over the warp (5 shuffle steps); it adds only values of one row, so no
//    cancellation between rows as with the paper's prefix-sum differences. Every segment is
//    stored straight into y except those that cross a tile boundary: segment 0 when it does not
//    both begin and end inside the tile goes to first[t] (the carry); a last segment reaching
//    the tile end is stored and the fix-up adds the carries of the next tiles to it.
//  - the warps after them: the incomplete last tile by CSR, one thread per row; the part of the
//    row straddling the tail start goes to first[tiles], the tail's carry.
//  - fix-up (deterministic mode): one thread per tile; only the first tile whose segment 0 is
//    row r (the owner) works: it sums first[] over the tiles of row r in tile order (a warp
//    together for rows over 32 tiles) and assigns or adds. Same bits every run.
// Atomic mode (the paper's): y zeroed, carries added with atomicAdd, no fix-up.
//
// Conversion kernels: a warp per tile computes tile_ptr (binary search of row_ptr), each lane its
// column's bit_flag (the rows starting in its sigma entries), y_offset (warp prefix sum),
// seg_offset (ballot) and the in-tile transposition; the empty-row offsets of hinted tiles
// follow after a host prefix sum of their counts. Bit-identical to csr_to_csr5 (tested).
#include <spmv/formats/csr5.hpp>
#include <spmv/formats/csr5_cuda.hpp>

#include <chrono>

#include "cuda/csr_device.cuh"
#include "cuda/cuda_kernels.hpp"

namespace spmv::cuda {

namespace {

constexpr unsigned long long kHint = 1ull << 63;
constexpr unsigned kFull = 0xffffffffu;

struct DevCsr5 {
  int sigma, y_bits, seg_bits, desc_words;
  long long tiles, te, nnz;
  index_t rows, rb;  // rb: first row starting at or after the tail
  long long tb;      // tail begin
  const unsigned long long* tile_ptr;
  const unsigned* desc;
  const long long* eo_ptr;
  const index_t* eo;
  const long long* rp;
  const index_t* col;
  const double* val;
};

// Empty rows just before row r that starts at `start` (hinted tiles only).
__device__ __forceinline__ void zero_empty_before(const DevCsr5& m, index_t r, long long start, double* y) {
  for (index_t e = r - 1; e >= 0 && m.rp[e] == start; --e) y[e] = 0.0;
}

// Segment k of tile t has sum s. reaches_end: it may continue in tile t+1.
__device__ __forceinline__ void close_segment(const DevCsr5& m, long long t, index_t row0, bool hinted,
                                              bool begins, int k, double s, bool reaches_end, double* y,
                                              double* first, bool atomic) {
  if (k == 0) {
    if (begins && !reaches_end) {  // row0 lies wholly in this tile
      if (hinted && !atomic) zero_empty_before(m, row0, t * m.te, y);
      y[row0] = s;
    } else if (atomic) {
      atomicAdd(y + row0, s);
    } else {
      first[t] = s;
    }
    return;
  }
  index_t row = row0 + k;
  if (hinted) {
    const index_t* eo = m.eo + m.eo_ptr[t];
    row = row0 + eo[k];
    if (!atomic)  // atomic mode zeroed y beforehand
      for (index_t r = row0 + eo[k - 1] + 1; r < row; ++r) y[r] = 0.0;
  }
  if (atomic && reaches_end) atomicAdd(y + row, s);
  else y[row] = s;
}

// Tail item i: 0 = the part of row rb-1 inside the tail (the tail's carry); i >= 1 assigns row
// rb + i - 1 (rows starting at or after the tail, trailing empty rows too).
__device__ void tail_item(const DevCsr5& m, long long i, const double* __restrict__ x, double* __restrict__ y,
                          double* __restrict__ first, bool atomic) {
  if (i == 0) {
    double s = 0;
    if (m.rb > 0 && m.rp[m.rb] > m.tb) {
      for (long long p = m.tb; p < m.rp[m.rb]; ++p) s += m.val[p] * __ldg(x + m.col[p]);
      if (atomic) atomicAdd(y + m.rb - 1, s);
    }
    if (!atomic) first[m.tiles] = s;
    return;
  }
  const long long r = m.rb + i - 1;
  if (r >= m.rows) return;
  double s = 0;
  for (long long p = m.rp[r]; p < m.rp[r + 1]; ++p) s += m.val[p] * __ldg(x + m.col[p]);
  y[r] = s;
}

template <int kBatch>
__global__ void csr5_main(DevCsr5 m, const double* __restrict__ x, double* __restrict__ y,
                          double* __restrict__ first, bool atomic) {
  const long long t = (static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const int lane = threadIdx.x & 31;
  if (t >= m.tiles) {  // whole warps take this branch (blockDim is a multiple of 32)
    tail_item(m, (t - m.tiles) * 32 + lane, x, y, first, atomic);
    return;
  }
  const unsigned long long tp = m.tile_ptr[t];
  const index_t row0 = static_cast<index_t>(tp & ~kHint);
  const bool hinted = (tp & kHint) != 0;
  unsigned long long d = m.desc[t * m.desc_words * 32 + lane];
  if (m.desc_words == 2) d |= static_cast<unsigned long long>(m.desc[(t * m.desc_words + 1) * 32 + lane]) << 32;
  const unsigned long long raw = d >> (m.y_bits + m.seg_bits);
  const bool begins = (raw & 1) != 0;  // lane 0: the tile's first entry starts row0
  const unsigned long long flags = raw | (lane == 0 ? 1ull : 0ull);  // segment 0 opens at entry 0
  int seg = static_cast<int>(d & ((1ull << m.y_bits) - 1)) - 1;
  const unsigned seg_off = static_cast<unsigned>((d >> m.y_bits) & ((1ull << m.seg_bits) - 1));
  double sum = 0, red = 0;
  bool seen = false;
  const long long base = t * m.te;
  const double* v = m.val + base + lane;
  const index_t* ci = m.col + base + lane;
  const int sigma = m.sigma;
  for (int i0 = 0; i0 < sigma; i0 += kBatch) {
    double p[kBatch];
#pragma unroll
    for (int j = 0; j < kBatch; ++j) {
      const int i = i0 + j;
      p[j] = i < sigma ? __ldg(v + i * 32) * __ldg(x + __ldg(ci + i * 32)) : 0.0;
    }
#pragma unroll
    for (int j = 0; j < kBatch; ++j) {
      const int i = i0 + j;
      if (i >= sigma) break;
      if ((flags >> i) & 1) {
        if (!seen) {
          red = sum;
          seen = true;
        } else {
          close_segment(m, t, row0, hinted, begins, seg, sum, false, y, first, atomic);
        }
        ++seg;
        sum = 0;
      }
      sum += p[j];
    }
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
    const bool reaches_end = lane + static_cast<int>(seg_off) >= 31;
    close_segment(m, t, row0, hinted, begins, seg, sum + right, reaches_end, y, first, atomic);
  }
}

// Deterministic carries. Thread t in [0, tiles]: r = the row of tile t's segment 0; the owner of
// r's carries is the first tile whose base is at or after row r's start.
__global__ void csr5_fixup(DevCsr5 m, const double* __restrict__ first, double* __restrict__ y) {
  const long long t = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int lane = threadIdx.x & 31;
  bool own = false, assign = false, hinted = false;
  long long b = 0, start = 0;
  index_t r = 0;
  if (t <= m.tiles) {
    const long long base = t * m.te;
    if (base < m.nnz) {
      const unsigned long long tp = m.tile_ptr[t];
      r = static_cast<index_t>(tp & ~kHint);
      hinted = (tp & kHint) != 0;
      start = m.rp[r];
      const long long end = m.rp[r + 1];
      own = start > base - m.te;
      assign = start == base;
      if (assign && (t == m.tiles || end < base + m.te)) own = false;  // the tile or the tail stored it
      b = min((end - 1) / m.te, m.tiles);
    }
  }
  const bool wide = own && b - t >= 32;
  if (own && !wide) {
    double s = 0;
#pragma unroll 4
    for (long long u = t; u <= b; ++u) s += first[u];
    if (assign) {
      if (hinted) zero_empty_before(m, r, start, y);
      y[r] = s;
    } else {
      y[r] += s;
    }
  }
  // Rows over 32 tiles: the warp sums their carries together, one row at a time.
  for (unsigned mask = __ballot_sync(kFull, wide); mask; mask &= mask - 1) {
    const int src = __ffs(mask) - 1;
    const long long a0 = __shfl_sync(kFull, t, src), b0 = __shfl_sync(kFull, b, src);
    double s = 0;
#pragma unroll 8  // independent loads in flight: a row of 600 tiles is 19 loads per lane
    for (long long u = a0 + lane; u <= b0; u += 32) s += first[u];
    s = group_sum(s, 32);
    if (lane == src) {
      if (assign) {
        if (hinted) zero_empty_before(m, r, start, y);
        y[r] = s;
      } else {
        y[r] += s;
      }
    }
  }
}

// ---- conversion ----

__device__ __forceinline__ long long lower_bound_dev(const long long* a, long long n, long long v) {
  long long lo = 0, hi = n;  // first i with a[i] >= v
  while (lo < hi) {
    const long long mid = (lo + hi) / 2;
    if (a[mid] < v) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
__device__ __forceinline__ long long upper_bound_dev(const long long* a, long long n, long long v) {
  long long lo = 0, hi = n;  // first i with a[i] > v
  while (lo < hi) {
    const long long mid = (lo + hi) / 2;
    if (a[mid] <= v) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

struct ConvArgs {
  int sigma, y_bits, seg_bits, desc_words;
  long long tiles, te, nnz;
  index_t rows;
  const long long* rp;
  const index_t* col_in;
  const double* val_in;
  unsigned long long* tile_ptr;
  unsigned* desc;
  long long* eo_count;
  index_t* col;
  double* val;
};

// Warp w in [0, tiles]: tile w's tile_ptr, descriptors, empty-offset count and transposition
// (warp `tiles` writes only tile_ptr[tiles]).
__global__ void csr5_convert_tiles(ConvArgs c) {
  const long long w = (static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const int lane = threadIdx.x & 31;
  if (w > c.tiles) return;
  const long long base = w * c.te;
  const long long n = static_cast<long long>(c.rows) + 1;
  unsigned long long tp = 0;
  if (lane == 0) {
    const long long r0 = upper_bound_dev(c.rp, n, base) - 1;
    tp = static_cast<unsigned long long>(r0 > 0 ? r0 : 0);
    if (w == c.tiles && base >= c.nnz) tp = static_cast<unsigned long long>(c.rows);
  }
  if (w == c.tiles) {
    if (lane == 0) c.tile_ptr[w] = tp;
    return;
  }
  const long long cb = base + static_cast<long long>(lane) * c.sigma, ce = cb + c.sigma;
  unsigned long long flags = 0;
  bool empty = false;
  for (long long r = lower_bound_dev(c.rp, n, cb); r < c.rows && c.rp[r] < ce; ++r) {
    if (c.rp[r] == c.rp[r + 1]) empty = true;
    else flags |= 1ull << (c.rp[r] - cb);
  }
  const bool any_empty = __any_sync(kFull, empty);
  const unsigned opened = __popcll(flags | (lane == 0 ? 1ull : 0ull));
  unsigned incl = opened;
  for (int off = 1; off < 32; off *= 2) {
    const unsigned o = __shfl_up_sync(kFull, incl, off);
    if (lane >= off) incl += o;
  }
  const unsigned total = __shfl_sync(kFull, incl, 31);
  const unsigned any = __ballot_sync(kFull, flags != 0 || lane == 0);
  const unsigned above = lane == 31 ? 0u : any >> (lane + 1);
  const unsigned seg = above ? static_cast<unsigned>(__ffs(above) - 1) : static_cast<unsigned>(31 - lane);
  const unsigned long long d = static_cast<unsigned long long>(incl - opened) |
                               (static_cast<unsigned long long>(seg) << c.y_bits) |
                               (flags << (c.y_bits + c.seg_bits));
  c.desc[(w * c.desc_words) * 32 + lane] = static_cast<unsigned>(d);
  if (c.desc_words == 2) c.desc[(w * c.desc_words + 1) * 32 + lane] = static_cast<unsigned>(d >> 32);
  if (lane == 0) {
    c.tile_ptr[w] = tp | (any_empty ? kHint : 0ull);
    c.eo_count[w] = any_empty ? total : 0;
  }
  for (int i = 0; i < c.sigma; ++i) {  // CSR entry base + lane*sigma + i -> base + i*32 + lane
    const long long dst = base + static_cast<long long>(i) * 32 + lane, src = cb + i;
    c.col[dst] = c.col_in[src];
    c.val[dst] = c.val_in[src];
  }
}

// Thread per hinted tile: segment 0 -> 0, segment k >= 1 -> the k-th non-empty row starting
// strictly after the tile's base, minus the tile's first row.
__global__ void csr5_convert_empty_offsets(ConvArgs c, const long long* eo_ptr, index_t* eo) {
  const long long t = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t >= c.tiles) return;
  const unsigned long long tp = c.tile_ptr[t];
  if (!(tp & kHint)) return;
  const index_t row0 = static_cast<index_t>(tp & ~kHint);
  const long long base = t * c.te, end = base + c.te;
  index_t* out = eo + eo_ptr[t];
  long long k = 0;
  out[k++] = 0;
  for (long long r = lower_bound_dev(c.rp, static_cast<long long>(c.rows) + 1, base + 1); r < c.rows && c.rp[r] < end; ++r)
    if (c.rp[r] != c.rp[r + 1]) out[k++] = static_cast<index_t>(r - row0);
}

int ceil_log2(long long v) {
  int b = 0;
  while ((1ll << b) < v) ++b;
  return b;
}

// CSR5 arrays on the device; the host struct keeps only the scalars (and nothing else).
struct DeviceCsr5 {
  Csr5 meta;
  DeviceBuffer<unsigned long long> tile_ptr;
  DeviceBuffer<unsigned> desc;
  DeviceBuffer<long long> eo_ptr;
  DeviceBuffer<index_t> eo;
  DeviceBuffer<long long> rp;
  DeviceBuffer<index_t> col;
  DeviceBuffer<double> val;
  double upload_seconds = 0, convert_seconds = 0;

  DeviceCsr5(const Csr& a, int sigma, const PlanOptions& opt) {
    constexpr int omega = 32;
    if (sigma < 1) throw Unsupported("CSR5 tile 32x" + std::to_string(sigma) + ": sigma must be at least 1");
    const int bits = csr5_descriptor_bits(omega, sigma);
    if (bits > 64)
      throw Unsupported("CSR5 tile 32x" + std::to_string(sigma) + ": a column descriptor would need " +
                        std::to_string(bits) + " bits (max 64)");
    check_format_memory("CSR5", csr5_bytes(a, omega, sigma) + 12.0 * a.nnz(), a, opt);  // + the CSR input
    Csr5& f = meta;
    f.omega = omega;
    f.sigma = sigma;
    f.rows = a.rows;
    f.cols = a.cols;
    f.nnz = a.nnz();
    f.y_bits = ceil_log2(static_cast<long long>(omega) * sigma);
    f.seg_bits = ceil_log2(omega);
    f.desc_words = bits <= 32 ? 1 : 2;
    f.tiles = f.nnz / f.tile_entries();

    auto t0 = std::chrono::steady_clock::now();
    std::vector<long long> hrp(a.row_ptr.begin(), a.row_ptr.end());
    if (hrp.empty()) hrp.assign(1, 0);
    rp.upload(hrp);
    DeviceBuffer<index_t> col_in(a.col);
    DeviceBuffer<double> val_in(a.val);
    SPMV_CUDA_CHECK(cudaDeviceSynchronize());
    upload_seconds = seconds_since(t0);

    t0 = std::chrono::steady_clock::now();
    tile_ptr.resize(static_cast<std::size_t>(f.tiles) + 1);
    desc.resize(static_cast<std::size_t>(f.tiles) * f.desc_words * omega);
    col.resize(static_cast<std::size_t>(f.nnz));
    val.resize(static_cast<std::size_t>(f.nnz));
    DeviceBuffer<long long> eo_count(static_cast<std::size_t>(f.tiles));
    const ConvArgs c{sigma, f.y_bits, f.seg_bits, f.desc_words, f.tiles, f.tile_entries(), f.nnz, f.rows,
                     rp.data(), col_in.data(), val_in.data(), tile_ptr.data(), desc.data(), eo_count.data(),
                     col.data(), val.data()};
    constexpr int block = 256;
    csr5_convert_tiles<<<grid_for((f.tiles + 1) * 32, block), block>>>(c);
    SPMV_CUDA_CHECK_LAUNCH();
    const offset_t tb = f.tail_begin();
    if (f.nnz > tb) {
      SPMV_CUDA_CHECK(cudaMemcpyAsync(col.data() + tb, col_in.data() + tb, (f.nnz - tb) * sizeof(index_t),
                                      cudaMemcpyDeviceToDevice));
      SPMV_CUDA_CHECK(cudaMemcpyAsync(val.data() + tb, val_in.data() + tb, (f.nnz - tb) * sizeof(double),
                                      cudaMemcpyDeviceToDevice));
    }
    // Offsets of the empty-row lists: a prefix sum over tiles, on the host (a few 8-byte counts).
    std::vector<long long> counts = eo_count.download();
    std::vector<long long> ptr(static_cast<std::size_t>(f.tiles) + 1, 0);
    for (offset_t t = 0; t < f.tiles; ++t) ptr[t + 1] = ptr[t] + counts[t];
    eo_ptr.upload(ptr);
    eo.resize(static_cast<std::size_t>(ptr.back()));
    if (ptr.back() > 0) {
      csr5_convert_empty_offsets<<<grid_for(f.tiles, block), block>>>(c, eo_ptr.data(), eo.data());
      SPMV_CUDA_CHECK_LAUNCH();
    }
    SPMV_CUDA_CHECK(cudaDeviceSynchronize());
    convert_seconds = seconds_since(t0);
  }
};

class Csr5Plan final : public CudaPlan {
 public:
  Csr5Plan(const Csr& a, const PlanOptions& opt)
      : CudaPlan(a.rows, a.cols, opt), block_(checked_block_size(opt)), atomic_(!opt.deterministic),
        m_(a, chosen_sigma(a, opt), opt) {
    convert_seconds = m_.convert_seconds;
    setup_seconds = m_.upload_seconds;
    const auto& f = m_.meta;
    first_.resize(static_cast<std::size_t>(f.tiles) + 1);
    tb_ = f.tail_begin();
    rb_ = static_cast<index_t>(std::lower_bound(a.row_ptr.begin(), a.row_ptr.end(), tb_) - a.row_ptr.begin());
    bytes_per_product = csr_product_bytes(a, 1) + static_cast<offset_t>(m_.desc.size()) * 4 +
                        static_cast<offset_t>(m_.tile_ptr.size()) * 8;
    stored_entries = a.nnz();
    // Loads in flight per lane: b8 by default; b4/b16 for measuring.
    if (opt.variant == "b4") batch_ = 4;
    else if (opt.variant == "b16") batch_ = 16;
    else if (opt.variant != "auto" && opt.variant != "b8")
      throw Unsupported("csr5 on CUDA: variant must be auto, b4, b8 or b16 (got " + opt.variant + ")");
    detail = "omega=32 sigma=" + std::to_string(f.sigma) + " tiles=" + std::to_string(f.tiles) + " batch=" +
             std::to_string(batch_) + (atomic_ ? " atomic" : " two-pass") + " device-conversion";
  }

 protected:
  void launch() override {
    if (rows_ == 0) return;
    const auto& f = m_.meta;
    const DevCsr5 m{f.sigma, f.y_bits, f.seg_bits, f.desc_words, f.tiles, f.tile_entries(), f.nnz, rows_, rb_, tb_,
                    m_.tile_ptr.data(), m_.desc.data(), m_.eo_ptr.data(), m_.eo.data(), m_.rp.data(),
                    m_.col.data(), m_.val.data()};
    const offset_t tail_items = static_cast<offset_t>(rows_) - rb_ + 1;
    const offset_t warps = f.tiles + (tail_items + 31) / 32;
    if (atomic_) zero_async(y_);
    const unsigned grid = grid_for(warps * 32, block_);
    if (batch_ == 4) csr5_main<4><<<grid, block_>>>(m, x_.data(), y_.data(), first_.data(), atomic_);
    else if (batch_ == 16) csr5_main<16><<<grid, block_>>>(m, x_.data(), y_.data(), first_.data(), atomic_);
    else csr5_main<8><<<grid, block_>>>(m, x_.data(), y_.data(), first_.data(), atomic_);
    SPMV_CUDA_CHECK_LAUNCH();
    if (!atomic_ && f.tiles > 0) {
      csr5_fixup<<<grid_for(f.tiles + 1, block_), block_>>>(m, first_.data(), y_.data());
      SPMV_CUDA_CHECK_LAUNCH();
    }
  }

 private:
  static int chosen_sigma(const Csr& a, const PlanOptions& opt) {
    const int omega = opt.csr5_omega > 0 ? opt.csr5_omega : csr5_omega_for(Backend::Cuda);
    if (omega != 32) throw Unsupported("csr5 on CUDA: omega must be 32 (a warp), got " + std::to_string(omega));
    const double per_row = a.rows > 0 ? static_cast<double>(a.nnz()) / a.rows : 0.0;
    // At least 8: the paper's rule gives 4-7 for short rows, too little work per warp here (H200,
    // docs/csr5_bench_h200.txt: dc1-like 24.5 -> 18.9 us, webbase-like 41.3 -> 39.0 us, thermal-like
    // and adder-like unchanged within 1-2%).
    return opt.csr5_sigma > 0 ? opt.csr5_sigma : std::max(csr5_sigma_for(per_row, Backend::Cuda), 8);
  }

  int block_;
  bool atomic_;
  int batch_ = 8;
  DeviceCsr5 m_;
  offset_t tb_ = 0;
  index_t rb_ = 0;
  DeviceBuffer<double> first_;
};

}  // namespace

Csr5 csr_to_csr5_on_device(const Csr& a, int sigma, const PlanOptions& opt) {
  DeviceCsr5 d(a, sigma, opt);
  Csr5 f = d.meta;
  f.tile_ptr.resize(d.tile_ptr.size());
  d.tile_ptr.download(reinterpret_cast<unsigned long long*>(f.tile_ptr.data()), f.tile_ptr.size());
  f.tile_desc = d.desc.download();
  f.empty_offset_ptr.resize(d.eo_ptr.size());
  d.eo_ptr.download(reinterpret_cast<long long*>(f.empty_offset_ptr.data()), f.empty_offset_ptr.size());
  f.empty_offset = d.eo.download();
  f.row_ptr = a.row_ptr;
  if (f.row_ptr.empty()) f.row_ptr.assign(1, 0);
  const auto col = d.col.download();
  const auto val = d.val.download();
  f.col.assign(col.begin(), col.end());
  f.val.assign(val.begin(), val.end());
  return f;
}

void register_csr5() {
  add_kernel({.name = "csr5",
              .backend = Backend::Cuda,
              .format = "csr5",
              .description = "CSR5 tiles (32 x sigma, sigma from nnz/row, at least 8) converted on the device, a warp "
                             "per tile; deterministic carry fix-up, or atomics",
              .params = {"block_size", "csr5_sigma", "deterministic", "variant"},
              .make = [](const Csr& a, const PlanOptions& o) -> std::unique_ptr<Plan> {
                return std::make_unique<Csr5Plan>(a, o);
              }});
}

}  // namespace spmv::cuda
