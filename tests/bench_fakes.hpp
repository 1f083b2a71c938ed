#pragma once
// The benchmark tests' fakes: plans that compute (or miscompute) the product, a private registry
// of them (never the global one, which other tests iterate expecting every kernel to be correct),
// a quick sweep over it, and row lookups.
#include <gtest/gtest.h>

#include <spmv/bench/bench.hpp>

#include <fmt/format.h>
#include <memory>
#include <string>
#include <vector>

namespace spmv::bench::test_fakes {

// A CPU plan computing y = scale * A*x, recording the options it was made with. `arith` is how it
// computes whatever it is asked for: double; single (values, x and sums rounded to float); mixed
// (values rounded to float, x and sums in double).
class FakePlan final : public Plan {
 public:
  FakePlan(const CsrView& a, const PlanOptions& o, double scale, Precision arith = Precision::Double)
      : a_(a), scale_(scale), arith_(arith) {
    x_.assign(a.cols, 0.0);
    y_.assign(a.rows, 0.0);
    bytes_per_product = csr_product_bytes(a);
    stored_entries = a.nnz();
    detail = fmt::format("threads={} hack={}", o.threads, o.kernel.hack);
  }
  void set_x(std::span<const double> x) override { x_.assign(x.begin(), x.end()); }
  void run(int times) override {
    for (int t = 0; t < times; ++t)
      for (index_t r = 0; r < a_.rows; ++r) {
        double s = 0;
        float f = 0;
        for (offset_t p = a_.row_ptr[r]; p < a_.row_ptr[r + 1]; ++p) {
          const double v = arith_ == Precision::Double ? a_.val[p] : static_cast<float>(a_.val[p]);
          if (arith_ == Precision::Single)
            f += static_cast<float>(v) * static_cast<float>(x_[a_.col[p]]);
          else
            s += v * x_[a_.col[p]];
        }
        y_[r] = scale_ * (arith_ == Precision::Single ? f : s);
      }
  }
  void get_y(std::span<double> y) override { std::copy(y_.begin(), y_.end(), y.begin()); }
  int threads_used() const override { return used; }
  int used = 0;  // what threads_used() says (0: nothing, as a plan that does not know)

 private:
  CsrView a_;
  double scale_;
  Precision arith_;
  std::vector<double> x_, y_;
};

inline KernelSpec fake(const std::string& name, Backend b, std::vector<std::string> params, double scale,
                       bool baseline = false, std::vector<Precision> precisions = {Precision::Double},
                       Precision arith = Precision::Double) {
  return {.name = name,
          .backend = b,
          .format = name == "fake-hll" ? "hll" : "csr",
          .description = "test fake",
          .baseline = baseline,
          .spmm = false,
          .precisions = std::move(precisions),
          .params = std::move(params),
          .make = [scale, arith](const CsrView& a, const PlanOptions& o) -> std::unique_ptr<Plan> {
            return std::make_unique<FakePlan>(a, o, scale, arith);
          }};
}

// The real serial CSR (the speedup reference) plus fakes: a correct threaded one, a correct one
// with a hack, a wrong one, a refused one and a correct "baseline library".
inline std::vector<KernelSpec> fake_registry() {
  std::vector<KernelSpec> v;
  v.push_back(*find_kernel(Backend::Serial, "csr"));
  v.push_back(fake("fake-good", Backend::Omp, {"threads"}, 1.0));
  v.push_back(fake("fake-hll", Backend::Omp, {"threads", "hack"}, 1.0));
  v.push_back(fake("fake-wrong", Backend::Omp, {}, 2.0));
  KernelSpec refused = fake("fake-refused", Backend::Omp, {}, 1.0);
  refused.make = [](const CsrView&, const PlanOptions&) -> std::unique_ptr<Plan> {
    throw Unsupported("ELL would need 99 GiB");
  };
  v.push_back(refused);
  v.push_back(fake("fake-lib", Backend::Omp, {"threads"}, 1.0, true));
  return v;
}

inline SweepConfig quick_config(const std::vector<KernelSpec>& reg) {
  SweepConfig c;
  c.backends = {Backend::Serial, Backend::Omp};
  c.sweep = {{"threads", {1, 2}}, {"hack", {16, 32, 64}}};
  c.repeat = 3;
  c.min_sample_seconds = 0.002;
  c.max_config_seconds = 0.05;
  // Off: the wall-clock noise of a loaded test machine is not what these tests check (the Noise
  // tests turn it on, with plans whose spread they control).
  c.noise_threshold = 0;
  c.registry = &reg;
  return c;
}

inline MatrixSource source(const std::string& name) {
  MatrixSource s;
  s.name = name;
  s.origin = "synthetic";
  s.kind = "test";
  return s;
}

inline const Row* find_row(const std::vector<Row>& rows, const std::string& kernel, int threads = -1, int hack = -1) {
  for (const Row& r : rows)
    if (r.kernel == kernel && (threads < 0 || r.threads == threads) && (hack < 0 || r.hack == hack)) return &r;
  return nullptr;
}

inline std::vector<std::string> split_csv_line(const std::string& line) {
  std::vector<std::string> f;
  std::string cur;
  bool q = false;
  for (char c : line) {
    if (c == '"')
      q = !q;
    else if (c == ',' && !q) {
      f.push_back(cur);
      cur.clear();
    } else
      cur += c;
  }
  f.push_back(cur);
  return f;
}

// A timed, checked row as the runner would make it (the summary only reads these fields).
inline Row timed(const std::string& matrix, const std::string& backend, const std::string& kernel, double t,
                 int threads = 0, bool baseline = false, int k = 1) {
  Row r;
  r.matrix = matrix;
  r.origin = "real";
  r.nnz = 1000;
  r.backend = backend;
  r.kernel = kernel;
  r.threads = threads;
  r.baseline = baseline;
  r.k = k;
  r.check = "passed";
  r.time_median_s = r.time_min_s = t;
  r.gflops = 2e-9 * r.nnz * k / t;
  return r;
}

inline Row auto_row(const std::string& matrix, const std::string& backend, double t, const std::string& chosen,
                    double planning_s, double convert_s, int k = 1) {
  Row r = timed(matrix, backend, "auto", t, 0, false, k);
  r.chosen = chosen;
  r.planning_s = planning_s;
  r.convert_s = convert_s;
  return r;
}

}  // namespace spmv::bench::test_fakes
