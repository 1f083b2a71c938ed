// CSR5 SpMV on the CPU: OpenMP over contiguous ranges of tiles, the omega columns of a tile as
// SIMD lanes, and a race-free combination of rows that span tiles.
//
// One tile (omega x sigma, default 4 x 32 on AVX2 for short rows, the paper's 4 x 16 otherwise;
// omega = 4 is one AVX2 register of doubles per step):
//  1. A branch-free segmented scan down the lanes: per step, x is gathered for the omega lanes,
//     the lanes whose flag bit opens a row there are reset (a blend by the step's flag bits, moved
//     to the sign bit), and the product is added; the running sums of every step go to a small
//     per-thread buffer T (row 0 zero). The earlier kernel branched per step over the lanes and
//     per segment into a store function: 2-2.5x the time of CSR per nonzero.
//  2. The segments from T: the k-th flag of the tile in CSR order closes segment k-1, whose part in
//     that lane is T just before the flag; the sum at the bottom of each lane goes to the segment
//     open there (y_offset of the next lane - 1). This stands in for the paper's seg_offset walk
//     and is a scan reset at row starts, never a difference of prefix sums (which loses a short
//     row's precision next to big neighbours). For 4 x 16 the 64 flags are one word in CSR order
//     (4 x 32: two words), the lane bottoms are carried inside T to the closing that needs them
//     (finish4), and the segments go straight into y; other shapes go through a segment buffer.
// The default CPU path (omega = 4, AVX2 + FMA) is hand-written with intrinsics; any other omega
// and a build without AVX2 use the same algorithm in plain C++ vectorised by the compiler.
// The segment loop is data-driven (two segments per iteration, through a table): a fixed-count,
// branch-free one measured no faster. For regular short rows the costs that differ from CSR are
// cut: sigma 32 for short rows (half the per-tile work per nonzero; see tuning::csr5_sigma), no
// row-pointer read per tile (the "tile begins a row" bit is in the descriptor), no shuffle-port
// uops per step with scalar x loads. What was measured and tried: bench/results/README.md, CSR5
// tuning history.
//
// Who writes y[r]:
//  - a segment that starts inside a tile and is not the tile's segment 0 is assigned by that
//    tile: no other tile can own its start;
//  - segment 0 of a tile is returned to the tile loop: assigned when the tile begins the row,
//    added otherwise (tiles run in order inside a thread, so the assignment came first);
//  - the one row per thread that started in an earlier thread's range is accumulated in a
//    per-thread carry and added after the parallel region, in thread order: no atomics, and the
//    result is deterministic for a given thread count;
//  - the tail (incomplete last tile) is plain CSR over its rows, after everything else;
//  - empty rows are zeroed by the tile holding the next non-empty row's start (hinted tiles:
//    the tile zeroes its whole row span, then places the segments through empty_offset).
// One thread runs without an OpenMP region (a region costs about a microsecond, 10% of a small
// matrix's product).
#include <spmv/formats/csr5.hpp>

#include <omp.h>

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <array>
#include <bit>
#include <chrono>
#include <cstdint>
#include <fmt/format.h>
#include <string>
#include <vector>

#include "cpu/cpu_plan.hpp"
#include "cpu/register_cpu.hpp"
#include "cpu/tuning.hpp"
#include "cpu/row_kernels.hpp"

