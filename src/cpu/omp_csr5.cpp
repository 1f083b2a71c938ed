// CSR5 SpMV on the CPU: OpenMP over contiguous ranges of tiles, the omega columns of a tile as
// SIMD lanes, and a race-free combination of rows that span tiles. A tile's product is in
// csr5_tile.hpp (any omega, plain C++) and csr5_tile_avx2.hpp (omega = 4, AVX2 + FMA); here the
// plan: which tile, the ranges of tiles per thread, the carries between them and the tail.
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
#include <spmv/params.hpp>

#include <omp.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cstdint>
#include <fmt/format.h>
#include <string>
#include <vector>

#include "cpu/cpu_plan.hpp"
#include "cpu/csr5_tile.hpp"
#include "cpu/csr5_tile_avx2.hpp"
#include "cpu/csr5_tile_spmm.hpp"
#include "cpu/tuning.hpp"
#include "cpu/row_kernels.hpp"
#include "core/register.hpp"

namespace spmv::cpu {

namespace {

// "simd": the omega lanes advance together step by step (the paper's SIMD form), x gathered with
// one AVX2 gather per step; "simd_loads": the same with four scalar loads per step (CPUs whose
// gather is slow); "lanes": the reference path, each column walked on its own, segment by segment
// from its flag bits. Not given: the faster of simd and simd_loads by a timed trial when omega = 4
// on AVX2 (counted in setup_seconds), else simd.
const std::vector<VariantGroup>& variants() {
  static const std::vector<VariantGroup> v = {{"tiles", {"simd", "simd_loads", "lanes"}, "how a tile's lanes advance"}};
  return v;
}

// V: the values' type, VV: x, y and the sums (double, double; single float, float; mixed float,
// double). The AVX2 tiles are double's; other precisions run the plain C++ tiles.
template <class V, class VV>
class Csr5Plan final : public CpuPlan {
  static constexpr bool kAvxTiles =
#if defined(__AVX2__) && defined(__FMA__)
      std::is_same_v<V, double> && std::is_same_v<VV, double>;
#else
      false;
#endif

