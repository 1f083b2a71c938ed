// The benchmark runner, its outputs and the report, driven by fake kernels in a private list
// (never the global registry, which other tests iterate expecting every kernel to be correct).
#include <gtest/gtest.h>

#include <spmv/bench.hpp>
#include <spmv/io.hpp>

#include <cstdlib>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <sstream>
#include <unistd.h>

#include "test_util.hpp"

namespace spmv::bench {
namespace {

namespace fs = std::filesystem;

// A CPU plan computing y = scale * A*x, recording the options it was made with.
class FakePlan final : public Plan {
 public:
  FakePlan(const Csr& a, const PlanOptions& o, double scale) : a_(a), scale_(scale) {
    x_.assign(a.cols, 0.0);
    y_.assign(a.rows, 0.0);
    bytes_per_product = csr_product_bytes(a);
    stored_entries = a.nnz();
    detail = fmt::format("threads={} hack={}", o.threads, o.hack);
  }
  void set_x(std::span<const double> x) override { x_.assign(x.begin(), x.end()); }
  void run(int times) override {
    for (int t = 0; t < times; ++t)
      for (index_t r = 0; r < a_.rows; ++r) {
        double s = 0;
        for (offset_t p = a_.row_ptr[r]; p < a_.row_ptr[r + 1]; ++p) s += a_.val[p] * x_[a_.col[p]];
        y_[r] = scale_ * s;
      }
  }
  void get_y(std::span<double> y) override { std::copy(y_.begin(), y_.end(), y.begin()); }

