// Measuring one matrix: every selected kernel x setting, checked first, then timed.
#include <spmv/bench/bench.hpp>
#include <spmv/formats/transpose.hpp>
#include <spmv/reference.hpp>
#include <spmv/device.hpp>
#include <spmv/params.hpp>
#include <spmv/stats.hpp>

#include "auto_compare.hpp"
#include <spmv/timing.hpp>

#include <algorithm>
#include <chrono>
#include <optional>
#include <cmath>
#include <fmt/format.h>
#include <map>

namespace spmv::bench {

namespace {

bool selected(const KernelSpec& k, const SweepConfig& cfg) {
  if (std::find(cfg.backends.begin(), cfg.backends.end(), k.backend) == cfg.backends.end()) return false;
  if (!cfg.formats.empty() && std::find(cfg.formats.begin(), cfg.formats.end(), k.format) == cfg.formats.end())
    return false;
  if (!cfg.kernels.empty() && std::find(cfg.kernels.begin(), cfg.kernels.end(), k.name) == cfg.kernels.end())
    return false;
  if (k.baseline && !cfg.baselines) return false;
  if (k.backend == Backend::Cuda && device::cuda_device_count() == 0) return false;
  return true;
}

const std::vector<KernelSpec>& registry(const SweepConfig& cfg) { return cfg.registry ? *cfg.registry : kernels(); }

// The speedup reference: the serial CSR loop (the one kernel every build has).
const KernelSpec* serial_csr(const SweepConfig& cfg) {
  for (const KernelSpec& k : registry(cfg))
    if (k.backend == Backend::Serial && k.name == "csr") return &k;
  return nullptr;
}

// Every PlanOptions a kernel runs under: the sweep's values of each setting it takes, crossed, over
// the fixed settings.
std::vector<PlanOptions> settings(const KernelSpec& k, const SweepConfig& cfg, int rhs) {
  PlanOptions base = cfg.fixed;
  if (k.backend == Backend::Cuda) base.kernel.csr5_omega = 0;
  if (k.backend != Backend::Cuda || k.name != "csr5") {
    base.kernel.variant = KernelSettings{}.variant;
    base.kernel.deterministic = KernelSettings{}.deterministic;
  }
  base.k = rhs;
  base.products = cfg.products;
  base.trial = cfg.trial;
  std::vector<PlanOptions> v{base};
  for (const ParamSpec& p : kernel_params()) {
    const auto swept = cfg.sweep.find(p.name);
    if (!p.set || swept == cfg.sweep.end() || swept->second.empty() || !takes(k, p.name)) continue;
    std::vector<PlanOptions> crossed;
    for (const PlanOptions& o : v)
      for (const long long value : swept->second) {
        PlanOptions c = o;
        p.set(c, value);
        crossed.push_back(c);
      }
    v = std::move(crossed);
  }
  return v;
}

// The sweep's variants (cfg.variants) the kernel knows, each a full word list it accepts; its
// default ("auto") where it knows none of them or none were given. With one right-hand side, words
// only SpMM reads (VariantGroup::spmm_only) would repeat the default's row: left out.
std::vector<std::string> variants_of(const KernelSpec& k, const SweepConfig& cfg, int rhs) {
  std::vector<std::string> v;
  for (const std::string& words : cfg.variants) {
    if (std::find(v.begin(), v.end(), words) != v.end()) continue;
    if (words == "auto") {
      v.push_back(words);
      continue;
    }
    const std::optional<VariantChoice> c = read_variant(k, words);
    if (c && (rhs > 1 || std::any_of(k.variants.begin(), k.variants.end(),
                                     [&](const VariantGroup& g) { return !g.spmm_only && c->given(g.name); })))
      v.push_back(words);
  }
  if (v.empty()) v.push_back(KernelSettings{}.variant);
  return v;
}

// The settings a kernel takes that have no CSV column of their own and differ from the default,
// "subwarp=4 csr5_sigma=8 variant=elements" style; CUDA CSR5's "atomic" variant as csr5_atomic.
std::string settings_text(const KernelSpec& k, const PlanOptions& o) {
  static const std::vector<std::string> columns = {"threads", "block_size", "hack", "nz_per_block"};
  std::string s;
  for (const ParamSpec& p : kernel_params())
    if (p.kind == ParamSpec::Kind::Integer && takes(k, p.name) && p.get(o) != p.get(PlanOptions{}) &&
        std::find(columns.begin(), columns.end(), p.name) == columns.end())
      s += fmt::format("{}{}={}", s.empty() ? "" : " ", p.name, p.get(o));
  if (k.backend == Backend::Cuda && k.name == "csr5" && o.kernel.variant == "atomic")
    s += (s.empty() ? "" : " ") + std::string("csr5_atomic");
  else if (o.kernel.variant != KernelSettings{}.variant)
    s += (s.empty() ? "" : " ") + std::string("variant=") + o.kernel.variant;
  return s;
}

// One number per (k, layout, precision, operation): the keys of the per-product maps below (x,
// reference, serial time): each precision has its own x (rounded to float for single) and speedup
// reference, each operation its own x (A^T x: A's rows long) and reference.
int rhs_key(const PlanOptions& o) {
  const int shape =
      2 * (2 * o.k + (o.k > 1 && o.layout == Layout::ColMajor ? 1 : 0)) + (o.operation == Operation::Transpose ? 1 : 0);
  return 3 * shape + static_cast<int>(o.precision);
}

struct Job {
  const KernelSpec* spec;
  PlanOptions opt;
};

std::vector<Job> jobs(const SweepConfig& cfg) {
  std::vector<Job> v;
  const KernelSpec* base = serial_csr(cfg);
  // Every precision is swept like k and the layout: a kernel without it is still a job (its row
  // says it was skipped and why), and the serial CSR of each precision comes first.
  for (const Operation op : cfg.operations)
    for (int rhs : cfg.ks)
      for (const Layout layout : rhs == 1 ? std::vector<Layout>{Layout::RowMajor} : cfg.layouts)
        for (const Precision p : cfg.precisions) {
          PlanOptions bo;
          bo.k = rhs;
          bo.layout = layout;
          bo.precision = p;
          bo.operation = op;
          if (base && (rhs == 1 || base->spmm)) v.push_back({base, bo});
          for (const KernelSpec& k : registry(cfg)) {
            if (&k == base || !selected(k, cfg) || (rhs > 1 && !k.spmm) || (rhs == 1 && k.for_spmm)) continue;
            const bool given = !cfg.variants.empty();
            for (const std::string& words : variants_of(k, cfg, rhs))
              for (PlanOptions o : settings(k, cfg, rhs)) {
                o.layout = layout;
                o.precision = p;
                o.operation = op;
                if (given && words != KernelSettings{}.variant)
                  o.kernel.variant = words;  // auto: as settings() left it
                v.push_back({&k, o});
              }
          }
        }
  return v;
}

// make_plan's checks (validate_plan) on a spec that may come from a private list; a float
// precision's check of the values is made once per matrix (`float_range`: "" when they fit, else
// the reason).
void validate(const KernelSpec& k, const PlanOptions& opt, const SweepConfig& cfg, const CsrView& a,
              std::optional<std::string>& float_range) {
  validate_plan(k, a, opt, registry(cfg), false);
  if (opt.precision == Precision::Double || a.values_in_float()) return;
  if (!float_range) {
    try {
      require_float_range(a);
      float_range = "";
    } catch (const Unsupported& e) {
      float_range = e.what();
    }
  }
  if (!float_range->empty()) throw Unsupported(*float_range);
}

// Back-to-back products for `seconds` of wall time, nothing measured.
void run_for(Plan& plan, double seconds) {
  const auto w0 = std::chrono::steady_clock::now();
  while (seconds_since(w0) < seconds) plan.run(1);
}

// 50 ms of products of the backend's plain CSR kernel (threads and k as in opt), to wake the device
// or the cores; nothing is measured, and a backend that cannot run it is left as it is.
void warm_up(const CsrView& a, Backend b, const PlanOptions& opt) {
  const KernelSpec* csr = find_kernel(b, "csr");
  if (!csr || a.nnz() == 0) return;
  PlanOptions o;
  o.threads = opt.threads;
  o.k = opt.k;
  o.layout = opt.layout;
  try {
    run_for(*csr->make(a, o), 0.05);
  } catch (const std::exception&) {}
}

// Auto's row `ai` against its oracle and best baseline (auto_compare.hpp), timed interleaved with
// auto's kept plan; the ratios go into the auto row. The oracle and baseline plans are made again
// from their jobs. A plan that cannot be made again leaves its ratio at 0 (not measured).
void duel_auto(const CsrView& a, std::vector<Row>& out, const std::vector<const Job*>& row_job, std::size_t ai,
               Plan& auto_plan, const std::vector<double>& x, const SweepConfig& cfg) {
  Row& ar = out[ai];
  std::vector<const Row*> rows;
  for (const Row& r : out) rows.push_back(&r);
  std::vector<std::unique_ptr<Plan>> made;
  std::vector<Plan*> plans{&auto_plan};
  std::vector<double*> into;
  for (auto [o, field] :
       {std::pair{auto_oracle(ar, rows), &ar.duel_oracle}, std::pair{auto_baseline(ar, rows), &ar.duel_baseline}}) {
    if (!o) continue;
    const Job& job = *row_job[static_cast<std::size_t>(o - out.data())];
    try {
      made.push_back(make_validated_plan(*job.spec, a, job.opt));
      made.back()->set_x(x);
      plans.push_back(made.back().get());
      into.push_back(field);
    } catch (const std::exception&) {}
  }
  if (plans.size() < 2) return;
  try {
    const auto r = interleaved_ratios(plans, std::max(1e-3, cfg.min_sample_seconds / 5), cfg.duel_rounds);
    for (std::size_t j = 0; j < into.size(); ++j) *into[j] = r[j + 1];
  } catch (const std::exception&) {}
}

void take_timing(Row& r, const ProductTiming& pt) {
  r.products_per_sample = pt.products_per_sample;
  r.samples = pt.samples;
  r.time_median_s = pt.median_s;
  r.time_min_s = pt.min_s;
  r.time_mean_s = pt.mean_s;
  r.time_max_s = pt.max_s;
  r.time_cv = pt.cv;
  r.time_drift = pt.drift;
}

std::string spread_text(const SampleStats& s) {
  return fmt::format("cv {:.1f}% drift {:.1f}%", 100 * s.cv, 100 * s.drift);
}

// Times the plan into the row. A measurement whose samples spread more than cfg.noise_threshold
// (coefficient of variation or drift) is taken again; the second counts. Noisy again: status
// "noisy", and the detail gives both measurements' spread.
void measure(Plan& plan, const SweepConfig& cfg, Row& r) {
  const ProductTiming first = time_products(plan, cfg.min_sample_seconds, cfg.repeat, cfg.max_config_seconds);
  r.measurements = 1;
  take_timing(r, first);
  if (!first.noisy(cfg.noise_threshold)) return;
  const ProductTiming again = time_products(plan, cfg.min_sample_seconds, cfg.repeat, cfg.max_config_seconds);
  r.measurements = 2;
  take_timing(r, again);
  const std::string note =
      again.noisy(cfg.noise_threshold)
          ? fmt::format("noisy: {} measured again after {} (threshold {:.1f}%)", spread_text(again), spread_text(first),
                        100 * cfg.noise_threshold)
          : fmt::format("measured again: the first measurement had {} (median {:.4g} s, now {:.4g} s)",
                        spread_text(first), first.median_s, again.median_s);
  r.detail += (r.detail.empty() ? "" : "; ") + note;
  if (again.noisy(cfg.noise_threshold)) r.status = "noisy";
}

void fill_matrix(Row& r, const MatrixSource& src) {
  r.matrix = src.name;
  r.origin = src.origin;
  r.kind = src.kind;
  r.scale = src.scale;
}

}  // namespace

std::size_t count_configs(const SweepConfig& cfg) { return jobs(cfg).size(); }

std::optional<VariantChoice> read_variant(const KernelSpec& k, const std::string& words) {
  try {
    return parse_variant(k.name, k.variants, words);
  } catch (const Unsupported&) {
    return std::nullopt;
  }
}

Row unavailable_row(const MatrixSource& src, const std::string& status) {
  Row r;
  fill_matrix(r, src);
  if (src.spec) {
    r.rows = src.spec->rows;
    r.cols = src.spec->cols;
    r.nnz = src.spec->nnz;
    r.nnz_row_mean = src.spec->mean;
    r.nnz_row_std = src.spec->std;
  }
  r.status = status;
  return r;
}

namespace {

// A row's description of its configuration: the matrix, the kernel and the settings it runs under.
Row configuration_row(const Job& job, const MatrixSource& src, const CsrView& a, const MatrixStats& st,
                      const SweepConfig& cfg, const Ceilings& ceil) {
  const KernelSpec& k = *job.spec;
  const PlanOptions& opt = job.opt;
  Row r;
  fill_matrix(r, src);
  r.rows = a.rows;
  r.cols = a.cols;
  r.nnz = a.nnz();
  r.nnz_row_mean = st.row_nnz_mean;
  r.nnz_row_std = st.row_nnz_std;
  r.nnz_row_min = st.row_nnz_min;
  r.nnz_row_max = st.row_nnz_max;
  r.backend = to_string(k.backend);
  r.kernel = k.name;
  r.format = k.format;
  r.baseline = k.baseline;
  r.k = opt.k;
  r.layout = opt.k > 1 && opt.layout == Layout::ColMajor ? "col" : "row";
  r.precision = to_string(opt.precision);
  r.operation = to_string(opt.operation);
  r.threads_requested = takes(k, "threads") ? opt.threads : (k.backend == Backend::Serial ? 1 : 0);
  r.threads = r.threads_requested;  // until the plan says what it runs on
  r.noise_threshold = cfg.noise_threshold;
  r.block_size = takes(k, "block_size") ? opt.kernel.block_size : 0;
  r.hack = takes(k, "hack") ? opt.kernel.hack : 0;
  r.nz_per_block = takes(k, "nz_per_block") ? opt.kernel.nz_per_block : 0;
  r.settings = settings_text(k, opt);
  r.ceiling_gbs = (k.backend != Backend::Cuda ? ceil.cpu_triad : ceil.gpu_copy) * 1e-9;
  return r;
}

// What the plan says of itself: its costs, detail, choice and the threads it runs on. A kernel that
// falls back says why in its detail ("runs on U of T threads: why"); where the plan runs on fewer
// without saying so (auto's choice, or a smaller OpenMP team), it is said here.
void describe_plan(Row& r, const Plan& plan, bool cpu) {
  r.convert_s = plan.convert_seconds;
  r.setup_s = plan.setup_seconds;
  r.detail = plan.detail;
  r.chosen = plan.chosen;
  r.planning_s = plan.planning_seconds;
  r.bytes_per_product = plan.bytes_per_product;
  r.stored_entries = plan.stored_entries;
  if (const int used = plan.threads_used(); cpu && used > 0) r.threads = used;
  if (r.threads < r.threads_requested && r.detail.find("runs on ") == std::string::npos) {
    const std::string why = plan.chosen_threads > 0 && plan.chosen_threads < r.threads_requested
                                ? "the planner chose " + plan.chosen
                                : std::string(
                                      "the plan gives no reason (a smaller OpenMP team: OMP_THREAD_LIMIT, "
                                      "OMP_DYNAMIC?)");
    r.detail += fmt::format("{}runs on {} of {} threads: {}", r.detail.empty() ? "" : "; ", r.threads,
                            r.threads_requested, why);
  }
}

// The rates of a measured row: GFLOPS, bandwidth and its share of the ceiling, the speedup over the
// serial CSR time (`serial`, 0 where not measured yet), efficiency, and 50 or 500 products' cost.
// A noisy row keeps its numbers (what was measured) but no best or ratio takes it (usable()).
void derive_rates(Row& r, double nnz, int k, double serial) {
  if ((r.status != "ok" && r.status != "noisy") || r.time_median_s <= 0) return;
  const double tm = r.time_median_s;
  r.gflops = 2.0 * nnz * k / tm * 1e-9;
  r.bandwidth_gbs = static_cast<double>(r.bytes_per_product) / tm * 1e-9;
  r.bandwidth_share = r.ceiling_gbs > 0 ? r.bandwidth_gbs / r.ceiling_gbs : 0;
  if (serial > 0) r.speedup = serial / tm;
  if (r.backend != "cuda" && r.threads > 0) r.efficiency = r.speedup / r.threads;
  const double fixed = r.convert_s + r.setup_s;
  r.iter50_s = fixed + 50 * tm;
  r.iter500_s = fixed + 500 * tm;
}

// One matrix's configurations, each checked then timed; what they share: x and the reference per
// right-hand-side count, layout and precision (rhs_key), the serial CSR time, the backend warmed
// last, auto's plans for the duel.
class MatrixBench {
 public:
  MatrixBench(const CsrView& a, const SweepConfig& cfg) : a_(a), cfg_(cfg), base_(serial_csr(cfg)) {}