 public:
  Csr5Plan(const CsrView& a, const PlanOptions& opt, Backend backend)
      : CpuPlan(a.rows, a.cols, opt), threads_(backend == Backend::Serial ? 1 : plan_threads(opt)) {
    const int given = threads_;
    const int omega = opt.kernel.csr5_omega > 0 ? opt.kernel.csr5_omega : tuning::csr5_omega;
    const double per_row = a.rows > 0 ? static_cast<double>(a.nnz()) / a.rows : 0.0;
    const int sigma = opt.kernel.csr5_sigma > 0 ? opt.kernel.csr5_sigma : tuning::csr5_sigma(per_row, omega);
    if (omega != 1 && omega != 2 && omega != 4 && omega != 8 && omega != 16 && omega != 32)
      throw Unsupported(fmt::format("csr5 on the CPU: omega must be 1, 2, 4, 8, 16 or 32 (got {})", omega));
    const auto t0 = std::chrono::steady_clock::now();
    ConvertOptions conv = convert_options(opt);  // the plan's threads (one for the serial kernel)
    conv.threads = threads_;
    f_ = csr_to_csr5<V>(a, omega, sigma, conv);
    convert_seconds = seconds_since(t0);
    carry_.assign(static_cast<std::size_t>(threads_) * k_, 0.0);
    bytes_per_product = csr_product_bytes(a, k_, opt.precision) + static_cast<offset_t>(f_.tile_desc.size()) * 4 +
                        static_cast<offset_t>(f_.tile_ptr.size()) * 8;
    stored_entries = a.nnz();
    detail = fmt::format("omega={} sigma={} tiles={} tail={}", omega, sigma, f_.tiles, f_.nnz - f_.tail_begin());
    const std::string tiles(parse_variant("csr5", variants(), opt.kernel.variant)["tiles"]);
    if (k_ > 1 && !tiles.empty() && tiles != "lanes")
      throw Unsupported("csr5 on the CPU with k > 1: variant must be auto or lanes (got " + opt.kernel.variant +
                        "; the SIMD tiles are SpMV's)");
    scratch_.assign(static_cast<std::size_t>(threads_) * scratch_stride() + kLine,
                    0.0);  // + kLine: scratch()'s alignment
    const bool simd = tiles != "lanes";
    bool loads = tiles == "simd_loads";
    std::string trial;
    if (k_ > 1) {
      // SpMM: the lane walk with K-wide sums, vectorised across K.
      spmm_stride_ = (static_cast<std::size_t>(2 * omega + 2) * k_ + 7) / 8 * 8;
      scratch_.assign(static_cast<std::size_t>(threads_) * spmm_stride_, 0.0);
      detail += " spmm=lanes across K";
      product_fn_ = pick_spmm(omega);
    } else if (tiles.empty() && pick(omega, true, true) != pick(omega, true, false)) {
      const auto t1 = std::chrono::steady_clock::now();
      const auto t = trial_candidates(
          2, [&](int c) { product_fn_ = pick(omega, true, c == 1); }, [this] { product(); });
      loads = t[1] < t[0];
      setup_seconds = seconds_since(t1);
      trial = fmt::format(" (trial us: simd {:.1f}, simd_loads {:.1f})", t[0] * 1e6, t[1] * 1e6);
    }
    if (k_ == 1) {
      detail += (!simd ? " variant=lanes" : loads ? " variant=simd_loads" : " variant=simd") + trial;
      product_fn_ = pick(omega, simd, loads);
    }
    // Small matrices: a team of fewer threads can beat the fork/join of all of them (the CSR
    // kernel's trial does the same). Counted in setup_seconds.
    const auto& small = tuning::small_matrix_trial;
    if (tiles.empty() && threads_ > 1 && f_.nnz < small.csr5_max_nnz) {
      std::vector<int> cands{threads_};
      if (threads_ / small.csr5_thread_divisor > 1) cands.push_back(threads_ / small.csr5_thread_divisor);
      cands.push_back(1);
      const auto t1 = std::chrono::steady_clock::now();
      const auto t = trial_candidates(
          static_cast<int>(cands.size()), [&](int c) { threads_ = cands[c]; }, [this] { product(); });
      threads_ = cands[std::min_element(t.begin(), t.end()) - t.begin()];
      setup_seconds += seconds_since(t1);
      std::string times;
      for (std::size_t c = 0; c < cands.size(); ++c)
        times += fmt::format("{}{} {:.1f}", c ? ", " : "", cands[c], t[c] * 1e6);
      detail += fmt::format(" threads={} (trial us: {})", threads_, times);
    }
    // Fewer threads than given: the trial's choice on a small matrix, or fewer tiles than threads.
    note_fewer_threads(detail, planned_threads(), given,
                       threads_ < given
                           ? fmt::format("the trial found {} fastest (a small matrix: nnz {} < {})",
                                         threads_ == 1 ? "one thread" : fmt::format("{} threads", threads_), f_.nnz,
                                         small.csr5_max_nnz)
                           : fmt::format("{} tile{}", f_.tiles, f_.tiles == 1 ? "" : "s"));
  }

  int threads_used() const override { return threads_running(planned_threads()); }

 protected:
  void product() override { (this->*product_fn_)(); }

