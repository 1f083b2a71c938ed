// CSV, JSON and the stdout summary. One row per measurement, each carrying the machine.
#include <spmv/bench/bench.hpp>

#include "auto_compare.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <fstream>
#include <map>

namespace spmv::bench {

namespace {

// Each column: name, and how a row renders it (numbers unquoted in JSON).
struct Column {
  std::string name;
  bool text;
  std::function<std::string(const Row&, const MachineInfo&, const Ceilings&)> get;
};

std::string num(double v) {
  if (!std::isfinite(v)) return "";
  return fmt::format("{:.6g}", v);
}

// The machine and the build a row was measured on.
std::vector<Column> machine_columns() {
  return {
      {"hostname", true, [](const Row&, const MachineInfo& m, auto&) { return m.hostname; }},
      {"cpu_model", true, [](const Row&, const MachineInfo& m, auto&) { return m.cpu_model; }},
      {"cores", false, [](const Row&, const MachineInfo& m, auto&) { return std::to_string(m.cores); }},
      {"device", true, [](const Row&, const MachineInfo& m, auto&) { return m.device; }},
      {"compiler", true, [](const Row&, const MachineInfo& m, auto&) { return m.compiler; }},
      {"simd", true, [](const Row&, const MachineInfo& m, auto&) { return m.simd; }},
      {"git_commit", true, [](const Row&, const MachineInfo& m, auto&) { return m.git_commit; }},
      {"omp_proc_bind", true, [](const Row&, const MachineInfo& m, auto&) { return m.omp_proc_bind; }},
      {"omp_places", true, [](const Row&, const MachineInfo& m, auto&) { return m.omp_places; }},
      {"omp_num_threads", true, [](const Row&, const MachineInfo& m, auto&) { return m.omp_num_threads; }},
      {"cpu_triad_gbs", false, [](const Row&, auto&, const Ceilings& c) { return num(c.cpu_triad * 1e-9); }},
      {"cpu_triad_min_gbs", false, [](const Row&, auto&, const Ceilings& c) { return num(c.cpu_triad_min * 1e-9); }},
      {"cpu_triad_max_gbs", false, [](const Row&, auto&, const Ceilings& c) { return num(c.cpu_triad_max * 1e-9); }},
      {"cpu_triad_runs", false, [](const Row&, auto&, const Ceilings& c) { return std::to_string(c.cpu_triad_runs); }},
      {"gpu_copy_gbs", false, [](const Row&, auto&, const Ceilings& c) { return num(c.gpu_copy * 1e-9); }},
      {"gpu_copy_min_gbs", false, [](const Row&, auto&, const Ceilings& c) { return num(c.gpu_copy_min * 1e-9); }},
      {"gpu_copy_max_gbs", false, [](const Row&, auto&, const Ceilings& c) { return num(c.gpu_copy_max * 1e-9); }},
      {"gpu_copy_runs", false, [](const Row&, auto&, const Ceilings& c) { return std::to_string(c.gpu_copy_runs); }},
      {"gpu_peak_gbs", false, [](const Row&, auto&, const Ceilings& c) { return num(c.gpu_peak * 1e-9); }},
      {"gpu_h2d_gbs", false, [](const Row&, auto&, const Ceilings& c) { return num(c.gpu_h2d * 1e-9); }},
      {"gpu_d2h_gbs", false, [](const Row&, auto&, const Ceilings& c) { return num(c.gpu_d2h * 1e-9); }},
  };
}

const std::vector<Column>& columns() {
  static const std::vector<Column> f = [] {
    std::vector<Column> v = {
        {"matrix", true, [](const Row& r, auto&, auto&) { return r.matrix; }},
        {"origin", true, [](const Row& r, auto&, auto&) { return r.origin; }},
        {"scale", false, [](const Row& r, auto&, auto&) { return num(r.scale); }},
        {"kind", true, [](const Row& r, auto&, auto&) { return r.kind; }},
        {"rows", false, [](const Row& r, auto&, auto&) { return std::to_string(r.rows); }},
        {"cols", false, [](const Row& r, auto&, auto&) { return std::to_string(r.cols); }},
        {"nnz", false, [](const Row& r, auto&, auto&) { return std::to_string(r.nnz); }},
        {"nnz_row_mean", false, [](const Row& r, auto&, auto&) { return num(r.nnz_row_mean); }},
        {"nnz_row_std", false, [](const Row& r, auto&, auto&) { return num(r.nnz_row_std); }},
        {"nnz_row_min", false, [](const Row& r, auto&, auto&) { return std::to_string(r.nnz_row_min); }},
        {"nnz_row_max", false, [](const Row& r, auto&, auto&) { return std::to_string(r.nnz_row_max); }},
        {"backend", true, [](const Row& r, auto&, auto&) { return r.backend; }},
        {"kernel", true, [](const Row& r, auto&, auto&) { return r.kernel; }},
        {"format", true, [](const Row& r, auto&, auto&) { return r.format; }},
        {"baseline", false, [](const Row& r, auto&, auto&) { return std::string(r.baseline ? "1" : "0"); }},
        {"threads", false, [](const Row& r, auto&, auto&) { return std::to_string(r.threads); }},
        {"threads_requested", false, [](const Row& r, auto&, auto&) { return std::to_string(r.threads_requested); }},
        {"block_size", false, [](const Row& r, auto&, auto&) { return std::to_string(r.block_size); }},
        {"hack", false, [](const Row& r, auto&, auto&) { return std::to_string(r.hack); }},
        {"nz_per_block", false, [](const Row& r, auto&, auto&) { return std::to_string(r.nz_per_block); }},
        {"k", false, [](const Row& r, auto&, auto&) { return std::to_string(r.k); }},
        {"layout", true, [](const Row& r, auto&, auto&) { return r.layout; }},
        {"precision", true, [](const Row& r, auto&, auto&) { return r.precision; }},
        {"operation", true, [](const Row& r, auto&, auto&) { return r.operation; }},
        {"status", true, [](const Row& r, auto&, auto&) { return r.status; }},
        {"check", true, [](const Row& r, auto&, auto&) { return r.check; }},
        {"max_rel_error", false, [](const Row& r, auto&, auto&) { return num(r.max_rel_error); }},
        {"mean_rel_error", false, [](const Row& r, auto&, auto&) { return num(r.mean_rel_error); }},
        {"convert_s", false, [](const Row& r, auto&, auto&) { return num(r.convert_s); }},
        {"setup_s", false, [](const Row& r, auto&, auto&) { return num(r.setup_s); }},
        {"time_median_s", false, [](const Row& r, auto&, auto&) { return num(r.time_median_s); }},
        {"time_min_s", false, [](const Row& r, auto&, auto&) { return num(r.time_min_s); }},
        {"products_per_sample", false,
         [](const Row& r, auto&, auto&) { return std::to_string(r.products_per_sample); }},
        {"samples", false, [](const Row& r, auto&, auto&) { return std::to_string(r.samples); }},
        {"time_mean_s", false, [](const Row& r, auto&, auto&) { return num(r.time_mean_s); }},
        {"time_max_s", false, [](const Row& r, auto&, auto&) { return num(r.time_max_s); }},
        {"time_cv", false, [](const Row& r, auto&, auto&) { return num(r.time_cv); }},
        {"time_drift", false, [](const Row& r, auto&, auto&) { return num(r.time_drift); }},
        {"measurements", false, [](const Row& r, auto&, auto&) { return std::to_string(r.measurements); }},
        {"noise_threshold", false, [](const Row& r, auto&, auto&) { return num(r.noise_threshold); }},
        {"gflops", false, [](const Row& r, auto&, auto&) { return num(r.gflops); }},
        {"speedup", false, [](const Row& r, auto&, auto&) { return num(r.speedup); }},
        {"efficiency", false, [](const Row& r, auto&, auto&) { return num(r.efficiency); }},
        {"bandwidth_gbs", false, [](const Row& r, auto&, auto&) { return num(r.bandwidth_gbs); }},
        {"ceiling_gbs", false, [](const Row& r, auto&, auto&) { return num(r.ceiling_gbs); }},
        {"bandwidth_share", false, [](const Row& r, auto&, auto&) { return num(r.bandwidth_share); }},
        {"bytes_per_product", false, [](const Row& r, auto&, auto&) { return std::to_string(r.bytes_per_product); }},
        {"stored_entries", false, [](const Row& r, auto&, auto&) { return std::to_string(r.stored_entries); }},
        {"iter50_s", false, [](const Row& r, auto&, auto&) { return num(r.iter50_s); }},
        {"iter500_s", false, [](const Row& r, auto&, auto&) { return num(r.iter500_s); }},
        {"loop_host_s", false, [](const Row& r, auto&, auto&) { return num(r.loop_host_s); }},
        {"loop_pinned_s", false, [](const Row& r, auto&, auto&) { return num(r.loop_pinned_s); }},
        {"loop_device_s", false, [](const Row& r, auto&, auto&) { return num(r.loop_device_s); }},
        {"loop_copies_s", false, [](const Row& r, auto&, auto&) { return num(r.loop_copies_s); }},
        {"detail", true, [](const Row& r, auto&, auto&) { return r.detail; }},
        {"chosen", true, [](const Row& r, auto&, auto&) { return r.chosen; }},
        {"planning_s", false, [](const Row& r, auto&, auto&) { return num(r.planning_s); }},
        {"duel_oracle", false, [](const Row& r, auto&, auto&) { return num(r.duel_oracle); }},
        {"duel_baseline", false, [](const Row& r, auto&, auto&) { return num(r.duel_baseline); }},
    };
    for (Column& c : machine_columns()) v.push_back(std::move(c));
    v.push_back({"settings", true, [](const Row& r, auto&, auto&) { return r.settings; }});
    return v;
  }();
  return f;
}

std::string csv_quote(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) {
    if (c == '"') q += '"';
    q += (c == '\n' || c == '\r') ? ' ' : c;
  }
  return q + "\"";
}

std::string json_string(const std::string& s) {
  std::string q = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      q += '\\';
      q += static_cast<char>(c);
    } else if (c < 0x20)
      q += fmt::format("\\u{:04x}", c);
    else
      q += static_cast<char>(c);
  }
  return q + "\"";
}

