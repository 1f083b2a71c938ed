// CSR5 SpMV on the CPU: OpenMP over contiguous ranges of tiles, the omega columns of a tile as
// SIMD lanes, the paper's fast segmented sum, and a race-free combination of rows that span tiles.
//
// Who writes y[r]:
//  - a segment that starts and ends inside one tile (a "green" segment, or the tile's last segment
//    when it is not segment 0) is stored directly by that tile: no other tile can own its start;
//  - segment 0 of a tile is returned to the tile loop: assigned when the tile begins the row,
//    added otherwise (tiles run in order inside a thread, so the assignment came first);
//  - the one row per thread that started in an earlier thread's range is accumulated in a
//    per-thread carry and added after the parallel region, in thread order: no atomics, and the
//    result is deterministic for a given thread count;
//  - the tail (incomplete last tile) is plain CSR over its rows, after everything else;
//  - empty rows are zeroed by whoever writes the next non-empty row (hinted tiles only).
#include <spmv/formats/csr5.hpp>

#include <omp.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <fmt/format.h>

#include "cpu/cpu_plan.hpp"
#include "cpu/register_cpu.hpp"

namespace spmv::cpu {

namespace {

class Csr5Plan final : public CpuPlan {
 public:
  Csr5Plan(const Csr& a, const PlanOptions& opt, Backend backend)
      : CpuPlan(a.rows, a.cols, opt), threads_(backend == Backend::Serial ? 1 : std::max(opt.threads, 1)) {
    const int omega = opt.csr5_omega > 0 ? opt.csr5_omega : csr5_omega_for(backend);
    const double per_row = a.rows > 0 ? static_cast<double>(a.nnz()) / a.rows : 0.0;
    const int sigma = opt.csr5_sigma > 0 ? opt.csr5_sigma : csr5_sigma_for(per_row, backend);
    if (omega != 1 && omega != 2 && omega != 4 && omega != 8 && omega != 16 && omega != 32)
      throw Unsupported(fmt::format("csr5 on the CPU: omega must be 1, 2, 4, 8, 16 or 32 (got {})", omega));
    const auto t0 = std::chrono::steady_clock::now();
    f_ = csr_to_csr5(a, omega, sigma, opt);
    convert_seconds = seconds_since(t0);
    carry_.assign(threads_, 0.0);
    bytes_per_product = csr_product_bytes(a, 1) + static_cast<offset_t>(f_.tile_desc.size()) * 4 +
                        static_cast<offset_t>(f_.tile_ptr.size()) * 8;
    stored_entries = a.nnz();
    detail = fmt::format("omega={} sigma={} tiles={} tail={}", omega, sigma, f_.tiles, f_.nnz - f_.tail_begin());
    // "simd" (auto): the omega lanes advance together step by step (the paper's SIMD form);
    // "lanes": each column walked on its own, segment by segment from its flag bits. On the H200
    // host (16 threads, docs/csr5_bench_h200.txt) simd was 4-7% faster on dc1-, stencil27- and
    // thermal-like matrices, equal on webbase-like, 9% slower only on the tiny adder-like one.
    if (opt.variant != "auto" && opt.variant != "simd" && opt.variant != "lanes")
      throw Unsupported("csr5 on the CPU: variant must be auto, simd or lanes (got " + opt.variant + ")");
    const bool simd = opt.variant != "lanes";
    detail += simd ? " variant=simd" : " variant=lanes";
    switch (omega) {
      case 1: product_fn_ = simd ? &Csr5Plan::product_w<1, true> : &Csr5Plan::product_w<1, false>; break;
      case 2: product_fn_ = simd ? &Csr5Plan::product_w<2, true> : &Csr5Plan::product_w<2, false>; break;
      case 4: product_fn_ = simd ? &Csr5Plan::product_w<4, true> : &Csr5Plan::product_w<4, false>; break;
      case 8: product_fn_ = simd ? &Csr5Plan::product_w<8, true> : &Csr5Plan::product_w<8, false>; break;
      case 16: product_fn_ = simd ? &Csr5Plan::product_w<16, true> : &Csr5Plan::product_w<16, false>; break;
      default: product_fn_ = simd ? &Csr5Plan::product_w<32, true> : &Csr5Plan::product_w<32, false>; break;
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

  // One full tile: stores every segment except segment 0, whose sum it returns.
  template <int W>
  double tile(offset_t t, const double* x, double* y) const {
    const int sigma = f_.sigma;
    const offset_t base = t * f_.tile_entries();
    const index_t row0 = Csr5::row_of(f_.tile_ptr[t]);
    const std::uint32_t* dw = f_.tile_desc.data() + static_cast<std::size_t>(t * f_.desc_words) * W;
    std::uint64_t flags[W];
    unsigned seg[W], off[W];
    std::uint64_t any = 1;  // steps where some lane opens a segment (step 0: column 0, forced)
    for (int c = 0; c < W; ++c) {
      std::uint64_t d = dw[c];
      if (f_.desc_words == 2) d |= std::uint64_t{dw[W + c]} << 32;
      flags[c] = f_.bit_flag(d);
      seg[c] = f_.y_offset(d) - 1;  // wraps for column 0; its forced flag at step 0 brings it to 0
      off[c] = f_.seg_offset(d);
      any |= flags[c];
    }
    flags[0] |= 1;
    double sum[W] = {}, red[W] = {};
    bool seen[W] = {};
    double first = 0;
    const double* v = f_.val.data() + base;
    const index_t* ci = f_.col.data() + base;
    for (int i = 0; i < sigma; ++i) {
      if ((any >> i) & 1) {
        for (int c = 0; c < W; ++c) {
          if (!((flags[c] >> i) & 1)) continue;
          if (!seen[c]) {
            red[c] = sum[c];  // the column's part of a segment opened to its left
            seen[c] = true;
          } else if (seg[c] == 0) {
            first = sum[c];
          } else {
            store_segment(t, row0, seg[c], sum[c], y);  // "green": opened and closed in this column
          }
          ++seg[c];
          sum[c] = 0;
        }
      }
      const double* vi = v + static_cast<offset_t>(i) * W;
      const index_t* ii = ci + static_cast<offset_t>(i) * W;
#pragma omp simd
      for (int c = 0; c < W; ++c) sum[c] += vi[c] * x[ii[c]];
    }
    for (int c = 0; c < W; ++c)
      if (!seen[c]) red[c] = sum[c];  // a column with no flag lies wholly inside one segment
    // Fast segmented sum: the segment open at the bottom of column c runs through the off[c]
    // flag-free columns to its right and ends in the red part of the next one (or the tile end).
    for (int c = 0; c < W; ++c) {
      if (!seen[c]) continue;
      double s = sum[c];
      const int last = std::min<int>(c + 1 + static_cast<int>(off[c]), W - 1);
      for (int j = c + 1; j <= last; ++j) s += red[j];
      if (seg[c] == 0)  // seg[c] is always the index of the segment open in column c
        first = s;
      else
        store_segment(t, row0, seg[c], s, y);
    }
    return first;
  }

  // The same result as tile(), one column at a time: the flag bits of a column cut its sigma
  // entries (stride W in the transposed storage) into runs summed by tight scalar loops.
  template <int W>
  double tile_lanes(offset_t t, const double* x, double* y) const {
    const int sigma = f_.sigma;
    const offset_t base = t * f_.tile_entries();
    const index_t row0 = Csr5::row_of(f_.tile_ptr[t]);
    const std::uint32_t* dw = f_.tile_desc.data() + static_cast<std::size_t>(t * f_.desc_words) * W;
    const double* v = f_.val.data() + base;
    const index_t* ci = f_.col.data() + base;
    double red[W], blue[W];
    unsigned open[W], off[W];
    bool seen[W];
    double first = 0;
    for (int c = 0; c < W; ++c) {
      std::uint64_t d = dw[c];
      if (f_.desc_words == 2) d |= std::uint64_t{dw[W + c]} << 32;
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

  template <int W, bool Simd>
  void product_w() {
    const double* x = x_.data();
    double* y = y_.data();
    const offset_t tiles = f_.tiles;
    const offset_t* rp = f_.row_ptr.data();
    // Never more threads than tiles: a tiny matrix on 64 threads runs on as many as it has tiles.
    const int nt = static_cast<int>(std::clamp<offset_t>(tiles, 1, threads_));
    std::fill(carry_.begin(), carry_.end(), 0.0);
#pragma omp parallel num_threads(nt) if (nt > 1)
    {
      const int j = omp_get_thread_num(), n = omp_get_num_threads();
      const offset_t t0 = tiles * j / n, t1 = tiles * (j + 1) / n;
      const index_t r0 = t0 < t1 ? Csr5::row_of(f_.tile_ptr[t0]) : 0;
      const bool started_before = t0 < t1 && rp[r0] < t0 * f_.tile_entries();
      double carry = 0;
      for (offset_t t = t0; t < t1; ++t) {
        const double first = Simd ? tile<W>(t, x, y) : tile_lanes<W>(t, x, y);
        const index_t r = Csr5::row_of(f_.tile_ptr[t]);
        const offset_t base = t * f_.tile_entries();
        if (rp[r] == base) {  // the tile begins row r
          if (f_.hinted(t))
            for (index_t e = r - 1; e >= 0 && rp[e] == base; --e) y[e] = 0.0;
          y[r] = first;
        } else if (r == r0 && started_before) {
          carry += first;
        } else {
          y[r] += first;
        }
      }
      carry_[j] = carry;
    }
    for (int j = 0; j < nt; ++j) {
      const offset_t t0 = tiles * j / nt, t1 = tiles * (j + 1) / nt;
      if (t0 < t1) {
        const index_t r0 = Csr5::row_of(f_.tile_ptr[t0]);
        if (rp[r0] < t0 * f_.tile_entries()) y[r0] += carry_[j];
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
    const int nt = rows_ - rb > 100000 ? threads_ : 1;
#pragma omp parallel for schedule(static) num_threads(nt) if (nt > 1)
    for (index_t r = rb; r < rows_; ++r) {
      double s = 0;
      for (offset_t p = rp[r]; p < rp[r + 1]; ++p) s += v[p] * x[ci[p]];
      y[r] = s;
    }
  }

  int threads_;
  Csr5 f_;
  std::vector<double> carry_;
  void (Csr5Plan::*product_fn_)() = nullptr;
};

KernelSpec spec(Backend b) {
  return {.name = "csr5",
          .backend = b,
          .format = "csr5",
          .description = b == Backend::Serial
                             ? "CSR5 tiles (omega x sigma, default 4 x 16), one thread"
                             : "CSR5 tiles (omega x sigma, default 4 x 16) over threads, SIMD across tile columns",
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