 private:
  // Per-thread scratch of the simd tile: T, the running sums after every step ((sigma+1) x W, row
  // 0 kept zero), and seg, the tile's segment sums (one slot in front for the closing before the
  // tile's first entry). 64-byte aligned, whole cache lines per thread.
  std::size_t scratch_stride() const {
    const std::size_t n = static_cast<std::size_t>(f_.sigma + 1) * f_.omega + f_.tile_entries() + 2;
    return (n + kLine - 1) / kLine * kLine;
  }
  static constexpr std::size_t kLine = 64 / sizeof(VV);  // values in a 64-byte cache line
  VV* scratch(int j) {
    auto p = reinterpret_cast<std::uintptr_t>(scratch_.data());
    p = (p + 63) / 64 * 64;
    return reinterpret_cast<VV*>(p) + static_cast<std::size_t>(j) * scratch_stride();
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
      case 4:
#if defined(__AVX2__) && defined(__FMA__)
        if constexpr (kAvxTiles) {
          if (f_.sigma == 16 && f_.y_bits + f_.seg_bits == csr5::kFlagShift<16>)
            return loads ? &Csr5Plan::product_w<4, Tile::Avx4x16Loads> : &Csr5Plan::product_w<4, Tile::Avx4x16>;
          if (f_.sigma == 32 && f_.desc_words == 2 && f_.y_bits + f_.seg_bits == csr5::kFlagShift<32>)
            return loads ? &Csr5Plan::product_w<4, Tile::Avx4x32Loads> : &Csr5Plan::product_w<4, Tile::Avx4x32>;
          return loads ? &Csr5Plan::product_w<4, Tile::Avx4Loads> : &Csr5Plan::product_w<4, Tile::Avx4>;
        }
#endif
        return &Csr5Plan::product_w<4, Tile::Simd>;
      case 8: return &Csr5Plan::product_w<8, Tile::Simd>;
      case 16: return &Csr5Plan::product_w<16, Tile::Simd>;
      default: return &Csr5Plan::product_w<32, Tile::Simd>;
    }
  }

  template <int W, Tile K>
  VV run_tile(offset_t t, const VV* x, VV* y, VV* T, VV* seg, const Scale<VV>& sc) const {
    if constexpr (K == Tile::Lanes) return csr5::tile_lanes<W>(f_, t, x, y, sc);
#if defined(__AVX2__) && defined(__FMA__)
    else if constexpr (K == Tile::Avx4x16)
      return csr5::tile4<16, true>(f_, t, x, y, T, seg, sc);
    else if constexpr (K == Tile::Avx4)
      return csr5::tile4<0, true>(f_, t, x, y, T, seg, sc);
    else if constexpr (K == Tile::Avx4x16Loads)
      return csr5::tile4<16, false>(f_, t, x, y, T, seg, sc);
    else if constexpr (K == Tile::Avx4x32)
      return csr5::tile4<32, true>(f_, t, x, y, T, seg, sc);
    else if constexpr (K == Tile::Avx4x32Loads)
      return csr5::tile4<32, false>(f_, t, x, y, T, seg, sc);
    else if constexpr (K == Tile::Avx4Loads)
      return csr5::tile4<0, false>(f_, t, x, y, T, seg, sc);
#endif
    else
      return csr5::tile<W>(f_, t, x, y, T, seg, sc);
  }

