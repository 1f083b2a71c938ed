// CSR5 against every other kernel of the same backend (our CSR kernels, ELL, HLL, and the Eigen /
// cuSPARSE baselines), on generated irregular and regular matrices and on files given on the
// command line; on CUDA also CSR5's other combination modes and tile heights.
//
// For each matrix and backend: the time of one product of every kernel (median of batches),
// GFLOPS, CSR5's conversion cost in units of one SpMV of the fastest CSR kernel of that backend,
// and the paper's iterative scenario: total = conversion + setup + N products for N = 50, 500
// (computed from the measured product time), and for each kernel faster than our best CSR after how
// many products its extra conversion and setup time is paid back.
//
// --cuda-variants / --cpu-variants replace the default extra CSR5 runs of that backend (CUDA: the
// other modes, a tile-height sweep, other load batches; CPU: lanes, sigma 16 and 32) with the
// listed variants, each optionally with a tile height ("auto@32"); --only runs just the listed
// kernels of each backend (besides the CSR5 runs); --matrix NAME keeps the generated matrices
// whose name contains NAME; --duel R adds an interleaved comparison of CSR5 with our CSR kernels
// and the baselines (R rounds, one batch of each per round; see duel()).
#include <spmv/bench/generate.hpp>
#include <spmv/device.hpp>
#include <spmv/formats/csr5.hpp>
#include <spmv/spmv.hpp>

#include <omp.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fmt/format.h>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

using namespace spmv;

