// The planner's model: per backend, the candidates that may win on a matrix, each with a predicted
// product time (the bytes its format moves at the kernel's fitted bandwidth, plus its fixed,
// per-row and longest-row costs: src/plan/model_tuning.hpp) and a predicted conversion time;
// ranked by the cost of opt.products products including the conversion.
#include <spmv/planner.hpp>

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

#include "cuda/tuning.hpp"
#include "plan/model_tuning.hpp"

namespace spmv {

namespace {

struct Ranked {
  std::vector<Candidate> list;
  const PlanOptions& base;
  std::vector<double> convert_fixed_s;  // per candidate: a conversion's fixed part, in seconds

  // t_us: predicted microseconds per product; convert: in products of the best CSR candidate
  // (resolved in rank_candidates, once that is known), plus fixed_us (also the making of a CSR
  // plan's row blocks or partition).
  void add(std::string kernel, std::string label, double t_us, double convert,
           const std::function<void(PlanOptions&)>& set = {}, double fixed_us = 0) {
    Candidate c;
    c.kernel = std::move(kernel);
    c.opt = base;
    if (set) set(c.opt);
    c.label = std::move(label);
    c.predicted_s = t_us * 1e-6;
    c.predicted_convert_s = convert;
    c.converts = c.kernel == "ell" || c.kernel == "ell-rowlen" || c.kernel == "hll" || c.kernel == "csr5" ||
                 c.kernel.ends_with("-compact");
    list.push_back(std::move(c));
    convert_fixed_s.push_back(fixed_us * 1e-6);
  }
};

// Bytes one product moves in precision p: CSR, and the padded formats (x and y counted k times; a
// slot is a 4-byte index and a value of value_bytes(p)).
struct Bytes {
  double csr, ell, rowlen, hll[3];
  double hll_gpu;  // the GPU's HLL never reads its padding, but a warp waits for its longest row
};
Bytes bytes_of(const MatrixFeatures& f, int k, Precision p) {
  const double vb = vector_bytes(p), slot = 4.0 + value_bytes(p);
  const double rows = f.rows, nnz = static_cast<double>(f.nnz), vec = vb * (rows + f.cols) * k;
  const double longest = static_cast<double>(f.max_row);
  Bytes b{};
  // f.csr_bytes: double's, one right-hand side.
  b.csr = f.csr_bytes - (12.0 - slot) * nnz - (8.0 - vb) * (rows + f.cols) + vb * (rows + f.cols) * (k - 1);
  b.ell = slot * rows * longest + vec;
  b.rowlen = rows * std::min(slot * longest, slot * f.mean + 64) + 4 * rows + vec;
  for (int h = 0; h < 3; ++h) b.hll[h] = slot * nnz * f.hll_padding[h] + vec;
  b.hll_gpu = slot * nnz * (1 + 0.5 * (f.hll_padding[1] - 1)) + 4 * rows + vec;
  return b;
}

// Whether the sampled values are few enough for the compact formats' shared values, and the bytes
// of their index (1 where the sample holds under 128 distinct: the matrix's then likely fit a
// byte's 256; else 2). Their columns are priced at 2 bytes: a matrix whose rows reach far (wide
// columns, 4 bytes) is priced low, and the trial measures it.
bool shares_values(const MatrixFeatures& f) {
  return f.values_sampled > 0 && f.sampled_distinct <= tuning::CompactModel{}.max_sampled_distinct;
}
double shared_index_bytes(const MatrixFeatures& f) { return f.sampled_distinct < 128 ? 1 : 2; }

// 16 << h: the HLL hacks compared; a hack other than 32 only where it pads clearly less.
bool hack_worth_trying(const MatrixFeatures& f, int h) { return h == 1 || f.hll_padding[h] < 0.95 * f.hll_padding[1]; }

void cpu_candidates(const MatrixFeatures& f, Backend b, Ranked& r) {
  const tuning::CpuModel m;
  const int threads = b == Backend::Serial ? 1 : plan_threads(r.base);
  const int k = r.base.k;
  const Bytes by = bytes_of(f, k, r.base.precision);
  const double longest = static_cast<double>(f.max_row);
  // Microseconds of a product on t threads by a kernel of this fit moving `bytes`.
  auto predict = [&](const tuning::KernelFit& fit, double bytes, int t) {
    if (t == 1) return m.serial_ns_per_nnz * 1e-3 * static_cast<double>(f.nnz) * k * bytes / std::max(by.csr, 1.0);
    const double share = std::min(1.0, static_cast<double>(t) / m.fitted_threads);
    const double bw = fit.gbs * 1e3 * share * (bytes < m.cache_bytes ? 1.0 : m.out_of_cache);
    return fit.fixed_us * std::sqrt(share) + bytes / bw + fit.per_row_ns * 1e-3 * f.rows / t +
           fit.per_max_row_ns * 1e-3 * longest;
  };
  const std::string th = b == Backend::Serial ? "" : fmt::format(" threads={}", threads);
  auto with = [threads](std::string variant, int hack = 0) {
    return [threads, variant, hack](PlanOptions& o) {
      o.threads = threads;
      o.kernel.variant = variant;
      if (hack) o.kernel.hack = hack;
    };
  };
  const bool small = f.nnz * k < m.small_nnz;
  const bool large = f.nnz > tuning::large_nnz;
  const double conv_ell = large ? m.convert_ell_large : m.convert_ell;
  const double conv_hll = large ? m.convert_hll_large : m.convert_hll;
  const double padded = large ? m.padded_large : 1.0;
  // The inner loop's own trial only where it is cheap; SpMM has one inner loop.
  const std::string inner = small || k > 1 ? "auto" : "scalar";

  if (b == Backend::Serial) {
    r.add("csr", "csr", predict(m.balanced, by.csr, 1), 0);
  } else {
    // The OpenMP CSR kernel's schedules, each with its inner loop fixed (simd behind scalar on short
    // rows, ahead on long ones); small matrices also on fewer threads.
    const double simd_lag =
        k > 1 ? 1.0 : std::clamp(m.simd_lag_0 - m.simd_lag_slope * f.mean, m.simd_lag_lo, m.simd_lag_hi);
    for (const char* in : {"scalar", "simd"}) {
      if (k > 1 && in[1] == 'c') continue;
      const double lag = in[1] == 'i' ? simd_lag : 1.0;
      if (small || in[1] == 'c' || k > 1)  // large: dynamic led balanced, so one balanced loop is enough
        r.add("csr", fmt::format("csr variant=balanced:{}{}", in, th), lag * predict(m.balanced, by.csr, threads), 0,
              with(fmt::format("balanced:{}", in)));
      r.add("csr", fmt::format("csr variant=dynamic:{}{}", in, th), lag * predict(m.dynamic, by.csr, threads), 0,
            with(fmt::format("dynamic:{}", in)));
    }
    if (small)
      for (int t : {1, 4, 8})
        if (t < threads)
          r.add("csr", fmt::format("csr variant=balanced threads={}", t), predict(m.balanced, by.csr, t), 0,
                [t](PlanOptions& o) { o.threads = t, o.kernel.variant = "balanced"; });
  }
  r.add("ell", "ell" + th, padded * predict(m.ell, by.ell, threads), conv_ell * f.ell_padding, with(inner));
  if (f.ell_padding > 1.05)
    r.add("ell-rowlen", "ell-rowlen" + th,
          padded * (predict(m.ell_rowlen, by.rowlen, threads) + 0.3e-3 * f.cv() * static_cast<double>(f.nnz) / threads),
          conv_ell * f.ell_padding, with(inner));
  for (int h = 0; h < 3; ++h)
    if (hack_worth_trying(f, h))
      r.add("hll", fmt::format("hll hack={}{}", 16 << h, th),
            padded * (predict(m.hll, by.hll[h], threads) + 0.9e-3 * (16 << h) * longest), conv_hll * f.hll_padding[h],
            with(inner, 16 << h));
  if (k == 1 && shares_values(f) && r.base.precision == Precision::Double && b == Backend::Omp) {
    const tuning::CompactModel cm;
    const double bytes = (2 + shared_index_bytes(f)) * static_cast<double>(f.nnz) + 12.0 * f.rows +
                         vector_bytes(r.base.precision) * (f.rows + f.cols);
    r.add("csr-compact", "csr-compact" + th, predict(cm.cpu, bytes, threads), 0, with("auto"),
          cm.cpu_convert_ns_per_nnz * 1e-3 * static_cast<double>(f.nnz) * m.fitted_threads / threads);
  }
  if (k == 1) {
    double t = predict(m.csr5, by.csr, threads);
    if (small)  // its own trial may run it on fewer threads, where its tiles beat CSR's short rows
      for (const Candidate& c : r.list)
        if (c.kernel == "csr") t = std::min(t, m.csr5_small_share * c.predicted_s * 1e6);
    r.add("csr5", "csr5" + th, t, large ? m.convert_csr5_large : m.convert_csr5, with(small ? "auto" : "simd"));
  }
}

void cuda_candidates(const MatrixFeatures& f, Ranked& r) {
  const tuning::CudaModel m;
  const Bytes by = bytes_of(f, r.base.k, r.base.precision);
  const double longest = static_cast<double>(f.max_row);
  auto predict = [&](const tuning::KernelFit& fit, double bytes, double longest_share) {
    return fit.fixed_us + bytes / (fit.gbs * 1e3) + fit.per_max_row_ns * longest_share;
  };
  const std::string bs = r.base.kernel.block_size ? fmt::format(" bs={}", r.base.kernel.block_size) : "";
  if (r.base.k > 1) {
    r.add("csr", "csr" + bs, predict(m.vector, by.csr, longest / 32), 0);  // CSR SpMM
    // Irregular rows: CSR-adaptive's SpMM (a block per row block and column of Y, long rows in
    // pieces) too, which leads on most such matrices (bench/results/README.md, issue 52). Its model
    // is SpMV's, A read once: optimistic, so the trial decides.
    if (cuda::tuning::csr_prefers_adaptive(f.max_row, f.mean))
      r.add("csr-adaptive", "csr-adaptive" + bs, predict(m.adaptive, by.csr, 0), 0, {}, m.adaptive_blocks_us);
    r.add(
        "hll", "hll hack=32" + bs, predict(m.hll_spmm, by.hll[1], longest), m.convert_hll,
        [](PlanOptions& o) { o.kernel.hack = 32; }, m.convert_hll_fixed_us);
    if (f.ell_padding <= m.ell_spmm_max_padding)  // ELL reads its padding: only where there is little
      r.add("ell", "ell" + bs, predict(m.hll_spmm, by.ell, longest), m.convert_ell * f.ell_padding, {},
            m.convert_ell_fixed_us);
    // CSR5's tiles even out rows of very different lengths; A is read once where one block of its
    // right-hand sides covers K (k = 2 or 4; an odd k takes one a block), and X's rows are gathered
    // whole only when row-major.
    if ((r.base.k == 2 || r.base.k == 4) && r.base.layout == Layout::RowMajor &&
        cuda::tuning::csr_spmm_sorts_rows(f.cv()))
      r.add("csr5", "csr5" + bs, predict(m.csr5, by.csr, 0), m.convert_csr5, {}, m.convert_csr5_fixed_us);
    return;
  }
  const int subwarp = cuda::tuning::csr_vector_subwarp(f.mean);  // CSR-vector's own rule
  const double split = f.max_row > 2048 ? 1.2 : 0;               // a row split across blocks
  const double blocks_us = m.adaptive_blocks_us;
  const tuning::KernelFit& adaptive = f.nnz > tuning::large_nnz ? m.adaptive_large : m.adaptive;
  r.add("csr-adaptive", "csr-adaptive" + bs, predict(adaptive, by.csr, 0) + split, 0, {}, blocks_us);
  r.add("csr-vector", "csr-vector" + bs, predict(m.vector, by.csr, longest / subwarp), 0);
  if (!r.base.kernel.block_size && !r.base.kernel.nz_per_block && f.nnz <= tuning::large_nnz) {
    // The settings the sweep found best on small matrices: smaller row blocks, and 1024 threads.
    r.add(
        "csr-adaptive", "csr-adaptive npb=256", predict(m.adaptive_small_blocks, by.csr, 0) + split, 0,
        [](PlanOptions& o) { o.kernel.nz_per_block = 256; }, blocks_us);
    r.add(
        "csr-adaptive", "csr-adaptive bs=1024", predict(adaptive, by.csr, 0) + split + m.other_block_us, 0,
        [](PlanOptions& o) { o.kernel.block_size = 1024, o.kernel.nz_per_block = 1024; }, blocks_us);
    r.add("csr-vector", "csr-vector bs=1024", predict(m.vector, by.csr, longest / subwarp) + m.other_block_us, 0,
          [](PlanOptions& o) { o.kernel.block_size = 1024; });
  }
  r.add("csr-scalar", "csr-scalar" + bs, predict(m.scalar, by.csr * (1 + f.mean / 38), longest), 0);
  r.add("ell", "ell" + bs, predict(m.ell, by.ell, longest), m.convert_ell * f.ell_padding, {}, m.convert_ell_fixed_us);
  // HLL's hack sets only its memory here (padding is never read): one per warp.
  r.add(
      "hll", "hll hack=32" + bs, predict(m.hll, by.hll_gpu, longest), m.convert_hll,
      [](PlanOptions& o) { o.kernel.hack = 32; }, m.convert_hll_fixed_us);
  r.add("csr5", "csr5" + bs, predict(m.csr5, by.csr, 0), m.convert_csr5, {}, m.convert_csr5_fixed_us);
  if (shares_values(f) && r.base.precision == Precision::Double) {
    const tuning::CompactModel cm;
    // Slices padded past 1.1 keep their rows' lengths and read only their entries.
    const bool lengths = f.hll_padding[1] > 1.1;
    const double slots = (lengths ? 1.0 : f.hll_padding[1]) * static_cast<double>(f.nnz);
    const double bytes = (2 + shared_index_bytes(f)) * slots + (lengths ? 4.0 : 0.0) * f.rows + 0.75 * f.rows +
                         vector_bytes(r.base.precision) * (f.rows + f.cols);
    r.add("hll-compact", "hll-compact" + bs, predict(cm.gpu, bytes, longest), 0, {},
          cm.gpu_convert_ns_per_nnz * 1e-3 * static_cast<double>(f.nnz));
  }
}

}  // namespace

std::vector<Candidate> rank_candidates(const MatrixFeatures& f, Backend b, const PlanOptions& opt) {
  Ranked r{{}, opt, {}};
  if (b == Backend::Cuda)
    cuda_candidates(f, r);
  else
    cpu_candidates(f, b, r);
  // Only kernels that compute in the precision asked for (one this binary lacks stays: its maker
  // decides, as the tests' fake makers do).
  for (std::size_t i = r.list.size(); i-- > 0;) {
    const KernelSpec* k = find_kernel(b, r.list[i].kernel);
    if (k && !supports(*k, opt.precision)) {
      r.list.erase(r.list.begin() + static_cast<std::ptrdiff_t>(i));
      r.convert_fixed_s.erase(r.convert_fixed_s.begin() + static_cast<std::ptrdiff_t>(i));
    }
  }
  // Conversions were added in products of CSR: of the fastest candidate needing none.
  double t_csr = 0;
  for (const Candidate& c : r.list)
    if (!c.converts && (t_csr == 0 || c.predicted_s < t_csr)) t_csr = c.predicted_s;
  for (std::size_t i = 0; i < r.list.size(); ++i)
    r.list[i].predicted_convert_s = r.list[i].predicted_convert_s * t_csr + r.convert_fixed_s[i];
  // Any conversion reads the matrix and writes it again, at least a CSR product's worth: one
  // product never repays it.
  const long long n = std::max(1LL, opt.products);
  // Nor is there anything to convert without entries.
  if (n <= 1 || f.nnz == 0) std::erase_if(r.list, [](const Candidate& c) { return c.converts; });
  std::stable_sort(r.list.begin(), r.list.end(),
                   [n](const Candidate& x, const Candidate& y) { return x.cost(n) < y.cost(n); });
  return r.list;
}

}  // namespace spmv
