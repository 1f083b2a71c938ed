// CSR-adaptive (Greathouse & Daga, SC'14). Row blocks are built once, on the device: consecutive rows
// whose entries fit in NZ_PER_BLOCK (and at most one row per thread) share a block, which runs
// CSR-stream: all threads stream the block's products val*x into shared memory with coalesced
// loads, then a group of lanes per row sums that row's slice. A row longer than NZ_PER_BLOCK gets a
// block of its own that runs CSR-vector over the whole block; a row longer than a piece (the larger
// of NZ_PER_BLOCK and 8 entries per thread) is cut into pieces of a block each, and the last piece
// to finish adds the partials in piece order: one launch, the same bits on every run.
// Empty rows inside a block sum an empty slice: y = 0. SpMM (K right-hand sides, 004's CSR-Adaptive
// SpMM) runs K blocks per row block, one per column of Y.
#include "cuda/csr_device.cuh"
#include "cuda/cuda_kernels.hpp"

#include <algorithm>
#include <cub/device/device_scan.cuh>
#include <limits>
#include "core/register.hpp"

namespace spmv::cuda {

namespace {

// Block descriptor (int4): rows [x, y); a long row is cut into w pieces of `piece_len` entries,
// this block computing piece number z.

// Where X and Y are for SpMM (004's CSR-Adaptive SpMM): K blocks per row block, one per column of
// Y (the columns fastest, so a row block's K blocks run together and share X's lines); element
// (i, c) of X at x[i * xr + c * xc], of Y at y[i * yr + c * yc]. SpMV: k = 1, xr = yr = 1.
struct Columns {
  int k;
  long long xr, xc, yr, yc;
};

// MV: the matrix's value type, VV: x's, y's and the sums' (the shared products too). Multi: SpMM
// (Columns' strides; SpMV's code has none).
template <class MV, class VV, typename OffT, bool Multi>
__global__ void csr_adaptive_kernel(const int4* __restrict__ blocks, long long piece_len, const OffT* __restrict__ rp,
                                    const index_t* __restrict__ col, const MV* __restrict__ val,
                                    const VV* __restrict__ x, VV* __restrict__ y, Columns cs, VV* __restrict__ partial,
                                    int* __restrict__ arrived, Epilogue<VV> ep) {
  VV* prod = dynamic_shared<VV>();
  __shared__ bool last;
  const int k = Multi ? cs.k : 1;
  const unsigned bi = Multi ? blockIdx.x / k : blockIdx.x;  // the row block
  const int c = Multi ? static_cast<int>(blockIdx.x - bi * k) : 0;
  const long long xr = Multi ? cs.xr : 1, yr = Multi ? cs.yr : 1;
  if constexpr (Multi) {
    x += c * cs.xc;
    y += c * cs.yc;
  }
  const int4 d = blocks[bi];
  const index_t r0 = d.x, r1 = d.y;
  const int nr = r1 - r0;
  const int tid = threadIdx.x, nt = blockDim.x;
  const OffT s = rp[r0], e = rp[r1];
  if (nr == 1) {
    // One (long) row, or one piece of it: the whole block strides over it, then a fixed tree.
    const OffT ps = s + static_cast<OffT>(d.z * piece_len);
    const OffT pe = d.w == 1 ? e : min(e, static_cast<OffT>(ps + piece_len));
    VV sum = 0;
#pragma unroll 4
    for (OffT p = ps + tid; p < pe; p += nt) sum += static_cast<VV>(__ldg(val + p)) * __ldg(x + __ldg(col + p) * xr);
    sum = group_sum(sum, 32);
    if ((tid & 31) == 0) prod[tid >> 5] = sum;
    __syncthreads();
    VV w = 0;
    if (tid < 32) {
      w = tid < (nt >> 5) ? prod[tid] : VV(0);
      w = group_sum(w, 32);
    }
    if (d.w == 1) {
      if (tid == 0) ep.put(y, r0 * yr, w);
      return;
    }
    // Pieces of a long row: the last piece to finish adds all partials in piece order, so the
    // result does not depend on which block finished last. Partials and counters per column.
    const unsigned first = bi - d.z;
    if (tid == 0) {
      partial[static_cast<long long>(bi) * k + c] = w;
      last = count_arrival(arrived[static_cast<long long>(first) * k + c]) == d.w - 1;  // publishes the partial
    }
    __syncthreads();
    if (last && tid < 32) {
      VV t = 0;
      for (int j = tid; j < d.w; j += 32) t += __ldcg(partial + static_cast<long long>(first + j) * k + c);
      t = group_sum(t, 32);
      if (tid == 0) {
        ep.put(y, r0 * yr, t);
        arrived[static_cast<long long>(first) * k + c] = 0;  // ready for the next product
      }
    }
    return;
  }
  // CSR-stream: products into shared memory, coalesced over the block's contiguous entries.
  const int n = static_cast<int>(e - s);
#pragma unroll 4
  for (int i = tid; i < n; i += nt) prod[i] = static_cast<VV>(__ldg(val + s + i)) * __ldg(x + __ldg(col + s + i) * xr);
  __syncthreads();
  // As many lanes per row as the block allows (a power of two, at most a warp).
  int tpr = 1;
  while (tpr < 32 && tpr * 2 * nr <= nt) tpr *= 2;
  const int g = tid / tpr, l = tid % tpr;
  VV sum = 0;
  if (g < nr) {
    const int b = static_cast<int>(rp[r0 + g] - s), en = static_cast<int>(rp[r0 + g + 1] - s);
    for (int i = b + l; i < en; i += tpr) sum += prod[i];
  }
  sum = group_sum(sum, tpr);
  if (g < nr && l == 0) ep.put(y, (r0 + g) * yr, sum);
}

// Row blocks are built greedily in independent spans of rows (a block never crosses a span's
// start), a warp per span: one pass counts each span's blocks, a scan places them, a second pass
// writes them. A span has max(tuning::csr_adaptive.span_rows, block size) rows, so a block may
// still hold a row per thread. A warp per span: one thread per span (or the host) would walk a
// chain of dependent loads, slower than the products it prepares on small matrices.

// The greedy walk over span `sp` by one warp: emit(i, descriptor) for its i-th block, called by
// every lane (lane 0 writes). A block ends at the furthest row end within max_rows rows, the span
// and npb entries: row ends only grow, so the lanes test 32 of them at once and the ones within
// the limit are a prefix.
template <typename OffT, typename Emit>
__device__ void walk_span(long long sp, long long span_rows, const OffT* __restrict__ rp, long long rows, int max_rows,
                          long long npb, long long piece_len, Emit emit) {
  const int lane = threadIdx.x & 31;
  const long long end = min(rows, (sp + 1) * span_rows);
  long long r = sp * span_rows, i = 0;
  while (r < end) {
    const long long start = r, row_start = rp[r], len = rp[r + 1] - row_start;
    if (len > npb) {  // a long row: blocks of its own, one per piece
      const long long pieces = (len + piece_len - 1) / piece_len;
      for (long long p = 0; p < pieces; ++p)
        emit(i++,
             make_int4(static_cast<int>(r), static_cast<int>(r + 1), static_cast<int>(p), static_cast<int>(pieces)));
      ++r;
      continue;
    }
    const long long hi = min(end, r + max_rows), limit = row_start + npb;
    long long e = r + 1;  // row r fits
    for (;;) {
      const long long j = e + 1 + lane;
      const unsigned fits = __ballot_sync(0xffffffffu, j <= hi && static_cast<long long>(rp[min(j, hi)]) <= limit);
      e += __popc(fits);
      if (fits != 0xffffffffu) break;
    }
    r = e;
    emit(i++, make_int4(static_cast<int>(start), static_cast<int>(r), 0, 1));
  }
}

template <typename OffT>
__global__ void count_blocks_kernel(const OffT* __restrict__ rp, long long rows, long long spans, long long span_rows,
                                    int max_rows, long long npb, long long piece_len, long long* __restrict__ count) {
  const long long sp = (blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x) >> 5;
  if (sp > spans) return;
  long long n = 0;
  if (sp < spans) walk_span(sp, span_rows, rp, rows, max_rows, npb, piece_len, [&](long long i, int4) { n = i + 1; });
  if ((threadIdx.x & 31) == 0) count[sp] = n;  // count[spans] = 0: the scan's last entry is the total
}

template <typename OffT>
__global__ void write_blocks_kernel(const OffT* __restrict__ rp, long long rows, long long spans, long long span_rows,
                                    int max_rows, long long npb, long long piece_len,
                                    const long long* __restrict__ first, int4* __restrict__ blocks) {
  const long long sp = (blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x) >> 5;
  if (sp >= spans) return;
  int4* out = blocks + first[sp];
  const bool writer = (threadIdx.x & 31) == 0;
  walk_span(sp, span_rows, rp, rows, max_rows, npb, piece_len, [&](long long i, int4 d) {
    if (writer) out[i] = d;
  });
}

class CsrAdaptive final : public CsrDevicePlan {
 public:
  CsrAdaptive(const CsrView& a, const PlanOptions& opt, SharedDeviceCsr dev = nullptr)
      : CsrDevicePlan(a, opt, std::move(dev)) {
    device_transpose_ = false;  // SpMM reads X and writes Y in either layout through strides
    const auto t0 = std::chrono::steady_clock::now();
    const auto& p = tuning::csr_adaptive;
    nz_per_block_ =
        opt.kernel.nz_per_block ? opt.kernel.nz_per_block : std::min(p.nz_per_thread * block_, p.max_nz_per_block);
    if (nz_per_block_ < 1 || nz_per_block_ > p.max_nz_per_block)
      throw Unsupported("CSR-adaptive nz_per_block must be in [1, " + std::to_string(p.max_nz_per_block) + "], got " +
                        std::to_string(nz_per_block_));
    // Long rows are cut into pieces big enough to keep a block busy, small enough to spread.
    piece_len_ = std::max<offset_t>(nz_per_block_, p.piece_per_thread * block_);
    if (m_.wide)
      build_blocks(m_.rp64.data());
    else
      build_blocks(m_.rp32.data());
    const std::size_t per_column = static_cast<std::size_t>(n_blocks_) * k_;
    if (per_column >= static_cast<std::size_t>(std::numeric_limits<int>::max()))
      throw Unsupported("csr-adaptive: row blocks x k over a grid's 2^31 blocks");
    partial_.resize(per_column);
    arrived_.resize(per_column);
    if (per_column) SPMV_CUDA_CHECK(cudaMemset(arrived_.data(), 0, per_column * sizeof(int)));
    SPMV_CUDA_CHECK(cudaDeviceSynchronize());
    setup_seconds += seconds_since(t0);
    // The descriptors, once, as A: the minimal traffic (SpMM's K blocks of a row block share them
    // and A's lines in the L2).
    bytes_per_product += 16 * static_cast<offset_t>(n_blocks_);
    detail = "nz_per_block=" + std::to_string(nz_per_block_) + " row_blocks=" + std::to_string(n_blocks_);
    if (k_ > 1) detail += " spmm=block_per_element layout=" + std::string(layout_ == Layout::RowMajor ? "row" : "col");
  }