 private:
  const Csr& a_;
  double scale_;
  std::vector<double> x_, y_;
};

KernelSpec fake(const std::string& name, Backend b, std::vector<std::string> params, double scale,
                bool baseline = false) {
  return {.name = name, .backend = b, .format = name == "fake-hll" ? "hll" : "csr",
          .description = "test fake", .baseline = baseline, .spmm = false, .params = std::move(params),
          .make = [scale](const Csr& a, const PlanOptions& o) -> std::unique_ptr<Plan> {
            return std::make_unique<FakePlan>(a, o, scale);
          }};
}

// The real serial CSR (the speedup reference) plus fakes: a correct threaded one, a correct one
// with a hack, a wrong one, a refused one and a correct "baseline library".
std::vector<KernelSpec> fake_registry() {
  std::vector<KernelSpec> v;
  v.push_back(*find_kernel(Backend::Serial, "csr"));
  v.push_back(fake("fake-good", Backend::Omp, {"threads"}, 1.0));
  v.push_back(fake("fake-hll", Backend::Omp, {"threads", "hack"}, 1.0));
  v.push_back(fake("fake-wrong", Backend::Omp, {}, 2.0));
  KernelSpec refused = fake("fake-refused", Backend::Omp, {}, 1.0);
  refused.make = [](const Csr&, const PlanOptions&) -> std::unique_ptr<Plan> {
    throw Unsupported("ELL would need 99 GiB");
  };
  v.push_back(refused);
  v.push_back(fake("fake-lib", Backend::Omp, {"threads"}, 1.0, true));
  return v;
}

SweepConfig quick_config(const std::vector<KernelSpec>& reg) {
  SweepConfig c;
  c.backends = {Backend::Serial, Backend::Omp};
  c.threads = {1, 2};
  c.hacks = {16, 32, 64};
  c.repeat = 3;
  c.min_sample_seconds = 0.002;
  c.max_config_seconds = 0.05;
  c.registry = &reg;
  return c;
}

MatrixSource source(const std::string& name) {
  MatrixSource s;
  s.name = name;
  s.origin = "synthetic";
  s.kind = "test";
  return s;
}

const Row* find_row(const std::vector<Row>& rows, const std::string& kernel, int threads = -1, int hack = -1) {
  for (const Row& r : rows)
    if (r.kernel == kernel && (threads < 0 || r.threads == threads) && (hack < 0 || r.hack == hack)) return &r;
  return nullptr;
}

TEST(Bench, SweepsOnlyTheParamsAKernelNames) {
  const auto reg = fake_registry();
  const SweepConfig cfg = quick_config(reg);
  // serial csr 1 + fake-good 2 threads + fake-hll 2x3 + wrong 1 + refused 1 + lib 2
  EXPECT_EQ(count_configs(cfg), 1u + 2 + 6 + 1 + 1 + 2);
  const Csr a = test::csr_from_lengths(std::vector<offset_t>(300, 5), 300, 1);
  const auto rows = bench_matrix(a, source("m"), cfg, Ceilings{10e9, 2, 0});
  ASSERT_EQ(rows.size(), count_configs(cfg));
  EXPECT_EQ(rows.front().kernel, "csr");  // the speedup reference runs first
  EXPECT_EQ(rows.front().backend, "serial");
  for (int t : {1, 2})
    for (int h : {16, 32, 64}) {
      const Row* r = find_row(rows, "fake-hll", t, h);
      ASSERT_NE(r, nullptr) << t << " " << h;
      EXPECT_EQ(r->detail, fmt::format("threads={} hack={}", t, h));  // the plan got them
    }
  const Row* wrong = find_row(rows, "fake-wrong");
  ASSERT_NE(wrong, nullptr);
  EXPECT_EQ(wrong->hack, 0);     // not a parameter of this kernel
  EXPECT_EQ(wrong->threads, 0);
}

TEST(Bench, WrongKernelIsMarkedFailedAndExcluded) {
  const auto reg = fake_registry();
  const SweepConfig cfg = quick_config(reg);
  const Csr a = test::csr_from_lengths(std::vector<offset_t>(500, 7), 500, 2);
  const auto rows = bench_matrix(a, source("tiny"), cfg, Ceilings{10e9, 2, 0});
  const Row* wrong = find_row(rows, "fake-wrong");
  ASSERT_NE(wrong, nullptr);
  EXPECT_EQ(wrong->status, "failed");
  EXPECT_EQ(wrong->check, "failed");
  EXPECT_FALSE(wrong->usable());
  EXPECT_EQ(wrong->gflops, 0.0);  // never timed, so never a best
  EXPECT_GT(wrong->max_rel_error, 0.5);

  const Row* refused = find_row(rows, "fake-refused");
  ASSERT_NE(refused, nullptr);
  EXPECT_EQ(refused->status, "skipped: ELL would need 99 GiB");

  for (const Row& r : rows)
    if (r.kernel != "fake-wrong" && r.kernel != "fake-refused") {
      EXPECT_TRUE(r.usable()) << r.kernel << " " << r.status;
      EXPECT_GT(r.gflops, 0) << r.kernel;
      EXPECT_GE(r.time_median_s, r.time_min_s);
    }

  // Even if the wrong row claimed the highest GFLOPS, the summary never picks it.
  auto tampered = rows;
  for (Row& r : tampered)
    if (r.kernel == "fake-wrong") r.gflops = 1e6;
  const std::string s = summary_table(tampered);
  EXPECT_EQ(s.find("fake-wrong"), std::string::npos) << s;
  EXPECT_NE(s.find("1 failed"), std::string::npos) << s;
  EXPECT_NE(s.find("1 skipped"), std::string::npos) << s;
  EXPECT_NE(s.find("tiny"), std::string::npos);
}

TEST(Bench, SpeedupEfficiencyAndIterativeColumns) {
  const auto reg = fake_registry();
  const SweepConfig cfg = quick_config(reg);
  const Csr a = test::csr_from_lengths(std::vector<offset_t>(2000, 9), 2000, 3);
  const auto rows = bench_matrix(a, source("m"), cfg, Ceilings{10e9, 2, 0});
  const Row* serial = find_row(rows, "csr");
  ASSERT_NE(serial, nullptr);
  EXPECT_DOUBLE_EQ(serial->speedup, 1.0);
  EXPECT_EQ(serial->threads, 1);
  const Row* two = find_row(rows, "fake-good", 2);
  ASSERT_NE(two, nullptr);
  EXPECT_NEAR(two->speedup, serial->time_median_s / two->time_median_s, 1e-12);
  EXPECT_NEAR(two->efficiency, two->speedup / 2, 1e-12);
  EXPECT_NEAR(two->gflops, 2.0 * a.nnz() / two->time_median_s * 1e-9, 1e-9 * two->gflops);
  EXPECT_NEAR(two->bandwidth_share, two->bandwidth_gbs / 10.0, 1e-12);
  EXPECT_NEAR(two->iter50_s, two->convert_s + two->setup_s + 50 * two->time_median_s, 1e-12);
  EXPECT_NEAR(two->iter500_s, two->convert_s + two->setup_s + 500 * two->time_median_s, 1e-12);
}

TEST(Bench, ComplexMatrixIsOneSkippedRow) {
  const auto reg = fake_registry();
  const SweepConfig cfg = quick_config(reg);
  Csr a = test::csr_from_lengths(std::vector<offset_t>(50, 3), 50, 9);
  a.field = Field::Complex;
  a.imag.assign(a.val.size(), 0.5);
  const auto rows = bench_matrix(a, source("cplx"), cfg, Ceilings{});
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].status.rfind("skipped: complex", 0), 0u) << rows[0].status;
  EXPECT_EQ(rows[0].nnz, a.nnz());
}