namespace spmv::cpu {

namespace {

using tuning::kAvx2;

// First bit of the row-start flags in a column descriptor of a 4 x S tile: after y_offset
// (ceil(log2(4 S)) bits) and seg_offset (2 bits). The hand-written tiles read the flags there.
template <int S>
constexpr int kFlagShift = std::bit_width(static_cast<unsigned>(4 * S - 1)) + 2;
static_assert(kFlagShift<16> == 8 && kFlagShift<32> == 9);

class Csr5Plan final : public CpuPlan {
 public:
  Csr5Plan(const Csr& a, const PlanOptions& opt, Backend backend)
      : CpuPlan(a.rows, a.cols, opt), threads_(backend == Backend::Serial ? 1 : plan_threads(opt)) {
    const int omega = opt.csr5_omega > 0 ? opt.csr5_omega : tuning::csr5_omega;
    const double per_row = a.rows > 0 ? static_cast<double>(a.nnz()) / a.rows : 0.0;
    const int sigma = opt.csr5_sigma > 0 ? opt.csr5_sigma : tuning::csr5_sigma(per_row, omega);
    if (omega != 1 && omega != 2 && omega != 4 && omega != 8 && omega != 16 && omega != 32)
      throw Unsupported(fmt::format("csr5 on the CPU: omega must be 1, 2, 4, 8, 16 or 32 (got {})", omega));
    const auto t0 = std::chrono::steady_clock::now();
    ConvertOptions conv = convert_options(opt);  // the plan's threads (one for the serial kernel)
    conv.threads = threads_;
    f_ = csr_to_csr5(a, omega, sigma, conv);
    convert_seconds = seconds_since(t0);
    carry_.assign(threads_, 0.0);
    bytes_per_product = csr_product_bytes(a, 1) + static_cast<offset_t>(f_.tile_desc.size()) * 4 +
                        static_cast<offset_t>(f_.tile_ptr.size()) * 8;
    stored_entries = a.nnz();
    detail = fmt::format("omega={} sigma={} tiles={} tail={}", omega, sigma, f_.tiles, f_.nnz - f_.tail_begin());
    // "simd": the omega lanes advance together step by step (the paper's SIMD form), x gathered
    // with one AVX2 gather per step; "simd_loads": the same with four scalar loads per step (CPUs
    // whose gather is slow); "auto": the faster of the two by a timed trial when omega = 4 on AVX2
    // (counted in setup_seconds), else simd; "lanes": the reference path, each column walked on
    // its own, segment by segment from its flag bits.
    if (opt.variant != "auto" && opt.variant != "simd" && opt.variant != "simd_loads" && opt.variant != "lanes")
      throw Unsupported("csr5 on the CPU: variant must be auto, simd, simd_loads or lanes (got " + opt.variant + ")");
    scratch_.assign(static_cast<std::size_t>(threads_) * scratch_stride() + 8, 0.0);
    const bool simd = opt.variant != "lanes";
    bool loads = opt.variant == "simd_loads";
    std::string trial;
    if (opt.variant == "auto" && pick(omega, true, true) != pick(omega, true, false)) {
      const auto t1 = std::chrono::steady_clock::now();
      const auto t = trial_candidates(2, [&](int c) { product_fn_ = pick(omega, true, c == 1); }, [this] { product(); });
      loads = t[1] < t[0];
      setup_seconds = seconds_since(t1);
      trial = fmt::format(" (trial us: simd {:.1f}, simd_loads {:.1f})", t[0] * 1e6, t[1] * 1e6);
    }
    detail += (!simd ? " variant=lanes" : loads ? " variant=simd_loads" : " variant=simd") + trial;
    product_fn_ = pick(omega, simd, loads);
    // Small matrices: a team of fewer threads can beat the fork/join of all of them (the CSR
    // kernel's trial does the same). Counted in setup_seconds.
    if (opt.variant == "auto" && threads_ > 1 && f_.nnz < (offset_t{1} << 18)) {
      std::vector<int> cands{threads_};
      if (threads_ / 4 > 1) cands.push_back(threads_ / 4);
      cands.push_back(1);
      const auto t1 = std::chrono::steady_clock::now();
      const auto t = trial_candidates(static_cast<int>(cands.size()), [&](int c) { threads_ = cands[c]; },
                                      [this] { product(); });
      threads_ = cands[std::min_element(t.begin(), t.end()) - t.begin()];
      setup_seconds += seconds_since(t1);
      std::string times;
      for (std::size_t c = 0; c < cands.size(); ++c)
        times += fmt::format("{}{} {:.1f}", c ? ", " : "", cands[c], t[c] * 1e6);
      detail += fmt::format(" threads={} (trial us: {})", threads_, times);
    }
  }

 protected:
  void product() override { (this->*product_fn_)(); }

 private:
  // Stores the complete sum of segment k >= 1 of tile t, zeroing the empty rows just before it.
  void store_segment(offset_t t, index_t row0, unsigned k, double s, double* y) const {
    if (!f_.hinted(t)) {
      y[row0 + k] = s;
      return;
    }
    const index_t* eo = f_.empty_offset.data() + f_.empty_offset_ptr[t];
    const index_t row = row0 + eo[k];
    for (index_t r = row0 + eo[k - 1] + 1; r < row; ++r) y[r] = 0.0;
    y[row] = s;
  }

  // Per-thread scratch of the simd tile: T, the running sums after every step ((sigma+1) x W, row
  // 0 kept zero), and seg, the tile's segment sums (one slot in front for the closing before the
  // tile's first entry). 64-byte aligned, whole cache lines per thread.
  std::size_t scratch_stride() const {
    const std::size_t n = static_cast<std::size_t>(f_.sigma + 1) * f_.omega + f_.tile_entries() + 2;
    return (n + 7) / 8 * 8;
  }
  double* scratch(int j) {
    auto p = reinterpret_cast<std::uintptr_t>(scratch_.data());
    p = (p + 63) / 64 * 64;
    return reinterpret_cast<double*>(p) + static_cast<std::size_t>(j) * scratch_stride();
  }

