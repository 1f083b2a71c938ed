// CPU scaling benchmark: STREAM triad first, then for each large matrix (generated, or files given
// on the command line) serial CSR, every OpenMP kernel and Eigen at each thread count, with GFLOPS,
// speedup over serial CSR, efficiency, effective bandwidth and its share of the triad, and the
// ratio to Eigen at the same thread count. Optionally a suite pass over a folder of Matrix Market
// files at one thread count (geometric-mean speedup over Eigen) and an SpMM pass.
#include <spmv/bench/ceiling.hpp>
#include <spmv/bench/generate.hpp>
#include <spmv/spmv.hpp>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fmt/format.h>
#include <map>
#include <omp.h>
#include <string>
#include <vector>

using namespace spmv;

namespace {

// The generated matrices, NAME:SIZE: stencil27:N (N^3 grid), random8:ROWS (8 uniform columns a
// row), powerlaw:ROWS (Pareto x_min 3, alpha 1.5, capped at 10000, minus 2: mean about 6.4).
const char* const kGenNames = "stencil27, random8, powerlaw";

// Splits NAME:SIZE; an empty name when the spec is malformed or the name unknown.
std::pair<std::string, long> parse_gen(const std::string& spec) {
  const auto colon = spec.find(':');
  if (colon == std::string::npos) return {};
  const std::string name = spec.substr(0, colon);
  if (name != "stencil27" && name != "random8" && name != "powerlaw") return {};
  try {
    std::size_t used = 0;
    const long size = std::stol(spec.substr(colon + 1), &used);
    if (used != spec.size() - colon - 1 || size < 1) return {};
    return {name, size};
  } catch (const std::exception&) {
    return {};
  }
}

Csr generate(const std::string& spec) {
  const auto [name, size] = parse_gen(spec);
  if (name == "stencil27") return gen::grid_stencil(3, static_cast<index_t>(size), 27);
  if (name == "random8") return gen::random_rows(static_cast<index_t>(size), 8);
  if (name == "powerlaw")
    return gen::pareto_rows(static_cast<index_t>(size), {.x_min = 3, .alpha = 1.5, .cap = 10000, .shift = 2});
  throw Error(fmt::format("generator spec is NAME:SIZE with NAME one of {}, got {}", kGenNames, spec));
}

struct Measure {
  bool ok = false;
  std::string note;  // refusal or check failure
  double seconds = 0;
  offset_t bytes = 0;
  double convert = 0;
  std::string detail;
};

Measure measure(const CsrView& a, Backend b, const std::string& kernel, PlanOptions opt, const Reference* ref,
                double min_seconds, int samples) {
  Measure m;
  std::unique_ptr<Plan> plan;
  try {
    plan = make_plan(a, b, kernel, opt);
  } catch (const Unsupported& e) {
    m.note = e.what();
    return m;
  }
  const std::size_t nx = static_cast<std::size_t>(a.cols) * opt.k;
  const auto x = make_vector("random:1", nx);
  std::vector<double> y(static_cast<std::size_t>(a.rows) * opt.k);
  plan->multiply(x, y);
  if (ref) {
    const CheckResult c = check_product(a, *ref, y, opt.k, opt.layout);
    if (!c.passed) {
      m.note = "CHECK FAILED: " + c.message;
      return m;
    }
  }
  m.ok = true;
  m.seconds = time_products(*plan, min_seconds, samples).median_s;
  m.bytes = plan->bytes_per_product;
  m.convert = plan->convert_seconds + plan->setup_seconds;
  m.detail = plan->detail;
  return m;
}

const std::vector<std::string> kOmpKernels = {"csr", "csr-balanced", "csr-dynamic", "ell", "ell-rowlen", "hll"};

double geomean(const std::vector<double>& v) {
  if (v.empty()) return 0;
  double s = 0;
  for (double x : v) s += std::log(x);
  return std::exp(s / v.size());
}

// What every pass needs: the thread counts, the triad bandwidth at each, the sample lengths.
struct Passes {
  std::vector<int> threads;
  std::map<int, double> triad;
  double triad_max = 0, min_s = 0, suite_min_s = 0;
  int samples = 5, suite_threads = 1;
};

// One large matrix: the serial CSR, then every OpenMP kernel and Eigen at each thread count, against
// the triad; returns Eigen's time over csr(auto)'s at the largest thread count.
double scaling(const std::string& name, const Csr& a, const Passes& c) {
  const MatrixStats st = compute_stats(a);
  const double mb = (12.0 * a.nnz() + 4.0 * (a.rows + 1) + 8.0 * a.cols + 8.0 * a.rows) / 1e6;
  fmt::print("\n## {}: rows {} cols {} nnz {} ({:.1f} nnz/row, max {}), CSR product data {:.0f} MB\n", name, a.rows,
             a.cols, a.nnz(), st.row_nnz_mean, st.row_nnz_max, mb);
  std::string padding;
  for (const FormatStorage& f : st.storage)
    if (f.pads) padding += fmt::format("{}{} {:.3f}", padding.empty() ? "" : ", ", f.name, f.padding);
  fmt::print("padding ratio (slots/nnz): {}\n", padding);
  const auto x = make_vector("random:1", a.cols);
  const Reference ref = reference_product(a, x);
  PlanOptions o1;
  const Measure serial = measure(a, Backend::Serial, "csr", o1, &ref, c.min_s, c.samples);
  const double flops = 2.0 * a.nnz();
  fmt::print("{:<14} {:>3} {:>10} {:>8} {:>8} {:>6} {:>8} {:>7} {:>8}  {}\n", "kernel", "thr", "median_ms", "GFLOPS",
             "speedup", "eff", "GB/s", "%triad", "vsEigen", "detail");
  auto row = [&](const std::string& kernel, int t, const Measure& m, double eigen_s) {
    if (!m.ok) {
      fmt::print("{:<14} {:>3} {}\n", kernel, t, m.note);
      return;
    }
    const double sp = serial.seconds / m.seconds, gbs = m.bytes / m.seconds * 1e-9;
    fmt::print("{:<14} {:>3} {:10.3f} {:8.2f} {:8.2f} {:6.2f} {:8.1f} {:6.1f}% {:8}  {}{}\n", kernel, t,
               m.seconds * 1e3, flops / m.seconds * 1e-9, sp, sp / t, gbs, 100.0 * gbs * 1e9 / c.triad.at(t),
               eigen_s > 0 ? fmt::format("{:.2f}x", eigen_s / m.seconds) : "-", m.detail,
               m.convert > 0.01 ? fmt::format(" convert+setup {:.2f}s", m.convert) : "");
  };
  row("serial-csr", 1, serial, 0);
  double best_gbs = 0;
  std::string best_what;
  double last_ratio = 0;
  for (int t : c.threads) {
    PlanOptions o;
    o.threads = t;
    const Measure eig = measure(a, Backend::Omp, "eigen", o, &ref, c.min_s, c.samples);
    const double eig_s = eig.ok ? eig.seconds : 0;
    for (const auto& k : kOmpKernels) {
      const Measure m = measure(a, Backend::Omp, k, o, &ref, c.min_s, c.samples);
      row(k, t, m, eig_s);
      if (m.ok && k == "csr" && eig_s > 0) last_ratio = eig_s / m.seconds;
      if (m.ok && m.bytes / m.seconds > best_gbs) {
        best_gbs = m.bytes / m.seconds;
        best_what = fmt::format("{} t={}", k, t);
      }
    }
    row("eigen", t, eig, eig_s);
    std::fflush(stdout);
  }
  fmt::print("best: {} at {:.1f} GB/s = {:.1f}% of the best triad ({:.1f} GB/s)\n", best_what, best_gbs * 1e-9,
             100.0 * best_gbs / c.triad_max, c.triad_max * 1e-9);
  return last_ratio;
}

// SpMM on the generated matrix at the suite thread count: csr, hll and Eigen, each k and layout.
void spmm_pass(const std::string& spmm_gen, const std::vector<int>& spmm_k, const Passes& c) {
  const Csr a = generate(spmm_gen);
  fmt::print("\n## SpMM on {} (nnz {}) at {} threads (GFLOPS = 2 nnz k / t)\n", spmm_gen, a.nnz(), c.suite_threads);
  fmt::print("{:<8} {:>4} {:>4} {:>10} {:>8} {:>8}\n", "kernel", "k", "lay", "median_ms", "GFLOPS", "GB/s");
  for (const int k : spmm_k)
    for (const Layout lay : {Layout::RowMajor, Layout::ColMajor}) {
      if (k == 1 && lay == Layout::ColMajor) continue;
      for (const std::string kernel : {"csr", "hll", "eigen"}) {
        PlanOptions o;
        o.threads = c.suite_threads;
        o.k = k;
        o.layout = lay;
        const Measure m = measure(a, Backend::Omp, kernel, o, nullptr, c.min_s, 3);
        if (!m.ok) continue;
        fmt::print("{:<8} {:>4} {:>4} {:10.3f} {:8.2f} {:8.1f}\n", kernel, k, lay == Layout::RowMajor ? "row" : "col",
                   m.seconds * 1e3, 2.0 * a.nnz() * k / m.seconds * 1e-9, m.bytes / m.seconds * 1e-9);
      }
    }
  std::fflush(stdout);
}

// Every Matrix Market file of a folder at the suite thread count: each kernel's GFLOPS and its
// speed over Eigen's.
void suite_pass(const std::string& dir, const Passes& c) {
  std::vector<std::filesystem::path> paths;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().string().ends_with(".mtx.gz") || e.path().string().ends_with(".mtx")) paths.push_back(e.path());
  std::sort(paths.begin(), paths.end());
  fmt::print("\n## Suite {} at {} threads: GFLOPS per kernel; vsEigen = Eigen time / kernel time\n", dir,
             c.suite_threads);
  fmt::print("{:<22} {:>9} {:>7}", "matrix", "nnz", "serial");
  for (const auto& k : kOmpKernels) fmt::print(" {:>8}", k.substr(0, 8));
  fmt::print(" {:>7} {:>8} {:>8}  {}\n", "eigen", "csr/Eig", "best/Eig", "csr choice");
  std::vector<double> r_auto, r_best;
  int slower_auto = 0, slower_best = 0;
  for (const auto& p : paths) {
    Csr a;
    try {
      a = io::load_csr(p.string());
    } catch (const Error& e) {
      fmt::print("{:<22} load failed: {}\n", p.filename().string(), e.what());
      continue;
    }
    if (a.is_complex()) continue;
    const auto x = make_vector("random:1", a.cols);
    const Reference ref = reference_product(a, x);
    const double flops = 2.0 * a.nnz();
    PlanOptions o;
    const Measure serial = measure(a, Backend::Serial, "csr", o, &ref, c.suite_min_s, c.samples);
    o.threads = c.suite_threads;
    const Measure eig = measure(a, Backend::Omp, "eigen", o, &ref, c.suite_min_s, c.samples);
    std::string name = p.filename().string();
    name = name.substr(0, name.find('.'));
    fmt::print("{:<22} {:>9} {:7.2f}", name.substr(0, 22), a.nnz(), flops / serial.seconds * 1e-9);
    double best = 1e300, auto_s = 0;
    std::string choice;
    for (const auto& k : kOmpKernels) {
      const Measure m = measure(a, Backend::Omp, k, o, &ref, c.suite_min_s, c.samples);
      if (!m.ok) {
        fmt::print(" {:>8}", m.note.starts_with("CHECK") ? "FAILED" : "refused");
        continue;
      }
      fmt::print(" {:8.2f}", flops / m.seconds * 1e-9);
      best = std::min(best, m.seconds);
      if (k == "csr") {
        auto_s = m.seconds;
        choice = m.detail.substr(0, m.detail.find(" ("));  // schedule and inner loop, not the trial
      }
    }
    const double ra = eig.seconds / auto_s, rb = eig.seconds / best;
    fmt::print(" {:7.2f} {:8.2f} {:8.2f}  {}\n", flops / eig.seconds * 1e-9, ra, rb, choice);
    r_auto.push_back(ra);
    r_best.push_back(rb);
    slower_auto += ra < 1.0;
    slower_best += rb < 1.0;
    std::fflush(stdout);
  }
  fmt::print(
      "suite: {} matrices; geomean speedup over Eigen: csr(auto) {:.2f}x (min {:.2f}, {} slower), best kernel "
      "{:.2f}x (min {:.2f}, {} slower)\n",
      r_auto.size(), geomean(r_auto), r_auto.empty() ? 0 : *std::min_element(r_auto.begin(), r_auto.end()), slower_auto,
      geomean(r_best), r_best.empty() ? 0 : *std::min_element(r_best.begin(), r_best.end()), slower_best);
}

