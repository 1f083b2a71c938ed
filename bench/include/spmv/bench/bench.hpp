#pragma once
// The benchmark: every registered kernel over a suite of matrices and a sweep of its parameters,
// each configuration checked against the reference product before it is timed, with measured
// bandwidth ceilings, baselines in the same run, and CSV/JSON/summary output.
#include <spmv/bench/generate.hpp>
#include <spmv/params.hpp>
#include <spmv/plan.hpp>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace spmv::bench {

// ---- the machine ---------------------------------------------------------------------------

struct MachineInfo {
  std::string hostname, cpu_model, compiler, git_commit;
  /// The vector extensions the CPU has and those the build uses (000's `grep avx /proc/cpuinfo`),
  /// e.g. "cpu avx512f avx2 fma, build avx2 fma".
  std::string simd;
  int cores = 1;            // hardware threads the process may use
  double memory_bytes = 0;  // MemTotal
  int gpus = 0;             // usable CUDA devices (0: CPU only)
  std::string device;       // first CUDA device's name, "" without one
  // The OpenMP environment as set when the run started ("" where unset): thread pinning
  // (scripts/bench.sh sets OMP_PROC_BIND=close and OMP_PLACES=cores unless given) and the default
  // thread count.
  std::string omp_proc_bind, omp_places, omp_num_threads;
};
MachineInfo machine_info();
// <= 4 cores or < 32 GiB: the default suite scales its synthetic matrices down.
bool is_small_machine(const MachineInfo& m);

// ---- the suite -----------------------------------------------------------------------------

struct MatrixSource {
  std::string name;
  std::string origin = "real";       // "real", "synthetic" or "synthetic-scaled"
  std::string path;                  // real matrices: the file
  std::optional<gen::GenSpec> spec;  // synthetic ones: what to generate
  double scale = 1.0;                // synthetic-scaled: rows and nnz relative to the original
  std::string kind;                  // the seed suite's description, or the generator kind
};

// Where generated alikes are cached: $SPMV_CACHE_DIR, else $XDG_CACHE_HOME/spmv/matrices, else
// ~/.cache/spmv/matrices, else .cache/matrices (no home).
std::string default_cache_dir();

struct SuiteOptions {
  std::string matrices_dir;                     // "" = $SPMV_SHARED_MATRICES or ../shared/matrices
  std::string seed_suite;                       // "" = gen::default_seed_suite_path() (built-in copy if absent)
  std::string cache_dir = default_cache_dir();  // "" = no cache: generated in memory each time
  bool full = false;                            // full-size alikes (where memory allows)
  offset_t scaled_max_nnz = 2'000'000;          // small machines: alikes shrunk to at most this many nnz
  bool small_machine = false;
  offset_t max_real_nnz = 0;  // 0 = all real matrices; else skip larger ones (--quick)
  offset_t min_nnz = 0;       // skip matrices (real or alike) with fewer nonzeros (--min-nnz)
  int max_matrices = 0;       // 0 = all
  bool seed_only = false;     // the seed suite alone, in its order: real where present, else alikes
  int max_k = 1;              // the sweep's most right-hand sides: a file's vectors count in its memory budget
};
std::string default_matrices_dir();
// Every real matrix in the folder (MANIFEST.tsv's order for those it lists, then the folder's
// other *.mtx[.gz] sorted, each with a line in `notes`), then for each seed-suite matrix not among
// them a generated alike.
std::vector<MatrixSource> default_suite(const SuiteOptions& opt, std::vector<std::string>* notes = nullptr);
// FILES or DIRS from the command line (directories: their *.mtx, *.mtx.gz, *.spmvbin).
std::vector<MatrixSource> sources_from_paths(const std::vector<std::string>& paths);
// Reads or generates (through the cache) the matrix. Throws Error/Unsupported with a message
// (missing file, not enough memory) that the suite reports before carrying on.
Csr load_source(const MatrixSource& src, const SuiteOptions& opt);

