// GPU benchmark: every CUDA kernel in the registry, ours and the cuSPARSE baselines (every kernel
// registered with baseline = true: CSR default/ALG1/ALG2, COO ALG1/ALG2, sliced ELL), on the same
// matrices, in the same run. Measures the device-to-device copy bandwidth first; reports per kernel
// the median time per product (CUDA events around the kernels only, each sample >= --sample-ms of
// back-to-back products), GFLOPS = 2*nnz/t and the effective bandwidth as a share of the copy
// bandwidth, then our best against the best baseline per matrix, an SpMM section and a compact
// table last.
//
//   gpu_bench [--quick] [--sample-ms MS] [--samples N] [FILE.mtx[.gz] ...]
//
// The effective bandwidth counts the bytes any CSR product must move with int32 row offsets
// (12*nnz + 4*(rows+1) + 8*cols*k + 8*rows*k) for every kernel, so padding or extra passes show up
// as a lower share rather than as more "useful" traffic.
#include <spmv/spmv.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <fmt/format.h>
#include <map>
#include <random>

using namespace spmv;

namespace {

struct Opts {
  double sample_s = 0.03;
  int samples = 7;
  bool quick = false;
  std::vector<std::string> files;
};

// ---- generated matrices -------------------------------------------------------------------
Csr finish(index_t rows, index_t cols, std::vector<offset_t> rp, std::vector<index_t> col) {
  Csr a;
  a.rows = rows;
  a.cols = cols;
  a.row_ptr = std::move(rp);
  a.col = std::move(col);
  a.val.resize(a.col.size());
  std::mt19937_64 g(99);
  std::uniform_real_distribution<double> v(-1.0, 1.0);
  for (auto& x : a.val) x = v(g);
  return a;
}

Csr stencil27(int n) {
  const index_t rows = n * n * n;
  std::vector<offset_t> rp{0};
  std::vector<index_t> col;
  col.reserve(static_cast<std::size_t>(rows) * 27);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      for (int k = 0; k < n; ++k) {
        for (int di = -1; di <= 1; ++di)
          for (int dj = -1; dj <= 1; ++dj)
            for (int dk = -1; dk <= 1; ++dk) {
              const int a = i + di, b = j + dj, c = k + dk;
              if (a >= 0 && a < n && b >= 0 && b < n && c >= 0 && c < n) col.push_back((a * n + b) * n + c);
            }
        rp.push_back(static_cast<offset_t>(col.size()));
      }
  return finish(rows, rows, std::move(rp), std::move(col));
}

Csr stencil5(int n) {
  const index_t rows = n * n;
  std::vector<offset_t> rp{0};
  std::vector<index_t> col;
  col.reserve(static_cast<std::size_t>(rows) * 5);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      if (i > 0) col.push_back((i - 1) * n + j);
      if (j > 0) col.push_back(i * n + j - 1);
      col.push_back(i * n + j);
      if (j + 1 < n) col.push_back(i * n + j + 1);
      if (i + 1 < n) col.push_back((i + 1) * n + j);
      rp.push_back(static_cast<offset_t>(col.size()));
    }
  return finish(rows, rows, std::move(rp), std::move(col));
}

// Rows with the given lengths, columns uniformly random (sorted, distinct).
Csr random_rows(const std::vector<offset_t>& len, index_t cols, std::uint64_t seed) {
  std::mt19937_64 g(seed);
  std::uniform_int_distribution<index_t> c(0, cols - 1);
  std::vector<offset_t> rp{0};
  std::vector<index_t> col;
  std::vector<index_t> row;
  for (offset_t l : len) {
    row.clear();
    if (l * 4 > cols) {  // dense-ish long row: a strided walk, then jitter-free
      const offset_t step = std::max<offset_t>(cols / std::max<offset_t>(l, 1), 1);
      for (offset_t j = 0; j < l && j * step < cols; ++j) row.push_back(static_cast<index_t>(j * step));
    } else {
      for (offset_t j = 0; j < l; ++j) row.push_back(c(g));
      std::sort(row.begin(), row.end());
      row.erase(std::unique(row.begin(), row.end()), row.end());
    }
    col.insert(col.end(), row.begin(), row.end());
    rp.push_back(static_cast<offset_t>(col.size()));
  }
  return finish(static_cast<index_t>(len.size()), cols, std::move(rp), std::move(col));
}

Csr random_per_row(index_t rows, int per_row, std::uint64_t seed) {
  return random_rows(std::vector<offset_t>(rows, per_row), rows, seed);
}

// Pareto row lengths (alpha 2.5, minimum 3: mean about 9), capped at 50k.
Csr power_law(index_t rows, std::uint64_t seed) {
  std::mt19937_64 g(seed);
  std::uniform_real_distribution<double> u(1e-12, 1.0);
  std::vector<offset_t> len(rows);
  for (auto& l : len) l = std::min<offset_t>(static_cast<offset_t>(3.0 * std::pow(u(g), -1.0 / 1.5)), 50000);
  return random_rows(len, rows, seed + 1);
}

// dc1-like: short rows (2..6) with a few rows of 100k entries.
Csr few_long_rows(index_t rows, int n_long, std::uint64_t seed) {
  std::mt19937_64 g(seed);
  std::vector<offset_t> len(rows);
  for (auto& l : len) l = 2 + static_cast<offset_t>(g() % 5);
  for (int i = 0; i < n_long; ++i) len[static_cast<std::size_t>(g() % rows)] = 100000;
  return random_rows(len, rows, seed + 1);
}