// The STREAM triad at each thread count (and at 1 and the suite's, which rows are reported against).
void measure_triad(Passes& c, int procs) {
  fmt::print("# cpu_scaling: {} processors\n# STREAM triad (3 arrays x 8 B per element, arrays >= 2x LLC)\n", procs);
  for (int t : c.threads) {
    c.triad[t] = cpu_triad_bandwidth(t);
    fmt::print("triad threads={:<3} {:8.2f} GB/s\n", t, c.triad[t] * 1e-9);
  }
  for (const int t : {1, c.suite_threads})
    if (!c.triad.count(t)) c.triad[t] = cpu_triad_bandwidth(t);
  for (auto& [t, bw] : c.triad) c.triad_max = std::max(c.triad_max, bw);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) try {
  std::vector<int> threads;
  std::vector<int> spmm_k;
  std::vector<std::string> gens = {"stencil27:110", "random8:4000000", "powerlaw:3000000"};
  std::string dir;
  std::vector<std::string> files;
  std::string spmm_gen = "stencil27:64";
  double min_ms = 50, suite_min_ms = 10;
  int samples = 5, suite_threads = 0;
  const CLI::Validator gen_spec(
      [](std::string& spec) {
        return spec == "none" || !parse_gen(spec).first.empty()
                   ? std::string()
                   : fmt::format("expected NAME:SIZE with NAME one of {}, got {}", kGenNames, spec);
      },
      "NAME:SIZE");
  CLI::App app{"cpu_scaling: triad, then every OpenMP kernel and Eigen at each thread count on large matrices"};
  app.add_option("FILES", files, "Matrix files measured like the generated ones");
  app.add_option("--threads", threads, "Thread counts (default 1, 2, 4, ... up to the processors)")
      ->delimiter(',')
      ->check(CLI::Range(1, 4096));
  app.add_option("--gen", gens, fmt::format("Generated matrices NAME:SIZE ({}), or none", kGenNames))
      ->delimiter(',')
      ->capture_default_str()
      ->check(gen_spec);
  app.add_option("--dir", dir, "Suite pass: every .mtx / .mtx.gz of this folder")->check(CLI::ExistingDirectory);
  app.add_option("--suite-threads", suite_threads,
                 "Threads of the suite and SpMM passes (default the largest of --threads)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--suite-min-ms", suite_min_ms, "Suite pass: each sample lasts at least this long")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--spmm", spmm_k, "SpMM pass: right-hand side counts (e.g. 1,4,16,64; default none)")
      ->delimiter(',')
      ->check(CLI::Range(1, 4096));
  app.add_option("--spmm-gen", spmm_gen, "SpMM pass: the generated matrix")->capture_default_str()->check(gen_spec);
  app.add_option("--min-ms", min_ms, "Each sample lasts at least this long")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--samples", samples, "Timed samples per kernel (median reported)")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000));
  CLI11_PARSE(app, argc, argv);
  if (gens.size() == 1 && gens[0] == "none") gens.clear();
  const int procs = omp_get_num_procs();
  if (threads.empty())
    for (int t = 1; t <= procs; t *= 2) threads.push_back(t);
  if (suite_threads == 0) {
    suite_threads = 1;
    for (int t : threads)
      if (t <= procs) suite_threads = std::max(suite_threads, t);
  }
  const double min_s = min_ms * 1e-3, suite_min_s = suite_min_ms * 1e-3;

  Passes c{threads, {}, 0, min_s, suite_min_s, samples, suite_threads};
  measure_triad(c, procs);

  // ---- Scaling on the large matrices ----
  std::vector<std::pair<std::string, Csr>> mats;
  for (const auto& g : gens) mats.emplace_back(g, generate(g));
  for (const auto& f : files) mats.emplace_back(std::filesystem::path(f).filename().string(), io::load_csr(f));

  std::vector<double> big_ratio_auto;  // eigen / csr(auto) time at each matrix's largest thread count
  for (const auto& [name, a] : mats) big_ratio_auto.push_back(scaling(name, a, c));

  if (!spmm_k.empty()) spmm_pass(spmm_gen, spmm_k, c);
  if (!dir.empty()) suite_pass(dir, c);
  if (!big_ratio_auto.empty())
    fmt::print("large matrices: geomean speedup of csr(auto) over Eigen at the largest thread count {:.2f}x\n",
               geomean(big_ratio_auto));
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "cpu_scaling: %s\n", e.what());
  return 1;
}