// ---- the sweep -----------------------------------------------------------------------------

struct SweepConfig {
  std::vector<Backend> backends{Backend::Serial, Backend::Omp, Backend::Cuda};
  std::vector<std::string> formats;  // empty: every format
  std::vector<std::string> kernels;  // empty: every kernel
  // The values swept of each kernel setting (spmv/params.hpp's names): a kernel that takes a setting
  // runs under each of its values, crossed with its other swept settings; a setting absent here keeps
  // `fixed`'s value.
  std::map<std::string, std::vector<long long>> sweep{{"threads", {1}}};
  // Settings every plan starts from (the CLI's single-valued settings and --csr5-atomic); the swept
  // ones are set over them. Omega reaches the CPU's CSR5 only (CUDA's is a warp), the variant and
  // determinism CUDA's CSR5 only (its "atomic").
  PlanOptions fixed;
  // Variant words swept (KernelSpec::variants; "auto": the kernel's own choice): a kernel runs each
  // one it knows, its default where it knows none of them; empty: every kernel its default.
  std::vector<std::string> variants;
  std::vector<int> ks{1};                         // right-hand sides; k > 1 only for spmm kernels
  std::vector<Layout> layouts{Layout::RowMajor};  // of X and Y, each swept when k > 1
  // Arithmetic swept for every kernel and setting; a kernel that lacks one (KernelSpec::precisions)
  // or a matrix beyond float's range gives a "skipped: ..." row.
  std::vector<Precision> precisions{Precision::Double};
  // The products swept: A x, A^T x or both (a kernel's A^T as make_plan gives it: its library's, a
  // scatter, or A^T made once, counted in convert_s).
  std::vector<Operation> operations{Operation::NoTranspose};
  bool baselines = true;             // include baseline kernels (Eigen, cuSPARSE)
  int repeat = 7;                    // samples per configuration (their statistics reported)
  double min_sample_seconds = 0.05;  // products per sample chosen so a sample lasts this long
  // A configuration whose samples' coefficient of variation or drift (SampleStats) exceeds this is
  // measured again; noisy again, its row's status is "noisy" and it is left out of every best and
  // ratio. 0: never re-measured or flagged.
  double noise_threshold = 0.05;
  // The bandwidth ceilings are measured this many times: their median is the ceiling, the min and
  // max its spread.
  int ceiling_runs = 5;
  double max_config_seconds = 3.0;  // cap on timed work per configuration
  std::string x_spec = "random:7";
  long long products = 100;  // the planner's (kernel auto) expected products
  bool trial = true;         // false: auto takes its model's first choice
  // Rounds of the interleaved timing of auto against the oracle and the best baseline (0: none).
  // Each batch lasts a fifth of min_sample_seconds (at least 1 ms).
  int duel_rounds = 11;
  // The kernels to enumerate; nullptr = the registry (kernels()). Tests pass a private list so
  // their fake kernels never reach the global registry other tests iterate.
  const std::vector<KernelSpec>* registry = nullptr;
};
// The reports' sweeps sized to the machine: threads 1..2*cores (small: {1, cores, 2*cores}),
// hack 16/32/64, block sizes 128..1024 by 128 where a GPU exists. quick: a tiny sweep for tests.
SweepConfig default_sweep(const MachineInfo& m, bool small, bool quick);

// ---- measurements --------------------------------------------------------------------------

struct Ceilings {
  double cpu_triad = 0;  // bytes/s, STREAM triad with the sweep's largest thread count (median of the runs)
  int cpu_triad_threads = 0;
  double gpu_copy = 0;  // bytes/s, device-to-device copy (median of the runs); 0 without GPU
  double gpu_peak = 0;  // bytes/s, the device's theoretical peak (memory clock x bus width x 2)
  // The spread: the lowest and highest run and how many (0: not measured).
  double cpu_triad_min = 0, cpu_triad_max = 0;
  int cpu_triad_runs = 0;
  double gpu_copy_min = 0, gpu_copy_max = 0;
  int gpu_copy_runs = 0;
  // bytes/s between pinned host memory and the device, each way (0 without GPU): what host vectors
  // cross the bus at.
  double gpu_h2d = 0, gpu_d2h = 0;
};
// Each ceiling measured cfg.ceiling_runs times (at least 1).
Ceilings measure_ceilings(const SweepConfig& cfg, const MachineInfo& m);