  // The segments of one tile from T (running sums reset at row starts) and the flags: stores every
  // segment except segment 0, whose sum it returns.
  //  - flag (i, c) closes the previous segment; that segment's part in lane c is T[i*W + c] (the
  //    running sum before step i; T's zero row 0 when the flag is at the top of the lane). The
  //    flags are visited lane by lane, i.e. in CSR order, so the k-th flag closes segment k-1.
  //  - the sum at the bottom of lane c (T[sigma*W + c]) belongs to the segment open there,
  //    yend[c] - 1 (yend[c] = segments opened in lanes <= c = y_offset of lane c+1): added last.
  //    This replaces the paper's seg_offset walk: a segment crossing lanes collects one bottom sum
  //    per lane it leaves.
  template <int W>
  double finish_tile(offset_t t, index_t row0, int sigma, const std::uint64_t* flags, const unsigned* yend_in,
                     const double* T, double* seg, double* y) const {
    int k = 0;  // seg[k] = the closing of the k-th flag; seg[0] (before the forced flag) is unused
    for (int c = 0; c < W; ++c)
      for (std::uint64_t fl = flags[c]; fl; fl &= fl - 1) seg[k++] = T[std::countr_zero(fl) * W + c];
    return store_segments<W>(t, row0, sigma, k, yend_in, T, seg, y);
  }

  // seg + 1 holds the closed part of segments 0 .. nseg-2; adds the lane bottoms and stores.
  template <int W>
  double store_segments(offset_t t, index_t row0, int sigma, int nseg, const unsigned* yend_in, const double* T,
                        double* seg, double* y) const {
    double* out = seg + 1;
    out[nseg - 1] = 0;  // the last segment is never closed inside the tile
    const double* bottom = T + static_cast<std::size_t>(sigma) * W;
    for (int c = 0; c < W - 1; ++c) out[yend_in[c] - 1] += bottom[c];
    out[nseg - 1] += bottom[W - 1];
    double* yr = y + row0;
    if (!f_.hinted(t)) {
      for (int j = 1; j < nseg; ++j) yr[j] = out[j];
    } else if (nseg > 1) {
      // Every row between the tile's first and last segment rows is a segment's or an empty one:
      // zero them all, then place the segments (no per-segment loop over the gaps).
      const index_t* eo = f_.empty_offset.data() + f_.empty_offset_ptr[t];
      std::fill(yr + 1, yr + eo[nseg - 1] + 1, 0.0);
      for (int j = 1; j < nseg; ++j) yr[eo[j]] = out[j];
    }
    return out[0];
  }

  // One full tile, the omega lanes advancing together (any W, sigma; the compiler vectorises the
  // lane loop): a segmented scan per lane, sum = (flag ? 0 : sum) + val * x[col], without branches.
  template <int W>
  double tile(offset_t t, const double* x, double* y, double* T, double* seg) const {
    const int sigma = f_.sigma;
    const offset_t base = t * f_.tile_entries();
    const index_t row0 = Csr5::row_of(f_.tile_ptr[t]);
    std::uint64_t flags[W];
    unsigned yend[W];
    for (int c = 0; c < W; ++c) {
      const std::uint64_t d = f_.descriptor(t, c);
      flags[c] = f_.bit_flag(d);
      if (c > 0) yend[c - 1] = f_.y_offset(d);
    }
    flags[0] |= 1;  // segment 0 always opens at the tile's first entry
    const double* v = f_.val.data() + base;
    const index_t* ci = f_.col.data() + base;
    double sum[W] = {};
    for (int i = 0; i < sigma; ++i) {
      const double* vi = v + static_cast<offset_t>(i) * W;
      const index_t* ii = ci + static_cast<offset_t>(i) * W;
      double* Ti = T + static_cast<std::size_t>(i + 1) * W;
#pragma omp simd
      for (int c = 0; c < W; ++c) {
        const double s = ((flags[c] >> i) & 1) ? 0.0 : sum[c];
        sum[c] = s + vi[c] * x[ii[c]];
        Ti[c] = sum[c];
      }
    }
    return finish_tile<W>(t, row0, sigma, flags, yend, T, seg, y);
  }

#if defined(__AVX2__) && defined(__FMA__)
  // finish_tile for omega x sigma = 4 x 16 and 4 x 32, writing straight into y. The tile's flags
  // in CSR order: S = 16: lo (bit c*16 + i), hi = 0; S = 32: lo (lanes 0, 1: bit c*32 + i) and
  // hi (lanes 2, 3); the forced opening of segment 0 (bit 0 of lo) included. The k-th flag closes
  // segment k-1, and segment k >= 1 is row yr[k] (yr[eo[k]] in a hinted tile, whose row span is
  // zeroed first for its empty rows). Segment 0 is returned.
  // The part closed by CSR position p is T[kClosing[p]] (a table: one load instead of four
  // instructions per segment).
  // Lane bottoms: the sum at the bottom of lane c belongs to the segment open there, which the
  // first flag of a later lane closes (or nothing: the segment open at the tile's end). Rather
  // than adding each bottom to y afterwards (a select of y slot or segment 0, a load, an add and
  // a store per lane, 30% of this function on thermal-like7), the bottom of lane c is added to
  // the T slot that lane c+1's first flag reads: T[first flag * 4 + c + 1]. A flagless lane c+1
  // has countr_zero = S, i.e. its own bottom slot, so the bottom carries on to lane c+2 by the
  // same three adds, in lane order, without a branch. A first flag at step 0 writes to T's zero
  // row, which is cleared again at the end.
  static constexpr auto kClosing = [] {
    std::array<std::uint8_t, 64> a{};
    for (int p = 0; p < 64; ++p) a[p] = static_cast<std::uint8_t>((p & 15) * 4 + (p >> 4));
    return a;
  }();
  static constexpr auto kClosing32 = [] {
    std::array<std::uint8_t, 128> a{};
    for (int p = 0; p < 128; ++p) a[p] = static_cast<std::uint8_t>((p & 31) * 4 + (p >> 5));
    return a;
  }();