namespace {

struct Measured {
  std::string kernel;
  bool ok = false;
  std::string error, detail;
  double convert = 0, setup = 0, t = 0;  // seconds; t = one product
};

// One of our CSR kernels (not a baseline): the bar CSR5 is compared with.
bool our_csr(const KernelSpec* spec) { return spec && !spec->baseline && spec->format == "csr"; }

Measured measure(const CsrView& a, Backend be, const std::string& kernel, const PlanOptions& o,
                 const std::vector<double>& x, const Reference& ref, double min_seconds) {
  Measured m;
  m.kernel = kernel;
  try {
    auto plan = make_plan(a, be, kernel, o);
    m.convert = plan->convert_seconds;
    m.setup = plan->setup_seconds;
    m.detail = plan->detail;
    std::vector<double> y(a.rows);
    plan->multiply(x, y);
    const auto chk = check_product(a, ref, y);
    if (!chk.passed) {
      m.error = "WRONG: " + chk.message;
      return m;
    }
    // 5 batches lasting about min_seconds/5 each; the median batch counts.
    m.t = time_products(*plan, min_seconds / 5, 5).median_s;
    m.ok = true;
  } catch (const std::exception& e) {
    m.error = e.what();
  }
  return m;
}

// Interleaved duel: CSR5 and each of our CSR kernels of the backend, all plans alive, one batch
// each per round, `rounds` rounds. Kernels measured one after another (as above) see different
// machine states: on the 16-core Xeon host our CSR moved by up to 20% between runs of one binary,
// while in a round every kernel sees about the same state. Prints each kernel's median over the
// rounds and the median (and quartiles) over the rounds of best-time / CSR5-time (>1: CSR5 faster),
// for our CSR kernels and for the baselines (cuSPARSE, Eigen).
void duel(const CsrView& a, Backend be, const std::vector<std::string>& csr_kernels,
          const std::vector<std::string>& baselines, const PlanOptions& o, const std::vector<double>& x, int rounds,
          double min_seconds) {
  std::vector<std::string> names{"csr5"};
  names.insert(names.end(), csr_kernels.begin(), csr_kernels.end());
  names.insert(names.end(), baselines.begin(), baselines.end());
  const std::size_t ours_end = 1 + csr_kernels.size();
  std::vector<std::unique_ptr<Plan>> plans;
  std::vector<int> reps;
  std::vector<double> y(a.rows);
  for (const auto& k : names) {
    plans.push_back(make_plan(a, be, k, o));
    plans.back()->multiply(x, y);
    reps.push_back(products_per_sample(*plans.back(), min_seconds / rounds));
  }
  std::vector<std::vector<double>> t(names.size());
  std::vector<double> ratio, ratio_base;
  for (int round = 0; round < rounds; ++round) {
    double best_csr = 0, best_base = 0;
    for (std::size_t i = 0; i < names.size(); ++i) {
      t[i].push_back(plans[i]->time_runs(reps[i]) / reps[i]);
      double& best = i < ours_end ? best_csr : best_base;
      if (i > 0 && (best == 0 || t[i].back() < best)) best = t[i].back();
    }
    ratio.push_back(best_csr / t[0].back());
    if (best_base > 0) ratio_base.push_back(best_base / t[0].back());
  }
  const auto quantile = [](std::vector<double> v, double q) {
    std::sort(v.begin(), v.end());
    return v[static_cast<std::size_t>(q * (v.size() - 1) + 0.5)];
  };
  std::string line;
  for (std::size_t i = 0; i < names.size(); ++i) line += fmt::format(" {} {:.2f}", names[i], quantile(t[i], 0.5) * 1e6);
  std::string base;
  if (!ratio_base.empty())
    base = fmt::format("; best baseline / csr5: median {:.3f} [quartiles {:.3f} .. {:.3f}]", quantile(ratio_base, 0.5),
                       quantile(ratio_base, 0.25), quantile(ratio_base, 0.75));
  fmt::print(
      "  [{}]  duel, {} interleaved rounds, median us:{}; best CSR / csr5 per round: median {:.3f} "
      "[quartiles {:.3f} .. {:.3f}]{}\n",
      to_string(be), rounds, line, quantile(ratio, 0.5), quantile(ratio, 0.25), quantile(ratio, 0.75), base);
}

double row_std(const CsrView& a, double& mean) {
  mean = a.rows ? double(a.nnz()) / a.rows : 0;
  double s = 0;
  for (index_t r = 0; r < a.rows; ++r) s += (a.row_length(r) - mean) * (a.row_length(r) - mean);
  return a.rows ? std::sqrt(s / a.rows) : 0;
}

// The comment after a kernel's line: for CSR5 its conversion in CSR SpMVs and its distance to the
// best CSR-family kernel and to the best kernel of any format; for any kernel faster than our best
// CSR, after how many products its extra conversion/setup time is paid back.
std::string note(const Measured& m, double conv_units, double t_csr_family, double t_any, double t_csr,
                 double pre_csr) {
  std::string s;
  if (m.kernel.starts_with("csr5"))
    s += fmt::format("   conversion = {:.1f} CSR SpMVs; vs best CSR/baseline {:+.1f}%, vs best of all {:+.1f}% [{}]",
                     conv_units, t_csr_family > 0 ? (t_csr_family / m.t - 1) * 100 : 0.0,
                     t_any > 0 ? (t_any / m.t - 1) * 100 : 0.0, m.detail);
  const double extra = m.convert + m.setup - pre_csr;
  if (t_csr > 0 && m.t < t_csr && extra > 0)
    s += fmt::format("   pays back its extra {:.3f} ms after {:.0f} products", extra * 1e3,
                     std::ceil(extra / (t_csr - m.t)));
  return s;
}

// The CLI's choices every backend's pass reads.
struct Args {
  int threads = 1, duel_rounds = 0, block_size = 0;
  double min_seconds = 0.5;
  std::vector<std::string> cuda_variants, cpu_variants, only;
};

PlanOptions plan_options(const Args& g) {
  PlanOptions o;
  o.threads = g.threads;
  if (g.block_size > 0) o.kernel.block_size = g.block_size;
  return o;
}

// Every kernel of the backend (or --only's, with CSR5 always), then CSR5's other variants and tile
// heights, each checked and timed.
std::vector<Measured> run_kernels(const Csr& a, Backend be, const Args& g, const std::vector<double>& x,
                                  const Reference& ref) {
  std::vector<std::string> names;
  for (const auto& k : kernels())
    if (k.backend == be &&
        (g.only.empty() || k.name == "csr5" || std::find(g.only.begin(), g.only.end(), k.name) != g.only.end()))
      names.push_back(k.name);  // every format: the iterative scenario compares them all
  if (be == Backend::Omp && std::find(names.begin(), names.end(), "csr") == names.end())
    names.insert(names.begin(), "serial:csr");  // no OpenMP CSR registered: compare to serial
  std::vector<Measured> res;
  const PlanOptions o = plan_options(g);
  for (const auto& k : names) {
    if (k == "serial:csr") {
      res.push_back(measure(a, Backend::Serial, "csr", o, x, ref, g.min_seconds));
      res.back().kernel = "serial:csr";
    } else {
      res.push_back(measure(a, be, k, o, x, ref, g.min_seconds));
    }
    if (k != "csr5") continue;
    // CSR5's other settings: VARIANT[@SIGMA]. CUDA: the other ways of combining rows across
    // tiles (main + fix-up kernel, the paper's atomics: not deterministic), other tile heights
    // and loads in flight per lane (default b8). CPU: the column-wise path beside the default,
    // and both tile heights of the CPU rule (16, and 32 for short rows).
    std::vector<std::string> extra = be == Backend::Cuda ? g.cuda_variants : g.cpu_variants;
    if (extra.empty() && be == Backend::Cuda)
      extra = {"two-pass", "atomic", "auto@8", "auto@12", "auto@16", "auto@20", "auto@24", "auto@32", "b4", "b16"};
    if (extra.empty() && be != Backend::Cuda) extra = {"lanes", "auto@16", "auto@32"};
    for (const auto& vs : extra) {
      PlanOptions ov = o;
      const auto at = vs.find('@');
      ov.kernel.variant = vs.substr(0, at);
      if (at != std::string::npos) ov.kernel.csr5_sigma = std::stoi(vs.substr(at + 1));
      ov.kernel.deterministic = ov.kernel.variant.find("atomic") == std::string::npos;
      res.push_back(measure(a, be, k, ov, x, ref, g.min_seconds));
      res.back().kernel = "csr5-" + vs;
    }
  }
  return res;
}

// The unit of conversion cost: one product of the fastest CSR kernel of ours (not a baseline).
// "CSR-family" adds the baselines (cuSPARSE, Eigen): the bar for irregular matrices.
struct Units {
  double t_csr = 0, t_best_csr_family = 0, t_best_other = 0, pre_csr = 0;
};
Units cost_units(const std::vector<Measured>& res, Backend be) {
  Units u;
  for (const auto& m : res) {
    if (!m.ok || m.kernel.starts_with("csr5")) continue;
    const KernelSpec* spec = m.kernel == "serial:csr" ? find_kernel(Backend::Serial, "csr") : find_kernel(be, m.kernel);
    if (our_csr(spec) && (u.t_csr == 0 || m.t < u.t_csr)) {
      u.t_csr = m.t;
      u.pre_csr = m.convert + m.setup;
    }
    if (spec && (spec->format == "csr" || spec->baseline) && (u.t_best_csr_family == 0 || m.t < u.t_best_csr_family))
      u.t_best_csr_family = m.t;
    if (u.t_best_other == 0 || m.t < u.t_best_other) u.t_best_other = m.t;
  }
  return u;
}

// CPU: CSR -> CSR5 -> CSR with the tile shape the OpenMP csr5 plan chose, timed in CSR products.
void round_trip(const Csr& a, Backend be, const std::vector<Measured>& res, int threads, double t_csr) {
  int omega = 0, sigma = 0;  // the tile shape the OpenMP csr5 plan chose ("omega=4 sigma=16 ...")
  for (const auto& m : res)
    if (m.ok && m.kernel == "csr5" && std::sscanf(m.detail.c_str(), "omega=%d sigma=%d", &omega, &sigma) != 2)
      omega = sigma = 0;
  if (be != Backend::Cuda && t_csr > 0 && omega > 0) {  // the round trip with that tile shape
    ConvertOptions oc;
    oc.threads = threads;
    const auto t0 = std::chrono::steady_clock::now();
    const Csr5 f = csr_to_csr5(a, omega, sigma, oc);
    const auto t1 = std::chrono::steady_clock::now();
    const Csr back = csr5_to_csr(f, threads);
    const auto t2 = std::chrono::steady_clock::now();
    const double to = std::chrono::duration<double>(t1 - t0).count(),
                 from = std::chrono::duration<double>(t2 - t1).count();
    fmt::print("  [{}]  CSR->CSR5 {:.3f} ms ({:.1f} CSR SpMVs), CSR5->CSR {:.3f} ms ({:.1f} CSR SpMVs){}\n",
               to_string(be), to * 1e3, to / t_csr, from * 1e3, from / t_csr,
               back.col == a.col && back.val == a.val ? "" : "  MISMATCH");
  }
}

// The backend's table (and CSV lines): product, conversion, setup, 50 and 500 products' cost.
void print_rows(const std::string& name, const Csr& a, double mean, double sd, Backend be,
                const std::vector<Measured>& res, const Units& u, std::ofstream& csv) {
  fmt::print("  [{}]  {:<16} {:>10} {:>8} {:>11} {:>10} {:>12} {:>12}\n", to_string(be), "kernel", "spmv_us", "GFLOPS",
             "convert_ms", "setup_ms", "total50_ms", "total500_ms");
  for (const auto& m : res) {
    if (!m.ok) {
      fmt::print("  [{}]  {:<16} {}: {}\n", to_string(be), m.kernel,
                 m.error.starts_with("WRONG") ? "FAILED" : "not run", m.error);
      if (csv.is_open())
        csv << fmt::format("{},{},{},{:.3f},{:.3f},{},{},,,,,,,,\"{}\"\n", name, a.rows, a.nnz(), mean, sd,
                           to_string(be), m.kernel, m.error);
      continue;
    }
    const double gflops = 2.0 * a.nnz() / m.t * 1e-9;
    const double pre = m.convert + m.setup;
    const double conv_units = u.t_csr > 0 ? m.convert / u.t_csr : 0;
    fmt::print("  [{}]  {:<16} {:>10.2f} {:>8.2f} {:>11.3f} {:>10.3f} {:>12.3f} {:>12.3f}{}\n", to_string(be), m.kernel,
               m.t * 1e6, gflops, m.convert * 1e3, m.setup * 1e3, (pre + 50 * m.t) * 1e3, (pre + 500 * m.t) * 1e3,
               note(m, conv_units, u.t_best_csr_family, u.t_best_other, u.t_csr, u.pre_csr));
    if (csv.is_open())
      csv << fmt::format("{},{},{},{:.3f},{:.3f},{},{},{:.6g},{:.6g},{:.6g},{:.4f},{:.3f},{:.6g},{:.6g},\n", name,
                         a.rows, a.nnz(), mean, sd, to_string(be), m.kernel, m.convert, m.setup, m.t, gflops,
                         conv_units, pre + 50 * m.t, pre + 500 * m.t);
  }
}

// The generated matrices (course-report alikes and stencils) whose name contains `matrix`, at
// `scale` of their size.
std::vector<std::pair<std::string, std::function<Csr()>>> generated_matrices(const std::string& matrix, double scale) {
  std::vector<std::pair<std::string, std::function<Csr()>>> mats;
  const auto generated = [&](const std::string& name, std::function<Csr()> make) {
    if (name.find(matrix) != std::string::npos) mats.emplace_back(name, std::move(make));  // --matrix
  };
  // Columns half next to the diagonal, half spread (Spread::HalfDiagonal).
  const auto spread = gen::Spread::HalfDiagonal;
  const auto rows = [=](double n) { return static_cast<index_t>(n * scale); };
  // dc1: 116835 rows, 766k nnz, longest row 114k.
  const gen::FewLongRows dc1{.short_min = 1, .short_max = 7, .long_rows = 3, .long_len = rows(100000)};
  // webbase-1M: mean ~3.1, std ~25, longest ~4700, some rows empty.
  const gen::ParetoLaw webbase{.x_min = 10, .alpha = 1.15, .cap = 4700, .tail = 0.02, .short_min = 0, .short_max = 4};
  // adder_dcop_32: 1813 rows, ~11k nnz, two almost dense rows and columns (not scaled).
  const gen::FewLongRows adder{.short_min = 4, .short_max = 8, .long_rows = 2, .long_len = 1500, .dense_cols = 2};
  const auto side = [=](double n) { return static_cast<index_t>(n * std::cbrt(scale)); };
  generated("dc1-like", [=] { return gen::few_long_rows(rows(116835), dc1, spread, 1); });
  generated("webbase-like", [=] { return gen::pareto_rows(rows(1000000), webbase, spread, 2); });
  generated("adder_dcop_32-like", [=] { return gen::few_long_rows(1813, adder, spread, 3); });
  generated("stencil27", [=] { return gen::grid_stencil(3, side(60), 27); });
  generated("thermal-like7", [=] { return gen::grid_stencil(3, side(100), 7); });
  return mats;
}

// --duel: our CSR kernels that ran and the baselines, interleaved.
void duel_with(const Csr& a, Backend be, const std::vector<Measured>& res, const Args& g,
               const std::vector<double>& x) {
  std::vector<std::string> ours, baselines;
  for (const auto& m : res) {
    const KernelSpec* spec = m.ok ? find_kernel(be, m.kernel) : nullptr;
    if (our_csr(spec))
      ours.push_back(m.kernel);
    else if (spec && spec->baseline)
      baselines.push_back(m.kernel);
  }
  if (!ours.empty()) duel(a, be, ours, baselines, plan_options(g), x, g.duel_rounds, 3 * g.min_seconds);
}

// The matrix's line: rows, nonzeros, row lengths (mean, std, longest), regular or not; returns the
// std of the row lengths and their mean in `mean`.
double describe_rows(const std::string& name, const Csr& a, double& mean) {
  const double sd = row_std(a, mean);
  offset_t longest = 0;
  for (index_t r = 0; r < a.rows; ++r) longest = std::max(longest, a.row_length(r));
  fmt::print("\n== {}: {} rows, {} nnz, row length mean {:.2f} std {:.2f} max {} ({})\n", name, a.rows, a.nnz(), mean,
             sd, longest, sd > mean ? "irregular" : "regular");
  return sd;
}

}  // namespace

