#include <spmv/bench/bench.hpp>
#include <spmv/bench/budget.hpp>
#include <spmv/timing.hpp>
#include <spmv/device.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fmt/format.h>
#include <unistd.h>

#include "commands.hpp"

namespace spmv::cli {

namespace {

struct BenchArgs {
  std::vector<std::string> paths, backends, formats, kernel_names, variants;
  std::vector<int> ks;
  std::vector<std::string> layouts{"row"};
  std::vector<std::string> precisions{"double"};
  std::vector<std::string> operations{"n"};
  int repeat = 0;
  double min_sample_ms = 0, time_budget = 480;
  std::string out = "results.csv", suite = "auto", matrices_dir, suite_file, cache_dir = bench::default_cache_dir();
  bool distributed = false;
  int cg_iterations = 0;
  bool quick = false, no_baselines = false, no_progress = false, no_trial = false, seed_suite = false, no_cache = false;
  KernelSettings kernel_settings;
  long long products = 100;
  offset_t min_nnz = 0;
  int duel_rounds = 11;
  double noise_threshold = 0.05;
  int ceiling_runs = 5;
};

// How OpenMP threads are placed: the environment's OMP_PROC_BIND / OMP_PLACES, or that they are not pinned.
std::string pinning_text(const spmv::bench::MachineInfo& m) {
  if (m.omp_proc_bind.empty() && m.omp_places.empty()) return "threads not pinned (OMP_PROC_BIND, OMP_PLACES unset)";
  return fmt::format("OMP_PROC_BIND={} OMP_PLACES={}", m.omp_proc_bind.empty() ? "(unset)" : m.omp_proc_bind,
                     m.omp_places.empty() ? "(unset)" : m.omp_places);
}

// "14.7 GB/s (median of 5, 12.1-15.0)"
std::string ceiling_text(double median, double lo, double hi, int runs) {
  if (runs <= 1) return fmt::format("{:.1f} GB/s", median * 1e-9);
  return fmt::format("{:.1f} GB/s (median of {} runs, {:.1f}-{:.1f})", median * 1e-9, runs, lo * 1e-9, hi * 1e-9);
}

std::string fmt_seconds(double s) {
  if (s < 60) return fmt::format("{:.0f}s", s);
  return fmt::format("{}m{:02d}s", static_cast<int>(s) / 60, static_cast<int>(s) % 60);
}

void note(const std::string& line) {
  if (verbosity >= 1) fmt::print(stderr, "{}\n", line);
}

// The sweep: the machine's default (default_sweep) with what the command line gives over it.
spmv::bench::SweepConfig sweep_config(BenchArgs& a, const spmv::bench::MachineInfo& m, bool small, bool quick,
                                      std::vector<std::string>& precision_names) {
  spmv::bench::SweepConfig cfg = spmv::bench::default_sweep(m, small, quick);
  if (!a.backends.empty()) {
    cfg.backends.clear();
    for (const auto& b : a.backends) cfg.backends.push_back(parse_backend(b));
    if (std::find(cfg.backends.begin(), cfg.backends.end(), Backend::Cuda) != cfg.backends.end() && m.gpus == 0)
      throw Unsupported(fmt::format("--backend cuda: no usable GPU ({}); leave cuda out to benchmark the CPU",
                                    device::cuda_unavailable_reason()));
  }
  cfg.formats = a.formats;
  cfg.kernels = a.kernel_names;
  cfg.variants = a.variants;
  for (const std::string& words : a.variants) {  // a word no kernel has is a typo, not a sweep
    const auto knows = [&](const KernelSpec& k) { return spmv::bench::read_variant(k, words).has_value(); };
    if (words != "auto" && std::none_of(kernels().begin(), kernels().end(), knows))
      throw UsageError(
          fmt::format("--variant {}: no kernel has these words (`spmv kernels` lists each kernel's)", words));
  }
  // The course reports' CSR-Vector is a warp per row (000): timed beside our sub-warp choice, for
  // its column of the seed tables.
  if (a.seed_suite && m.gpus > 0) cfg.sweep["subwarp"] = {0, 32};
  for (const auto& [name, values] : a.kernel_settings.given)  // a setting given replaces its default sweep
    if (!values.empty()) cfg.sweep[name] = values;
  if (!a.ks.empty()) cfg.ks = a.ks;
  cfg.layouts.clear();
  for (const std::string& l : a.layouts) cfg.layouts.push_back(l == "col" ? Layout::ColMajor : Layout::RowMajor);
  cfg.precisions.clear();
  for (const std::string& p : a.precisions) {  // once each
    const Precision prec = parse_precision(p);
    if (std::find(cfg.precisions.begin(), cfg.precisions.end(), prec) == cfg.precisions.end()) {
      cfg.precisions.push_back(prec);
      precision_names.push_back(to_string(prec));
    }
  }
  cfg.operations.clear();
  for (const std::string& o : a.operations)
    if (const Operation op = parse_operation(o);
        std::find(cfg.operations.begin(), cfg.operations.end(), op) == cfg.operations.end())
      cfg.operations.push_back(op);
  if (a.repeat > 0) cfg.repeat = a.repeat;
  if (a.min_sample_ms > 0) cfg.min_sample_seconds = a.min_sample_ms * 1e-3;
  cfg.baselines = !a.no_baselines;
  cfg.products = a.products;
  cfg.trial = !a.no_trial;
  cfg.duel_rounds = a.duel_rounds;
  cfg.noise_threshold = a.noise_threshold;
  cfg.ceiling_runs = a.ceiling_runs;
  a.kernel_settings.apply_variant(cfg.fixed);  // the settings themselves are swept
  return cfg;
}

spmv::bench::SuiteOptions suite_options(const BenchArgs& a, bool small, bool quick, int max_k) {
  spmv::bench::SuiteOptions so;
  so.matrices_dir = a.matrices_dir;
  so.seed_suite = a.suite_file;
  so.cache_dir = a.no_cache ? "" : a.cache_dir;
  so.full = a.suite == "full";
  so.small_machine = small || a.suite == "scaled";
  so.min_nnz = a.min_nnz;
  so.seed_only = a.seed_suite;
  so.max_k = max_k;
  if (quick) {
    so.max_real_nnz = 20000;
    so.scaled_max_nnz = 50000;
    so.small_machine = true;
  }
  return so;
}

// The matrices: the paths given (each must exist: a matrix that cannot be read is a skipped row, as
// in a suite, but a missing path is a mistake said before anything runs), else the default suite
// (with --quick a handful of real matrices and alikes: every path in seconds).
std::vector<spmv::bench::MatrixSource> matrix_sources(const BenchArgs& a, const spmv::bench::SuiteOptions& so,
                                                      bool quick) {
  using spmv::bench::MatrixSource;
  for (const std::string& p : a.paths) {
    std::error_code ec;
    if (!std::filesystem::exists(p, ec)) throw Error(fmt::format("{}: no such file or folder", p));
  }
  std::vector<std::string> suite_notes;
  std::vector<MatrixSource> sources =
      a.paths.empty() ? spmv::bench::default_suite(so, &suite_notes) : spmv::bench::sources_from_paths(a.paths);
  for (const std::string& n : suite_notes) note(n);
  if (quick && a.paths.empty()) {
    std::vector<MatrixSource> pick;
    int real = 0, syn = 0;
    for (auto& s : sources)
      if (s.origin == "real" ? real++ < 4 : syn++ < 4) pick.push_back(s);
    sources = pick;
  }
  if (sources.empty()) throw Error("no matrices to benchmark");
  if (std::any_of(sources.begin(), sources.end(), [](const MatrixSource& s) { return s.spec.has_value(); }))
    note(so.cache_dir.empty()
             ? "structure-alikes: generated in memory (--no-cache)"
             : fmt::format("structure-alikes: cached in {} (--cache-dir or $SPMV_CACHE_DIR to move it, "
                           "--no-cache for none)",
                           so.cache_dir));
  return sources;
}

// The progress bar on a terminal ([####----] 40% 12/30 ETA 1m05s matrix kernel), messages as lines.
spmv::bench::Progress progress_display(bool tty) {
  spmv::bench::Progress prog;
  if (tty)
    prog.update = [start = std::chrono::steady_clock::now()](std::size_t done, std::size_t tot,
                                                             const std::string& what) {
      if (tot == 0) return;
      const double el = seconds_since(start);
      const double frac = static_cast<double>(done) / tot;
      const int w = 30, fill = static_cast<int>(frac * w);
      const std::string eta = done > 0 ? fmt_seconds(el / done * (tot - done)) : "?";
      fmt::print(stderr, "\r[{}{}] {:3.0f}% {}/{} ETA {:<7} {:<40.40}", std::string(fill, '#'),
                 std::string(w - fill, '-'), 100 * frac, done, tot, eta, what);
      std::fflush(stderr);
    };
  prog.message = [tty](const std::string& line) {
    if (verbosity >= 1) fmt::print(stderr, "{}{}\n", tty ? "\n" : "", line);
  };
  return prog;
}

std::string ceilings_text(const spmv::bench::Ceilings& c, bool gpu) {
  return fmt::format(
      "STREAM triad {}{}", ceiling_text(c.cpu_triad, c.cpu_triad_min, c.cpu_triad_max, c.cpu_triad_runs),
      gpu ? ", GPU copy " + ceiling_text(c.gpu_copy, c.gpu_copy_min, c.gpu_copy_max, c.gpu_copy_runs) : "");
}

// bench --distributed: the distributed product of each file (default: two stencils made in place),
// per operation and k, on the first backend given (else the default one) and kernel (else auto).
int distributed_bench(const BenchArgs& a) {
  if (a.backends.size() > 1 || a.kernel_names.size() > 1 || !a.formats.empty() || a.precisions.size() > 1 ||
      a.layouts != std::vector<std::string>{"row"})
    throw UsageError("--distributed: one --backend, at most one --kernel, no --format, one --precision, row layout");
  DistributedRequest req;
  req.sources = a.paths.empty() ? std::vector<std::string>{"stencil7:128", "stencil27:100"} : a.paths;
  req.backend = a.backends.empty() ? default_backend() : parse_backend(a.backends[0]);
  req.kernel = a.kernel_names.empty() ? "auto" : a.kernel_names[0];
  req.opt.precision = parse_precision(a.precisions[0]);
  req.opt.products = a.products;
  req.opt.trial = !a.no_trial;
  if (const auto t = a.kernel_settings.given.find("threads"); t != a.kernel_settings.given.end() && !t->second.empty())
    req.opt.threads = static_cast<int>(t->second[0]);
  req.operations.clear();
  for (const std::string& o : a.operations) req.operations.push_back(parse_operation(o));
  if (!a.ks.empty()) req.ks = a.ks;
  req.repeat = a.repeat > 0 ? a.repeat : 10;
  req.min_sample_ms = a.min_sample_ms > 0 ? a.min_sample_ms : 50;
  req.csv = a.out;
  req.cg_iterations = a.cg_iterations;
  return run_distributed(req);
}

int bench_cmd(BenchArgs& a) {
  using namespace spmv::bench;
  if (a.distributed) return distributed_bench(a);
  if (a.cg_iterations > 0) throw UsageError("--cg: with --distributed only");
  const auto t0 = std::chrono::steady_clock::now();
  const MachineInfo m = machine_info();
  const bool quick = a.quick || a.suite == "quick";
  const bool small = is_small_machine(m) && a.suite != "full";
  std::vector<std::string> precision_names;  // for the header line
  SweepConfig cfg = sweep_config(a, m, small, quick, precision_names);
  const SuiteOptions so = suite_options(a, small, quick, *std::max_element(cfg.ks.begin(), cfg.ks.end()));
  const std::vector<MatrixSource> sources = matrix_sources(a, so, quick);
  const bool gpu_wanted = std::find(cfg.backends.begin(), cfg.backends.end(), Backend::Cuda) != cfg.backends.end();
  if (m.gpus == 0)
    note(fmt::format("no CUDA device: CPU only{}", device::cuda_built()
                                                       ? fmt::format(" (CUDA backend built, but no usable "
                                                                     "GPU: {})",
                                                                     device::cuda_unavailable_reason())
                                                       : " (built without CUDA)"));
  const std::size_t per_matrix = count_configs(cfg);
  TimeBudget budget(a.time_budget, a.min_sample_ms <= 0);
  budget.first_estimate(cfg, per_matrix * sources.size(), a.repeat > 0);
  note(
      fmt::format("bench: {} matrices x {} configurations, samples >= {:.0f} ms, {} repeats, re-measured above {:.1f}% "
                  "spread; threads {} ({}); precisions {}; machine {} ({} cores, {:.0f} GiB{}){}",
                  sources.size(), per_matrix, cfg.min_sample_seconds * 1e3, cfg.repeat, 100 * cfg.noise_threshold,
                  fmt::join(cfg.sweep["threads"], ","), pinning_text(m), fmt::join(precision_names, ","), m.hostname,
                  m.cores, m.memory_bytes / (1ull << 30), m.gpus ? ", " + m.device : "",
                  small ? "; small machine: synthetic alikes scaled down" : ""));
  const Ceilings ceil = measure_ceilings(cfg, m);
  note(fmt::format("ceilings: {} ({} threads)", ceilings_text(ceil, gpu_wanted && m.gpus), ceil.cpu_triad_threads));

  const bool tty = isatty(fileno(stderr)) && !a.no_progress && verbosity >= 1;
  Progress prog = progress_display(tty);
  // The CSV gets each matrix's rows as it is done (a run cut short keeps them); the JSON at the end.
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::path(a.out).has_parent_path()) fs::create_directories(fs::path(a.out).parent_path(), ec);
  CsvWriter csv(a.out, m, ceil);
  prog.rows = [&csv](const std::vector<Row>& r) { csv.add(r); };
  const std::vector<Row> rows = run_suite(sources, so, cfg, ceil, budget, t0, prog);
  if (tty) fmt::print(stderr, "\n");
  fs::path json = a.out;
  json.replace_extension(".json");
  write_json(json.string(), rows, m, ceil);

