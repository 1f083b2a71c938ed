#pragma once
// Each subcommand lives in its own file and adds itself to the app; main.cpp lists them.
#include <CLI/CLI.hpp>

#include <spmv/plan.hpp>

#include <charconv>
#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace spmv::cli {

// A subcommand's action returns the process exit status (0 ok, 1 bad input or failed check).
using Action = std::function<int()>;

// A request the command line cannot serve as given (an unknown kernel for the backend, options
// that do not go together): exit status 2, like CLI11's own parse errors.
struct UsageError : Error {
  using Error::Error;
};

// -q / -v, given before or after the subcommand: 0 quiet (errors only), 1 normal, 2 verbose.
inline int verbosity = 1;

// Number options with a plain message ("must be a positive integer") instead of CLI11's
// PositiveNumber, whose message prints the double range in 309 digits. The whole value must be a
// decimal number (std::from_chars: no spaces, '+' or hex); reals must be finite. An integer with a
// leading zero is refused: CLI11 converts it with base 0 after the check (which cannot change the
// value), and "010" would be octal eight.
template <class T, class Ok>
CLI::Validator number_check(Ok ok, std::string must, const char* name) {
  return CLI::Validator(
      [ok, must](std::string& v) -> std::string {
        T x{};
        const auto r = std::from_chars(v.data(), v.data() + v.size(), x);
        const bool octal_looking = std::is_integral_v<T> && v.size() > 1 && v[0] == '0';
        if (r.ec == std::errc() && r.ptr == v.data() + v.size() && !octal_looking && ok(x)) return "";
        return "must be " + must + ", got '" + v + "'" + (octal_looking ? " (no leading zeros)" : "");
      },
      name);
}
inline CLI::Validator positive_int() {
  return number_check<long long>([](long long n) { return n >= 1; }, "a positive integer", "POSITIVE");
}
inline CLI::Validator non_negative_int() {
  return number_check<long long>([](long long n) { return n >= 0; }, "an integer >= 0", "NONNEGATIVE");
}
inline CLI::Validator int_in(long long lo, long long hi) {
  return number_check<long long>([lo, hi](long long n) { return n >= lo && n <= hi; },
                                 "an integer in " + std::to_string(lo) + ".." + std::to_string(hi), "INT");
}
// --threads: from 0 (where it means every core) or 1 up to max_threads() (twice the hardware
// threads, at least 256).
inline CLI::Validator thread_count(long long lo) { return int_in(lo, max_threads()); }
inline CLI::Validator positive_real() {
  return number_check<double>([](double x) { return std::isfinite(x) && x > 0; }, "a number > 0", "POSITIVE");
}
inline CLI::Validator non_negative_real() {
  return number_check<double>([](double x) { return std::isfinite(x) && x >= 0; }, "a number >= 0", "NONNEGATIVE");
}
// lo <= x <= hi (NaN fails both comparisons); `range` says it in the message, e.g. "(0, 1]".
inline CLI::Validator real_in(double lo, double hi, const std::string& range) {
  return number_check<double>([lo, hi](double x) { return x >= lo && x <= hi; }, "a number in " + range, "REAL");
}

// What a command prints: "key: value" lines, or with --json one JSON object of the same keys
// (numbers as numbers; inf and NaN as null).
class KeyValues {
 public:
  void add(const std::string& key, const std::string& value) { items_.push_back({key, value, quote(value)}); }
  void add(const std::string& key, const char* value) { add(key, std::string(value)); }
  void add(const std::string& key, long long value) {
    items_.push_back({key, std::to_string(value), std::to_string(value)});
  }
  void add(const std::string& key, int value) { add(key, static_cast<long long>(value)); }
  // A double with `digits` significant digits, the same in both forms.
  void add(const std::string& key, double value, int digits = 6);
  // Text: "key: value" per line; JSON: one object.
  std::string text() const;
  std::string json() const;
  void print(bool as_json) const;

 private:
  static std::string quote(const std::string& s);
  struct Item {
    std::string key, text, json;
  };
  std::vector<Item> items_;
};

// --memory-budget SIZE (12G, 500M, plain bytes): the most the sizes in an input file may ask for.
inline CLI::Option* add_memory_budget(CLI::App* cmd, std::uint64_t& bytes) {
  return cmd
      ->add_option("--memory-budget", bytes,
                   "The most memory an input's sizes may ask for, e.g. 12G or 500M (default: half of physical memory)")
      ->check(CLI::Validator(
          [](std::string& v) -> std::string {  // AsSizeValue reads with strtoull: "-5" would wrap to 2^64 - 5
            if (!v.empty() && v[0] >= '0' && v[0] <= '9') return "";
            return "must be a size such as 12G, 500M or a number of bytes, got '" + v + "'";
          },
          "SIZE"))
      ->transform(CLI::AsSizeValue(false));
}

// The names CLI11 checks values against (and lists in the help): backends, every kernel of any
// backend plus auto, and the kernels' storage formats.
std::vector<std::string> backend_names();
std::vector<std::string> kernel_names();
std::vector<std::string> format_names();

// An output name that asks for the binary cache: *.spmvbin, or *.spmvbin.gz gzip-compressed.
inline bool binary_name(const std::string& path) { return path.ends_with(".spmvbin") || path.ends_with(".spmvbin.gz"); }

// -o/--output, the one spelling of every command's output.
inline CLI::Option* add_output(CLI::App* cmd, std::string& path, const std::string& what) {
  return cmd->add_option("-o,--output", path, what);
}

// The kernels' own settings (spmv/params.hpp), an option each, named, described and checked as the
// catalog says: run takes one value of each, bench a comma list of values it sweeps. Beside them
// --csr5-atomic: CUDA CSR5's variant "atomic" (carries added with atomics, not deterministic).
struct KernelSettings {
  std::map<std::string, std::vector<long long>> given;  // by setting name; run: one value each
  bool csr5_atomic = false;

  // lists: bench's comma lists (help naming the default sweep), else run's single values.
  void add_options(CLI::App* cmd, bool lists);
  // The value given for the setting, else `fallback` (run).
  long long value(const std::string& name, long long fallback) const;
  // run: the given values and --csr5-atomic set over `o`.
  void apply(PlanOptions& o) const;
  // bench: --csr5-atomic alone (the settings are swept, each for the kernels that take it).
  void apply_variant(PlanOptions& o) const;
};

// run --distributed, bench --distributed (cmd_distributed.cpp): the product over the MPI ranks
// of the command (mpirun -np N spmv ...) on each source (a matrix file, or stencil7:N /
// stencil27:N made in place on each rank), for each operation and k; rank 0 prints and appends
// to `csv` (none where empty). Without MPI built in: UsageError.
struct DistributedRequest {
  std::vector<std::string> sources;
  Backend backend = Backend::Omp;
  std::string kernel = "auto";
  PlanOptions opt;
  std::vector<Operation> operations{Operation::NoTranspose};
  std::vector<int> ks{1};
  int repeat = 10;
  double min_sample_ms = 50;
  std::string csv;
  int cg_iterations = 0;
};
int run_distributed(const DistributedRequest& req);

void add_info(CLI::App& app, Action& action);
void add_run(CLI::App& app, Action& action);
void add_convert(CLI::App& app, Action& action);
void add_kernels(CLI::App& app, Action& action);
void add_generate(CLI::App& app, Action& action);
void add_bench(CLI::App& app, Action& action);
void add_report(CLI::App& app, Action& action);

}  // namespace spmv::cli