  template <int S, bool Hinted>
  double finish4(offset_t t, std::uint64_t lo, std::uint64_t hi, double* T, double* yr) const {
    using Lane = std::conditional_t<S == 16, std::uint16_t, std::uint32_t>;
    const Lane l1 = static_cast<Lane>(lo >> S), l2 = static_cast<Lane>(S == 16 ? lo >> 32 : hi),
               l3 = static_cast<Lane>(S == 16 ? lo >> 48 : hi >> 32);
    // countr_zero of the lane's flags with a guard bit at S: no zero test (GCC branches on one).
    using Guard = std::conditional_t<S == 16, std::uint32_t, std::uint64_t>;
    const auto first_flag = [](Lane l) { return std::countr_zero(static_cast<Guard>(l) | (Guard{1} << S)); };
    double* bottom = T + S * 4;
    T[first_flag(l1) * 4 + 1] += bottom[0];
    T[first_flag(l2) * 4 + 2] += bottom[1];
    T[first_flag(l3) * 4 + 3] += bottom[2];
    const double open = bottom[3];  // the segment still open at the tile's end, its complete part
    const int nseg = std::popcount(lo) + std::popcount(hi);
    const std::uint8_t* klo = S == 16 ? kClosing.data() : kClosing32.data();
    const std::uint8_t* khi = kClosing32.data() + 64;
    std::uint64_t m = lo & (lo - 1);  // the forced opening closes nothing
    double first = open;
    if (nseg > 1) {
      if (S == 16 || m) {
        first = T[klo[std::countr_zero(m)]];
        m &= m - 1;
      } else {
        first = T[khi[std::countr_zero(hi)]];
        hi &= hi - 1;
      }
      const index_t* eo = Hinted ? f_.empty_offset.data() + f_.empty_offset_ptr[t] : nullptr;
      const auto row = [eo](int k) -> index_t { return Hinted ? eo[k] : k; };
      if constexpr (Hinted) std::fill(yr + 1, yr + eo[nseg - 1] + 1, 0.0);
      // Segments 1 .. nseg-2, two per iteration (half the loop overhead; a fixed-count,
      // branch-free loop was no faster).
      int k = 1;
      const auto closings = [&](std::uint64_t b, const std::uint8_t* tab) {
        while (b) {
          yr[row(k)] = T[tab[std::countr_zero(b)]];
          b &= b - 1;
          if (!b) {
            ++k;
            break;
          }
          yr[row(k + 1)] = T[tab[std::countr_zero(b)]];
          b &= b - 1;
          k += 2;
        }
      };
      closings(m, klo);
      if (S == 32) closings(hi, khi);
      yr[row(nseg - 1)] = open;
    }
    _mm256_store_pd(T, _mm256_setzero_pd());  // T's zero row again (a lane's first flag at step 0)
    return first;
  }