int main(int argc, char** argv) {
  Args g;
  g.threads = omp_get_max_threads();
  std::string csv_path, matrix;
  std::vector<std::string> files;
  bool no_gen = false, small = false, gpu_only = false, cpu_only = false;
  CLI::App app{"csr5_bench: CSR5 against every other kernel of each backend, conversion cost and payback"};
  app.add_option("FILES", files, "Matrix files after the generated ones");
  app.add_option("--threads", g.threads, "OpenMP threads (default: OpenMP's maximum)")->check(CLI::Range(1, 4096));
  app.add_option("--min-seconds", g.min_seconds, "Timing per kernel: 5 batches of a fifth of this")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--csv", csv_path, "Also write one CSV line per kernel and matrix here");
  app.add_flag("--no-gen", no_gen, "Only the files, no generated matrices");
  app.add_flag("--small", small, "Generated matrices at a tenth of the size");
  auto* g_only = app.add_flag("--gpu-only", gpu_only, "Only the CUDA backend");
  app.add_flag("--cpu-only", cpu_only, "Only the OpenMP backend")->excludes(g_only);
  app.add_option("--block-size", g.block_size, "CUDA threads per block (default: the kernel's own)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--cuda-variants", g.cuda_variants,
                 "CUDA CSR5 runs instead of the default extras: VARIANT[@SIGMA] (two-pass, atomic, auto@16, b4, ...)")
      ->delimiter(',');
  app.add_option("--cpu-variants", g.cpu_variants,
                 "CPU CSR5 runs instead of the default extras: VARIANT[@SIGMA] (lanes, simd, simd_loads, auto@32, ...)")
      ->delimiter(',');
  app.add_option("--only", g.only, "Only these kernels of each backend (besides the CSR5 runs)")->delimiter(',');
  app.add_option("--matrix", matrix, "Only the generated matrices whose name contains this");
  app.add_option("--duel", g.duel_rounds,
                 "Interleaved CSR5 / CSR / baseline comparison with this many rounds (0: none)")
      ->check(CLI::NonNegativeNumber);
  CLI11_PARSE(app, argc, argv);
  const bool with_gen = !no_gen, cpu = !gpu_only, gpu = !cpu_only;
  const double scale = small ? 0.1 : 1.0;

  std::vector<std::pair<std::string, std::function<Csr()>>> mats;
  if (with_gen) mats = generated_matrices(matrix, scale);
  for (const auto& f : files) mats.emplace_back(f, [f] { return io::load_csr(f); });

  std::vector<Backend> backends;
  if (cpu) backends.push_back(Backend::Omp);
  if (gpu && device::cuda_device_count() > 0) backends.push_back(Backend::Cuda);
  fmt::print("csr5_bench: {} OpenMP threads, GPU: {}\n", g.threads,
             device::cuda_device_count() > 0 ? device::cuda_device_name() : std::string("none"));

  std::ofstream csv;
  if (!csv_path.empty()) {
    csv.open(csv_path);
    csv << "matrix,rows,nnz,row_mean,row_std,backend,kernel,convert_s,setup_s,spmv_s,gflops,"
           "convert_in_csr_spmvs,total_50_s,total_500_s,error\n";
  }

  for (const auto& [name, make] : mats) {
    Csr a;
    try {
      a = make();
    } catch (const std::exception& e) {
      fmt::print("\n{}: cannot load: {}\n", name, e.what());
      continue;
    }
    if (a.is_complex()) continue;
    double mean = 0;
    const double sd = describe_rows(name, a, mean);
    const auto x = make_vector("random:1", a.cols);
    const Reference ref = reference_product(a, x);

    for (Backend be : backends) {
      const std::vector<Measured> res = run_kernels(a, be, g, x, ref);
      const Units u = cost_units(res, be);
      round_trip(a, be, res, g.threads, u.t_csr);
      if (g.duel_rounds > 0) duel_with(a, be, res, g, x);
      print_rows(name, a, mean, sd, be, res, u, csv);
    }
  }
  return 0;
}
