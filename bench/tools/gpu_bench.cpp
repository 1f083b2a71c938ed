// GPU benchmark: every CUDA kernel in the registry, ours and the cuSPARSE baselines (every kernel
// registered with baseline = true: CSR default/ALG1/ALG2, COO ALG1/ALG2, sliced ELL), on the same
// matrices, in the same run. Measures the device-to-device copy bandwidth first; reports per kernel
// the median time per product (CUDA events around the kernels only, each sample >= --sample-ms of
// back-to-back products), GFLOPS = 2*nnz/t and the effective bandwidth as a share of the copy
// bandwidth, then our best against the best baseline per matrix; an SpMM section (K = 1, 4, 16, 64,
// both layouts: the planner's pick, each of our SpMM kernels and every cuSPARSE SpMM algorithm);
// a compact table last.
//
// The effective bandwidth counts the bytes any CSR product must move with int32 row offsets
// (12*nnz + 4*(rows+1) + 8*cols*k + 8*rows*k) for every kernel, so padding or extra passes show up
// as a lower share rather than as more "useful" traffic.
#include <spmv/bench/generate.hpp>
#include <spmv/spmv.hpp>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <functional>
#include <map>

using namespace spmv;

namespace {

struct Opts {
  double sample_s = 0.03;
  int samples = 7;
  bool quick = false;
  std::vector<std::string> files;
};

struct Result {
  std::string kernel, detail;
  int block = 0;
  bool baseline = false, ok = false;
  double t = 0;  // seconds per product
};

double time_plan(Plan& p, const Opts& o) { return time_products(p, o.sample_s, o.samples).median_s; }

offset_t must_bytes(const CsrView& a, int k) {
  return 12 * a.nnz() + 4 * (static_cast<offset_t>(a.rows) + 1) + 8 * static_cast<offset_t>(a.cols) * k +
         8 * static_cast<offset_t>(a.rows) * k;
}

bool is_main(const std::string& k) {
  return k == "csr-vector" || k == "csr-adaptive" || k == "csr-merge" || k == "csr";
}

struct Summary {
  std::string matrix;
  index_t rows = 0;
  offset_t nnz = 0;
  Result ours, theirs;
};

Result measure(const CsrView& a, const std::string& kernel, bool baseline, PlanOptions opt, const Reference& ref,
               const std::vector<double>& x, const Opts& o) {
  Result r{kernel, "", opt.kernel.block_size, baseline};
  try {
    auto p = make_plan(a, Backend::Cuda, kernel, opt);
    std::vector<double> y(static_cast<std::size_t>(a.rows) * opt.k);
    p->multiply(x, y);
    const CheckResult c = check_product(a, ref, y, opt.k, opt.layout);
    r.detail = p->describe();
    if (!c.passed) {
      r.detail += " CHECK FAILED: " + c.message;
      return r;
    }
    r.t = time_plan(*p, o);
    r.ok = true;
  } catch (const Unsupported& e) {
    r.detail = std::string("refused: ") + e.what();
  }
  return r;
}

void print_result(const CsrView& a, const Result& r, int k, double bw) {
  if (!r.ok) {
    fmt::print("  {:<17} {:>5}  {}\n", r.kernel, r.block, r.detail.substr(0, 110));
    return;
  }
  const double gf = 2.0 * a.nnz() * k / r.t * 1e-9, gbs = must_bytes(a, k) / r.t * 1e-9;
  fmt::print("  {:<17} {:>5} {:>10.2f} us {:>8.1f} GFLOPS {:>7.0f} GB/s {:>5.1f}%  {}\n", r.kernel, r.block, r.t * 1e6,
             gf, gbs, 100 * gbs * 1e9 / bw, r.detail);
}

// One matrix's SpMV: every CUDA kernel at every block size (the catalog's sweep for the main
// kernels, 256 with --quick; csr-vector also at each sub-warp), our best against cuSPARSE's.
Summary spmv_section(const std::string& name, const Csr& a, const std::vector<const KernelSpec*>& ks, const Opts& o,
                     double bw) {
  const auto stats = compute_stats(a);
  fmt::print("== {}: {} x {}, nnz {}, row nnz mean {:.1f} max {} ==\n", name, a.rows, a.cols, a.nnz(),
             stats.row_nnz_mean, stats.row_nnz_max);
  const auto x = make_vector("random:1", a.cols);
  const Reference ref = reference_product(a, x, 1, Layout::RowMajor);
  Summary s;
  s.matrix = name;
  s.rows = a.rows;
  s.nnz = a.nnz();
  auto consider = [&](const Result& r) {
    print_result(a, r, 1, bw);
    if (!r.ok) return;
    Result& best = r.baseline ? s.theirs : s.ours;
    if (best.t == 0 || r.t < best.t) best = r;
  };
  for (const KernelSpec* k : ks) {
    std::vector<long long> blocks{256};
    if (is_main(k->name) && !o.quick) blocks = find_param("block_size")->sweep;
    for (const long long b : blocks) {
      PlanOptions opt;
      opt.kernel.block_size = static_cast<int>(b);
      consider(measure(a, k->name, k->baseline, opt, ref, x, o));
    }
    if (takes(*k, "subwarp") && k->name == "csr-vector" && !o.quick)
      for (const long long sw : find_param("subwarp")->test_values) {
        PlanOptions opt;
        opt.kernel.subwarp = static_cast<int>(sw);
        consider(measure(a, k->name, k->baseline, opt, ref, x, o));
      }
  }
  if (s.ours.ok && s.theirs.ok)
    fmt::print("  -> best ours {} (block {}) {:.2f} us; best cuSPARSE {} {:.2f} us; speedup {:.2f}\n\n", s.ours.kernel,
               s.ours.block, s.ours.t * 1e6, s.theirs.kernel, s.theirs.t * 1e6, s.theirs.t / s.ours.t);
  return s;
}

// SpMM in both layouts on the kept matrices: auto and our SpMM kernels against every cuSPARSE SpMM
// algorithm; a summary line each.
std::vector<std::string> spmm_section(std::map<std::string, Csr>& keep, const std::vector<const KernelSpec*>& ks,
                                      const Opts& o, double bw) {
  // SpMM in both layouts: the planner's pick ("auto") and ours (every non-baseline kernel that
  // takes k > 1) against every cuSPARSE SpMM algorithm.
  fmt::print("== SpMM (row- and column-major X, Y) ==\n");
  std::vector<std::string> spmm_rows;
  for (auto& [name, a] : keep)
    for (const Layout layout : {Layout::RowMajor, Layout::ColMajor})
      for (int k : {1, 4, 16, 64}) {
        const char* lay = layout == Layout::RowMajor ? "row" : "col";
        const auto x = make_vector("random:2", static_cast<std::size_t>(a.cols) * k);
        const Reference ref = reference_product(a, x, k, layout);
        PlanOptions opt;
        opt.k = k;
        opt.layout = layout;
        const Result autop = measure(a, "auto", false, opt, ref, x, o);
        fmt::print("  {} K={:<3} {}", name, k, lay);
        print_result(a, autop, k, bw);
        Result best_ours, best_cs;
        for (const KernelSpec* spec : ks) {
          if (!spec->spmm) continue;
          const Result r = measure(a, spec->name, spec->baseline, opt, ref, x, o);
          fmt::print("  {} K={:<3} {}", name, k, lay);
          print_result(a, r, k, bw);
          if (!r.ok) continue;
          Result& b = spec->baseline ? best_cs : best_ours;
          if (b.t == 0 || r.t < b.t) b = r;
        }
        const auto gf = [&](const Result& r) { return r.ok ? 2.0 * a.nnz() * k / r.t * 1e-9 : 0.0; };
        if (best_ours.ok && best_cs.ok && autop.ok)
          spmm_rows.push_back(
              fmt::format("{:<14} K={:<3} {} auto {:>8.1f} GFLOPS  best ours {:<6} {:>8.1f}  cuSPARSE {:<19} {:>8.1f}  "
                          "auto x{:.2f}",
                          name, k, lay, gf(autop), best_ours.kernel, gf(best_ours), best_cs.kernel, gf(best_cs),
                          best_cs.t / autop.t));
      }

  return spmm_rows;
}

// The summary table: per matrix our best against cuSPARSE's, then the SpMM lines and the goals.
void print_summary(const std::vector<Summary>& sums, const std::vector<std::string>& spmm_rows, double bw) {
  fmt::print("\n== Summary: {} , copy {:.0f} GB/s ==\n", device::cuda_device_name(), bw * 1e-9);
  fmt::print("{:<20} {:>9} {:>14} {:>5} {:>8} {:>6} {:>17} {:>8} {:>6} {:>7}\n", "matrix", "nnz", "ours", "block",
             "GFLOPS", "%bw", "cuSPARSE", "GFLOPS", "%bw", "speedup");
  double log_sum = 0, worst = 1e30;
  int n = 0;
  bool big_ok = true, small_ok = true;
  for (const auto& s : sums) {
    if (!s.ours.ok || !s.theirs.ok) continue;
    const double flops = 2.0 * s.nnz;
    const double bytes = 12.0 * s.nnz + 4.0 * (s.rows + 1) + 16.0 * s.rows;  // square suite matrices
    const double sp = s.theirs.t / s.ours.t;
    fmt::print("{:<20} {:>9} {:>14} {:>5} {:>8.1f} {:>5.1f}% {:>17} {:>8.1f} {:>5.1f}% {:>7.2f}\n", s.matrix, s.nnz,
               s.ours.kernel, s.ours.block, flops / s.ours.t * 1e-9, 100 * bytes / s.ours.t / bw, s.theirs.kernel,
               flops / s.theirs.t * 1e-9, 100 * bytes / s.theirs.t / bw, sp);
    log_sum += std::log(sp);
    worst = std::min(worst, sp);
    ++n;
    if (s.nnz >= 10'000'000 && bytes / s.ours.t / bw < 0.85) big_ok = false;
    if (s.nnz < 100'000 && s.ours.t > s.theirs.t) small_ok = false;
  }
  for (const auto& r : spmm_rows) fmt::print("{}\n", r);
  if (n) {
    fmt::print("geomean speedup {:.3f} (goal >= 1.15), worst {:.3f} (goal >= 0.95)\n", std::exp(log_sum / n), worst);
    fmt::print("10M+ nnz at >= 85% of copy bandwidth: {}; <100k nnz no slower than cuSPARSE: {}\n",
               big_ok ? "yes" : "no", small_ok ? "yes" : "no");
  }
}

}  // namespace

int main(int argc, char** argv) {
  Opts o;
  double sample_ms = o.sample_s * 1e3;
  CLI::App app{"gpu_bench: every CUDA kernel and the cuSPARSE baselines on generated matrices and files"};
  app.add_option("FILES", o.files, "Matrix files (.mtx, .mtx.gz, binary cache) after the generated ones");
  app.add_flag("--quick", o.quick, "Block size 256 only, no subwarp sweep");
  app.add_option("--sample-ms", sample_ms, "Each sample lasts at least this long")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--samples", o.samples, "Timed samples per kernel (median reported)")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000));
  CLI11_PARSE(app, argc, argv);
  o.sample_s = sample_ms * 1e-3;
  std::vector<const KernelSpec*> ks;
  for (const auto& k : kernels())
    if (k.backend == Backend::Cuda) ks.push_back(&k);
  if (ks.empty()) {
    fmt::print("no CUDA backend in this build\n");
    return 0;
  }
  if (device::cuda_device_count() == 0) {
    fmt::print("no CUDA device\n");
    return 1;
  }
  const double bw = device::cuda_copy_bandwidth();
  fmt::print("device: {}\ncopy bandwidth (device-to-device, read+write): {:.0f} GB/s\n", device::cuda_device_name(),
             bw * 1e-9);
  fmt::print("samples: {} x >= {:.0f} ms each, median reported\n\n", o.samples, o.sample_s * 1e3);

  // Pareto lengths with a minimum of 3 (mean about 8.5), capped at 50k; dc1-like long rows.
  const gen::ParetoLaw power_law{.x_min = 3, .alpha = 1.5, .cap = 50000};
  const gen::FewLongRows long_rows{.short_min = 2, .short_max = 6, .long_rows = 8, .long_len = 100000};
  const auto uniform = gen::Spread::Uniform;
  std::vector<std::pair<std::string, std::function<Csr()>>> suite = {
      {"stencil27_1M", [] { return gen::grid_stencil(3, 100, 27); }},
      {"stencil5_4.2M", [] { return gen::grid_stencil(2, 2048, 5); }},
      {"random8_1M", [=] { return gen::random_rows(1 << 20, 8, uniform, 5); }},
      {"powerlaw_1M", [=] { return gen::pareto_rows(1 << 20, power_law, uniform, 6); }},
      {"longrows_1M", [=] { return gen::few_long_rows(1 << 20, long_rows, uniform, 7); }},
      {"small_stencil5_10k", [] { return gen::grid_stencil(2, 100, 5); }},
      {"small_random_20k", [=] { return gen::random_rows(20000, 4, uniform, 8); }},
      {"small_stencil27_3k", [] { return gen::grid_stencil(3, 15, 27); }},
  };
  for (const auto& f : o.files) suite.emplace_back(f, [f] { return io::load_csr(f); });

  std::vector<Summary> sums;
  std::map<std::string, Csr> keep;  // matrices reused by the SpMM section
  for (const auto& [name, gen] : suite) {
    Csr a;
    try {
      a = gen();
    } catch (const Error& e) {
      fmt::print("{}: {}\n", name, e.what());
      continue;
    }
    if (a.is_complex()) {
      fmt::print("{}: complex, skipped\n", name);
      continue;
    }
    sums.push_back(spmv_section(name, a, ks, o, bw));
    if (name == "stencil27_1M" || name == "random8_1M" || name == "powerlaw_1M") keep.emplace(name, std::move(a));
  }

  const std::vector<std::string> spmm_rows = spmm_section(keep, ks, o, bw);
  print_summary(sums, spmm_rows, bw);
  return 0;
}