  // Runs one configuration into a row of `out`.
  void run(const Job& job, Row r, std::vector<Row>& out) {
    const KernelSpec& k = *job.spec;
    const PlanOptions& opt = job.opt;
    const bool cpu = k.backend != Backend::Cuda;
    const int key = rhs_key(opt);
    std::vector<double>& x = x_for(opt);
    try {
      validate(k, opt, cfg_, a_, float_range_);
      // The first configuration after another backend's finds the device (or the cores) idle and
      // clocked down: 50 ms of the plan's own products before it is timed (below). On the CPU also
      // 50 ms of CSR products before the plan is made, so that the planner's analysis and trial do
      // not run on idle cores. Not on the GPU: there the planner's host part would find the cores
      // idle instead (bench/results/README.md has the measurements).
      const bool first = warmed_ != k.backend;
      if (first && cpu) warm_up(a_, k.backend, opt);
      warmed_ = k.backend;
      auto plan = make_validated_plan(k, a_, opt);
      describe_plan(r, *plan, cpu);
      // Check first: a wrong kernel is reported, never timed into a best or a mean.
      const CsrView m = product_matrix(opt);
      if (!refs_.count(key)) refs_[key] = reference_product(m, x, opt.k, opt.layout);
      const CheckResult chk = checked_product(*plan, m, x, opt.k, opt.layout, &refs_[key]).check;
      r.check = chk.passed ? "passed" : "failed";
      r.max_rel_error = chk.max_rel_error;
      r.mean_rel_error = chk.mean_rel_error;
      if (!chk.passed) {
        r.status = "failed";
        r.detail += (r.detail.empty() ? "" : "; ") + chk.message;
        out.push_back(std::move(r));
        return;
      }
      if (first) run_for(*plan, 0.05);
      // Samples of back-to-back products lasting min_sample_seconds each, the timed work per
      // configuration capped (keeping at least 3 samples for a median).
      measure(*plan, cfg_, r);
      if (!cpu && r.status == "ok") loop_costs(r, *plan, m, opt.k);
      if (k.name == "auto" && cfg_.duel_rounds > 0) {
        auto& kept = autos_[{static_cast<int>(k.backend), key}];
        if (!kept.second || r.threads_requested > out[kept.first].threads_requested)
          kept = {out.size(), std::move(plan)};
      }
    } catch (const Unsupported& e) {
      r.status = std::string("skipped: ") + e.what();
    } catch (const std::bad_alloc&) {
      r.status = "skipped: out of memory";
    } catch (const std::exception& e) {
      r.status = std::string("error: ") + e.what();
    }
    if (job.spec == base_ && (r.status == "ok" || r.status == "noisy") && r.time_median_s > 0)
      serial_time_[key] = r.time_median_s;
    derive_rates(r, static_cast<double>(a_.nnz()), opt.k, serial_time_.count(key) ? serial_time_[key] : 0);
    out.push_back(std::move(r));
  }