std::ofstream open_out(const std::string& path) {
  std::ofstream f(path);
  if (!f) throw Error(fmt::format("{}: cannot write", path));
  return f;
}

std::string setting(const Row& r) {
  std::string s;
  auto add = [&](const std::string& x) { s += (s.empty() ? "" : " ") + x; };
  if (r.backend != "serial" && r.threads) {
    // The threads it ran on; where the kernel fell back, also those the sweep asked for.
    add(r.threads_requested > 0 && r.threads_requested != r.threads
            ? fmt::format("t={} of {}", r.threads, r.threads_requested)
            : fmt::format("t={}", r.threads));
  }
  if (r.block_size) add(fmt::format("bs={}", r.block_size));
  if (r.hack) add(fmt::format("hack={}", r.hack));
  if (r.nz_per_block) add(fmt::format("npb={}", r.nz_per_block));
  if (r.k > 1) add(fmt::format("k={}{}", r.k, r.layout == "col" ? " col" : ""));
  return s;
}

std::string label(const Row& r) {
  const std::string set = setting(r);
  return fmt::format("{}/{}{}", r.backend, r.kernel, set.empty() ? "" : " " + set);
}

std::string duration(double s) {
  if (s < 1e-7) return fmt::format("{:.0f}ns", s * 1e9);  // not "0.0us"
  if (s < 1e-3) return fmt::format("{:.1f}us", s * 1e6);
  if (s < 1) return fmt::format("{:.2f}ms", s * 1e3);
  return fmt::format("{:.2f}s", s);
}