  const bool any_failed = std::any_of(rows.begin(), rows.end(), [](const Row& r) { return r.status == "failed"; });
  if (verbosity == 0) return any_failed ? 1 : 0;
  fmt::print("{}", summary_table(rows));
  fmt::print("machine: {} | {} | {} cores | {} | {} | SIMD {}\n", m.hostname, m.cpu_model, m.cores,
             m.gpus ? m.device : "no CUDA device: CPU only", pinning_text(m), m.simd);
  fmt::print("ceilings: {}\n", ceilings_text(ceil, ceil.gpu_copy > 0));
  fmt::print("wrote {} and {} ({} rows) in {}", a.out, json.string(), rows.size(), fmt_seconds(seconds_since(t0)));
  if (budget.adapts())
    fmt::print(" (time budget {}: samples of {:.0f}-{:.0f} ms)", fmt_seconds(a.time_budget),
               budget.shortest_sample() * 1e3, budget.longest_sample() * 1e3);
  fmt::print("\n");
  return any_failed ? 1 : 0;
}

// How each configuration is timed: samples, their length, the noise threshold, the ceilings, the budget.
void add_timing_options(CLI::App* cmd, BenchArgs* a) {
  cmd->add_option("--repeat", a->repeat, "Timed samples per configuration (default 7, 5 on small machines)")
      ->check(positive_int());
  cmd->add_option("--min-sample-ms", a->min_sample_ms,
                  "Each sample lasts at least this long (default 50, 20 on small machines, 2 with --quick; the "
                  "time budget may shorten them, never below 10; given, the budget leaves it as it is)")
      ->check(positive_real());
  cmd->add_option("--noise-threshold", a->noise_threshold,
                  "A configuration whose samples' coefficient of variation or drift (first half against last half) "
                  "exceeds this fraction is measured again; again above it, its status is noisy and it is left out "
                  "of every best (0: never)")
      ->check(real_in(0.0, 10.0, "[0, 10]"))
      ->capture_default_str();
  cmd->add_option("--ceiling-runs", a->ceiling_runs,
                  "Times the bandwidth ceilings (STREAM triad, GPU copy) are measured: their median is the ceiling, "
                  "min and max its spread")
      ->check(positive_int())
      ->capture_default_str();
  cmd->add_option("--time-budget", a->time_budget,
                  "Seconds the sweep should take: samples are shortened to fit, and past 1.5x the "
                  "remaining matrices are listed as skipped (0: no limit)")
      ->check(non_negative_real())
      ->capture_default_str();
}

// Which matrices the default suite holds and where they come from.
void add_suite_options(CLI::App* cmd, BenchArgs* a) {
  cmd->add_option("--suite", a->suite, "auto (sized to the machine), scaled, full or quick")
      ->check(CLI::IsMember({"auto", "scaled", "full", "quick"}))
      ->capture_default_str();
  cmd->add_flag("--quick", a->quick, "A few small matrices and a tiny sweep (tests)");
  cmd->add_flag("--seed-suite", a->seed_suite,
                "Only the course reports' 30 matrices (seed_suite.tsv), in its order: real where present, else "
                "structure-alikes (marked * in the report)");
  cmd->add_option("--matrices-dir", a->matrices_dir,
                  "Real matrices: every *.mtx[.gz] there, in MANIFEST.tsv's order where it lists them (default: "
                  "$SPMV_SHARED_MATRICES, else ../shared/matrices)");
  cmd->add_option("--suite-file", a->suite_file, "seed_suite.tsv (default ../shared/suite, else built in)");
  auto* cache = cmd->add_option("--cache-dir", a->cache_dir,
                                "Where generated structure-alikes are kept for the next run (default: $SPMV_CACHE_DIR, "
                                "else $XDG_CACHE_HOME/spmv/matrices or ~/.cache/spmv/matrices)")
                    ->capture_default_str();
  cmd->add_flag("--no-cache", a->no_cache, "Generate alikes in memory only, never write them")->excludes(cache);
}

}  // namespace