  // Tiles [t0, t1) of part j of n; returns the part's carry (its first row's sum when that row
  // started in an earlier part).
  template <int W, Tile K>
  VV tile_range(int j, int n, const VV* x, VV* y, const Scale<VV>& sc) {
    const offset_t tiles = f_.tiles;
    const offset_t* rp = f_.row_ptr.data();
    const offset_t t0 = tiles * j / n, t1 = tiles * (j + 1) / n;
    VV* T = scratch(j);  // row 0 stays zero (never written)
    VV* seg = T + static_cast<std::size_t>(f_.sigma + 1) * W;
    const index_t r0 = t0 < t1 ? Csr5::row_of(f_.tile_ptr[t0]) : 0;
    const bool started_before = t0 < t1 && rp[r0] < t0 * f_.tile_entries();
    VV carry = 0;
    const std::uint64_t beta_zero = sc.beta == VV(0);
    for (offset_t t = t0; t < t1; ++t) {
      const VV first = run_tile<W, K>(t, x, y, T, seg, sc);
      const std::uint64_t tp = f_.tile_ptr[t];
      const index_t r = Csr5::row_of(tp);
      if (r == r0 && started_before) [[unlikely]] {
        carry += first;
      } else if (tp & Csr5::kEmptyHint) [[unlikely]] {
        const offset_t base = t * f_.tile_entries();
        if (rp[r] == base) {  // the tile begins row r: zero the empty rows just before it
          for (index_t e = r - 1; e >= 0 && rp[e] == base; --e) sc.prescale(y[e]);
          sc.put(y[r], first);
        } else {
          sc.add(y[r], first);
        }
      } else {
        // Without empty rows, the tile begins row r exactly when its first entry carries a flag
        // (kept in the descriptor): no look-up of the row pointer (one cache line per ~8 rows
        // that CSR5 otherwise reads on top of the matrix) and no branch on it (a tile of short rows
        // begins one at random, so the branch mispredicts).
        // Put or add without a branch: y[r] * (begins ? beta : 1) + alpha * first, the old value
        // masked off where the tile begins the row and beta = 0 (y[r] may then hold anything, NaN too).
        // The 4 x 16 / 4 x 32 tiles read the bit from lane 0's first word at its known place
        // (the generic descriptor() costs a dozen instructions a tile: member loads, multiplies).
        std::uint64_t begins;
        if constexpr (K == Tile::Avx4x16 || K == Tile::Avx4x16Loads)
          begins = f_.tile_desc[static_cast<std::size_t>(t) * 4] >> csr5::kFlagShift<16>;
        else if constexpr (K == Tile::Avx4x32 || K == Tile::Avx4x32Loads)
          begins = f_.tile_desc[static_cast<std::size_t>(t) * 8] >> csr5::kFlagShift<32>;
        else
          begins = f_.bit_flag(f_.descriptor(t, 0));
        using Bits = std::conditional_t<sizeof(VV) == 8, std::uint64_t, std::uint32_t>;
        const Bits keep = static_cast<Bits>((begins & beta_zero & 1) - 1);  // all ones: keep the old value
        const VV old = y[r] * ((begins & 1) ? sc.beta : VV(1));
        y[r] = std::bit_cast<VV>(static_cast<Bits>(std::bit_cast<Bits>(old) & keep)) + sc.alpha * first;
      }
    }
    return carry;
  }

  // Threads the tiles keep busy (over_parts): never more than tiles.
  int planned_threads() const { return static_cast<int>(std::clamp<offset_t>(f_.tiles, 1, threads_)); }

  // Runs part(j, n) for part j of the tiles over the team OpenMP gives (fewer threads than asked
  // inside an outer region; no region for one part), then carry(j, r0) in part order for each part
  // whose first row r0 started in an earlier part (its sum so far is in that part's carry).
  template <typename Part, typename Carry>
  void over_parts(Part part, Carry carry) {
    const offset_t tiles = f_.tiles;
    const offset_t* rp = f_.row_ptr.data();
    // Never more threads than tiles: a tiny matrix on 64 threads runs on as many as it has tiles.
    const int nt = static_cast<int>(std::clamp<offset_t>(tiles, 1, threads_));
    if (nt == 1) {  // no OpenMP region at all: it costs about a microsecond, 10% of a small matrix
      part(0, 1);   // the carry of the first part is always 0
      return;
    }
    int team = nt;
#pragma omp parallel num_threads(nt)
    {
      const int j = omp_get_thread_num(), n = omp_get_num_threads();
      if (j == 0) team = n;
      part(j, n);
    }
    for (int j = 0; j < team; ++j) {
      const offset_t t0 = tiles * j / team, t1 = tiles * (j + 1) / team;
      if (t0 >= t1) continue;
      const index_t r0 = Csr5::row_of(f_.tile_ptr[t0]);
      if (rp[r0] < t0 * f_.tile_entries()) carry(j, r0);
    }
  }