  // Auto against the oracle and the best baseline, interleaved, for each kept auto plan.
  void duels(std::vector<Row>& out, const std::vector<const Job*>& row_job) {
    for (auto& [key, kept] : autos_) duel_auto(a_, out, row_job, kept.first, *kept.second, xs_[key.second], cfg_);
  }

 private:
  // The matrix whose rows the product computes: A, or A^T (made at the first transposed row, for the
  // reference and the check).
  CsrView product_matrix(const PlanOptions& opt) {
    if (opt.operation != Operation::Transpose) return a_;
    if (!at_) at_ = transpose_as_stored(a_);
    return at_->view();
  }

  std::vector<double>& x_for(const PlanOptions& opt) {
    std::vector<double>& x = xs_[rhs_key(opt)];
    if (x.empty()) {
      const index_t n = opt.operation == Operation::Transpose ? a_.rows : a_.cols;
      x = make_vector(cfg_.x_spec, static_cast<std::size_t>(n) * opt.k);
      // A single plan computes on float x: the reference is computed with the rounded x.
      if (opt.precision == Precision::Single)
        for (double& v : x) v = static_cast<float>(v);
    }
    return x;
  }

  // GPU rows: what a loop of multiply() calls pays on host and on device vectors (three samples of
  // a fifth of the sample length each: the host loop's calls last milliseconds).
  void loop_costs(Row& r, Plan& plan, const CsrView& m, int k) const {
    const LoopTiming lt =
        time_multiply_loops(plan, static_cast<std::size_t>(m.cols) * k, static_cast<std::size_t>(m.rows) * k,
                            std::max(1e-3, cfg_.min_sample_seconds / 5), 3);
    r.loop_host_s = lt.host.median_s;
    r.loop_pinned_s = lt.pinned.median_s;
    r.loop_device_s = lt.device.median_s;
    r.loop_copies_s = lt.copies_s;
  }

