// CPU scaling benchmark: STREAM triad first, then for each large matrix (generated, or files given
// on the command line) serial CSR, every OpenMP kernel and Eigen at each thread count, with GFLOPS,
// speedup over serial CSR, efficiency, effective bandwidth and its share of the triad, and the
// ratio to Eigen at the same thread count. Optionally a suite pass over a folder of Matrix Market
// files at one thread count (geometric-mean speedup over Eigen) and an SpMM pass.
//
//   cpu_scaling [--threads 1,2,4,8,16] [--gen stencil27:110,random8:4000000,powerlaw:3000000|none]
//               [--dir FOLDER] [--suite-threads T] [--suite-min-ms 10] [--spmm 1,4,16,64]
//               [--spmm-gen stencil27:64] [--min-ms 50] [--samples 5] [FILE ...]
#include <spmv/bench/ceiling.hpp>
#include <spmv/spmv.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fmt/format.h>
#include <map>
#include <omp.h>
#include <random>
#include <string>
#include <vector>

#include "gen/splitmix64.hpp"

using namespace spmv;

namespace {

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> v;
  std::size_t b = 0;
  while (b <= s.size()) {
    const std::size_t e = s.find(sep, b);
    const std::string part = s.substr(b, e == std::string::npos ? std::string::npos : e - b);
    if (!part.empty()) v.push_back(part);
    if (e == std::string::npos) break;
    b = e + 1;
  }
  return v;
}

std::vector<int> split_ints(const std::string& s) {
  std::vector<int> v;
  for (const auto& p : split(s, ',')) v.push_back(std::stoi(p));
  return v;
}

// Fills a CSR from per-row generators in parallel: `row(r, cols_out)` appends row r's sorted,
// distinct columns (called twice: once to count, once to fill).
template <class RowGen>
Csr build(index_t rows, index_t cols, RowGen row) {
  Csr a;
  a.rows = rows;
  a.cols = cols;
  a.row_ptr.assign(static_cast<std::size_t>(rows) + 1, 0);
  // Runs use(r, columns of row r) for every row, in parallel.
  auto each_row = [&](auto&& use) {
#pragma omp parallel
    {
      std::vector<index_t> c;
#pragma omp for schedule(dynamic, 4096)
      for (index_t r = 0; r < rows; ++r) {
        c.clear();
        row(r, c);
        use(r, c);
      }
    }
  };
  each_row([&](index_t r, const std::vector<index_t>& c) { a.row_ptr[r + 1] = static_cast<offset_t>(c.size()); });
  for (index_t r = 0; r < rows; ++r) a.row_ptr[r + 1] += a.row_ptr[r];
  a.col.resize(a.nnz());
  a.val.resize(a.nnz());
  each_row([&](index_t r, const std::vector<index_t>& c) {
    const offset_t b = a.row_ptr[r];
    for (std::size_t j = 0; j < c.size(); ++j) {
      a.col[b + j] = c[j];
      a.val[b + j] = c[j] == r ? 26.0 : -1.0 + 1e-3 * static_cast<double>(splitmix64(b + j) % 1000);
    }
  });
  return a;
}

Csr stencil27(int n) {
  const index_t rows = static_cast<index_t>(n) * n * n;
  return build(rows, rows, [n](index_t r, std::vector<index_t>& c) {
    const int i = r / (n * n), j = (r / n) % n, k = r % n;
    for (int di = -1; di <= 1; ++di)
      for (int dj = -1; dj <= 1; ++dj)
        for (int dk = -1; dk <= 1; ++dk) {
          const int ii = i + di, jj = j + dj, kk = k + dk;
          if (ii >= 0 && ii < n && jj >= 0 && jj < n && kk >= 0 && kk < n) c.push_back((ii * n + jj) * n + kk);
        }
  });
}

void sorted_unique(std::vector<index_t>& c) {
  std::sort(c.begin(), c.end());
  c.erase(std::unique(c.begin(), c.end()), c.end());
}