  template <int W, Tile K>
  void product_w() {
    const VV* x = vec_x<VV>();
    VV* y = vec_y<VV>();
    const Scale<VV> sc = scale<VV>();
    over_parts([&](int j, int n) { carry_[j] = tile_range<W, K>(j, n, x, y, sc); },
               [&](int j, index_t r0) { sc.add(y[r0], carry_[j]); });
    tail(x, y, sc);
  }

  ProductFn pick_spmm(int omega) const {
    const bool rm = layout_ == Layout::RowMajor;
    switch (omega) {
      case 1: return rm ? &Csr5Plan::product_k<1, true> : &Csr5Plan::product_k<1, false>;
      case 2: return rm ? &Csr5Plan::product_k<2, true> : &Csr5Plan::product_k<2, false>;
      case 4: return rm ? &Csr5Plan::product_k<4, true> : &Csr5Plan::product_k<4, false>;
      case 8: return rm ? &Csr5Plan::product_k<8, true> : &Csr5Plan::product_k<8, false>;
      case 16: return rm ? &Csr5Plan::product_k<16, true> : &Csr5Plan::product_k<16, false>;
      default: return rm ? &Csr5Plan::product_k<32, true> : &Csr5Plan::product_k<32, false>;
    }
  }

  // SpMM: tiles [t0, t1) of part j of n as tile_range does, K wide; carry: the part's first row's
  // K sums when that row started in an earlier part.
  template <int W, bool RM>
  void tile_range_k(int j, int n, VV* carry) {
    const csr5::DenseK<RM, const VV> x{vec_x<VV>(), cols_, k_};
    const csr5::DenseK<RM, VV> y{vec_y<VV>(), rows_, k_};
    const Scale<VV> sc = scale<VV>();
    const offset_t tiles = f_.tiles;
    const offset_t* rp = f_.row_ptr.data();
    const offset_t t0 = tiles * j / n, t1 = tiles * (j + 1) / n;
    VV* work = scratch_.data() + spmm_stride_ * static_cast<std::size_t>(j);
    VV* first = work + static_cast<std::size_t>(2 * W + 1) * k_;
    const index_t r0 = t0 < t1 ? Csr5::row_of(f_.tile_ptr[t0]) : 0;
    const bool started_before = t0 < t1 && rp[r0] < t0 * f_.tile_entries();
    std::fill(carry, carry + k_, VV{0});
    for (offset_t t = t0; t < t1; ++t) {
      csr5::tile_lanes_k<W, RM>(f_, t, x, y, work, first, sc);
      const index_t r = Csr5::row_of(f_.tile_ptr[t]);
      if (r == r0 && started_before) {
        for (int c = 0; c < k_; ++c) carry[c] += first[c];
        continue;
      }
      bool begins;
      if (f_.hinted(t)) {
        const offset_t base = t * f_.tile_entries();
        begins = rp[r] == base;
        if (begins) {  // zero the empty rows just before it
          index_t e = r;
          while (e > 0 && rp[e - 1] == base) --e;
          csr5::zero_rows(y, e, r, sc);
        }
      } else {
        begins = (f_.bit_flag(f_.descriptor(t, 0)) & 1) != 0;
      }
      for (int c = 0; c < k_; ++c) {
        if (begins)
          sc.put(y.at(r, c), first[c]);
        else
          sc.add(y.at(r, c), first[c]);
      }
    }
  }

  template <int W, bool RM>
  void product_k() {
    const csr5::DenseK<RM, VV> y{vec_y<VV>(), rows_, k_};
    const Scale<VV> sc = scale<VV>();
    over_parts([&](int j, int n) { tile_range_k<W, RM>(j, n, carry_.data() + static_cast<std::size_t>(j) * k_); },
               [&](int j, index_t r0) {
                 for (int c = 0; c < k_; ++c) sc.add(y.at(r0, c), carry_[static_cast<std::size_t>(j) * k_ + c]);
               });
    tail_k<RM>();
  }