TEST(Bench, TinyMatrixSamplesManyProducts) {
  const auto reg = fake_registry();
  SweepConfig cfg = quick_config(reg);
  cfg.min_sample_seconds = 0.003;
  cfg.kernels = {"csr"};
  const Csr a = test::csr_from_lengths({5, 6, 5, 6, 5, 6, 5, 6, 5}, 9, 4);  // cage4-sized
  const auto rows = bench_matrix(a, source("cage"), cfg, Ceilings{});
  ASSERT_EQ(rows.size(), 1u);
  // A 50-nonzero product takes well under a microsecond: one sample must batch many of them.
  EXPECT_GT(rows[0].products_per_sample, 100);
  EXPECT_GE(rows[0].samples, 3);
}

std::vector<std::string> split_csv_line(const std::string& line) {
  std::vector<std::string> f;
  std::string cur;
  bool q = false;
  for (char c : line) {
    if (c == '"') q = !q;
    else if (c == ',' && !q) { f.push_back(cur); cur.clear(); }
    else cur += c;
  }
  f.push_back(cur);
  return f;
}

TEST(Bench, CsvAndJsonHaveTheDocumentedColumns) {
  const auto reg = fake_registry();
  const SweepConfig cfg = quick_config(reg);
  const Csr a = test::csr_from_lengths(std::vector<offset_t>(200, 4), 200, 5);
  MatrixSource src = source("with,comma");
  auto rows = bench_matrix(a, src, cfg, Ceilings{10e9, 2, 0});
  MatrixSource gone = source("missing");
  rows.push_back(unavailable_row(gone, "skipped: generating missing needs 99 GiB"));
  const std::string dir = testing::TempDir() + "/spmv_bench_csv";
  fs::create_directories(dir);
  const MachineInfo m = machine_info();
  write_csv(dir + "/r.csv", rows, m, Ceilings{10e9, 2, 0});
  write_json(dir + "/r.json", rows, m, Ceilings{10e9, 2, 0});

  std::ifstream f(dir + "/r.csv");
  std::string header;
  std::getline(f, header);
  const auto cols = split_csv_line(header);
  // The columns the README and report.py rely on.
  for (const char* c : {"matrix", "origin", "scale", "rows", "cols", "nnz", "nnz_row_mean", "nnz_row_std",
                        "backend", "kernel", "format", "baseline", "threads", "block_size", "hack",
                        "nz_per_block", "k", "status", "check", "max_rel_error", "mean_rel_error",
                        "convert_s", "setup_s", "time_median_s", "time_min_s", "gflops", "speedup",
                        "efficiency", "bandwidth_gbs", "ceiling_gbs", "bandwidth_share", "iter50_s",
                        "iter500_s", "hostname", "cpu_model", "device", "compiler", "git_commit"})
    EXPECT_NE(std::find(cols.begin(), cols.end(), c), cols.end()) << c;
  EXPECT_EQ(cols, csv_columns());
  const auto idx = [&](const std::string& c) { return std::find(cols.begin(), cols.end(), c) - cols.begin(); };
  std::size_t n = 0, failed = 0;
  for (std::string line; std::getline(f, line); ++n) {
    const auto v = split_csv_line(line);
    ASSERT_EQ(v.size(), cols.size()) << line;
    if (v[idx("kernel")] == "fake-wrong") {
      EXPECT_EQ(v[idx("status")], "failed");
      ++failed;
    }
    if (v[idx("matrix")] == "with,comma") EXPECT_EQ(v[idx("origin")], "synthetic");
  }
  EXPECT_EQ(n, rows.size());
  EXPECT_EQ(failed, 1u);
  std::stringstream js;
  js << std::ifstream(dir + "/r.json").rdbuf();
  EXPECT_NE(js.str().find("\"status\": \"failed\""), std::string::npos);
  EXPECT_NE(js.str().find("\"git_commit\""), std::string::npos);
  fs::remove_all(dir);
}