Csr random_rows(index_t rows, int per_row) {
  return build(rows, rows, [rows, per_row](index_t r, std::vector<index_t>& c) {
    std::uint64_t s = splitmix64(static_cast<std::uint64_t>(r) * 7919 + 1);
    for (int j = 0; j < per_row; ++j) c.push_back(static_cast<index_t>((s = splitmix64(s)) % static_cast<std::uint64_t>(rows)));
    sorted_unique(c);
  });
}

// Row lengths from a Pareto law (x_m = 3, alpha = 1.5, capped at 10000): mean about 8, a few rows
// with thousands of entries. Columns uniform.
Csr power_law(index_t rows) {
  return build(rows, rows, [rows](index_t r, std::vector<index_t>& c) {
    std::uint64_t s = splitmix64(static_cast<std::uint64_t>(r) * 104729 + 3);
    const double u = (static_cast<double>((s = splitmix64(s)) >> 11) + 1.0) / 9007199254740993.0;
    const int len = static_cast<int>(std::min(10000.0, 3.0 * std::pow(u, -1.0 / 1.5))) - 2;
    for (int j = 0; j < std::max(len, 1); ++j) c.push_back(static_cast<index_t>((s = splitmix64(s)) % static_cast<std::uint64_t>(rows)));
    sorted_unique(c);
  });
}

Csr generate(const std::string& spec, std::string& name) {
  const auto parts = split(spec, ':');
  if (parts.size() != 2) throw Error("generator spec is NAME:SIZE, got " + spec);
  const long size = std::stol(parts[1]);
  name = spec;
  if (parts[0] == "stencil27") return stencil27(static_cast<int>(size));
  if (parts[0] == "random8") return random_rows(static_cast<index_t>(size), 8);
  if (parts[0] == "powerlaw") return power_law(static_cast<index_t>(size));
  throw Error("unknown generator " + parts[0] + " (stencil27, random8, powerlaw)");
}

struct Measure {
  bool ok = false;
  std::string note;  // refusal or check failure
  double seconds = 0;
  offset_t bytes = 0;
  double convert = 0;
  std::string detail;
};

Measure measure(const Csr& a, Backend b, const std::string& kernel, PlanOptions opt, const Reference* ref,
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

}  // namespace

