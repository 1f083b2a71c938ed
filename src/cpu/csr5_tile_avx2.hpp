#pragma once
// One CSR5 tile of omega = 4 (one AVX2 register of doubles per step) on AVX2 + FMA: any sigma, with
// the flags and the finish of the 4 x 16 and 4 x 32 tiles specialised (finish4). Without AVX2 only
// kFlagShift is defined; the plain tiles of csr5_tile.hpp run instead.
// The segment loop is data-driven (two segments per iteration, through a table): a fixed-count,
// branch-free one is no faster and has more instructions. For regular short rows the costs that
// differ from CSR are cut: sigma 32 for short rows (half the per-tile work per nonzero; see
// tuning::csr5_sigma), no row-pointer read per tile (the "tile begins a row" bit is in the
// descriptor), no shuffle-port uops per step with scalar x loads.
#include <spmv/formats/csr5.hpp>

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <type_traits>

#include "cpu/csr5_tile.hpp"

namespace spmv::cpu::csr5 {

// First bit of the row-start flags in a column descriptor of a 4 x S tile: after y_offset
// (ceil(log2(4 S)) bits) and seg_offset (2 bits). The hand-written tiles read the flags there.
template <int S>
constexpr int kFlagShift = std::bit_width(static_cast<unsigned>(4 * S - 1)) + 2;
static_assert(kFlagShift<16> == 8 && kFlagShift<32> == 9);

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
// a store per lane, a large part of this function), the bottom of lane c is added to
// the T slot that lane c+1's first flag reads: T[first flag * 4 + c + 1]. A flagless lane c+1
// has countr_zero = S, i.e. its own bottom slot, so the bottom carries on to lane c+2 by the
// same three adds, in lane order, without a branch. A first flag at step 0 writes to T's zero
// row, which is cleared again at the end.
inline constexpr auto kClosing = [] {
  std::array<std::uint8_t, 64> a{};
  for (int p = 0; p < 64; ++p) a[p] = static_cast<std::uint8_t>((p & 15) * 4 + (p >> 4));
  return a;
}();
inline constexpr auto kClosing32 = [] {
  std::array<std::uint8_t, 128> a{};
  for (int p = 0; p < 128; ++p) a[p] = static_cast<std::uint8_t>((p & 31) * 4 + (p >> 5));
  return a;
}();

template <int S, bool Hinted>
inline double finish4(const Csr5& f, offset_t t, std::uint64_t lo, std::uint64_t hi, double* T, double* yr,
                      const Scale<double>& sc) {
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
    const index_t* eo = Hinted ? f.empty_offset.data() + f.empty_offset_ptr[t] : nullptr;
    const auto row = [eo](int k) -> index_t { return Hinted ? eo[k] : k; };
    // A hinted tile's row span is prescaled (zeroed where beta = 0), its segments then added.
    if constexpr (Hinted)
      for (index_t r = 1; r <= eo[nseg - 1]; ++r) sc.prescale(yr[r]);
    const auto store = [&](index_t r, double s) {
      if constexpr (Hinted)
        sc.add(yr[r], s);
      else
        sc.put(yr[r], s);
    };
    // Segments 1 .. nseg-2, two per iteration (half the loop overhead; a fixed-count,
    // branch-free loop was no faster).
    int k = 1;
    const auto closings = [&](std::uint64_t b, const std::uint8_t* tab) {
      while (b) {
        store(row(k), T[tab[std::countr_zero(b)]]);
        b &= b - 1;
        if (!b) {
          ++k;
          break;
        }
        store(row(k + 1), T[tab[std::countr_zero(b)]]);
        b &= b - 1;
        k += 2;
      }
    };
    closings(m, klo);
    if (S == 32) closings(hi, khi);
    store(row(nseg - 1), open);
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
inline double tile4(const Csr5& f, offset_t t, const double* x, double* y, double* T, double* seg,
                    const Scale<double>& sc) {
  const int sigma = S > 0 ? S : f.sigma;
  const offset_t base = t * f.tile_entries();
  const index_t row0 = Csr5::row_of(f.tile_ptr[t]);
  alignas(16) std::uint64_t flags[4];
  unsigned yend[4];
  std::uint64_t csr_flags = 0;                      // S = 16: the tile's flags in CSR order, bit c*16 + i
  [[maybe_unused]] std::uint64_t csr_flags_hi = 0;  // S = 32: lanes 2 and 3 (csr_flags: 0 and 1)
  __m256i fv;
  if constexpr (S == 16) {                                                           // one descriptor word
    const std::uint32_t* dw = f.tile_desc.data() + static_cast<std::size_t>(t) * 4;  // one word per lane
    const __m128i d = _mm_loadu_si128(reinterpret_cast<const __m128i*>(dw));
    const __m128i fl = _mm_or_si128(_mm_srli_epi32(d, kFlagShift<16>), _mm_setr_epi32(1, 0, 0, 0));
    csr_flags = static_cast<std::uint64_t>(_mm_cvtsi128_si64(_mm_packus_epi32(fl, fl)));
    fv = _mm256_cvtepu32_epi64(fl);
  } else if constexpr (S == 32) {  // flag bits 0-22 in word 0, 23-31 in word 1
    const std::uint32_t* dw = f.tile_desc.data() + static_cast<std::size_t>(t) * 8;
    const __m128i d0 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(dw));
    const __m128i d1 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(dw + 4));
    const __m128i flags_lo = _mm_srli_epi32(d0, kFlagShift<32>), flags_hi = _mm_slli_epi32(d1, 32 - kFlagShift<32>);
    const __m128i fl = _mm_or_si128(_mm_or_si128(flags_lo, flags_hi), _mm_setr_epi32(1, 0, 0, 0));
    csr_flags = static_cast<std::uint64_t>(_mm_cvtsi128_si64(fl));        // lanes 0, 1: bit c*32 + i
    csr_flags_hi = static_cast<std::uint64_t>(_mm_extract_epi64(fl, 1));  // lanes 2, 3
    fv = _mm256_cvtepu32_epi64(fl);
  } else {
    for (int c = 0; c < 4; ++c) {
      const std::uint64_t d = f.descriptor(t, c);
      flags[c] = f.bit_flag(d);
      if (c > 0) yend[c - 1] = f.y_offset(d);
    }
    flags[0] |= 1;
    fv = _mm256_load_si256(reinterpret_cast<const __m256i*>(flags));
  }
  const double* v = f.val.data() + base;
  const index_t* ci = f.col.data() + base;
  // ci opaque to the optimiser: GCC otherwise rebuilds base + 16*i into a register with one lea
  // per step (a reused register under pressure) instead of addressing ci + constant: one of 18
  // instructions a step.
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
      // memory are load-port only and blends go to any vector ALU; no slower where shuffles are cheap.
      const index_t* c4 = ci + 4 * i;
      const __m256d x0 = _mm256_castpd128_pd256(_mm_load_sd(x + c4[0]));
      const __m256d x1 = _mm256_broadcast_sd(x + c4[1]);
      const __m256d x2 = _mm256_broadcast_sd(x + c4[2]);
      const __m256d x3 = _mm256_broadcast_sd(x + c4[3]);
      xv = _mm256_blend_pd(_mm256_blend_pd(x0, x1, 0b0010), _mm256_blend_pd(x2, x3, 0b1000), 0b1100);
    }
    __m256d prod = _mm256_mul_pd(_mm256_loadu_pd(v + 4 * i), xv);
    // Loads variant: the multiply kept off the sum's chain (4 cycles a step instead of the FMA's
    // 5); the gather variant keeps the FMA, faster with it.
    if constexpr (!Gather) asm("" : "+x"(prod));
    sum = _mm256_add_pd(_mm256_blendv_pd(sum, _mm256_setzero_pd(), open), prod);
    _mm256_store_pd(T + 4 * (i + 1), sum);
  }
  if constexpr (S == 16 || S == 32) {
    (void)seg;
    if (f.hinted(t)) return finish4<S, true>(f, t, csr_flags, csr_flags_hi, T, y + row0, sc);
    return finish4<S, false>(f, t, csr_flags, csr_flags_hi, T, y + row0, sc);
  } else {
    return finish_tile<4>(f, t, row0, sigma, flags, yend, T, seg, y, sc);
  }
}
#endif

}  // namespace spmv::cpu::csr5