// ---- measurement --------------------------------------------------------------------------
struct Result {
  std::string kernel, detail;
  int block = 0;
  bool baseline = false, ok = false;
  double t = 0;  // seconds per product
};

double time_plan(Plan& p, const Opts& o) { return time_products(p, o.sample_s, o.samples).median_s; }

offset_t must_bytes(const Csr& a, int k) {
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

Result measure(const Csr& a, const KernelSpec& spec, PlanOptions opt, const Reference& ref,
               const std::vector<double>& x, const Opts& o) {
  Result r{spec.name, "", opt.block_size, spec.baseline};
  try {
    auto p = make_plan(a, Backend::Cuda, spec.name, opt);
    std::vector<double> y(static_cast<std::size_t>(a.rows) * opt.k);
    p->multiply(x, y);
    const CheckResult c = check_product(a, ref, y, opt.k, opt.layout);
    r.detail = p->detail;
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

void print_result(const Csr& a, const Result& r, int k, double bw) {
  if (!r.ok) {
    fmt::print("  {:<17} {:>5}  {}\n", r.kernel, r.block, r.detail.substr(0, 110));
    return;
  }
  const double gf = 2.0 * a.nnz() * k / r.t * 1e-9, gbs = must_bytes(a, k) / r.t * 1e-9;
  fmt::print("  {:<17} {:>5} {:>10.2f} us {:>8.1f} GFLOPS {:>7.0f} GB/s {:>5.1f}%  {}\n", r.kernel, r.block,
             r.t * 1e6, gf, gbs, 100 * gbs * 1e9 / bw, r.detail);
}

}  // namespace

int main(int argc, char** argv) {
  Opts o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--quick") o.quick = true;
    else if (a == "--sample-ms" && i + 1 < argc) o.sample_s = std::atof(argv[++i]) * 1e-3;
    else if (a == "--samples" && i + 1 < argc) o.samples = std::max(1, std::atoi(argv[++i]));
    else if (a == "-h" || a == "--help") {
      fmt::print("usage: gpu_bench [--quick] [--sample-ms MS] [--samples N] [FILE ...]\n");
      return 0;
    } else o.files.push_back(a);
  }
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

  std::vector<std::pair<std::string, std::function<Csr()>>> suite = {
      {"stencil27_1M", [] { return stencil27(100); }},
      {"stencil5_4.2M", [] { return stencil5(2048); }},
      {"random8_1M", [] { return random_per_row(1 << 20, 8, 5); }},
      {"powerlaw_1M", [] { return power_law(1 << 20, 6); }},
      {"longrows_1M", [] { return few_long_rows(1 << 20, 8, 7); }},
      {"small_stencil5_10k", [] { return stencil5(100); }},
      {"small_random_20k", [] { return random_per_row(20000, 4, 8); }},
      {"small_stencil27_3k", [] { return stencil27(15); }},
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
      std::vector<int> blocks{256};
      if (is_main(k->name) && !o.quick) blocks = {128, 256, 384, 512, 640, 768, 896, 1024};
      for (int b : blocks) {
        PlanOptions opt;
        opt.block_size = b;
        consider(measure(a, *k, opt, ref, x, o));
      }
      if (k->name == "csr-vector" && !o.quick)
        for (int sw : {2, 4, 8, 16, 32}) {
          PlanOptions opt;
          opt.subwarp = sw;
          consider(measure(a, *k, opt, ref, x, o));
        }
    }
    if (s.ours.ok && s.theirs.ok)
      fmt::print("  -> best ours {} (block {}) {:.2f} us; best cuSPARSE {} {:.2f} us; speedup {:.2f}\n\n",
                 s.ours.kernel, s.ours.block, s.ours.t * 1e6, s.theirs.kernel, s.theirs.t * 1e6,
                 s.theirs.t / s.ours.t);
    sums.push_back(s);
    if (name == "stencil27_1M" || name == "random8_1M" || name == "powerlaw_1M") keep.emplace(name, std::move(a));
  }

  // SpMM: ours (every non-baseline kernel that takes k > 1) against cusparseSpMM.
  fmt::print("== SpMM (row-major X, Y) ==\n");
  std::vector<std::string> spmm_rows;
  for (auto& [name, a] : keep) {
    for (int k : {1, 4, 16, 64}) {
      const auto x = make_vector("random:2", static_cast<std::size_t>(a.cols) * k);
      const Reference ref = reference_product(a, x, k, Layout::RowMajor);
      Result best_ours, best_cs;
      for (const KernelSpec* spec : ks) {
        if (!spec->spmm) continue;
        PlanOptions opt;
        opt.k = k;
        const Result r = measure(a, *spec, opt, ref, x, o);
        fmt::print("  {} K={:<3}", name, k);
        print_result(a, r, k, bw);
        if (!r.ok) continue;
        Result& b = spec->baseline ? best_cs : best_ours;
        if (b.t == 0 || r.t < b.t) b = r;
      }
      if (best_ours.ok && best_cs.ok)
        spmm_rows.push_back(fmt::format("{:<14} K={:<3} ours {:<6} {:>8.1f} GFLOPS  cuSPARSE {:>8.1f} GFLOPS  x{:.2f}",
                                        name, k, best_ours.kernel, 2.0 * a.nnz() * k / best_ours.t * 1e-9,
                                        2.0 * a.nnz() * k / best_cs.t * 1e-9, best_cs.t / best_ours.t));
    }
  }

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
  return 0;
}
