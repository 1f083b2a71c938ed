// The benchmark's outputs: the summary table, CSV and JSON, the machine's record.
#include <gtest/gtest.h>

#include <spmv/bench/bench.hpp>
#include <spmv/io.hpp>
#include <spmv/timing.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <optional>
#include <sys/wait.h>
#include <sstream>
#include <unistd.h>

#include "bench_fakes.hpp"
#include "test_util.hpp"

namespace spmv::bench {
namespace {

namespace fs = std::filesystem;
using namespace test_fakes;

// The summary's lines from the one starting with `head` up to the next line that is not indented,
// each run of spaces made one (the tests check content, not column widths).
std::string block(const std::string& s, const std::string& head) {
  const auto b = s.find("\n" + head);
  if (b == std::string::npos) return "";
  auto e = s.find('\n', b + 1);
  while (e != std::string::npos && e + 1 < s.size() && s[e + 1] == ' ') e = s.find('\n', e + 1);
  std::string out;
  for (char c : s.substr(b + 1, e - b))
    if (c != ' ' || out.empty() || out.back() != ' ') out += c;
  return out;
}

TEST(Bench, SummaryComparesAutoWithTheOracleAndTheBaseline) {
  std::vector<Row> rows = {
      timed("ma", "serial", "csr", 20e-6, 1),
      auto_row("ma", "omp", 4e-6, "omp/hll t=2", 30e-6, 10e-6),
      timed("ma", "omp", "csr", 4e-6, 2),
      timed("ma", "omp", "hll", 3e-6, 2),  // the omp oracle
      timed("ma", "omp", "fast-wrong", 1e-6, 2),
      timed("ma", "omp", "eigen", 6e-6, 2, true),
      auto_row("ma", "omp", 8e-6, "omp/csr t=2", 0, 0, 4),
      timed("ma", "omp", "csr", 6e-6, 2, false, 4),  // the k=4 oracle: k=1 rows never count
      auto_row("ma", "cuda", 1e-6, "cuda/csr bs=256", 50e-6, 0),
      timed("ma", "cuda", "csr", 0.9e-6),
      timed("ma", "cuda", "cusparse", 1.2e-6, 0, true),
      timed("ma", "cuda", "cusparse-alg2", 0.8e-6, 0, true),  // the best GPU baseline
      timed("mb", "serial", "csr", 10e-6, 1),
      auto_row("mb", "omp", 1.6e-6, "omp/csr t=2", 1e-6, 0),  // faster than the oracle (noise)
      timed("mb", "omp", "csr", 2e-6, 2),
      timed("mb", "omp", "hll", 2.5e-6, 2),
      timed("mb", "omp", "fast-wrong", 0.5e-6, 2),
      timed("mb", "omp", "eigen", 1.28e-6, 2, true),
      auto_row("mb", "cuda", 1e-6, "", 0, 0),
      timed("mb", "cuda", "csr", 1e-6),
      timed("mb", "cuda", "cusparse", 1e-6, 0, true),
  };
  for (Row& r : rows) {
    r.hack = r.kernel == "hll" ? 32 : 0;
    r.block_size = r.kernel == "csr" && r.backend == "cuda" ? 256 : 0;
    if (r.kernel == "fast-wrong") r.status = r.check = "failed";  // fastest, but never an oracle
  }
  rows[18].status = "error: boom";
  rows[18].check = "";
  // ma's omp auto was also timed interleaved with its oracle and baseline: those ratios count.
  rows[1].duel_oracle = 0.9;
  rows[1].duel_baseline = 1.4;
  const std::string s = summary_table(rows);
  EXPECT_EQ(s.find("fast-wrong"), std::string::npos) << s;

  // Ratios are oracle (or baseline) time / auto time; "sweep": from the sweep's medians.
  const double ma_omp = 0.9, mb_omp = 2e-6 / 1.6e-6;               // 0.9 interleaved, 1.25
  const double ma_omp_sweep = 3e-6 / 4e-6;                         // 0.75
  const double ma_omp_base = 1.4, mb_omp_base = 1.28e-6 / 1.6e-6;  // 1.4 interleaved, 0.8
  const double ma_k4 = 6e-6 / 8e-6, ma_cuda = 0.9e-6 / 1e-6, ma_cuda_base = 0.8e-6 / 1e-6;
  const std::string ma = block(s, "ma ");
  EXPECT_NE(ma.find(fmt::format("\n auto omp k=1: omp/hll t=2 4.0us | oracle omp/hll t=2 hack=32 3.0us | "
                                "auto/oracle {:.3f} (sweep {:.3f}) | auto/base {:.3f} (sweep {:.3f}) | "
                                "plan+convert {:.1f} products\n",
                                ma_omp, ma_omp_sweep, ma_omp_base, 6e-6 / 4e-6, (30e-6 + 10e-6) / 4e-6)),
            std::string::npos)
      << s;
  EXPECT_NE(ma.find(fmt::format("\n auto omp k=4: omp/csr t=2 8.0us | oracle omp/csr t=2 k=4 6.0us | "
                                "auto/oracle {0:.3f} (sweep {0:.3f}) | auto/base - (sweep -) | plan+convert 0.0 "
                                "products\n",
                                ma_k4)),
            std::string::npos)
      << s;
  EXPECT_NE(ma.find(fmt::format("\n auto cuda k=1: cuda/csr bs=256 1.0us | oracle cuda/csr bs=256 0.9us | "
                                "auto/oracle {0:.3f} (sweep {0:.3f}) | auto/base {1:.3f} (sweep {1:.3f}) | "
                                "plan+convert {2:.1f} products\n",
                                ma_cuda, ma_cuda_base, 50e-6 / 1e-6)),
            std::string::npos)
      << s;
  const std::string mb = block(s, "mb ");
  EXPECT_NE(mb.find("\n auto cuda k=1: not usable: error: boom\n"), std::string::npos) << s;
  // auto is never the best kernel of the main line, even where it is the fastest.
  const std::string main_line = mb.substr(0, mb.find('\n'));
  EXPECT_NE(main_line.find("| omp/csr t=2 "), std::string::npos) << s;
  EXPECT_EQ(main_line.find("auto"), std::string::npos) << s;

  EXPECT_EQ(block(s, "auto omp k=1 over"),
            fmt::format("auto omp k=1 over 2 matrices (0 with auto not usable):\n"
                        " auto/oracle geomean {:.3f} worst {:.3f} (ma) below 0.85 on 0 of 2\n"
                        " (sweep) geomean {:.3f} worst {:.3f} (ma) below 0.85 on 1 of 2\n"
                        " auto/baseline geomean {:.3f} worst {:.3f} (mb) below 1.00 on 1 of 2\n",
                        std::sqrt(ma_omp * mb_omp), ma_omp, std::sqrt(ma_omp_sweep * mb_omp), ma_omp_sweep,
                        std::sqrt(ma_omp_base * mb_omp_base), mb_omp_base));
  EXPECT_EQ(block(s, "auto omp k=4 over"),
            fmt::format("auto omp k=4 over 1 matrices (0 with auto not usable):\n"
                        " auto/oracle geomean {0:.3f} worst {0:.3f} (ma) below 0.85 on 1 of 1\n"
                        " (sweep) geomean {0:.3f} worst {0:.3f} (ma) below 0.85 on 1 of 1\n"
                        " auto/baseline -\n",
                        ma_k4));
  EXPECT_EQ(block(s, "auto cuda k=1 over"),
            fmt::format("auto cuda k=1 over 2 matrices (1 with auto not usable):\n"
                        " auto/oracle geomean {0:.3f} worst {0:.3f} (ma) below 0.85 on 0 of 1\n"
                        " (sweep) geomean {0:.3f} worst {0:.3f} (ma) below 0.85 on 0 of 1\n"
                        " auto/baseline geomean {1:.3f} worst {1:.3f} (ma) below 1.00 on 1 of 1\n",
                        ma_cuda, ma_cuda_base));
  // Without auto rows the summary has no auto lines.
  std::vector<Row> plain;
  for (const Row& r : rows)
    if (r.kernel != "auto") plain.push_back(r);
  EXPECT_EQ(summary_table(plain).find("auto"), std::string::npos);
}

// A serial auto is compared with the baseline on one thread (Eigen at 1 thread: 5 us), not with its
// fastest multithreaded row (Eigen at 2 threads: 1 us): like with like.
TEST(Bench, SummaryComparesSerialAutoWithTheOneThreadBaseline) {
  const std::vector<Row> rows = {
      timed("ma", "serial", "csr", 4e-6, 1),
      auto_row("ma", "serial", 4e-6, "serial/csr", 0, 0),
      timed("ma", "omp", "eigen", 5e-6, 1, true),
      timed("ma", "omp", "eigen", 1e-6, 2, true),
  };
  const std::string s = summary_table(rows);
  EXPECT_NE(block(s, "ma ").find(fmt::format("auto/base {0:.3f} (sweep {0:.3f})", 5e-6 / 4e-6)), std::string::npos)
      << s;
}

// With several precisions each matrix has a line per precision, auto is compared with the oracle
// of its own precision (a float row is never a double auto's oracle, nor the reverse) and its
// totals are per precision; a line gives our best GFLOPS of single and mixed over double's.
TEST(Bench, SummaryKeepsPrecisionsApart) {
  std::vector<Row> rows = {
      timed("m", "omp", "csr", 4e-6, 2), auto_row("m", "omp", 5e-6, "omp/csr t=2", 0, 0),
      timed("m", "omp", "csr", 2e-6, 2), auto_row("m", "omp", 2.5e-6, "omp/csr t=2", 0, 0),
      timed("m", "omp", "csr", 3e-6, 2),
  };
  rows[2].precision = rows[3].precision = "single";
  rows[4].precision = "mixed";
  const std::string s = summary_table(rows);
  std::string flat;  // runs of spaces made one
  for (char c : s)
    if (c != ' ' || flat.empty() || flat.back() != ' ') flat += c;
  EXPECT_NE(flat.find("matrix origin nnz product | best CPU kernel"), std::string::npos) << s;
  // GFLOPS = 2 * 1000 / t: 0.5 double, 1.0 single, 0.667 mixed.
  EXPECT_NE(flat.find("\nm real 1000 double | omp/csr t=2 0.50 "), std::string::npos) << s;
  EXPECT_NE(flat.find("\nm real 1000 single | omp/csr t=2 1.00 "), std::string::npos) << s;
  EXPECT_NE(flat.find("\nm real 1000 mixed | omp/csr t=2 0.67 "), std::string::npos) << s;
  EXPECT_NE(flat.find("\n best single/double: CPU 2.00x | mixed/double: CPU 1.33x\n"), std::string::npos) << s;
  // Each auto against the csr row of its precision: 4/5 and 2/2.5, both 0.8 (mixed with each other: 0.4).
  EXPECT_NE(flat.find("\n auto omp double: omp/csr t=2 5.0us | oracle omp/csr t=2 4.0us | auto/oracle 0.800 "),
            std::string::npos)
      << s;
  EXPECT_NE(flat.find("\n auto omp single: omp/csr t=2 2.5us | oracle omp/csr t=2 2.0us | auto/oracle 0.800 "),
            std::string::npos)
      << s;
  EXPECT_NE(flat.find("\nauto omp double over 1 matrices"), std::string::npos) << s;
  EXPECT_NE(flat.find("\nauto omp single over 1 matrices"), std::string::npos) << s;
  // One precision: no product column, no ratio line, auto named as before.
  const std::string one = summary_table({rows[0], rows[1]});
  EXPECT_EQ(one.substr(0, one.find('\n')).find("product"), std::string::npos) << one;
  EXPECT_EQ(one.find("/double"), std::string::npos) << one;
  EXPECT_NE(one.find("\nauto omp over 1 matrices"), std::string::npos) << one;
}

// A^T rows are a product of their own: a line of the matrix, auto compared with the oracle of its
// operation, totals apart, and our best A^T over A.
TEST(Bench, SummaryKeepsOperationsApart) {
  std::vector<Row> rows = {
      timed("m", "omp", "csr", 4e-6, 2),
      auto_row("m", "omp", 5e-6, "omp/csr t=2", 0, 0),
      timed("m", "omp", "csr", 8e-6, 2),
      auto_row("m", "omp", 10e-6, "omp/csr t=2", 0, 0),
  };
  rows[2].operation = rows[3].operation = "t";
  const std::string s = summary_table(rows);
  std::string flat;
  for (char c : s)
    if (c != ' ' || flat.empty() || flat.back() != ' ') flat += c;
  EXPECT_NE(flat.find("\nm real 1000 double | omp/csr t=2 0.50 "), std::string::npos) << s;
  EXPECT_NE(flat.find("\nm real 1000 double A^T | omp/csr t=2 0.25 "), std::string::npos) << s;
  EXPECT_NE(flat.find("\n best double A^T/double: CPU 0.50x\n"), std::string::npos) << s;
  // 4/5 and 8/10: each auto against its own operation's csr (mixed: 0.4 or 1.6).
  EXPECT_NE(flat.find("\n auto omp A^T double: omp/csr t=2 10.0us | oracle omp/csr t=2 8.0us | auto/oracle 0.800 "),
            std::string::npos)
      << s;
  EXPECT_NE(flat.find("\nauto omp A^T double over 1 matrices"), std::string::npos) << s;
}

TEST(Bench, CsvAndJsonHaveTheDocumentedColumns) {
  const auto reg = fake_registry();
  const SweepConfig cfg = quick_config(reg);
  const Csr a = test::csr_from_lengths(std::vector<offset_t>(200, 4), 200, 5);
  MatrixSource src = source("with,comma");
  auto rows = bench_matrix(a, src, cfg, Ceilings{10e9, 2, 0});
  MatrixSource gone = source("missing");
  rows.push_back(unavailable_row(gone, "skipped: generating missing needs 99 GiB"));
  const test::ScratchDir scratch;
  const std::string dir = scratch.str();
  const MachineInfo m = machine_info();
  write_csv(dir + "/r.csv", rows, m, Ceilings{10e9, 2, 0});
  write_json(dir + "/r.json", rows, m, Ceilings{10e9, 2, 0});

  std::ifstream f(dir + "/r.csv");
  std::string header;
  std::getline(f, header);
  const auto cols = split_csv_line(header);
  // The columns the README and report.py rely on.
  for (const char* c :
       {"matrix", "origin", "scale", "rows", "cols", "nnz", "nnz_row_mean", "nnz_row_std", "backend", "kernel",
        "format", "baseline", "threads", "block_size", "hack", "nz_per_block", "k", "layout", "precision", "operation",
        "status", "check", "max_rel_error", "mean_rel_error", "convert_s", "setup_s", "time_median_s", "time_min_s",
        "gflops", "speedup", "efficiency", "bandwidth_gbs", "ceiling_gbs", "bandwidth_share", "iter50_s", "iter500_s",
        "detail", "chosen", "planning_s", "duel_oracle", "duel_baseline", "hostname", "cpu_model", "device", "compiler",
        "git_commit",
        // the timing's spread, the threads asked for, the pinning and the ceilings' spread
        "threads_requested", "time_mean_s", "time_max_s", "time_cv", "time_drift", "measurements", "noise_threshold",
        "omp_proc_bind", "omp_places", "omp_num_threads", "cpu_triad_gbs", "cpu_triad_min_gbs", "cpu_triad_max_gbs",
        "cpu_triad_runs", "gpu_copy_gbs", "gpu_copy_min_gbs", "gpu_copy_max_gbs", "gpu_copy_runs"})
    EXPECT_NE(std::find(cols.begin(), cols.end(), c), cols.end()) << c;
  EXPECT_EQ(cols, csv_columns());
  const auto idx = [&](const std::string& c) { return std::find(cols.begin(), cols.end(), c) - cols.begin(); };
  EXPECT_EQ(idx("chosen"), idx("detail") + 1);  // the planner's columns follow detail
  EXPECT_EQ(idx("planning_s"), idx("detail") + 2);
  EXPECT_EQ(idx("precision"), idx("layout") + 1);  // the configuration's columns: k, layout, precision
  std::size_t n = 0, failed = 0;
  for (std::string line; std::getline(f, line); ++n) {
    const auto v = split_csv_line(line);
    ASSERT_EQ(v.size(), cols.size()) << line;
    if (v[idx("kernel")] == "fake-wrong") {
      EXPECT_EQ(v[idx("status")], "failed");
      ++failed;
    }
    if (v[idx("matrix")] == "with,comma") {
      EXPECT_EQ(v[idx("origin")], "synthetic");
      EXPECT_EQ(v[idx("precision")], "double");  // the sweep's default
    }
  }
  EXPECT_EQ(n, rows.size());
  EXPECT_EQ(failed, 1u);
  std::stringstream js;
  js << std::ifstream(dir + "/r.json").rdbuf();
  EXPECT_NE(js.str().find("\"status\": \"failed\""), std::string::npos);
  EXPECT_NE(js.str().find("\"git_commit\""), std::string::npos);
}

// The environment variable `name` set to `value` (nullptr: unset) for the scope, then as it was.
class EnvScope {
 public:
  EnvScope(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value)
      setenv(name, value, 1);
    else
      unsetenv(name);
  }
  ~EnvScope() {
    if (old_)
      setenv(name_.c_str(), old_->c_str(), 1);
    else
      unsetenv(name_.c_str());
  }