  // tail() K wide.
  template <bool RM>
  void tail_k() {
    const csr5::DenseK<RM, const VV> x{vec_x<VV>(), cols_, k_};
    const csr5::DenseK<RM, VV> y{vec_y<VV>(), rows_, k_};
    const Scale<VV> sc = scale<VV>();
    const offset_t* rp = f_.row_ptr.data();
    const offset_t tb = f_.tail_begin();
    const index_t rb = static_cast<index_t>(std::lower_bound(rp, rp + rows_ + 1, tb) - rp);
    VV* s = scratch_.data();  // after the parallel region: thread 0's scratch is free
    auto run = [&](offset_t p0, offset_t p1) {
      csr5::column_run<1>(f_.val.data() + p0, f_.col.data() + p0, 0, static_cast<int>(p1 - p0), x, s);
    };
    if (rb > 0 && rb <= rows_ && rp[rb] > tb) {
      run(tb, rp[rb]);
      for (int c = 0; c < k_; ++c) sc.add(y.at(rb - 1, c), s[c]);
    }
    for (index_t r = rb; r < rows_; ++r) {
      run(rp[r], rp[r + 1]);
      csr5::put_row(y, r, s, sc);
    }
  }

  // The incomplete last tile in CSR order: the row straddling the tail start gets the rest of its
  // sum added; rows starting at or after it (including trailing empty rows) are assigned.
  void tail(const VV* x, VV* y, const Scale<VV>& sc) const {
    const offset_t* rp = f_.row_ptr.data();
    const offset_t tb = f_.tail_begin();
    const index_t rb = static_cast<index_t>(std::lower_bound(rp, rp + rows_ + 1, tb) - rp);
    const V* v = f_.val.data();
    const index_t* ci = f_.col.data();
    if (rb > 0 && rb <= rows_ && rp[rb] > tb) {
      VV s = 0;
      for (offset_t p = tb; p < rp[rb]; ++p) s += static_cast<VV>(v[p]) * x[ci[p]];
      sc.add(y[rb - 1], s);
    }
    auto rows = [&](index_t r) {
      VV s = 0;
      for (offset_t p = rp[r]; p < rp[r + 1]; ++p) s += static_cast<VV>(v[p]) * x[ci[p]];
      sc.put(y[r], s);
    };
    if (rows_ - rb > tuning::csr5_parallel_tail_rows && threads_ > 1) {
#pragma omp parallel for schedule(static) num_threads(threads_)
      for (index_t r = rb; r < rows_; ++r) rows(r);
    } else {
      for (index_t r = rb; r < rows_; ++r) rows(r);
    }
  }

  int threads_;
  std::size_t spmm_stride_ = 0;  // SpMM: values of scratch_ per thread
  BasicCsr5<V> f_;
  std::vector<VV> carry_;
  std::vector<VV> scratch_;
  void (Csr5Plan::*product_fn_)() = nullptr;
};

KernelSpec spec(Backend b) {
  return {.name = "csr5",
          .backend = b,
          .format = "csr5",
          .description = b == Backend::Serial
                             ? "CSR5 tiles (omega x sigma, default 4 x 32 for short rows, else 4 x 16), one thread"
                             : "CSR5 tiles (omega x sigma, default 4 x 32 for short rows, else 4 x 16) over threads, "
                               "SIMD across tile columns",
          .spmm = true,
          .precisions = {Precision::Double, Precision::Single, Precision::Mixed},
          .params = b == Backend::Serial ? std::vector<std::string>{"csr5_omega", "csr5_sigma"}
                                         : std::vector<std::string>{"threads", "csr5_omega", "csr5_sigma"},
          .variants = variants(),
          .make = [b](const CsrView& a, const PlanOptions& o) -> std::unique_ptr<Plan> {
            if (o.precision == Precision::Single) return std::make_unique<Csr5Plan<float, float>>(a, o, b);
            if (o.precision == Precision::Mixed) return std::make_unique<Csr5Plan<float, double>>(a, o, b);
            return std::make_unique<Csr5Plan<double, double>>(a, o, b);
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