std::string ratio_text(double x) { return x > 0 ? fmt::format("{:.3f}", x) : "-"; }

bool gpu(const Row& r) { return r.backend == "cuda"; }

// The automatic planner against what it chooses among: per (matrix, backend, k) with an auto row,
// its oracle and baseline (auto_compare.hpp). Ratios are other time / auto time (1 = as fast):
// the interleaved timing's (Row::duel_*) where the run made one, else the sweep's medians.
struct AutoCompare {
  const Row* a = nullptr;
  const Row* oracle = nullptr;
  const Row* base = nullptr;
  // From the sweep: medians taken one configuration after another, the oracle the best of many.
  double sweep(const Row* o) const {
    return a->usable() && a->time_median_s > 0 && o ? o->time_median_s / a->time_median_s : 0;
  }
  double vs_oracle() const { return a->usable() && a->duel_oracle > 0 ? a->duel_oracle : sweep(oracle); }
  double vs_base() const { return a->usable() && a->duel_baseline > 0 ? a->duel_baseline : sweep(base); }
};

std::vector<AutoCompare> compare_auto(const std::vector<const Row*>& v) {
  std::vector<AutoCompare> out;
  for (const Row* r : v) {
    if (r->kernel != "auto") continue;
    // Several auto rows for one backend, k and precision (a threads sweep): the one the sweep gave
    // the most threads (the one the runner timed interleaved).
    auto same = std::find_if(out.begin(), out.end(), [&](const AutoCompare& c) {
      return c.a->backend == r->backend && c.a->k == r->k && c.a->precision == r->precision &&
             c.a->operation == r->operation;
    });
    if (same != out.end()) {
      if (r->threads_requested > same->a->threads_requested) same->a = r;
      continue;
    }
    out.push_back({r, auto_oracle(*r, v), auto_baseline(*r, v)});
  }
  return out;
}

