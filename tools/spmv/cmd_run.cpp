#include <spmv/device.hpp>
#include <spmv/formats/limits.hpp>
#include <spmv/formats/transpose.hpp>
#include <spmv/io.hpp>
#include <spmv/plan.hpp>
#include <spmv/timing.hpp>
#include <spmv/reference.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fmt/format.h>

#include "commands.hpp"

namespace spmv::cli {

namespace {

struct RunArgs {
  std::string file, format, backend, kernel, x = "random:42", output, layout = "row", variant = "auto",
                                             precision = "double";
  int repeat = 10, k = 1;
  double min_sample_ms = 10;
  bool json = false;
  KernelSettings kernel_settings;
  long long products = 100;
  std::uint64_t memory_budget = 0;
  bool no_trial = false;
  bool transpose = false;
  bool distributed = false;
  std::string reorder = "auto";
};

// n x k values from one layout to the other: column-major (Matrix Market arrays) to row-major when
// to_rows, else back.
std::vector<double> relayout(const std::vector<double>& v, std::size_t n, std::size_t k, bool to_rows) {
  std::vector<double> out(v.size());
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < k; ++j) {
      if (to_rows)
        out[i * k + j] = v[j * n + i];
      else
        out[j * n + i] = v[i * k + j];
    }
  return out;
}

// The backend and kernel asked for, checked before the file is read: --threads without --backend
// asks for the CPU; otherwise the fastest backend present and the planner.
struct Target {
  Backend backend;
  const KernelSpec* spec;
  Precision precision;
};
Target resolve_target(const RunArgs& args) {
  const bool threads_given = args.kernel_settings.value("threads", 0) > 0;
  const Backend backend = !args.backend.empty() ? parse_backend(args.backend)
                          : threads_given       ? Backend::Omp
                                                : default_backend();
  if (backend == Backend::Cuda && device::cuda_device_count() == 0)
    throw Unsupported(fmt::format("--backend cuda: no usable GPU ({}); --backend omp runs on the CPU",
                                  device::cuda_unavailable_reason()));
  const std::string kernel = !args.kernel.empty() ? args.kernel : !args.format.empty() ? args.format : "auto";
  if (!args.kernel.empty() && !args.format.empty())
    throw UsageError("--kernel and --format both name the kernel: give one");
  const KernelSpec* found = find_kernel(backend, kernel);
  if (!found) {
    try {
      get_kernel(backend, kernel);  // its message lists the backend's kernels
    } catch (const Error& e) {
      throw UsageError(fmt::format("--{} {}: {}", args.kernel.empty() ? "format" : "kernel", kernel, e.what()));
    }
  }
  const Precision precision = parse_precision(args.precision);
  if (!supports(*found, precision)) {
    // With the library's own message (which names the kernels that have the precision): make_plan
    // refuses before it looks at the matrix. Bad usage, as a kernel the backend lacks is.
    try {
      make_plan(Csr{}, backend, found->name, PlanOptions{.precision = precision});
    } catch (const Unsupported& e) {
      throw UsageError(fmt::format("--precision {}: {}", args.precision, e.what()));
    }
  }
  if (args.kernel_settings.csr5_atomic && args.kernel != "csr5")
    throw UsageError("--csr5-atomic is a variant of --kernel csr5 (on cuda)");
  return {backend, found, precision};
}

// x as the product takes it: --x's file (k = 1: any array of the matrix's columns; k > 1: X as
// cols x k, column-major as in the file) or its generator.
std::vector<double> input_x(const RunArgs& args, const CsrView& a, bool rows_first, double memory_budget) {
  const std::size_t nx = static_cast<std::size_t>(a.cols) * args.k;
  if (!std::filesystem::exists(args.x)) return make_vector(args.x, nx);
  io::DenseMatrix xf = io::read_dense_matrix(args.x, {.memory_budget_bytes = memory_budget});
  if (args.k == 1 && xf.values.size() != nx)
    throw Error(fmt::format("{}: vector has {} values, the matrix needs {}", args.x, xf.values.size(), nx));
  if (args.k > 1 && (xf.rows != a.cols || xf.cols != args.k))
    throw Error(fmt::format("{}: a {} x {} array; X must be {} x {} (the matrix's columns x --k)", args.x, xf.rows,
                            xf.cols, a.cols, args.k));
  return rows_first ? relayout(xf.values, static_cast<std::size_t>(a.cols), static_cast<std::size_t>(args.k), true)
                    : std::move(xf.values);
}

// What run measured, for print(): the plan, its check and its timings.
struct Measured {
  const Plan& plan;
  const CheckResult& check;
  const ProductTiming& product;
  const LoopTiming& loops;
};

KeyValues result_lines(const RunArgs& args, const Target& t, const CsrView& a, const PlanOptions& opt,
                       const Measured& m) {
  const Plan& plan = m.plan;
  const CheckResult& chk = m.check;
  const double med = m.product.median_s;
  const double flops = 2.0 * static_cast<double>(a.nnz()) * args.k;
  const bool threads_given = args.kernel_settings.value("threads", 0) > 0;
  KeyValues out;
  out.add("matrix", args.file);
  out.add("rows", static_cast<long long>(a.rows));
  out.add("cols", static_cast<long long>(a.cols));
  out.add("nnz", static_cast<long long>(a.nnz()));
  out.add("backend",
          to_string(t.backend) + std::string(args.backend.empty() && !threads_given ? " (the fastest present)" : ""));
  out.add("kernel", t.spec->name);
  out.add("format", t.spec->format);
  if (!plan.chosen.empty()) {
    out.add("plan", plan.describe());
    out.add("planning_s", plan.planning_seconds);
  } else if (!plan.detail.empty()) {
    out.add("detail", plan.detail);
  }
  // The threads the product runs on (fewer than asked where the kernel fell back: its detail says
  // why), and those asked for (the planner's choice under auto) where they differ.
  const int requested = plan.chosen_threads            ? plan.chosen_threads
                        : t.backend == Backend::Cuda   ? 0
                        : t.backend == Backend::Serial ? 1
                                                       : plan_threads(opt);
  const int used = t.backend == Backend::Cuda ? 0 : plan.threads_used();
  const int threads = used > 0 ? used : requested;
  out.add("precision", to_string(plan.precision));
  out.add("threads", threads);
  if (threads != requested) out.add("threads_requested", requested);
  out.add("k", args.k);
  if (opt.operation == Operation::Transpose) out.add("operation", "A^T (rows and cols above are A^T's)");
  const bool x_file = std::filesystem::exists(args.x);
  out.add("x", x_file ? args.x : args.x == "ones" ? "ones" : args.x + " (uniform in [-1, 1))");
  out.add("repeat", m.product.samples);
  out.add("products_per_sample", m.product.products_per_sample);
  out.add("convert_s", plan.convert_seconds);
  out.add("setup_s", plan.setup_seconds);
  out.add("time_s", med);  // the median
  out.add("time_min_s", m.product.min_s);
  out.add("time_mean_s", m.product.mean_s);
  out.add("multiply_host_s", m.loops.host.median_s);  // a loop's multiply() on host vectors, per call
  if (plan.on_device()) {
    out.add("multiply_pinned_s", m.loops.pinned.median_s);  // ... on the same host vectors pinned
    out.add("multiply_device_s", m.loops.device.median_s);  // ... on device vectors
    out.add("host_copies_s", m.loops.copies_s);             // x to the device and y back over the bus alone
  }
  out.add("time_cv", m.product.cv, 3);        // standard deviation / mean of the samples
  out.add("time_drift", m.product.drift, 3);  // first half of the samples against the last half
  out.add("gflops", med > 0 ? flops / med * 1e-9 : 0.0, 5);
  out.add("bandwidth_gbs", med > 0 ? plan.bytes_per_product / med * 1e-9 : 0.0, 5);
  // What the plan's format reads and writes a product (matrix, x, y), per nonzero: 12 and more for
  // plain CSR in double, fewer for the compact formats.
  out.add("bytes_per_nonzero",
          a.nnz() > 0 ? static_cast<double>(plan.bytes_per_product) / static_cast<double>(a.nnz()) / opt.k : 0.0, 4);
  // What decides pass/fail: the largest error of a component over its own bound, which is the
  // rounding any summation order may make in that row (<= 1 passes).
  out.add("check_error", chk.max_scaled_error, 3);
  out.add("check", chk.passed ? "passed" : "FAILED");
  out.add("max_rel_error", chk.max_rel_error, 4);
  out.add("mean_rel_error", chk.mean_rel_error, 4);
  if (chk.passed && chk.overflows) out.add("check_note", chk.message);
  if (verbosity >= 2) {
    out.add(
        "check_measure",
        "check_error = max over components of |y_i - ref_i| / tol_i, tol_i = 2 (len_i + 1) eps sum_j |a_ij x_j| "
        "(the reference summed in long double with compensation); passes at <= 1. max_rel_error = max |y_i - ref_i| "
        "/ |ref_i| is large where a row's terms cancel and decides nothing.");
  }
  return out;
}

PlanOptions plan_options(const RunArgs& args, const Target& target) {
  PlanOptions opt;
  opt.k = args.k;
  opt.kernel.variant = args.variant;
  args.kernel_settings.apply(opt);
  opt.layout = args.layout == "col" ? Layout::ColMajor : Layout::RowMajor;
  opt.products = args.products;
  opt.trial = !args.no_trial;
  opt.precision = target.precision;
  opt.operation = args.transpose ? Operation::Transpose : Operation::NoTranspose;
  opt.reorder = parse_reorder(args.reorder);
  return opt;
}

DistributedRequest distributed_request(const RunArgs& args, const Target& target) {
  if (args.reorder == "rcm") throw UsageError("--distributed takes no --reorder (not distributed yet)");
  if (args.x != "random:42" || args.json || args.layout != "row" || !args.output.empty())
    throw UsageError(
        "--distributed takes neither --x, --json, --layout col nor -o (x is random:42, X row-major; "
        "spmv bench --distributed -o FILE writes CSV)");
  DistributedRequest req;
  req.sources = {args.file};
  req.backend = target.backend;
  req.kernel = target.spec->name;
  req.opt = plan_options(args, target);
  req.operations = {req.opt.operation};
  req.ks = {args.k};
  req.repeat = args.repeat;
  req.min_sample_ms = args.min_sample_ms;
  return req;
}

int run(const RunArgs& args) {
  const Target target = resolve_target(args);  // fails fast, before the file is read
  if (args.distributed) return run_distributed(distributed_request(args, target));
  // What run holds beside the matrix counts in the memory budget at the file's size line, so that
  // a matrix of mostly empty rows is refused there rather than after the reader.
  const auto [per_row, per_col] = checked_product_memory(args.k);
  io::ReadOptions ro;
  ro.memory_budget_bytes = static_cast<double>(args.memory_budget);
  ro.extra_bytes_per_row = per_row;
  ro.extra_bytes_per_col = per_col;
  ro.extra_what = args.k == 1 ? "x, y, the reference and the plan's copies"
                              : fmt::format("X and Y at --k {}, the reference and the plan's copies", args.k);
  // Single and mixed plans store the values in float: the file is read straight into float (a
  // value beyond float's range refused with its line), never into a double copy first.
  const bool in_double = target.precision == Precision::Double;
  Csr a64;
  CsrF32 a32;
  if (in_double)
    a64 = io::load_csr(args.file, ro);
  else
    a32 = io::load_f32(args.file, ro).matrix;
  const CsrView stored = in_double ? a64.view() : a32.view();
  // --transpose: the plan multiplies by A^T (made inside it); the reference and the vectors' sizes
  // follow A^T, a copy made here for the check.
  const Transposed t = args.transpose ? transpose_as_stored(stored) : Transposed{};
  const CsrView a = args.transpose ? t.view() : stored;

  const PlanOptions opt = plan_options(args, target);

  check_input_memory(fmt::format("--k {}: X ({} x {}) and Y ({} x {}), the reference and the plan's copies", args.k,
                                 a.cols, args.k, a.rows, args.k),
                     per_col * static_cast<double>(a.cols) + per_row * static_cast<double>(a.rows),
                     ro.memory_budget_bytes);
  const bool rows_first = opt.layout == Layout::RowMajor && args.k > 1;
  std::vector<double> x = input_x(args, a, rows_first, ro.memory_budget_bytes);

  auto plan = make_plan(stored, target.backend, target.spec->name, opt);
  // Checked before it is timed (a single plan computes on float x: x is rounded once, and the
  // reference sees the rounded x, so that the check measures the product's error alone).
  const CheckedProduct product = checked_product(*plan, a, x, args.k, opt.layout);
  // Each timed sample is a batch of back-to-back products lasting at least --min-sample-ms.
  const ProductTiming pt = time_products(*plan, args.min_sample_ms * 1e-3, args.repeat);
  // What a loop of multiply() calls pays per product: on host vectors (a GPU plan copies x and y
  // over the bus in every call) and, on the GPU, on device vectors.
  const LoopTiming loops =
      time_multiply_loops(*plan, x.size(), product.y.size(), args.min_sample_ms * 1e-3, std::min(args.repeat, 5));

  if (verbosity >= 1) result_lines(args, target, a, opt, {*plan, product.check, pt, loops}).print(args.json);
  if (verbosity >= 2 && !args.json && args.x == "ones")
    fmt::print(stderr,
               "note: x of all ones: rows whose entries cancel have tiny results and large relative errors; "
               "check_error measures each against its row's bound\n");
  if (verbosity >= 1 && pt.noisy(0.05))
    fmt::print(stderr,
               "note: the {} samples spread (time_cv {:.1f}%, time_drift {:.1f}%; above 5%): the machine is busy "
               "or the clocks change; the median may not repeat\n",
               pt.samples, 100 * pt.cv, 100 * pt.drift);
  if (!args.output.empty()) {  // Y as rows x k, column-major as Matrix Market arrays are
    if (args.k == 1)
      io::write_dense_vector(args.output, product.y);
    else
      io::write_dense_matrix(
          args.output,
          rows_first ? relayout(product.y, static_cast<std::size_t>(a.rows), static_cast<std::size_t>(args.k), false)
                     : product.y,
          a.rows, args.k);
  }
  if (!product.check.passed) {
    fmt::print(stderr, "{}: check against the reference failed: {}\n", args.file, product.check.message);
    return 1;
  }
  return 0;
}

}  // namespace

