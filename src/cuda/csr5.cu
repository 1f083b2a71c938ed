// CSR5 SpMV on the GPU (omega = 32): a warp per full tile, a lane per tile column, the matrix
// converted to CSR5 on the device.
//
// Product: a warp per full tile. A lane loads its sigma entries in batches of kBatch (8 unless the
// variant says b4 or b16): step i of all lanes is one coalesced 256-byte load, and the batch keeps
// kBatch independent x gathers in flight per lane. A lane closes a segment at every row-start flag;
// the columns' leading parts ("red", the end of a segment opened to the left) are combined by a
// segmented suffix scan over the warp (5 shuffle steps). It adds only values of one row, so there is
// no cancellation between rows as with the paper's prefix-sum differences. Every segment inside the
// tile is stored straight into y; rows that cross tile boundaries are combined in one of three ways
// (PlanOptions::kernel.variant):
//  - single (default, deterministic): one kernel. A row shorter than a tile is finished by the tile
//    it starts in; for a longer one each tile publishes its part, stamped with the launch's number,
//    and the row's last tile sums the parts in a fixed order (see Parts). No atomics, no zeroing of
//    y, no second launch.
//  - two-pass (deterministic): the carries go to first[t]; a fix-up kernel, one thread per tile,
//    lets the first tile of each crossing row sum them in tile order (a warp for rows over 32 tiles).
//  - atomic (the paper's, not deterministic): y scaled by beta first (zeroed where beta = 0),
//    carries added with atomicAdd.
// The incomplete last tile is done by CSR after the tiles (a warp for the part of the row straddling
// its start, a thread per later row).
//
// Files: csr5_convert.cu (the conversion), csr5_single.cu (the single-pass kernel),
// csr5_long_rows.cuh (its long rows), csr5_device.cuh (what they share); here the two-pass and
// atomic kernels, the plan and its registration.
//
// The variant: how rows across tiles are combined ("combine": single, two-pass or atomic) and the
// loads in flight per lane ("batch": b4, b8 or b16).
//
// Precision: every kernel is a template on the values' type MV and the vectors' and sums'
// VV, launched for the plan's precision with with_types: double, single (float values, x, y and
// sums) and mixed (float values, double x, y and sums). The carries and the single-pass kernel's
// shared buffer hold VV; the long rows' parts hold a double in every precision (csr5_long_rows.cuh).
#include <spmv/formats/csr5.hpp>
#include <spmv/params.hpp>

#include <algorithm>
#include <string>
#include <utility>

#include "cuda/csr5_device.cuh"
#include "cuda/csr5_long_rows.cuh"
#include "cuda/cuda_kernels.hpp"
#include "cuda/tuning.hpp"
#include "core/register.hpp"