// "auto omp" plus " k=N" when some auto row has k > 1 (k = 1 and k > 1 are separate comparisons),
// and the precision when the rows have several.
std::string auto_name(const Row& a, bool many_k, bool many_p) {
  return fmt::format("auto {}{}{}{}", a.backend, a.operation == "t" ? " A^T" : "",
                     many_k ? fmt::format(" k={}{}", a.k, a.layout == "col" ? " col" : "") : "",
                     many_p ? " " + a.precision : "");
}

std::string auto_line(const AutoCompare& c, bool many_k, bool many_p) {
  const Row& a = *c.a;
  std::string s = fmt::format("  {:<14}", auto_name(a, many_k, many_p) + ":");
  if (!a.usable()) return s + " not usable: " + a.status.substr(0, 80) + "\n";
  s += fmt::format(
      " {:<22} {:>8} | oracle {:<22} {:>8} | auto/oracle {:>5} (sweep {:>5}) | auto/base {:>5} (sweep {:>5})",
      a.chosen.empty() ? "?" : a.chosen, duration(a.time_median_s), c.oracle ? label(*c.oracle) : "-",
      c.oracle ? duration(c.oracle->time_median_s) : "-", ratio_text(c.vs_oracle()), ratio_text(c.sweep(c.oracle)),
      ratio_text(c.vs_base()), ratio_text(c.sweep(c.base)));
  return s + fmt::format(" | plan+convert {:.1f} products\n", (a.planning_s + a.convert_s) / a.time_median_s);
}

// Geometric mean, worst (lowest) and how many below `limit` of one ratio over the matrices.
std::string auto_totals(const std::vector<std::pair<std::string, double>>& v, const char* what, double limit) {
  if (v.empty()) return fmt::format("    {:<13} -\n", what);
  double logs = 0;
  auto worst = v.front();
  int below = 0;
  for (const auto& [m, x] : v) {
    logs += std::log(x);
    if (x < worst.second) worst = {m, x};
    below += x < limit;
  }
  return fmt::format("    {:<13} geomean {:.3f}  worst {:.3f} ({})  below {:.2f} on {} of {}\n", what,
                     std::exp(logs / v.size()), worst.second, worst.first, limit, below, v.size());
}

}  // namespace

namespace {

const Row* fastest(std::span<const Row* const> v, const std::function<bool(const Row&)>& keep) {
  const Row* b = nullptr;
  for (const Row* r : v)
    if (r->usable() && r->time_median_s > 0 && keep(*r) && (!b || r->time_median_s < b->time_median_s)) b = r;
  return b;
}

}  // namespace

const Row* auto_oracle(const Row& a, std::span<const Row* const> rows) {
  return fastest(rows, [&](const Row& o) {
    return !o.baseline && o.kernel != "auto" && o.backend == a.backend && o.k == a.k && o.layout == a.layout &&
           o.precision == a.precision && o.operation == a.operation;
  });
}

const Row* auto_baseline(const Row& a, std::span<const Row* const> rows) {
  return fastest(rows, [&](const Row& o) {
    return o.baseline && gpu(o) == gpu(a) && o.k == a.k && o.layout == a.layout && o.precision == a.precision &&
           o.operation == a.operation && (a.backend != "serial" || o.threads == 1);
  });
}