  // The default CPU tile, omega = 4 (one AVX2 register of doubles); S = 16 or 32 (the CPU's sigmas,
  // all shifts constant, the tile's flags one or two words, finished by finish4) or 0 (any sigma). Per step: load x (Gather: one
  // AVX2 gather; else four scalar loads), multiply, reset the lanes that open a row (blend by the
  // step's flag bit moved to the sign bit), add, store the running sums. GCC compiles the blend
  // to pcmpgtq + andnpd (a zeroing mask move with AVX-512) and contracts multiply + add into one
  // FMA (C++ defaults to -ffp-contract=fast): the sum's chain is 5 cycles a step; the loads
  // variant keeps the multiply off it (below).
  template <int S, bool Gather>
  double tile4(offset_t t, const double* x, double* y, double* T, double* seg) const {
    const int sigma = S > 0 ? S : f_.sigma;
    const offset_t base = t * f_.tile_entries();
    const index_t row0 = Csr5::row_of(f_.tile_ptr[t]);
    alignas(16) std::uint64_t flags[4];
    unsigned yend[4];
    std::uint64_t csr_flags = 0;  // S = 16: the tile's flags in CSR order, bit c*16 + i
    [[maybe_unused]] std::uint64_t csr_flags_hi = 0;  // S = 32: lanes 2 and 3 (csr_flags: 0 and 1)
    __m256i fv;
    if constexpr (S == 16) {  // one descriptor word
      const std::uint32_t* dw = f_.tile_desc.data() + static_cast<std::size_t>(t) * 4;  // one word per lane
      const __m128i d = _mm_loadu_si128(reinterpret_cast<const __m128i*>(dw));
      const __m128i fl = _mm_or_si128(_mm_srli_epi32(d, kFlagShift<16>), _mm_setr_epi32(1, 0, 0, 0));
      csr_flags = static_cast<std::uint64_t>(_mm_cvtsi128_si64(_mm_packus_epi32(fl, fl)));
      fv = _mm256_cvtepu32_epi64(fl);
    } else if constexpr (S == 32) {  // flag bits 0-22 in word 0, 23-31 in word 1
      const std::uint32_t* dw = f_.tile_desc.data() + static_cast<std::size_t>(t) * 8;
      const __m128i d0 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(dw));
      const __m128i d1 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(dw + 4));
      const __m128i flags_lo = _mm_srli_epi32(d0, kFlagShift<32>), flags_hi = _mm_slli_epi32(d1, 32 - kFlagShift<32>);
      const __m128i fl = _mm_or_si128(_mm_or_si128(flags_lo, flags_hi), _mm_setr_epi32(1, 0, 0, 0));
      csr_flags = static_cast<std::uint64_t>(_mm_cvtsi128_si64(fl));  // lanes 0, 1: bit c*32 + i
      csr_flags_hi = static_cast<std::uint64_t>(_mm_extract_epi64(fl, 1));  // lanes 2, 3
      fv = _mm256_cvtepu32_epi64(fl);
    } else {
      for (int c = 0; c < 4; ++c) {
        const std::uint64_t d = f_.descriptor(t, c);
        flags[c] = f_.bit_flag(d);
        if (c > 0) yend[c - 1] = f_.y_offset(d);
      }
      flags[0] |= 1;
      fv = _mm256_load_si256(reinterpret_cast<const __m256i*>(flags));
    }
    const double* v = f_.val.data() + base;
    const index_t* ci = f_.col.data() + base;
    // ci opaque to the optimiser: GCC otherwise rebuilds base + 16*i into a register with one lea
    // per step (a reused register under pressure) instead of addressing ci + constant: one of 18
    // instructions a step (cachegrind, in L2: 6.16 -> 5.86 per nonzero on stencil27).
    asm("" : "+r"(ci));
    __m256d sum = _mm256_setzero_pd();
    [[maybe_unused]] const __m256d all = _mm256_castsi256_pd(_mm256_set1_epi64x(-1));
#pragma GCC unroll 32
    for (int i = 0; i < sigma; ++i) {
      const __m256d open = _mm256_castsi256_pd(_mm256_slli_epi64(fv, 63 - i));
      __m256d xv;
      if constexpr (Gather) {
        // The masked form, all lanes on: the same instruction as the plain intrinsic, without
        // GCC's maybe-uninitialized warning about the latter's undefined source.
        const __m128i idx = _mm_loadu_si128(reinterpret_cast<const __m128i*>(ci + 4 * i));
        xv = _mm256_mask_i32gather_pd(_mm256_setzero_pd(), x, idx, all, 8);
      } else {
        // Four scalar loads, for CPUs whose gather is slow (microcoded or mitigated): one plain
        // load and three broadcasts, merged by immediate blends. The plain set (two movhpd and an
        // insertf128) puts three uops a step on Intel's one shuffle port (port 5), with the mask's
        // pcmpgtq four: 64 cycles a tile, more than the rest of the step needs; broadcasts from
        // memory are load-port only and blends go to any vector ALU. Same speed on AMD Zen 4.
        const index_t* c4 = ci + 4 * i;
        const __m256d x0 = _mm256_castpd128_pd256(_mm_load_sd(x + c4[0]));
        const __m256d x1 = _mm256_broadcast_sd(x + c4[1]);
        const __m256d x2 = _mm256_broadcast_sd(x + c4[2]);
        const __m256d x3 = _mm256_broadcast_sd(x + c4[3]);
        xv = _mm256_blend_pd(_mm256_blend_pd(x0, x1, 0b0010), _mm256_blend_pd(x2, x3, 0b1000), 0b1100);
      }
      __m256d prod = _mm256_mul_pd(_mm256_loadu_pd(v + 4 * i), xv);
      // Loads variant: the multiply kept off the sum's chain (4 cycles a step instead of the FMA's
      // 5); the gather variant keeps the FMA, which measured faster with it.
      if constexpr (!Gather) asm("" : "+x"(prod));
      sum = _mm256_add_pd(_mm256_blendv_pd(sum, _mm256_setzero_pd(), open), prod);
      _mm256_store_pd(T + 4 * (i + 1), sum);
    }
    if constexpr (S == 16 || S == 32) {
      (void)seg;
      if (f_.hinted(t)) return finish4<S, true>(t, csr_flags, csr_flags_hi, T, y + row0);
      return finish4<S, false>(t, csr_flags, csr_flags_hi, T, y + row0);
    } else {
      return finish_tile<4>(t, row0, sigma, flags, yend, T, seg, y);
    }
  }
#endif