TEST(Bench, DefaultSuiteHasRealMatricesAndLabelledAlikes) {
  SuiteOptions so;
  so.matrices_dir = test::shared_matrices_dir();
  so.small_machine = true;
  const auto suite = default_suite(so);
  int real = 0, scaled = 0;
  bool cage4_real = false, cant_alike = false;
  for (const auto& s : suite) {
    real += s.origin == "real";
    if (s.name == "cage4") cage4_real = s.origin == "real" && !s.spec;
    if (s.name == "cant") {
      ASSERT_TRUE(s.spec.has_value());
      cant_alike = s.origin == "synthetic-scaled";
      EXPECT_LE(s.spec->nnz, 2'000'000 * 1.01);
      EXPECT_NEAR(s.spec->mean, 64.1684, 0.01);
      EXPECT_LT(s.scale, 1.0);
    }
    if (s.origin == "synthetic-scaled") {
      ++scaled;
      EXPECT_LE(s.spec->nnz, 2'000'000 * 1.01) << s.name;
    }
  }
  EXPECT_GE(real, 70);  // the shared folder's 77 SuiteSparse matrices
  EXPECT_TRUE(cage4_real);
  EXPECT_TRUE(cant_alike);
  EXPECT_GE(scaled, 8);
  // Full size where memory allows: no scaling.
  so.full = true;
  for (const auto& s : default_suite(so)) EXPECT_NE(s.origin, "synthetic-scaled") << s.name;
}

// Files given to the benchmark: a generated one is labelled synthetic with its description, a
// real one stays real.
TEST(Bench, GeneratedFilesAreLabelledSynthetic) {
  const auto dir = std::filesystem::temp_directory_path() / fmt::format("spmv_bench_prov_{}", ::getpid());
  std::filesystem::create_directories(dir);
  const Csr a = coo_to_csr(test::random_coo(30, 30, 0.1, 2));
  io::write_matrix_market((dir / "alike.mtx").string(), a, "webbase-1M alike (web graph), seed 1");
  io::write_binary((dir / "alike2.spmvbin").string(), a, true);
  io::write_matrix_market((dir / "data.mtx").string(), a);
  const auto v = sources_from_paths({dir.string()});
  ASSERT_EQ(v.size(), 3u);
  for (const auto& s : v) {
    if (s.name == "data") {
      EXPECT_EQ(s.origin, "real");
    } else {
      EXPECT_EQ(s.origin, "synthetic") << s.name;
      EXPECT_EQ(s.kind, s.name == "alike" ? "webbase-1M alike (web graph), seed 1" : "spmv-generated");
    }
  }
  EXPECT_EQ(sources_from_paths({(dir / "alike.mtx").string()}).at(0).origin, "synthetic");
  std::filesystem::remove_all(dir);
}