const std::vector<std::string>& csv_columns() {
  static const std::vector<std::string> c = [] {
    std::vector<std::string> v;
    for (const auto& f : columns()) v.push_back(f.name);
    return v;
  }();
  return c;
}

struct CsvWriter::Impl {
  std::string path;
  std::ofstream f;
  const MachineInfo& m;
  const Ceilings& c;
};

CsvWriter::CsvWriter(const std::string& path, const MachineInfo& m, const Ceilings& c)
    : impl_(new Impl{path, open_out(path), m, c}) {
  const auto& fs = columns();
  for (std::size_t i = 0; i < fs.size(); ++i) impl_->f << (i ? "," : "") << fs[i].name;
  impl_->f << "\n" << std::flush;
}

CsvWriter::~CsvWriter() = default;

void CsvWriter::add(const std::vector<Row>& rows) {
  const auto& fs = columns();
  for (const Row& r : rows) {
    for (std::size_t i = 0; i < fs.size(); ++i)
      impl_->f << (i ? "," : "") << csv_quote(fs[i].get(r, impl_->m, impl_->c));
    impl_->f << "\n";
  }
  impl_->f.flush();
  if (!impl_->f) throw Error(fmt::format("{}: write failed", impl_->path));
}

void write_csv(const std::string& path, const std::vector<Row>& rows, const MachineInfo& m, const Ceilings& c) {
  CsvWriter(path, m, c).add(rows);
}

void write_json(const std::string& path, const std::vector<Row>& rows, const MachineInfo& m, const Ceilings& c) {
  auto f = open_out(path);
  f << "{\n  \"machine\": {\"hostname\": " << json_string(m.hostname) << ", \"cpu_model\": " << json_string(m.cpu_model)
    << ", \"cores\": " << m.cores << ", \"memory_gib\": " << num(m.memory_bytes / (1ull << 30))
    << ", \"gpus\": " << m.gpus << ", \"device\": " << json_string(m.device)
    << ", \"compiler\": " << json_string(m.compiler) << ", \"git_commit\": " << json_string(m.git_commit)
    << ", \"omp_proc_bind\": " << json_string(m.omp_proc_bind) << ", \"omp_places\": " << json_string(m.omp_places)
    << ", \"omp_num_threads\": " << json_string(m.omp_num_threads) << "},\n";
  const auto gbs = [](double v) {
    const std::string t = num(v * 1e-9);
    return t.empty() ? std::string("null") : t;
  };
  f << "  \"ceilings\": {\"cpu_triad_gbs\": " << gbs(c.cpu_triad) << ", \"cpu_triad_min_gbs\": " << gbs(c.cpu_triad_min)
    << ", \"cpu_triad_max_gbs\": " << gbs(c.cpu_triad_max) << ", \"cpu_triad_runs\": " << c.cpu_triad_runs
    << ", \"cpu_triad_threads\": " << c.cpu_triad_threads << ", \"gpu_copy_gbs\": " << gbs(c.gpu_copy)
    << ", \"gpu_copy_min_gbs\": " << gbs(c.gpu_copy_min) << ", \"gpu_copy_max_gbs\": " << gbs(c.gpu_copy_max)
    << ", \"gpu_copy_runs\": " << c.gpu_copy_runs << ", \"gpu_peak_gbs\": " << gbs(c.gpu_peak) << "},\n  \"rows\": [\n";
  const auto& fs = columns();
  for (std::size_t j = 0; j < rows.size(); ++j) {
    f << "    {";
    for (std::size_t i = 0; i < fs.size(); ++i) {
      const std::string v = fs[i].get(rows[j], m, c);
      f << (i ? ", " : "") << json_string(fs[i].name) << ": "
        << (fs[i].text ? json_string(v) : (v.empty() ? "null" : v));
    }
    f << "}" << (j + 1 < rows.size() ? "," : "") << "\n";
  }
  f << "  ]\n}\n";
  if (!f) throw Error(fmt::format("{}: write failed", path));
}

