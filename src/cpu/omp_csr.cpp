// OpenMP CSR: (a) dynamic schedule over row chunks of about NZ_PER_CHUNK nonzeros, (b) a static
// partition balanced by nonzeros (bounds found once by binary search on the row pointer), and
// "csr", which picks between them per matrix by timing both (and one thread, for matrices so small
// that a parallel region costs more than it saves) when the plan is made. Every variant also times
// its two SpMV inner loops (simd gather vs plain sequential sum): which wins depends on the CPU.
// Column-major SpMM also times the native column-major kernel against the path through row-major
// copies (X transposed into the plan's scratch, the row-major kernel, Y written back from
// per-thread tiles; all inside the product), per schedule; the detail says "layout=col via=...".
//
// The plan keeps a 32-bit copy of the row pointer when nnz < 2^31: 4 bytes less per row on every
// product (bytes_per_product counts what is really read). col and val are borrowed, not copied,
// except in single and mixed precision over double values, where the plan keeps them rounded to
// float (a float matrix's values, CsrView::val_f32, are borrowed as they are).
#include <omp.h>

#include <cstdint>
#include <limits>

#include "cpu/cpu_plan.hpp"
#include "cpu/row_kernels.hpp"
#include "cpu/tuning.hpp"
#include "core/register.hpp"

namespace spmv::cpu {

namespace {

enum class Mode { Dynamic, Balanced };

class OmpCsr final : public CpuPlan {
 public:
  OmpCsr(const CsrView& a, const PlanOptions& opt, const std::string& variant)
      : CpuPlan(a.rows, a.cols, opt), a_(a), threads_(plan_threads(opt)) {
    const offset_t nnz = a.nnz();
    if (opt.precision != Precision::Double) {  // the values' float copy is this plan's conversion
      const auto tc = std::chrono::steady_clock::now();
      vf_ = float_values_of(a, threads_, valf_);
      float_values_ = true;
      if (!a.values_in_float()) convert_seconds = seconds_since(tc);
    }
    const auto t0 = std::chrono::steady_clock::now();
    if (nnz < std::numeric_limits<std::int32_t>::max()) {
      rp32_.resize(a.row_ptr.size());
      const offset_t* rp = a.row_ptr.data();
#pragma omp parallel for schedule(static) num_threads(threads_) if (a.rows > tuning::parallel_fill_min)
      for (std::size_t i = 0; i < rp32_.size(); ++i) rp32_[i] = static_cast<std::int32_t>(rp[i]);
    }
    const offset_t rp_bytes = (rp32_.empty() ? 8 : 4) * (static_cast<offset_t>(a.rows) + 1);
    bytes_per_product = (4 + value_bytes(opt.precision)) * nnz + rp_bytes +
                        vector_bytes(opt.precision) * (static_cast<offset_t>(a.cols) + a.rows) * opt.k;
    stored_entries = nnz;

    // Default: tuning::csr_chunks, at least a few chunks per thread.
    const auto& chunks = tuning::csr_chunks;
    const offset_t nz_chunk =
        opt.kernel.nz_per_chunk > 0
            ? opt.kernel.nz_per_chunk
            : std::clamp<offset_t>(nnz / (chunks.min_chunks_per_thread * offset_t{threads_}), 1, chunks.nz_per_chunk);
    const double mean_row = a.rows > 0 ? static_cast<double>(nnz) / a.rows : 0.0;
    const double fewest_rows =
        static_cast<double>(a.rows) / static_cast<double>(chunks.max_chunks_per_thread * offset_t{threads_});
    chunk_rows_ =
        static_cast<index_t>(std::clamp(std::max(static_cast<double>(nz_chunk) / std::max(mean_row, 1.0), fewest_rows),
                                        1.0, static_cast<double>(std::max<index_t>(a.rows, 1))));
    if (opt.kernel.chunk_rows > 0) chunk_rows_ = opt.kernel.chunk_rows;
    if (opt.kernel.chunk_multiple > 1) {  // the SpMM report (004): rows / threads (or chunk_rows where given)
      // rounded down to a multiple of 16 rows (at least one), dealt out under a static schedule
      const index_t m = opt.kernel.chunk_multiple;
      const index_t base = opt.kernel.chunk_rows > 0 ? opt.kernel.chunk_rows : a.rows / std::max(threads_, 1);
      chunk_rows_ = std::max(m, base / m * m);
      static_chunks_ = true;
    }

    // Candidates: schedules allowed by the variant x the two SpMV inner loops (SpMM has one) x,
    // column-major SpMM, the native kernel and the path through row-major copies.
    const RowVariant v = row_variant(variant, true, "csr");
    std::vector<Candidate> cands;
    auto add = [&](Mode m, int parts, const std::string& name) {
      for (const bool via : {false, true}) {
        if (via && (!transpose_possible() || v.via == 0)) continue;
        if (!via && transpose_possible() && v.via == 1) continue;
        if (k_ > 1) {  // SpMM has one loop, whatever inner word was given
          cands.push_back({m, parts, true, via, name});
          continue;
        }
        if (v.inner != 0) cands.push_back({m, parts, true, via, name});
        if (v.inner != 1) cands.push_back({m, parts, false, via, name});
      }
    };
    if (static_chunks_) {  // 004's chunks, the schedule it names
      add(Mode::Dynamic, threads_, "static");
    } else if (v.schedule == "dynamic") {
      add(Mode::Dynamic, threads_, "dynamic");
    } else if (v.schedule == "balanced") {
      add(Mode::Balanced, threads_, "balanced");
    } else {
      add(Mode::Balanced, threads_, "balanced");
      if (threads_ > 1) add(Mode::Dynamic, threads_, "dynamic");
      // Small matrices (in cache, fork/join dominates) may run faster on one thread, or on about
      // one thread per 32k nonzeros.
      const auto& small = tuning::small_matrix_trial;
      if (threads_ > 1 && nnz * k_ < small.csr_max_nnz) {
        add(Mode::Balanced, 1, "serial");
        const int few = static_cast<int>(std::clamp<offset_t>(nnz * k_ / small.csr_nnz_per_thread, 2, threads_));
        if (few < threads_) add(Mode::Balanced, few, fmt::format("balanced-{}", few));
      }
    }
    if (std::any_of(cands.begin(), cands.end(), [](const Candidate& c) { return c.via; }))
      make_transpose_scratch(threads_);
    choose_by_trial(cands);
    setup_seconds = seconds_since(t0);
  }