  // The same result as tile(), one column at a time: the flag bits of a column cut its sigma
  // entries (stride W in the transposed storage) into runs summed by tight scalar loops.
  template <int W>
  double tile_lanes(offset_t t, const double* x, double* y) const {
    const int sigma = f_.sigma;
    const offset_t base = t * f_.tile_entries();
    const index_t row0 = Csr5::row_of(f_.tile_ptr[t]);
    const double* v = f_.val.data() + base;
    const index_t* ci = f_.col.data() + base;
    double red[W], blue[W];
    unsigned open[W], off[W];
    bool seen[W];
    double first = 0;
    for (int c = 0; c < W; ++c) {
      const std::uint64_t d = f_.descriptor(t, c);
      std::uint64_t fl = f_.bit_flag(d) | (c == 0 ? 1u : 0u);
      off[c] = f_.seg_offset(d);
      const double* vc = v + c;
      const index_t* cc = ci + c;
      auto run = [&](int a, int b) {
        double s = 0;
        for (int i = a; i < b; ++i) s += vc[static_cast<offset_t>(i) * W] * x[cc[static_cast<offset_t>(i) * W]];
        return s;
      };
      if (fl == 0) {
        red[c] = run(0, sigma);
        seen[c] = false;
        continue;
      }
      int pos = std::countr_zero(fl);
      red[c] = run(0, pos);
      unsigned k = f_.y_offset(d);  // the segment opened at the first flag
      fl &= fl - 1;
      while (fl) {
        const int next = std::countr_zero(fl);
        const double s = run(pos, next);
        if (k == 0) first = s;
        else store_segment(t, row0, k, s, y);
        ++k;
        pos = next;
        fl &= fl - 1;
      }
      blue[c] = run(pos, sigma);
      open[c] = k;
      seen[c] = true;
    }
    for (int c = 0; c < W; ++c) {
      if (!seen[c]) continue;
      double s = blue[c];
      const int last = std::min<int>(c + 1 + static_cast<int>(off[c]), W - 1);
      for (int j = c + 1; j <= last; ++j) s += red[j];
      if (open[c] == 0) first = s;
      else store_segment(t, row0, open[c], s, y);
    }
    return first;
  }

  enum class Tile { Lanes, Simd, Avx4x16, Avx4x32, Avx4, Avx4x16Loads, Avx4x32Loads, Avx4Loads };