namespace {

// Per "auto <backend>[ k=N][ precision]": the matrices' (name, ratio) against the oracle and the
// baseline, and how many matrices had an unusable auto row.
struct AutoTotals {
  std::vector<std::pair<std::string, double>> oracle, base, oracle_sweep;
  int matrices = 0, unusable = 0;
};

// The summary: a line per matrix (and precision) with the best CPU and GPU kernels against the
// best baseline, auto's comparisons under it, then auto's totals over the matrices.
class Summary {
 public:
  // The product a row times: its precision, and " A^T" for the transposed one; the summary's lines
  // are per product (a float time never compared with a double one, nor A^T with A).
  static std::string product(const Row& r) { return r.precision + (r.operation == "t" ? " A^T" : ""); }

  explicit Summary(const std::vector<Row>& rows) {
    for (const Row& r : rows) {  // matrices in order of first appearance
      if (!by_.count(r.matrix)) order_.push_back(r.matrix);
      by_[r.matrix].push_back(&r);
    }
    // The precisions measured, in order of first appearance (a matrix that never loaded has one row
    // without a kernel, whose precision says nothing). With several, each matrix has a line per
    // precision: a float time is never compared with a double one as if the same product.
    for (const Row& r : rows)
      if (!r.kernel.empty() && std::find(precisions_.begin(), precisions_.end(), product(r)) == precisions_.end())
        precisions_.push_back(product(r));
    if (precisions_.empty()) precisions_.push_back("double");
    many_p_ = precisions_.size() > 1;
    any_gpu_ = std::any_of(rows.begin(), rows.end(), [](const Row& r) { return r.backend == "cuda"; });
    many_k_ = std::any_of(rows.begin(), rows.end(), [](const Row& r) { return r.kernel == "auto" && r.k > 1; });
  }

  std::string text(std::size_t row_count) {
    std::string s = header();
    int failed = 0, skipped = 0, noisy = 0;
    for (const auto& name : order_) {
      const auto& v = by_[name];
      for (const Row* r : v) {
        failed += r->status == "failed" || r->status.rfind("error", 0) == 0;
        skipped += r->status.rfind("skipped", 0) == 0;
        noisy += r->status == "noisy";
      }
      s += matrix_lines(name, v);
      for (const AutoCompare& c : compare_auto(v)) {
        s += auto_line(c, many_k_, many_p_);
        count(name, c);
      }
    }
    s += totals_text();
    s += fmt::format(
        "{} rows; {} failed or errored (excluded from bests); {} skipped; {} noisy (timing spread above "
        "the threshold twice: excluded from bests)\n",
        row_count, failed, skipped, noisy);
    return s;
  }

 private:
  // The best kernels leave auto out: it is compared with them in its own lines.
  static const Row* best(const std::vector<const Row*>& v, bool on_gpu, bool baseline, const std::string& prec) {
    const Row* b = nullptr;
    for (const Row* r : v)
      if (r->usable() && r->k == 1 && r->kernel != "auto" && gpu(*r) == on_gpu && r->baseline == baseline &&
          product(*r) == prec && (!b || r->gflops > b->gflops))
        b = r;
    return b;
  }

  std::string header() const {
    std::string s = fmt::format("{:<18} {:<16} {:>10}", "matrix", "origin", "nnz");
    if (many_p_) s += fmt::format(" {:<12}", "product");
    s += fmt::format(" | {:<26} {:>7} {:>5} {:>9}", "best CPU kernel", "GFLOPS", "%BW", "vs base");
    if (any_gpu_) s += fmt::format(" | {:<26} {:>7} {:>5} {:>9}", "best GPU kernel", "GFLOPS", "%BW", "vs base");
    return s + "\n";
  }

  // One side's columns: its best kernel, GFLOPS, share of the bandwidth ceiling, and its ratio over
  // the best baseline; a matrix that never loaded has one row whose status says why.
  static std::string side(const std::vector<const Row*>& v, bool on_gpu, const std::string& prec, bool unloaded) {
    const Row* b = best(v, on_gpu, false, prec);
    const Row* base = best(v, on_gpu, true, prec);
    if (!b && base) b = base;  // only the library ran: show it
    if (!b) {
      const std::string why = unloaded && v.front()->status != "ok" ? v.front()->status : "-";
      return fmt::format(" {:<26} {:>7} {:>5} {:>9}", why.substr(0, 26), "-", "-", "-");
    }
    const std::string ratio =
        base && base->gflops > 0 && b != base ? fmt::format("{:.2f}x", b->gflops / base->gflops) : "-";
    return fmt::format(" {:<26} {:>7.2f} {:>4.0f}% {:>9}", label(*b).substr(0, 26), b->gflops, 100 * b->bandwidth_share,
                       ratio);
  }