 private:
  std::string name_;
  std::optional<std::string> old_;
};

TEST(Bench, MachineRecordsThePinningAndTheCeilingsTheirSpread) {
  const test::ScratchDir scratch;
  const std::string dir = scratch.str();
  MachineInfo m;
  {
    const EnvScope bind("OMP_PROC_BIND", "close"), places("OMP_PLACES", "cores"), num("OMP_NUM_THREADS", nullptr);
    m = machine_info();
  }
  EXPECT_EQ(m.omp_proc_bind, "close");
  EXPECT_EQ(m.omp_places, "cores");
  EXPECT_EQ(m.omp_num_threads, "");
  {
    const EnvScope bind("OMP_PROC_BIND", nullptr), places("OMP_PLACES", nullptr), num("OMP_NUM_THREADS", "3");
    const MachineInfo unpinned = machine_info();
    EXPECT_EQ(unpinned.omp_proc_bind, "");
    EXPECT_EQ(unpinned.omp_places, "");
    EXPECT_EQ(unpinned.omp_num_threads, "3");
  }
  Ceilings c{20e9, 2, 0, 0};
  c.cpu_triad_min = 14.5e9;
  c.cpu_triad_max = 44e9;
  c.cpu_triad_runs = 5;
  Row r = timed("m", "omp", "csr", 1e-6, 2);
  r.threads_requested = 4;
  r.time_mean_s = 1.5e-6;
  r.time_max_s = 3e-6;
  r.time_cv = 0.25;
  r.time_drift = 0.125;
  r.measurements = 2;
  r.noise_threshold = 0.05;
  r.status = "noisy";
  write_csv(dir + "/r.csv", {r}, m, c);
  write_json(dir + "/r.json", {r}, m, c);
  std::ifstream f(dir + "/r.csv");
  std::string header, line;
  std::getline(f, header);
  std::getline(f, line);
  const auto cols = split_csv_line(header), v = split_csv_line(line);
  ASSERT_EQ(cols.size(), v.size());
  const auto at = [&](const std::string& c) {
    const auto i = std::find(cols.begin(), cols.end(), c) - cols.begin();
    return static_cast<std::size_t>(i) < v.size() ? v[i] : "(no column " + c + ")";
  };
  EXPECT_EQ(at("omp_proc_bind"), "close");
  EXPECT_EQ(at("omp_places"), "cores");
  EXPECT_EQ(at("omp_num_threads"), "");
  EXPECT_EQ(at("cpu_triad_gbs"), "20");
  EXPECT_EQ(at("cpu_triad_min_gbs"), "14.5");
  EXPECT_EQ(at("cpu_triad_max_gbs"), "44");
  EXPECT_EQ(at("cpu_triad_runs"), "5");
  EXPECT_EQ(at("gpu_copy_runs"), "0");
  EXPECT_EQ(at("threads"), "2");
  EXPECT_EQ(at("threads_requested"), "4");
  EXPECT_EQ(at("time_mean_s"), "1.5e-06");
  EXPECT_EQ(at("time_max_s"), "3e-06");
  EXPECT_EQ(at("time_cv"), "0.25");
  EXPECT_EQ(at("time_drift"), "0.125");
  EXPECT_EQ(at("measurements"), "2");
  EXPECT_EQ(at("noise_threshold"), "0.05");
  EXPECT_EQ(at("status"), "noisy");
  std::stringstream js;
  js << std::ifstream(dir + "/r.json").rdbuf();
  EXPECT_NE(js.str().find("\"omp_proc_bind\": \"close\""), std::string::npos) << js.str();
  EXPECT_NE(js.str().find("\"cpu_triad_min_gbs\": 14.5"), std::string::npos) << js.str();
  EXPECT_NE(js.str().find("\"cpu_triad_runs\": 5"), std::string::npos) << js.str();
  EXPECT_NE(js.str().find("\"time_cv\": 0.25"), std::string::npos) << js.str();
}

}  // namespace
}  // namespace spmv::bench