  const CsrView& a_;
  const SweepConfig& cfg_;
  const KernelSpec* base_;
  std::map<int, std::vector<double>> xs_;
  std::map<int, Reference> refs_;
  std::map<int, double> serial_time_;
  std::optional<Backend> warmed_;  // the backend whose last configuration ran just before
  // Per backend, k and layout, auto's row and plan (the most threads where several), kept for the duel.
  std::map<std::pair<int, int>, std::pair<std::size_t, std::unique_ptr<Plan>>> autos_;
  std::optional<std::string> float_range_;  // validate's verdict on this matrix's values
  std::optional<Transposed> at_;            // A^T, for the transposed rows' reference
};

}  // namespace

std::vector<Row> bench_matrix(const CsrView& a, const MatrixSource& src, const SweepConfig& cfg, const Ceilings& ceil,
                              const Progress& progress, std::size_t done_before, std::size_t total) {
  std::vector<Row> out;
  if (a.is_complex()) {
    // Every kernel is real-only: one row says so instead of one refusal per configuration.
    Row r = unavailable_row(src, "skipped: complex matrix (the kernels are real-only)");
    r.rows = a.rows;
    r.cols = a.cols;
    r.nnz = a.nnz();
    out.push_back(std::move(r));
    if (progress.update) progress.update(done_before + count_configs(cfg), total, src.name);
    return out;
  }
  const MatrixStats st = compute_stats(a);
  MatrixBench bench(a, cfg);
  std::size_t done = done_before;
  const std::vector<Job> all = jobs(cfg);
  std::vector<const Job*> row_job;  // the job of each row of `out`
  for (const Job& job : all) {
    if (progress.update)
      progress.update(done, total, fmt::format("{} {}/{}", src.name, to_string(job.spec->backend), job.spec->name));
    ++done;
    bench.run(job, configuration_row(job, src, a, st, cfg, ceil), out);
    row_job.push_back(&job);
  }
  bench.duels(out, row_job);
  if (progress.update) progress.update(done, total, src.name);
  return out;
}

}  // namespace spmv::bench