 protected:
  void launch(const Launch& l) override {
    if (trivial()) return zero_y(l);
    with_types(prec_, [&]<class MV, class VV>() {
      if (m_.wide)
        launch_with<MV, VV>(m_.rp64.data(), l);
      else
        launch_with<MV, VV>(m_.rp32.data(), l);
    });
    SPMV_CUDA_CHECK_LAUNCH();
  }
  template <class MV, class VV, typename OffT>
  void launch_with(const OffT* rp, const Launch& l) {
    const std::size_t shmem = std::max<std::size_t>(nz_per_block_, 32) * sizeof(VV);
    VV* partial = reinterpret_cast<VV*>(partial_.data());  // a double array holds as many floats
    const bool rm = layout_ == Layout::RowMajor;
    const Columns cs{k_, rm ? k_ : 1, rm ? 1 : cols_, rm ? k_ : 1, rm ? 1 : rows_};
    const auto kernel = k_ > 1 ? csr_adaptive_kernel<MV, VV, OffT, true> : csr_adaptive_kernel<MV, VV, OffT, false>;
    kernel<<<n_blocks_* static_cast<unsigned>(k_), block_, shmem, l.stream>>>(desc(), piece_len_, rp, m_.col.data(),
                                                                              m_.val.data<MV>(), l.xv<VV>(), l.yv<VV>(),
                                                                              cs, partial, arrived_.data(), l.ep<VV>());
  }
  // The row blocks into blocks_ (one synchronisation: the count, for the launch's grid).
  template <typename OffT>
  void build_blocks(const OffT* rp) {
    const long long span_rows = std::max<long long>(tuning::csr_adaptive.span_rows, block_);
    const long long spans = (static_cast<long long>(rows_) + span_rows - 1) / span_rows;
    DeviceBuffer<long long> first(static_cast<std::size_t>(spans) + 1);
    std::size_t temp_bytes = 0;
    SPMV_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, temp_bytes, first.data(), first.data(), spans + 1));
    DeviceBuffer<unsigned char> temp(std::max<std::size_t>(temp_bytes, 1));
    const int build_block = tuning::csr_adaptive.build_block;
    const unsigned grid = grid_for(32 * (spans + 1), build_block);  // a warp per span
    count_blocks_kernel<<<grid, build_block>>>(rp, rows_, spans, span_rows, block_, nz_per_block_, piece_len_,
                                               first.data());
    SPMV_CUDA_CHECK_LAUNCH();
    SPMV_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(temp.data(), temp_bytes, first.data(), first.data(), spans + 1));
    long long total = 0;
    SPMV_CUDA_CHECK(cudaMemcpy(&total, first.data() + spans, sizeof(total), cudaMemcpyDeviceToHost));
    if (total >= std::numeric_limits<int>::max()) throw Unsupported("csr-adaptive: too many row blocks");
    n_blocks_ = static_cast<unsigned>(total);
    blocks_.resize(4 * static_cast<std::size_t>(total));
    if (total > 0) {
      write_blocks_kernel<<<grid, build_block>>>(rp, rows_, spans, span_rows, block_, nz_per_block_, piece_len_,
                                                 first.data(), reinterpret_cast<int4*>(blocks_.data()));
      SPMV_CUDA_CHECK_LAUNCH();
    }
  }
  const int4* desc() const { return reinterpret_cast<const int4*>(blocks_.data()); }
  offset_t nz_per_block_ = 0, piece_len_ = 0;
  unsigned n_blocks_ = 0;
  DeviceBuffer<int> blocks_;      // 4 ints per block: r0, r1, piece, pieces
  DeviceBuffer<double> partial_;  // a long row's pieces' sums, in the plan's vector type
  DeviceBuffer<int> arrived_;
};

}  // namespace

std::unique_ptr<Plan> make_csr_adaptive(const CsrView& a, const PlanOptions& opt, SharedDeviceCsr dev) {
  return std::make_unique<CsrAdaptive>(a, opt, std::move(dev));
}

void register_csr_adaptive() {
  add_kernel({.name = "csr-adaptive",
              .backend = Backend::Cuda,
              .format = "csr",
              .description = "CSR-adaptive: CSR-stream row blocks of NZ_PER_BLOCK entries, CSR-vector for long rows; "
                             "SpMM as 004's CSR-Adaptive SpMM (a block per row block and column of Y, X and Y in "
                             "either layout)",
              .spmm = true,
              .precisions = {Precision::Double, Precision::Single, Precision::Mixed},
              .params = {"block_size", "nz_per_block"},
              .make = [](const CsrView& a, const PlanOptions& o) { return make_csr_adaptive(a, o, nullptr); }});
}

}  // namespace spmv::cuda