  using ProductFn = void (Csr5Plan::*)();
  ProductFn pick(int omega, bool simd, [[maybe_unused]] bool loads) const {
    if (!simd) {
      switch (omega) {
        case 1: return &Csr5Plan::product_w<1, Tile::Lanes>;
        case 2: return &Csr5Plan::product_w<2, Tile::Lanes>;
        case 4: return &Csr5Plan::product_w<4, Tile::Lanes>;
        case 8: return &Csr5Plan::product_w<8, Tile::Lanes>;
        case 16: return &Csr5Plan::product_w<16, Tile::Lanes>;
        default: return &Csr5Plan::product_w<32, Tile::Lanes>;
      }
    }
    switch (omega) {
      case 1: return &Csr5Plan::product_w<1, Tile::Simd>;
      case 2: return &Csr5Plan::product_w<2, Tile::Simd>;
#if defined(__AVX2__) && defined(__FMA__)
      case 4:
        if (f_.sigma == 16 && f_.y_bits + f_.seg_bits == kFlagShift<16>)
          return loads ? &Csr5Plan::product_w<4, Tile::Avx4x16Loads> : &Csr5Plan::product_w<4, Tile::Avx4x16>;
        if (f_.sigma == 32 && f_.desc_words == 2 && f_.y_bits + f_.seg_bits == kFlagShift<32>)
          return loads ? &Csr5Plan::product_w<4, Tile::Avx4x32Loads> : &Csr5Plan::product_w<4, Tile::Avx4x32>;
        return loads ? &Csr5Plan::product_w<4, Tile::Avx4Loads> : &Csr5Plan::product_w<4, Tile::Avx4>;
#else
      case 4: return &Csr5Plan::product_w<4, Tile::Simd>;
#endif
      case 8: return &Csr5Plan::product_w<8, Tile::Simd>;
      case 16: return &Csr5Plan::product_w<16, Tile::Simd>;
      default: return &Csr5Plan::product_w<32, Tile::Simd>;
    }
  }

  template <int W, Tile K>
  double run_tile(offset_t t, const double* x, double* y, double* T, double* seg) const {
    if constexpr (K == Tile::Lanes) return tile_lanes<W>(t, x, y);
#if defined(__AVX2__) && defined(__FMA__)
    else if constexpr (K == Tile::Avx4x16) return tile4<16, true>(t, x, y, T, seg);
    else if constexpr (K == Tile::Avx4) return tile4<0, true>(t, x, y, T, seg);
    else if constexpr (K == Tile::Avx4x16Loads) return tile4<16, false>(t, x, y, T, seg);
    else if constexpr (K == Tile::Avx4x32) return tile4<32, true>(t, x, y, T, seg);
    else if constexpr (K == Tile::Avx4x32Loads) return tile4<32, false>(t, x, y, T, seg);
    else if constexpr (K == Tile::Avx4Loads) return tile4<0, false>(t, x, y, T, seg);
#endif
    else return tile<W>(t, x, y, T, seg);
  }

  // Tiles [t0, t1) of part j of n; returns the part's carry (its first row's sum when that row
  // started in an earlier part).
  template <int W, Tile K>
  double tile_range(int j, int n, const double* x, double* y) {
    const offset_t tiles = f_.tiles;
    const offset_t* rp = f_.row_ptr.data();
    const offset_t t0 = tiles * j / n, t1 = tiles * (j + 1) / n;
    double* T = scratch(j);  // row 0 stays zero (never written)
    double* seg = T + static_cast<std::size_t>(f_.sigma + 1) * W;
    const index_t r0 = t0 < t1 ? Csr5::row_of(f_.tile_ptr[t0]) : 0;
    const bool started_before = t0 < t1 && rp[r0] < t0 * f_.tile_entries();
    double carry = 0;
    for (offset_t t = t0; t < t1; ++t) {
      const double first = run_tile<W, K>(t, x, y, T, seg);
      const std::uint64_t tp = f_.tile_ptr[t];
      const index_t r = Csr5::row_of(tp);
      if (r == r0 && started_before) [[unlikely]] {
        carry += first;
      } else if (tp & Csr5::kEmptyHint) [[unlikely]] {
        const offset_t base = t * f_.tile_entries();
        if (rp[r] == base) {  // the tile begins row r: zero the empty rows just before it
          for (index_t e = r - 1; e >= 0 && rp[e] == base; --e) y[e] = 0.0;
          y[r] = first;
        } else {
          y[r] += first;
        }
      } else {
        // Without empty rows, the tile begins row r exactly when its first entry carries a flag
        // (kept in the descriptor): no look-up of the row pointer (one cache line per ~8 rows
        // that CSR5 otherwise reads on top of the matrix: 7% of thermal-like7's traffic) and no
        // branch on it (a tile of short rows begins one at random, 1 in 7 on thermal-like7).
        // Assign or add by masking the old value: y[r] may still hold anything when assigned.
        // The 4 x 16 / 4 x 32 tiles read the bit from lane 0's first word at its known place
        // (the generic descriptor() costs a dozen instructions a tile: member loads, multiplies).
        std::uint64_t begins;
        if constexpr (K == Tile::Avx4x16 || K == Tile::Avx4x16Loads)
          begins = f_.tile_desc[static_cast<std::size_t>(t) * 4] >> kFlagShift<16>;
        else if constexpr (K == Tile::Avx4x32 || K == Tile::Avx4x32Loads)
          begins = f_.tile_desc[static_cast<std::size_t>(t) * 8] >> kFlagShift<32>;
        else
          begins = f_.bit_flag(f_.descriptor(t, 0));
        const std::uint64_t keep = (begins & 1) - 1;  // all ones: add
        y[r] = std::bit_cast<double>(std::bit_cast<std::uint64_t>(y[r]) & keep) + first;
      }
    }
    return carry;
  }