namespace spmv::cuda {

namespace csr5 {

namespace {

// Segment k of tile t has sum s. reaches_end: it may continue in tile t+1.
// In atomic mode y is already scaled by beta and ep's beta is 1: a put adds alpha * s, an empty row
// stays as it is.
template <class MV, class VV>
__device__ __forceinline__ void close_segment(const DevCsr5<MV>& m, long long t, index_t row0, bool hinted, bool begins,
                                              int k, VV s, bool reaches_end, VV* y, VV* first, bool atomic,
                                              const Epilogue<VV>& ep) {
  if (k == 0) {
    if (begins && !reaches_end) {  // row0 lies wholly in this tile
      if (hinted && !atomic) zero_empty_before(m, row0, t * m.te, y, ep);
      ep.put(y, row0, s);
    } else if (atomic) {
      atomicAdd(y + row0, ep.alpha * s);
    } else {
      first[t] = s;
    }
    return;
  }
  const index_t row = segment_row(hinted ? m.eo + m.eo_ptr[t] : nullptr, row0, k, y, ep);
  if (atomic && reaches_end)
    atomicAdd(y + row, ep.alpha * s);
  else
    ep.put(y, row, s);
}

// Tail item i: 0 = the part of row rb-1 inside the tail (the tail's carry); i >= 1 assigns row
// rb + i - 1 (rows starting at or after the tail, trailing empty rows too).
template <class MV, class VV>
__device__ void tail_item(const DevCsr5<MV>& m, long long i, const VV* __restrict__ x, VV* __restrict__ y,
                          VV* __restrict__ first, bool atomic, const Epilogue<VV>& ep) {
  if (i == 0) {
    VV s = 0;
    if (m.rb > 0 && m.rp[m.rb] > m.tb) {
      for (long long p = m.tb; p < m.rp[m.rb]; ++p) s += entry_product(m, x, p);
      if (atomic) atomicAdd(y + m.rb - 1, ep.alpha * s);
    }
    if (!atomic) first[m.tiles] = s;
    return;
  }
  const long long r = m.rb + i - 1;
  if (r >= m.rows) return;
  VV s = 0;
  for (long long p = m.rp[r]; p < m.rp[r + 1]; ++p) s += entry_product(m, x, p);
  ep.put(y, r, s);
}

template <int kBatch, class MV, class VV>
__global__ void csr5_main(DevCsr5<MV> m, const VV* __restrict__ x, VV* __restrict__ y, VV* __restrict__ first,
                          bool atomic, Epilogue<VV> ep) {
  const long long t = (static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const int lane = threadIdx.x & 31;
  if (t >= m.tiles) {  // whole warps take this branch (blockDim is a multiple of 32)
    tail_item(m, (t - m.tiles) * 32 + lane, x, y, first, atomic, ep);
    return;
  }
  const TileColumn tc = tile_column(m, t, lane);
  int seg = tc.seg;
  VV sum = 0, red = 0;
  bool seen = false;
  const long long base = t * m.te;
  const MV* v = m.val + base + lane;
  const index_t* ci = m.col + base + lane;
  const int sigma = m.sigma;
  for (int i0 = 0; i0 < sigma; i0 += kBatch) {
    VV p[kBatch];
    batch_products<kBatch>(v, ci, x, i0, sigma, p);
#pragma unroll
    for (int j = 0; j < kBatch; ++j) {
      const int i = i0 + j;
      if (i >= sigma) break;
      if ((tc.flags >> i) & 1) {
        if (!seen) {
          red = sum;
          seen = true;
        } else {
          close_segment(m, t, tc.row0, tc.hinted, tc.begins, seg, sum, false, y, first, atomic, ep);
        }
        ++seg;
        sum = 0;
      }
      sum += p[j];
    }
  }
  if (!seen) red = sum;
  const VV right = right_of_column(red, seen, lane);
  if (seen) {
    const bool reaches_end = lane + static_cast<int>(tc.seg_off) >= 31;
    close_segment(m, t, tc.row0, tc.hinted, tc.begins, seg, sum + right, reaches_end, y, first, atomic, ep);
  }
}

// Deterministic carries: thread t in [0, tiles] sums the carries it owns (carry_owner) in tile order.
template <class MV, class VV>
__global__ void csr5_fixup(DevCsr5<MV> m, const VV* __restrict__ first, VV* __restrict__ y, Epilogue<VV> ep) {
  const long long t = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int lane = threadIdx.x & 31;
  const CarryOwner c = carry_owner(m, t);
  const bool wide = c.own && c.b - t >= 32;
  if (c.own && !wide) {
    VV s = 0;
#pragma unroll 4
    for (long long u = t; u <= c.b; ++u) s += first[u];
    if (c.assign) {
      if (c.hinted) zero_empty_before(m, c.r, c.start, y, ep);
      ep.put(y, c.r, s);
    } else {
      ep.add(y, c.r, s);
    }
  }
  // Rows over 32 tiles: the warp sums their carries together, one row at a time.
  for (unsigned mask = __ballot_sync(kFull, wide); mask; mask &= mask - 1) {
    const int src = __ffs(mask) - 1;
    const long long a0 = __shfl_sync(kFull, t, src), b0 = __shfl_sync(kFull, c.b, src);
    VV s = 0;
#pragma unroll 8  // independent loads in flight: a row of 600 tiles is 19 loads per lane
    for (long long u = a0 + lane; u <= b0; u += 32) s += first[u];
    s = group_sum(s, 32);
    if (lane == src) {
      if (c.assign) {
        if (c.hinted) zero_empty_before(m, c.r, c.start, y, ep);
        ep.put(y, c.r, s);
      } else {
        ep.add(y, c.r, s);
      }
    }
  }
}

const std::vector<VariantGroup>& variants() {
  static const std::vector<VariantGroup> v = {
      {"combine", {"single", "two-pass", "atomic"}, "rows across tiles: one pass, a fix-up kernel, or atomics"},
      {"batch", {"b4", "b8", "b16"}, "a lane's loads in flight (SpMV)"},
      {"sigma",
       {"ours", "paper"},
       "sigma where csr5_sigma is 0: our rule, or the CSR5 paper's GPU rule from nonzeros per row (<4, 32, 256, 4>)"}};
  return v;
}

// Whether sigma follows the paper's rule: no csr5_sigma given, and the variant's word "paper".
bool paper_sigma(const PlanOptions& opt) {
  return opt.kernel.csr5_sigma == 0 && parse_variant("csr5", variants(), opt.kernel.variant)["sigma"] == "paper";
}

int chosen_sigma(const CsrView& a, const PlanOptions& opt) {
  const int omega = opt.kernel.csr5_omega > 0 ? opt.kernel.csr5_omega : tuning::csr5_omega;
  if (omega != 32) throw Unsupported("csr5 on CUDA: omega must be 32 (a warp), got " + std::to_string(omega));
  if (opt.kernel.csr5_sigma > 0) return opt.kernel.csr5_sigma;
  // Ours by default, not the paper's (4-7 for short rows, 26 for stencil27): see tuning::csr5_sigma.
  if (paper_sigma(opt)) return tuning::csr5_sigma_paper(a.rows > 0 ? static_cast<double>(a.nnz()) / a.rows : 0.0);
  return tuning::csr5_sigma(a);
}

class Csr5Plan final : public CudaPlan {
 public:
  Csr5Plan(const CsrView& a, const PlanOptions& opt, const SharedDeviceCsr& dev)
      : CudaPlan(a.rows, a.cols, opt, vectors_of(dev, opt)),
        block_(checked_block_size(opt)),
        v_(read_variant(opt)),
        m_(a, chosen_sigma(a, opt), convert_options(opt), opt.precision, dev.get()) {
    convert_seconds = m_.convert_seconds;
    setup_seconds = m_.upload_seconds;
    const auto& f = m_.meta;
    if (opt.kernel.block_size == 0) block_ = tuning::csr5_block(f.sigma);
    tb_ = f.tail_begin();
    rb_ = static_cast<index_t>(std::lower_bound(a.row_ptr.begin(), a.row_ptr.end(), tb_) - a.row_ptr.begin());
    // The single-pass kernel keeps a tile's segment sums in shared memory (omega*sigma sums per
    // warp, of the vectors' type); over the device's limit per block, the two-pass kernel does the
    // product instead.
    if (v_.mode == Mode::Single) {
      smem_bytes_ = static_cast<std::size_t>(block_ / 32) * static_cast<std::size_t>(f.tile_entries()) *
                    static_cast<std::size_t>(vector_bytes(prec_));
      int dev = 0, optin = 0;
      SPMV_CUDA_CHECK(cudaGetDevice(&dev));
      SPMV_CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
      if (smem_bytes_ > static_cast<std::size_t>(optin)) {
        fallback_ =
            " (single-pass would need " + std::to_string(smem_bytes_ >> 10) + " KiB of shared memory per block)";
        v_.mode = Mode::TwoPass;
      } else {
        with_types(prec_, [&]<class MV, class VV>() {
          SPMV_CUDA_CHECK(cudaFuncSetAttribute(single_kernel<MV, VV>(v_.batch, f.sigma),
                                               cudaFuncAttributeMaxDynamicSharedMemorySize,
                                               static_cast<int>(smem_bytes_)));
        });
      }
    }
    // The kernel must launch with block_ threads: its registers a thread times the block's threads
    // within the SM's register file (the 16-entry batch takes 72 registers in double and mixed: at
    // most 512 threads). Refused here, with the reason, rather than failing at the first product.
    with_types(prec_, [&]<class MV, class VV>() {
      const void* k = v_.mode == Mode::Single ? reinterpret_cast<const void*>(single_kernel<MV, VV>(v_.batch, f.sigma))
                      : v_.batch == 4         ? reinterpret_cast<const void*>(csr5_main<4, MV, VV>)
                      : v_.batch == 16        ? reinterpret_cast<const void*>(csr5_main<16, MV, VV>)
                                              : reinterpret_cast<const void*>(csr5_main<8, MV, VV>);
      cudaFuncAttributes at{};
      SPMV_CUDA_CHECK(cudaFuncGetAttributes(&at, k));
      if (block_ > at.maxThreadsPerBlock)
        throw Unsupported("csr5 (" + std::string(to_string(prec_)) + ", batch " + std::to_string(v_.batch) +
                          "): " + std::to_string(at.numRegs) + " registers a thread allow at most " +
                          std::to_string(at.maxThreadsPerBlock) + " threads per block, not " + std::to_string(block_));
    });
    // One part or carry per tile and one for the tail.
    const auto n = static_cast<std::size_t>(f.tiles) + 1;
    if (v_.mode == Mode::Single) {
      head_parts_.resize(n);
      tail_parts_.resize(n);
      // Launch number 0 marks "never stored".
      SPMV_CUDA_CHECK(cudaMemset(head_parts_.data(), 0, n * sizeof(Part)));
      SPMV_CUDA_CHECK(cudaMemset(tail_parts_.data(), 0, n * sizeof(Part)));
    } else {
      first_.resize(n, prec_ == Precision::Single);  // the carries, of the vectors' type
    }
    bytes_per_product = m_.product_bytes(a, 1);
    stored_entries = a.nnz();
    detail = "omega=32 sigma=" + std::to_string(f.sigma) + " tiles=" + std::to_string(f.tiles) +
             " block=" + std::to_string(block_) + " batch=" + std::to_string(v_.batch) + " " +
             kModeName[static_cast<int>(v_.mode)] + fallback_ + " device-conversion";
    if (paper_sigma(opt)) detail += " sigma_rule=paper";
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
    const offset_t tail_rows = static_cast<offset_t>(rows_) - rb_;
    const int batch = v_.batch;
    const VV* x = l.xv<VV>();
    VV* y = l.yv<VV>();
    const cudaStream_t s = l.stream;
    Epilogue<VV> ep = l.ep<VV>();
    if (v_.mode == Mode::Single) {
      const Parts p{head_parts_.data(), tail_parts_.data(), ++launches_};
      const unsigned grid = grid_for((f.tiles + 1 + (tail_rows + 3) / 4) * 32, block_);
      single_kernel<MV, VV>(batch, f.sigma)<<<grid, block_, smem_bytes_, s>>>(m, x, y, p, ep);
      SPMV_CUDA_CHECK_LAUNCH();
      return;
    }
    const bool atomic = v_.mode == Mode::Atomic;
    const offset_t warps = f.tiles + (tail_rows + 1 + 31) / 32;
    if (atomic) {  // y = beta * y first; the kernel's stores then add to it
      zero_y(l);
      ep.beta = VV(1);
    }
    const unsigned grid = grid_for(warps * 32, block_);
    VV* first = first_.get<VV>().data();
    if (batch == 4)
      csr5_main<4><<<grid, block_, 0, s>>>(m, x, y, first, atomic, ep);
    else if (batch == 16)
      csr5_main<16><<<grid, block_, 0, s>>>(m, x, y, first, atomic, ep);
    else
      csr5_main<8><<<grid, block_, 0, s>>>(m, x, y, first, atomic, ep);
    SPMV_CUDA_CHECK_LAUNCH();
    if (!atomic && f.tiles > 0) {
      csr5_fixup<<<grid_for(f.tiles + 1, block_), block_, 0, s>>>(m, static_cast<const VV*>(first), y, ep);
      SPMV_CUDA_CHECK_LAUNCH();
    }
  }

  enum class Mode { Single, TwoPass, Atomic };
  static constexpr const char* kModeName[] = {"single-pass", "two-pass", "atomic"};
  struct Variant {
    Mode mode = Mode::Single;
    int batch = tuning::csr5_batch;
  };

  // The variant's words (variants()); atomic is refused while PlanOptions::kernel.deterministic is set.
  static Variant read_variant(const PlanOptions& opt) {
    const VariantChoice c = parse_variant("csr5", variants(), opt.kernel.variant);
    Variant r;
    if (c["combine"] == "two-pass") r.mode = Mode::TwoPass;
    if (c["combine"] == "atomic") r.mode = Mode::Atomic;
    if (c.given("batch")) r.batch = std::stoi(std::string(c["batch"].substr(1)));
    if (r.mode == Mode::Atomic && opt.kernel.deterministic)
      throw Unsupported("csr5 on CUDA: variant atomic is not deterministic; set deterministic=false for it");
    return r;
  }
  int block_;
  Variant v_;
  std::size_t smem_bytes_ = 0;
  std::string fallback_;
  DeviceCsr5 m_;
  offset_t tb_ = 0;
  index_t rb_ = 0;
  DeviceBuffer<Part> head_parts_, tail_parts_;  // single-pass: the long rows' parts
  unsigned long long launches_ = 0;             // single-pass: the launch number of the last product
  DeviceValues first_;                          // two-pass and atomic: the carries (VV: f32 for single)
};

}  // namespace

}  // namespace csr5

std::unique_ptr<Plan> make_csr5(const CsrView& a, const PlanOptions& opt, SharedDeviceCsr dev) {
  if (opt.k == 1) return std::make_unique<csr5::Csr5Plan>(a, opt, dev);
  const VariantChoice v = parse_variant("csr5", csr5::variants(), opt.kernel.variant);
  if (v.given("batch") || (v.given("combine") && v["combine"] != "two-pass"))
    throw Unsupported("csr5 on CUDA with k > 1: variant must be auto, two-pass or a sigma word (got " +
                      opt.kernel.variant + "; single-pass, atomic and the load batches are SpMV's)");
  return csr5::make_csr5_spmm(a, opt, dev, csr5::chosen_sigma(a, opt));
}

void register_csr5() {
  add_kernel({.name = "csr5",
              .backend = Backend::Cuda,
              .format = "csr5",
              .description = "CSR5 tiles (32 x sigma; sigma 8, or 16 for regular rows of 12 or more) "
                             "converted on the device, a warp per tile; rows across tiles combined in one pass "
                             "(deterministic), or variant two-pass / atomic; SpMM (k > 1) two-pass, up to 4 "
                             "right-hand sides a lane",
              .spmm = true,
              .precisions = {Precision::Double, Precision::Single, Precision::Mixed},
              .params = {"block_size", "csr5_sigma", "deterministic"},
              .variants = csr5::variants(),
              .make = [](const CsrView& a, const PlanOptions& o) { return make_csr5(a, o, nullptr); }});
}

}  // namespace spmv::cuda