// One row per (matrix, kernel, setting).
struct Row {
  std::string matrix, origin, kind;
  double scale = 1;
  index_t rows = 0, cols = 0;
  offset_t nnz = 0;
  double nnz_row_mean = 0, nnz_row_std = 0;
  offset_t nnz_row_min = 0, nnz_row_max = 0;  ///< shortest and longest row (0 where not read)
  std::string backend, kernel, format;
  bool baseline = false;
  // threads: those the product ran on (Plan::threads_used: fewer than asked where the kernel fell
  // back, its detail says why); threads_requested: the sweep's setting. 0: not a parameter of
  // this kernel (GPU kernels, kernels without a thread count).
  int threads = 0, threads_requested = 0;
  int block_size = 0, hack = 0, k = 1;  // 0: not a parameter of this kernel
  std::string layout = "row";           // of X and Y: "row" or "col" (k = 1: "row")
  // "double", "single" or "mixed" (to_string(Precision)). Bests, speedups (against the serial CSR of
  // the same precision) and auto's comparisons never mix precisions.
  std::string precision = "double";
  // "n": A x, "t": A^T x (to_string(Operation)); rows, cols and nnz stay A's. Bests and auto's
  // comparisons never mix operations.
  std::string operation = "n";
  offset_t nz_per_block = 0;
  std::string detail;
  std::string settings;   // the kernel's settings that have no column of their own, "subwarp=4" style ("" for none)
  std::string chosen;     // kernel "auto": what the planner chose ("cuda/ell bs=256")
  double planning_s = 0;  // kernel "auto": analysis + trial + discarded candidates (in setup_s)
  // "ok", "failed" (check), "noisy" (timing spread above the threshold twice: timed, but left out of
  // every best and ratio), "skipped: <reason>", "error: <reason>"
  std::string status = "ok";
  std::string check;  // "passed", "failed" or "" (not run)
  double max_rel_error = 0, mean_rel_error = 0;
  double convert_s = 0, setup_s = 0;
  double time_median_s = 0, time_min_s = 0;  // per product
  int products_per_sample = 0, samples = 0;
  // The samples' spread (SampleStats; of the last measurement where there were two): mean and max
  // per product, coefficient of variation, drift (first half against last half).
  double time_mean_s = 0, time_max_s = 0, time_cv = 0, time_drift = 0;
  int measurements = 0;        // 1, or 2 where the first was noisy and the configuration was measured again
  double noise_threshold = 0;  // SweepConfig::noise_threshold of the run
  double gflops = 0, speedup = 0, efficiency = 0;  // speedup vs serial CSR; efficiency CPU only
  double bandwidth_gbs = 0, bandwidth_share = 0, ceiling_gbs = 0;
  offset_t bytes_per_product = 0, stored_entries = 0;
  // The iterative scenario of the CSR5 paper: conversion + setup + 50 or 500 products.
  double iter50_s = 0, iter500_s = 0;
  // GPU rows: what a user's loop pays per product through multiply() (time_multiply_loops, medians),
  // on host vectors (x and y cross the bus every call: pageable, staged; and pinned) and on device
  // vectors, and the two copies of x and y over the bus alone; 0: not measured.
  double loop_host_s = 0, loop_pinned_s = 0, loop_device_s = 0, loop_copies_s = 0;
  // Kernel "auto" (per backend and k; the most threads where several): the oracle's and the best
  // baseline's time per product over auto's, timed interleaved with it after the sweep (median of
  // cfg.duel_rounds rounds); 0: not measured. Which rows are the oracle and the baseline: see
  // summary_table.
  double duel_oracle = 0, duel_baseline = 0;