int main(int argc, char** argv) try {
  std::vector<int> threads;
  std::vector<int> spmm_k;
  std::string gen = "stencil27:110,random8:4000000,powerlaw:3000000", dir;
  std::vector<std::string> files;
  std::string spmm_gen = "stencil27:64";
  double min_ms = 50, suite_min_ms = 10;
  int samples = 5, suite_threads = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) throw Error(arg + " needs a value");
      return argv[++i];
    };
    if (arg == "--threads") threads = split_ints(next());
    else if (arg == "--gen") gen = next();
    else if (arg == "--dir") dir = next();
    else if (arg == "--suite-threads") suite_threads = std::stoi(next());
    else if (arg == "--spmm") spmm_k = split_ints(next());
    else if (arg == "--min-ms") min_ms = std::stod(next());
    else if (arg == "--suite-min-ms") suite_min_ms = std::stod(next());
    else if (arg == "--spmm-gen") spmm_gen = next();
    else if (arg == "--samples") samples = std::stoi(next());
    else if (arg.starts_with("--")) throw Error("unknown option " + arg);
    else files.push_back(arg);
  }
  const int procs = omp_get_num_procs();
  if (threads.empty())
    for (int t = 1; t <= procs; t *= 2) threads.push_back(t);
  if (suite_threads == 0) {
    suite_threads = 1;
    for (int t : threads)
      if (t <= procs) suite_threads = std::max(suite_threads, t);
  }
  const double min_s = min_ms * 1e-3, suite_min_s = suite_min_ms * 1e-3;

  fmt::print("# cpu_scaling: {} processors\n# STREAM triad (3 arrays x 8 B per element, arrays >= 2x LLC)\n", procs);
  std::map<int, double> triad;
  for (int t : threads) {
    triad[t] = cpu_triad_bandwidth(t);
    fmt::print("triad threads={:<3} {:8.2f} GB/s\n", t, triad[t] * 1e-9);
  }
  for (const int t : {1, suite_threads})  // serial rows and the suite are reported against these
    if (!triad.count(t)) triad[t] = cpu_triad_bandwidth(t);
  double triad_max = 0;
  for (auto& [t, bw] : triad) triad_max = std::max(triad_max, bw);
  std::fflush(stdout);

  // ---- Scaling on the large matrices ----
  std::vector<std::pair<std::string, Csr>> mats;
  for (const auto& g : split(gen == "none" ? "" : gen, ',')) {
    std::string name;
    Csr a = generate(g, name);
    mats.emplace_back(name, std::move(a));
  }
  for (const auto& f : files) mats.emplace_back(std::filesystem::path(f).filename().string(), io::load_csr(f));

  std::vector<double> big_ratio_auto;  // eigen / csr(auto) time at each matrix's largest thread count
  for (const auto& [name, a] : mats) {
    const MatrixStats st = compute_stats(a);
    const double mb = (12.0 * a.nnz() + 4.0 * (a.rows + 1) + 8.0 * a.cols + 8.0 * a.rows) / 1e6;
    fmt::print("\n## {}: rows {} cols {} nnz {} ({:.1f} nnz/row, max {}), CSR product data {:.0f} MB\n", name, a.rows,
               a.cols, a.nnz(), st.row_nnz_mean, st.row_nnz_max, mb);
    fmt::print("padding ratio (slots/nnz): ELL {:.2f}, HLL-16 {:.3f}, HLL-32 {:.3f}, HLL-64 {:.3f}\n", st.ell_padding_ratio,
               st.hll_padding_ratio[0], st.hll_padding_ratio[1], st.hll_padding_ratio[2]);
    const auto x = make_vector("random:1", a.cols);
    const Reference ref = reference_product(a, x);
    PlanOptions o1;
    const Measure serial = measure(a, Backend::Serial, "csr", o1, &ref, min_s, samples);
    const double flops = 2.0 * a.nnz();
    fmt::print("{:<14} {:>3} {:>10} {:>8} {:>8} {:>6} {:>8} {:>7} {:>8}  {}\n", "kernel", "thr", "median_ms", "GFLOPS",
               "speedup", "eff", "GB/s", "%triad", "vsEigen", "detail");
    auto row = [&](const std::string& kernel, int t, const Measure& m, double eigen_s) {
      if (!m.ok) {
        fmt::print("{:<14} {:>3} {}\n", kernel, t, m.note);
        return;
      }
      const double sp = serial.seconds / m.seconds, gbs = m.bytes / m.seconds * 1e-9;
      fmt::print("{:<14} {:>3} {:10.3f} {:8.2f} {:8.2f} {:6.2f} {:8.1f} {:6.1f}% {:8}  {}{}\n", kernel, t, m.seconds * 1e3,
                 flops / m.seconds * 1e-9, sp, sp / t, gbs, 100.0 * gbs * 1e9 / triad[t],
                 eigen_s > 0 ? fmt::format("{:.2f}x", eigen_s / m.seconds) : "-", m.detail,
                 m.convert > 0.01 ? fmt::format(" convert+setup {:.2f}s", m.convert) : "");
    };
    row("serial-csr", 1, serial, 0);
    double best_gbs = 0;
    std::string best_what;
    double last_ratio = 0;
    for (int t : threads) {
      PlanOptions o;
      o.threads = t;
      const Measure eig = measure(a, Backend::Omp, "eigen", o, &ref, min_s, samples);
      const double eig_s = eig.ok ? eig.seconds : 0;
      for (const auto& k : kOmpKernels) {
        const Measure m = measure(a, Backend::Omp, k, o, &ref, min_s, samples);
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
    big_ratio_auto.push_back(last_ratio);
    fmt::print("best: {} at {:.1f} GB/s = {:.1f}% of the best triad ({:.1f} GB/s)\n", best_what, best_gbs * 1e-9,
               100.0 * best_gbs / triad_max, triad_max * 1e-9);
  }

  // ---- SpMM on the first matrix, at the suite thread count ----
  if (!spmm_k.empty()) {
    std::string name;
    const Csr a = generate(spmm_gen, name);
    fmt::print("\n## SpMM on {} (nnz {}) at {} threads (GFLOPS = 2 nnz k / t)\n", name, a.nnz(), suite_threads);
    fmt::print("{:<8} {:>4} {:>4} {:>10} {:>8} {:>8}\n", "kernel", "k", "lay", "median_ms", "GFLOPS", "GB/s");
    for (const int k : spmm_k)
      for (const Layout lay : {Layout::RowMajor, Layout::ColMajor}) {
        if (k == 1 && lay == Layout::ColMajor) continue;
        for (const std::string kernel : {"csr", "hll", "eigen"}) {
          PlanOptions o;
          o.threads = suite_threads;
          o.k = k;
          o.layout = lay;
          const Measure m = measure(a, Backend::Omp, kernel, o, nullptr, min_s, 3);
          if (!m.ok) continue;
          fmt::print("{:<8} {:>4} {:>4} {:10.3f} {:8.2f} {:8.1f}\n", kernel, k, lay == Layout::RowMajor ? "row" : "col",
                     m.seconds * 1e3, 2.0 * a.nnz() * k / m.seconds * 1e-9, m.bytes / m.seconds * 1e-9);
        }
      }
    std::fflush(stdout);
  }

  // ---- Suite: every Matrix Market file of a folder at one thread count ----
  if (!dir.empty()) {
    std::vector<std::filesystem::path> paths;
    for (const auto& e : std::filesystem::directory_iterator(dir))
      if (e.path().string().ends_with(".mtx.gz") || e.path().string().ends_with(".mtx")) paths.push_back(e.path());
    std::sort(paths.begin(), paths.end());
    fmt::print("\n## Suite {} at {} threads: GFLOPS per kernel; vsEigen = Eigen time / kernel time\n", dir, suite_threads);
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
      const Measure serial = measure(a, Backend::Serial, "csr", o, &ref, suite_min_s, samples);
      o.threads = suite_threads;
      const Measure eig = measure(a, Backend::Omp, "eigen", o, &ref, suite_min_s, samples);
      std::string name = p.filename().string();
      name = name.substr(0, name.find('.'));
      fmt::print("{:<22} {:>9} {:7.2f}", name.substr(0, 22), a.nnz(), flops / serial.seconds * 1e-9);
      double best = 1e300, auto_s = 0;
      std::string choice;
      for (const auto& k : kOmpKernels) {
        const Measure m = measure(a, Backend::Omp, k, o, &ref, suite_min_s, samples);
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
    fmt::print("suite: {} matrices; geomean speedup over Eigen: csr(auto) {:.2f}x (min {:.2f}, {} slower), best kernel "
               "{:.2f}x (min {:.2f}, {} slower)\n",
               r_auto.size(), geomean(r_auto), r_auto.empty() ? 0 : *std::min_element(r_auto.begin(), r_auto.end()),
               slower_auto, geomean(r_best), r_best.empty() ? 0 : *std::min_element(r_best.begin(), r_best.end()),
               slower_best);
  }
  if (!big_ratio_auto.empty())
    fmt::print("large matrices: geomean speedup of csr(auto) over Eigen at the largest thread count {:.2f}x\n",
               geomean(big_ratio_auto));
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "cpu_scaling: %s\n", e.what());
  return 1;
}