  int threads_used() const override { return threads_running(planned_threads()); }

 protected:
  void product() override {
    if (float_values_)
      product_values(vf_);
    else
      product_values(a_.val.data());
  }

 private:
  struct Candidate {
    Mode mode;
    int parts;
    bool simd;
    bool via;  // column-major SpMM through row-major copies
    std::string name;
    double seconds = 0;
  };

  template <class V>
  void product_values(const V* val) {
    if (!rp32_.empty())
      product_rows(CsrRows<std::int32_t, V>{rp32_.data(), a_.col.data(), val});
    else
      product_rows(CsrRows<offset_t, V>{a_.row_ptr.data(), a_.col.data(), val});
  }
  template <class Rows>
  void product_rows(const Rows& rows) {
    with_flag(simd_, [&](auto simd) { product_with<decltype(simd)::value>(rows); });
  }

  template <bool Simd, class Rows>
  void product_with(const Rows& rows) {
    const int nparts = static_cast<int>(bounds_.size()) - 1;
    if (via_transpose_) transpose_x(mode_ == Mode::Balanced ? nparts : threads_);
    if (mode_ == Mode::Balanced && nparts == 1) {
      rows_part<Simd>(rows, 0, rows_, 0);  // no parallel region at all
    } else if (mode_ == Mode::Balanced) {
#pragma omp parallel num_threads(nparts)
      {
        // If the runtime grants fewer threads than asked, each takes several parts.
        const int nt = omp_get_num_threads(), me = omp_get_thread_num();
        for (int p = me; p < nparts; p += nt) rows_part<Simd>(rows, bounds_[p], bounds_[p + 1], me);
      }
    } else {
      chunked_rows<Simd>(rows, chunk_rows_, threads_, !static_chunks_);
    }
  }

  // Threads the chosen schedule keeps busy: balanced, its parts that hold rows; dynamic, as many
  // as there are chunks, up to the plan's threads.
  int planned_threads() const {
    if (mode_ == Mode::Balanced) return busy_parts(bounds_);
    const offset_t n_chunks = rows_ == 0 ? 0 : (static_cast<offset_t>(rows_) - 1) / chunk_rows_ + 1;
    return static_cast<int>(std::clamp<offset_t>(n_chunks, 1, threads_));
  }

  // Parts of about equal work, counting each row as one unit on top of its nonzeros so that a run
  // of empty rows is not free.
  void partition(int parts) {
    const offset_t* rp = a_.row_ptr.data();
    bounds_ = balanced_bounds(rows_, parts, [rp](index_t i) { return rp[i] + i; });
  }

  void apply(const Candidate& c) {
    mode_ = c.mode;
    simd_ = c.simd;
    via_transpose_ = c.via;
    partition(c.parts);
  }