void add_bench(CLI::App& app, Action& action) {
  auto* cmd =
      app.add_subcommand("bench", "Benchmark every kernel and setting over matrices (default: the built-in suite)");
  auto a = std::make_shared<BenchArgs>();
  cmd->add_option("FILES", a->paths, "Matrix files or folders (default: the default suite)");
  // The sweep's options are spelled as run's (singular) and take comma lists; the plural spellings
  // of earlier versions still work (hidden).
  // Both spellings get the same validator.
  const auto list = [cmd](const std::string& name, const std::string& old, auto& values, const std::string& help,
                          const CLI::Validator& valid) {
    // CLI11 names a hidden option's failure "": the name put back in the message.
    const CLI::Validator named(
        [valid, old](std::string& v) {
          const std::string e = CLI::Validator(valid)(v);
          // Not a ValidationError: CLI11 would put the hidden option's empty name and ": " in front.
          if (!e.empty()) throw CLI::ParseError(old + ": " + e, CLI::ExitCodes::ValidationError);
          return e;
        },
        "");
    cmd->add_option(old, values)->delimiter(',')->group("")->check(named);
    return cmd->add_option(name, values, help)->delimiter(',')->check(valid);
  };
  list("--backend", "--backends", a->backends, "Backends swept (default: serial,omp and cuda where a GPU is usable)",
       CLI::IsMember(backend_names()));
  list("--format", "--formats", a->formats, "Only kernels of these storage formats (default: all)",
       CLI::IsMember(format_names()));
  list("--kernel", "--kernels", a->kernel_names, "Only these kernels (default: all; `spmv kernels` lists them)",
       CLI::IsMember(kernel_names()));
  a->kernel_settings.add_options(cmd, true);
  cmd->add_option("--variant", a->variants,
                  "Variant words swept, a comma list (`spmv kernels` lists each kernel's; auto: its own choice): a "
                  "kernel runs each one it knows, its default where it knows none. 004's SpMM kernels: --k 8 "
                  "--variant auto,elements,subwarp,c1:w32:k8,blocks")
      ->delimiter(',');
  cmd->add_option("--k", a->ks, "Right-hand sides (k > 1: SpMM kernels only; default 1)")
      ->delimiter(',')
      ->check(positive_int());
  cmd->add_option("--min-nnz", a->min_nnz, "Leave out suite matrices with fewer nonzeros")
      ->check(non_negative_int())
      ->capture_default_str();
  list("--layout", "--layouts", a->layouts, "Layouts of X and Y swept when k > 1: row, col",
       CLI::IsMember({"row", "col"}))
      ->capture_default_str();
  list("--precision", "--precisions", a->precisions,
       "Arithmetic swept: double, single, mixed (kernels without one give skipped rows)",
       CLI::IsMember({"double", "single", "mixed"}))
      ->capture_default_str();
  cmd->add_option("--op", a->operations,
                  "Products swept: n (A x), t (A^T x; each kernel's as make_plan gives it: its library's, a scatter "
                  "of A's rows, or A^T made once, counted in convert_s)")
      ->delimiter(',')
      ->check(CLI::IsMember({"n", "t"}))
      ->capture_default_str();
  add_timing_options(cmd, a.get());
  add_output(cmd, a->out, "CSV output (a .json beside it)")->capture_default_str();
  cmd->add_option("--out", a->out)->group("");  // the earlier spelling
  add_suite_options(cmd, a.get());
  cmd->add_flag("--distributed", a->distributed,
                "The product over the MPI ranks it runs on (mpirun -np N spmv bench --distributed [FILES]; default "
                "sources stencil7:128 and stencil27:100, made on each rank): per-rank and total times, "
                "communication share, bytes exchanged, halo, how much of the exchange the local product hides; "
                "CSV rows per rank and for all to -o");
  cmd->add_option("--cg", a->cg_iterations,
                  "With --distributed: also N iterations of conjugate gradients over the ranks (spmv::cg, b = A x, "
                  "from x = 0) on each square matrix (A x, k = 1), timed per iteration with the dot products' "
                  "allreduce")
      ->check(CLI::NonNegativeNumber);
  cmd->add_flag("--no-baselines", a->no_baselines, "Leave out Eigen/cuSPARSE");
  cmd->add_flag("--no-progress", a->no_progress, "No progress bar");
  cmd->add_option("--products", a->products, "Kernel auto: products a plan serves")
      ->check(positive_int())
      ->capture_default_str();
  cmd->add_flag("--no-trial", a->no_trial, "Kernel auto: the model's choice without a timed trial");
  cmd->add_option("--duel-rounds", a->duel_rounds,
                  "Kernel auto: rounds of its interleaved timing against the oracle and the best baseline "
                  "after the sweep (0: none)")
      ->check(non_negative_int())
      ->capture_default_str();
  cmd->callback([&action, a] { action = [a] { return bench_cmd(*a); }; });
}

}  // namespace spmv::cli