TEST(Bench, ReportWritesPlotsAndTables) {
  const auto reg = fake_registry();
  const SweepConfig cfg = quick_config(reg);
  std::vector<Row> rows;
  for (int i = 0; i < 2; ++i) {
    const Csr a = test::csr_from_lengths(std::vector<offset_t>(400 + 100 * i, 6 + i), 400 + 100 * i, 6 + i);
    auto r = bench_matrix(a, source(fmt::format("mat{}", i)), cfg, Ceilings{10e9, 2, 0});
    rows.insert(rows.end(), r.begin(), r.end());
  }
  const std::string dir = testing::TempDir() + "/spmv_report";
  fs::remove_all(dir);
  fs::create_directories(dir);
  write_csv(dir + "/results.csv", rows, machine_info(), Ceilings{10e9, 2, 0});
  const std::string cmd = fmt::format("{} report {}/results.csv -o {}/out > {}/log 2>&1", SPMV_CLI,
                                      dir, dir, dir);
  ASSERT_EQ(std::system(cmd.c_str()), 0) << [&] {
    std::stringstream s;
    s << std::ifstream(dir + "/log").rdbuf();
    return s.str();
  }();
  for (const char* png : {"gflops_vs_threads_omp_fake-good.png", "speedup_vs_threads_omp_fake-good.png",
                          "efficiency_vs_threads_omp_fake-good.png",
                          "gflops_vs_threads_omp_fake-hll_hack_32.png", "roofline.png",
                          "conversion_cost.png", "cpu_kernels.png", "bandwidth_share.png"}) {
    EXPECT_TRUE(fs::exists(dir + "/out/" + png)) << png;
    if (fs::exists(dir + "/out/" + png)) EXPECT_GT(fs::file_size(dir + "/out/" + png), 1000u) << png;
  }
  std::stringstream md;
  md << std::ifstream(dir + "/out/report.md").rdbuf();
  const std::string s = md.str();
  EXPECT_NE(s.find("| matrix | rows | nnz | nnz/row mean | nnz/row std |"), std::string::npos) << s;
  EXPECT_NE(s.find("mat0 *"), std::string::npos);  // synthetic, marked
  EXPECT_NE(s.find("**"), std::string::npos);      // the best in bold
  EXPECT_NE(s.find("omp/fake-good"), std::string::npos);
  EXPECT_NE(s.find("fake-wrong"), std::string::npos);  // listed under failures...
  const auto h = s.find("| matrix | rows | nnz |");
  ASSERT_NE(h, std::string::npos);
  const std::string header = s.substr(h, s.find('\n', h) - h);
  EXPECT_EQ(header.find("fake-wrong"), std::string::npos) << header;  // ...never a GFLOPS column
  EXPECT_NE(header.find("omp/fake-lib"), std::string::npos) << header;  // the baseline is one
  EXPECT_NE(s.find("no CUDA device"), std::string::npos);
  EXPECT_NE(s.find("+ 50 / + 500 products"), std::string::npos);
  fs::remove_all(dir);
}

TEST(Bench, CliQuickRunEndToEnd) {
  const std::string dir = testing::TempDir() + "/spmv_bench_cli";
  fs::remove_all(dir);
  const std::string cmd = fmt::format(
      "SPMV_SHARED_MATRICES={} {} bench --quick --no-progress --out {}/results.csv --cache-dir {}/cache "
      "> {}/stdout 2> {}/stderr",
      test::shared_matrices_dir(), SPMV_CLI, dir, dir, dir, dir);
  fs::create_directories(dir);
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  std::stringstream out, csv;
  out << std::ifstream(dir + "/stdout").rdbuf();
  csv << std::ifstream(dir + "/results.csv").rdbuf();
  EXPECT_NE(out.str().find("best CPU kernel"), std::string::npos) << out.str();
  EXPECT_NE(csv.str().find(",real,"), std::string::npos);
  EXPECT_NE(csv.str().find(",synthetic"), std::string::npos);
  EXPECT_TRUE(fs::exists(dir + "/results.json"));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace spmv::bench