void add_run(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand("run", "Compute y = A*x with one kernel, check it and time it");
  auto args = std::make_shared<RunArgs>();
  cmd->add_option("FILE", args->file, "Matrix Market file (.mtx, .mtx.gz) or binary cache")->required();
  cmd->add_option("--backend", args->backend,
                  "Where it runs (default: cuda where a GPU is usable, else omp; omp where a thread count is given)")
      ->check(CLI::IsMember(backend_names()));
  cmd->add_option("--kernel", args->kernel, "Kernel (default: auto, the planner); `spmv kernels` lists each backend's")
      ->check(CLI::IsMember(kernel_names()));
  cmd->add_option("--format", args->format, "Instead of --kernel: the main kernel of this storage format")
      ->check(CLI::IsMember(format_names()));
  cmd->add_option("--products", args->products,
                  "auto: products the plan will serve (a conversion must pay back within them)")
      ->check(positive_int())
      ->capture_default_str();
  cmd->add_flag("--no-trial", args->no_trial, "auto: the model's choice without a timed trial (deterministic)");
  cmd->add_option("--x", args->x,
                  "x: ones, random (seed 42), random:SEED or a Matrix Market array file (--k > 1: cols x k)")
      ->capture_default_str();
  add_output(cmd, args->output,
             "Write y to this file as a Matrix Market array (--k > 1: rows x k); *.gz gzip-compressed")
      ->check([](const std::string& path) -> std::string {
        return binary_name(path) ? "y is written as a Matrix Market array (.mtx, .mtx.gz); a binary cache (.spmvbin) "
                                   "holds a sparse matrix"
                                 : "";
      });
  cmd->add_option("--repeat", args->repeat, "Timed samples (median, min, mean and their spread reported)")
      ->check(positive_int())
      ->capture_default_str();
  cmd->add_option("--min-sample-ms", args->min_sample_ms,
                  "Each sample lasts at least this long (back-to-back products)")
      ->check(positive_real())
      ->capture_default_str();
  args->kernel_settings.add_options(cmd, false);
  cmd->add_option(
         "--variant", args->variant,
         "The kernel's choices as words joined by ':', e.g. balanced, dynamic:scalar, c4:w8 (spmv kernels lists them)")
      ->capture_default_str();
  cmd->add_flag("--transpose", args->transpose,
                "y = A^T x: the plan makes A^T once (counted in convert_s) and runs the kernel on it; x has the "
                "matrix's rows, y its columns");
  cmd->add_option("--reorder", args->reorder,
                  "Renumber a square matrix's rows and columns once (rcm: reverse Cuthill-McKee) and multiply in that "
                  "numbering; x and y stay in the file's (permuted within each product; time_s is the kernel's alone, "
                  "multiply_*_s include the permutations). auto: the planner (--kernel auto) renumbers where the "
                  "--products expected repay it; none: never")
      ->check(CLI::IsMember({"none", "rcm", "auto"}))
      ->capture_default_str();
  cmd->add_flag("--distributed", args->distributed,
                "Over the MPI ranks it runs on (mpirun -np N spmv run FILE --distributed): rows split in blocks "
                "balanced by nonzeros, each rank's blocks planned for its backend (cuda: a GPU per rank), the halo "
                "exchanged during the local product; per-rank times, communication share, bytes exchanged, halo. "
                "FILE may be stencil7:N or stencil27:N (an N^3 grid's stencil) or random:N:D (an N-row random graph, D "
                "entries a row), made on each rank without a file");
  cmd->add_option("--k", args->k, "Right-hand sides (SpMM when > 1)")->check(positive_int())->capture_default_str();
  cmd->add_option("--layout", args->layout, "Layout of X and Y when k > 1")
      ->check(CLI::IsMember({"row", "col"}))
      ->capture_default_str();
  cmd->add_option("--precision", args->precision,
                  "Arithmetic: double, single (float values, x, y and sums) or mixed (float values; double x, y "
                  "and sums)")
      ->check(CLI::IsMember({"double", "single", "mixed"}))
      ->capture_default_str();
  cmd->add_flag("--json", args->json, "Print one JSON object instead of key: value lines");
  add_memory_budget(cmd, args->memory_budget);
  cmd->callback([&action, args] { action = [args] { return run(*args); }; });
}

}  // namespace spmv::cli