  template <int W, Tile K>
  void product_w() {
    const double* x = x_.data();
    double* y = y_.data();
    const offset_t tiles = f_.tiles;
    const offset_t* rp = f_.row_ptr.data();
    // Never more threads than tiles: a tiny matrix on 64 threads runs on as many as it has tiles.
    const int nt = static_cast<int>(std::clamp<offset_t>(tiles, 1, threads_));
    if (nt == 1) {  // no OpenMP region at all: it costs about a microsecond, 10% of a small matrix
      tile_range<W, K>(0, 1, x, y);  // the carry of the first part is always 0
    } else {
      std::fill(carry_.begin(), carry_.end(), 0.0);
#pragma omp parallel num_threads(nt)
      {
        const int j = omp_get_thread_num(), n = omp_get_num_threads();
        carry_[j] = tile_range<W, K>(j, n, x, y);
      }
      for (int j = 0; j < nt; ++j) {
        const offset_t t0 = tiles * j / nt, t1 = tiles * (j + 1) / nt;
        if (t0 < t1) {
          const index_t r0 = Csr5::row_of(f_.tile_ptr[t0]);
          if (rp[r0] < t0 * f_.tile_entries()) y[r0] += carry_[j];
        }
      }
    }
    tail(x, y);
  }

  // The incomplete last tile in CSR order: the row straddling the tail start gets the rest of its
  // sum added; rows starting at or after it (including trailing empty rows) are assigned.
  void tail(const double* x, double* y) const {
    const offset_t* rp = f_.row_ptr.data();
    const offset_t tb = f_.tail_begin();
    const index_t rb = static_cast<index_t>(std::lower_bound(rp, rp + rows_ + 1, tb) - rp);
    const double* v = f_.val.data();
    const index_t* ci = f_.col.data();
    if (rb > 0 && rb <= rows_ && rp[rb] > tb) {
      double s = 0;
      for (offset_t p = tb; p < rp[rb]; ++p) s += v[p] * x[ci[p]];
      y[rb - 1] += s;
    }
    auto rows = [&](index_t r) {
      double s = 0;
      for (offset_t p = rp[r]; p < rp[r + 1]; ++p) s += v[p] * x[ci[p]];
      y[r] = s;
    };
    if (rows_ - rb > 100000 && threads_ > 1) {
#pragma omp parallel for schedule(static) num_threads(threads_)
      for (index_t r = rb; r < rows_; ++r) rows(r);
    } else {
      for (index_t r = rb; r < rows_; ++r) rows(r);
    }
  }

  int threads_;
  Csr5 f_;
  std::vector<double> carry_;
  std::vector<double> scratch_;
  void (Csr5Plan::*product_fn_)() = nullptr;
};

KernelSpec spec(Backend b) {
  return {.name = "csr5",
          .backend = b,
          .format = "csr5",
          .description = b == Backend::Serial
                             ? "CSR5 tiles (omega x sigma, default 4 x 32 for short rows, else 4 x 16), one thread"
                             : "CSR5 tiles (omega x sigma, default 4 x 32 for short rows, else 4 x 16) over threads, SIMD across tile columns",
          .spmm = false,
          .params = b == Backend::Serial ? std::vector<std::string>{"csr5_omega", "csr5_sigma", "variant"}
                                         : std::vector<std::string>{"threads", "csr5_omega", "csr5_sigma", "variant"},
          .make = [b](const Csr& a, const PlanOptions& o) -> std::unique_ptr<Plan> {
            return std::make_unique<Csr5Plan>(a, o, b);
          }};
}

}  // namespace

void register_csr5() {
  add_kernel(spec(Backend::Serial));
  add_kernel(spec(Backend::Omp));
}

}  // namespace spmv::cpu

namespace spmv::cpu::tuning {

int csr5_sigma(double nnz_per_row, int omega) { return omega == 4 && kAvx2 && nnz_per_row < 16 ? 32 : 16; }

}  // namespace spmv::cpu::tuning