  std::string matrix_lines(const std::string& name, const std::vector<const Row*>& v) const {
    const Row* any = v.front();
    const std::string origin =
        any->origin == "synthetic-scaled" ? fmt::format("scaled x{:.3g}", any->scale) : any->origin;
    const bool unloaded = v.size() == 1 && v.front()->kernel.empty();
    std::string s;
    for (const std::string& prec : precisions_) {
      s += fmt::format("{:<18} {:<16} {:>10}", name.substr(0, 18), origin, any->nnz);
      if (many_p_) s += fmt::format(" {:<12}", unloaded ? "-" : prec);
      s += " |" + side(v, false, prec, unloaded);
      if (any_gpu_) s += " |" + side(v, true, prec, unloaded);
      s += "\n";
      if (unloaded) return s;
    }
    if (many_p_) s += precision_ratios(v);
    return s;
  }

  // Our best GFLOPS in each other product (a float precision, A^T) over double A x's, per side.
  std::string precision_ratios(const std::vector<const Row*>& v) const {
    std::string line;
    for (const std::string& prec : precisions_) {
      if (prec == "double") continue;
      std::string parts;
      for (const bool on_gpu : {false, true}) {
        const Row* d = best(v, on_gpu, false, "double");
        const Row* f = best(v, on_gpu, false, prec);
        if (d && f && d->gflops > 0)
          parts +=
              fmt::format("{}{} {:.2f}x", parts.empty() ? "" : ", ", on_gpu ? "GPU" : "CPU", f->gflops / d->gflops);
      }
      if (!parts.empty()) line += fmt::format("{}{}/double: {}", line.empty() ? "" : " | ", prec, parts);
    }
    return line.empty() ? "" : "  best " + line + "\n";
  }

  void count(const std::string& name, const AutoCompare& c) {
    const std::string key = auto_name(*c.a, many_k_, many_p_);
    auto t = std::find_if(totals_.begin(), totals_.end(), [&](const auto& e) { return e.first == key; });
    if (t == totals_.end()) t = totals_.insert(totals_.end(), {key, AutoTotals{}});
    ++t->second.matrices;
    t->second.unusable += !c.a->usable();
    if (c.vs_oracle() > 0) t->second.oracle.emplace_back(name, c.vs_oracle());
    if (c.vs_base() > 0) t->second.base.emplace_back(name, c.vs_base());
    if (c.sweep(c.oracle) > 0) t->second.oracle_sweep.emplace_back(name, c.sweep(c.oracle));
  }

  std::string totals_text() const {
    if (totals_.empty()) return "";
    std::string s =
        "auto against the oracle (our fastest checked kernel of its backend, k, precision and operation, any setting) "
        "and the "
        "best baseline; ratios: their time / auto's time (1 = auto as fast), timed interleaved with auto after the "
        "sweep where the run did (else the sweep's medians); 'sweep': the sweep's medians, where the oracle is "
        "the luckiest of many\n";
    for (const auto& [key, t] : totals_) {
      s += fmt::format("{} over {} matrices ({} with auto not usable):\n", key, t.matrices, t.unusable);
      s += auto_totals(t.oracle, "auto/oracle", 0.85) + auto_totals(t.oracle_sweep, "(sweep)", 0.85) +
           auto_totals(t.base, "auto/baseline", 1.0);
    }
    return s;
  }

  std::vector<std::string> order_, precisions_;
  std::map<std::string, std::vector<const Row*>> by_;
  bool many_p_ = false, any_gpu_ = false, many_k_ = false;
  std::vector<std::pair<std::string, AutoTotals>> totals_;
};

}  // namespace

std::string summary_table(const std::vector<Row>& rows) { return Summary(rows).text(rows.size()); }

}  // namespace spmv::bench