  // Times the candidates on the plan's own (zero) x; the fastest stays. Counted in setup_seconds.
  void choose_by_trial(std::vector<Candidate>& cands) {
    if (cands.size() > 1) {
      const auto t = trial_candidates(
          static_cast<int>(cands.size()), [&](int c) { apply(cands[c]); }, [this] { product(); });
      for (std::size_t c = 0; c < cands.size(); ++c) cands[c].seconds = t[c];
    }
    const auto win = std::min_element(cands.begin(), cands.end(),
                                      [](const Candidate& l, const Candidate& r) { return l.seconds < r.seconds; });
    apply(*win);
    release_unused_transpose_scratch();
    detail = fmt::format("variant={}{} inner={}", win->name,
                         win->mode == Mode::Dynamic ? fmt::format(" chunk_rows={}", chunk_rows_) : "",
                         win->simd ? "simd" : "scalar");
    if (transpose_possible()) detail += fmt::format(" {}", via_detail());
    if (cands.size() > 1) {
      std::string trial;
      for (const auto& c : cands)
        trial += fmt::format("{}{}/{}{} {:.1f}", trial.empty() ? "" : ", ", c.name, c.simd ? "simd" : "scalar",
                             transpose_possible() ? (c.via ? "/transpose" : "/native") : "", c.seconds * 1e6);
      detail += " (trial us: " + trial + ")";
    }
    // Fewer threads than given: the trial's choice on a small matrix, or less work than threads.
    const int planned = planned_threads();
    if (planned < threads_) {
      const std::string why = win->parts < threads_
                                  ? fmt::format("the trial found {} fastest (a small matrix: nnz x k = {} < {})",
                                                win->parts == 1 ? "one thread" : fmt::format("{} threads", win->parts),
                                                a_.nnz() * k_, tuning::small_matrix_trial.csr_max_nnz)
                              : mode_ == Mode::Balanced ? fmt::format("{} row{}", rows_, rows_ == 1 ? "" : "s")
                                                        : fmt::format("{} chunks of {} rows", planned, chunk_rows_);
      note_fewer_threads(detail, planned, threads_, why);
    }
  }

  CsrView a_;
  bool float_values_ = false;  // single and mixed: the product reads vf_
  const float* vf_ = nullptr;  // ... the values in float: a float matrix's own, or valf_
  HostArray<float> valf_;      // ... a double matrix's values rounded (empty for a float matrix)
  int threads_;
  HostArray<std::int32_t> rp32_;
  std::vector<index_t> bounds_;
  index_t chunk_rows_ = 1;
  bool static_chunks_ = false;  // chunk_multiple: 004's chunks under a static schedule
  Mode mode_ = Mode::Balanced;
  bool simd_ = true;
};

std::unique_ptr<Plan> make(const CsrView& a, const PlanOptions& o, const std::string& variant) {
  return std::make_unique<OmpCsr>(a, o, variant);
}

}  // namespace

void register_omp_csr() {
  add_kernel({.name = "csr",
              .backend = Backend::Omp,
              .format = "csr",
              .description =
                  "OpenMP CSR; schedule (dynamic|balanced|1 thread), inner loop (simd|scalar) and, column-major "
                  "SpMM, native or via row-major copies (native|transpose) chosen per matrix by a timed trial",
              .spmm = true,
              .precisions = {Precision::Double, Precision::Single, Precision::Mixed},
              .params = {"threads", "nz_per_chunk", "chunk_rows", "chunk_multiple"},
              .variants = row_variants(true),
              .make = [](const CsrView& a, const PlanOptions& o) { return make(a, o, o.kernel.variant); }});
  add_kernel(
      {.name = "csr-dynamic",
       .backend = Backend::Omp,
       .format = "csr",
       .description = "OpenMP CSR, schedule(dynamic) over row chunks of ~nz_per_chunk nonzeros",
       .spmm = true,
       .precisions = {Precision::Double, Precision::Single, Precision::Mixed},
       .params = {"threads", "nz_per_chunk", "chunk_rows", "chunk_multiple"},
       .variants = row_variants(false),
       .make = [](const CsrView& a, const PlanOptions& o) { return make(a, o, o.kernel.variant + ":dynamic"); }});
  add_kernel(
      {.name = "csr-balanced",
       .backend = Backend::Omp,
       .format = "csr",
       .description = "OpenMP CSR, static row partition balanced by nonzeros (computed once)",
       .spmm = true,
       .precisions = {Precision::Double, Precision::Single, Precision::Mixed},
       .params = {"threads"},
       .variants = row_variants(false),
       .make = [](const CsrView& a, const PlanOptions& o) { return make(a, o, o.kernel.variant + ":balanced"); }});
}

}  // namespace spmv::cpu