  bool usable() const { return status == "ok" && check == "passed"; }
};

// The documented CSV columns, in order (the JSON uses the same keys).
const std::vector<std::string>& csv_columns();

struct Progress {
  // A progress bar (may be empty).
  std::function<void(std::size_t done, std::size_t total, const std::string& what)> update;
  // A line for the user: which matrix is loaded (when there is no bar), what was skipped or failed.
  std::function<void(const std::string& line)> message;
  // The rows of a matrix as soon as it is done (or skipped), for output that keeps what was
  // measured when a run is cut short.
  std::function<void(const std::vector<Row>& rows)> rows;
};

// Number of configurations bench_matrix will run for a matrix (for progress/ETA).
std::size_t count_configs(const SweepConfig& cfg);
// Variant words ("elements", "c1:w32:k8") as the kernel reads them; nothing where it has no such
// words (SweepConfig::variants: the kernels that run them).
std::optional<VariantChoice> read_variant(const KernelSpec& k, const std::string& words);
// Benchmarks one matrix: serial CSR first (the speedup baseline), then every selected kernel
// and setting. Failures never abort: they become rows.
std::vector<Row> bench_matrix(const CsrView& a, const MatrixSource& src, const SweepConfig& cfg, const Ceilings& ceil,
                              const Progress& progress = {}, std::size_t done_before = 0, std::size_t total = 0);
// A row for a matrix that could not be loaded or generated.
Row unavailable_row(const MatrixSource& src, const std::string& status);

class TimeBudget;  // spmv/bench/budget.hpp
// The sweep over a suite: each source loaded (or generated through the cache), then bench_matrix,
// with the budget consulted before each (`started`: when the run began, which the budget counts
// from). A source that cannot be loaded, or whose benchmark throws, becomes a row and the run goes
// on; past the budget the rest are listed as skipped.
std::vector<Row> run_suite(const std::vector<MatrixSource>& sources, const SuiteOptions& so, SweepConfig& cfg,
                           const Ceilings& ceil, TimeBudget& budget, std::chrono::steady_clock::time_point started,
                           const Progress& progress = {});

// ---- output --------------------------------------------------------------------------------

// The CSV written as the rows come: the header when opened, each batch of rows appended and flushed
// (m and c must outlive the writer).
class CsvWriter {
 public:
  CsvWriter(const std::string& path, const MachineInfo& m, const Ceilings& c);
  ~CsvWriter();
  void add(const std::vector<Row>& rows);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};
void write_csv(const std::string& path, const std::vector<Row>& rows, const MachineInfo& m, const Ceilings& c);
void write_json(const std::string& path, const std::vector<Row>& rows, const MachineInfo& m, const Ceilings& c);
// Per matrix (and precision, where rows have several): the best CPU and best GPU kernel (usable
// rows only, auto left out), GFLOPS, share of bandwidth, ratio to the best baseline on the same
// side; under it, per backend, k and precision with an `auto` row, the planner's choice and time
// against the oracle (our fastest usable row of that backend, k and precision) and the best
// baseline, and planning + conversion in products; with several precisions, the best GFLOPS of
// single and mixed over double's per side. Then per backend and k (and precision): geometric
// mean, worst and count of low ratios. Plain text.
std::string summary_table(const std::vector<Row>& rows);

// ---- report --------------------------------------------------------------------------------

// scripts/report.py: $SPMV_REPORT_SCRIPT, beside the executable (../scripts, ./scripts), or the
// source tree compiled in. "" when none is found.
std::string find_report_script(const std::string& exe_path);
// The Python that has matplotlib: $SPMV_PYTHON, else /usr/bin/python3 (Debian's), else python3.
std::string find_python();

}  // namespace spmv::bench
