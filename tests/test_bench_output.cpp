// The benchmark's outputs: the summary table, CSV and JSON, the report (plots and tables) and the
// CLI end to end.
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
  const double ma_omp = 0.9, mb_omp = 2e-6 / 1.6e-6;                        // 0.9 interleaved, 1.25
  const double ma_omp_sweep = 3e-6 / 4e-6;                                  // 0.75
  const double ma_omp_base = 1.4, mb_omp_base = 1.28e-6 / 1.6e-6;           // 1.4 interleaved, 0.8
  const double ma_k4 = 6e-6 / 8e-6, ma_cuda = 0.9e-6 / 1e-6, ma_cuda_base = 0.8e-6 / 1e-6;
  const std::string ma = block(s, "ma ");
  EXPECT_NE(ma.find(fmt::format("\n auto omp k=1: omp/hll t=2 4.0us | oracle omp/hll t=2 hack=32 3.0us | "
                                "auto/oracle {:.3f} (sweep {:.3f}) | auto/base {:.3f} (sweep {:.3f}) | "
                                "plan+convert {:.1f} products\n",
                                ma_omp, ma_omp_sweep, ma_omp_base, 6e-6 / 4e-6, (30e-6 + 10e-6) / 4e-6)),
            std::string::npos) << s;
  EXPECT_NE(ma.find(fmt::format("\n auto omp k=4: omp/csr t=2 8.0us | oracle omp/csr t=2 k=4 6.0us | "
                                "auto/oracle {0:.3f} (sweep {0:.3f}) | auto/base - (sweep -) | plan+convert 0.0 "
                                "products\n", ma_k4)),
            std::string::npos) << s;
  EXPECT_NE(ma.find(fmt::format("\n auto cuda k=1: cuda/csr bs=256 1.0us | oracle cuda/csr bs=256 0.9us | "
                                "auto/oracle {0:.3f} (sweep {0:.3f}) | auto/base {1:.3f} (sweep {1:.3f}) | "
                                "plan+convert {2:.1f} products\n",
                                ma_cuda, ma_cuda_base, 50e-6 / 1e-6)),
            std::string::npos) << s;
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
                        " auto/baseline -\n", ma_k4));
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

// With several precisions each matrix has a line per precision, auto is compared with the oracle
// of its own precision (a float row is never a double auto's oracle, nor the reverse) and its
// totals are per precision; a line gives our best GFLOPS of single and mixed over double's.
TEST(Bench, SummaryKeepsPrecisionsApart) {
  std::vector<Row> rows = {
      timed("m", "omp", "csr", 4e-6, 2),
      auto_row("m", "omp", 5e-6, "omp/csr t=2", 0, 0),
      timed("m", "omp", "csr", 2e-6, 2),
      auto_row("m", "omp", 2.5e-6, "omp/csr t=2", 0, 0),
      timed("m", "omp", "csr", 3e-6, 2),
  };
  rows[2].precision = rows[3].precision = "single";
  rows[4].precision = "mixed";
  const std::string s = summary_table(rows);
  std::string flat;  // runs of spaces made one
  for (char c : s)
    if (c != ' ' || flat.empty() || flat.back() != ' ') flat += c;
  EXPECT_NE(flat.find("matrix origin nnz precision | best CPU kernel"), std::string::npos) << s;
  // GFLOPS = 2 * 1000 / t: 0.5 double, 1.0 single, 0.667 mixed.
  EXPECT_NE(flat.find("\nm real 1000 double | omp/csr t=2 0.50 "), std::string::npos) << s;
  EXPECT_NE(flat.find("\nm real 1000 single | omp/csr t=2 1.00 "), std::string::npos) << s;
  EXPECT_NE(flat.find("\nm real 1000 mixed | omp/csr t=2 0.67 "), std::string::npos) << s;
  EXPECT_NE(flat.find("\n best single/double: CPU 2.00x | mixed/double: CPU 1.33x\n"), std::string::npos) << s;
  // Each auto against the csr row of its precision: 4/5 and 2/2.5, both 0.8 (mixed with each other: 0.4).
  EXPECT_NE(flat.find("\n auto omp double: omp/csr t=2 5.0us | oracle omp/csr t=2 4.0us | auto/oracle 0.800 "),
            std::string::npos) << s;
  EXPECT_NE(flat.find("\n auto omp single: omp/csr t=2 2.5us | oracle omp/csr t=2 2.0us | auto/oracle 0.800 "),
            std::string::npos) << s;
  EXPECT_NE(flat.find("\nauto omp double over 1 matrices"), std::string::npos) << s;
  EXPECT_NE(flat.find("\nauto omp single over 1 matrices"), std::string::npos) << s;
  // One precision: no precision column, no ratio line, auto named as before.
  const std::string one = summary_table({rows[0], rows[1]});
  EXPECT_EQ(one.substr(0, one.find('\n')).find("precision"), std::string::npos) << one;
  EXPECT_EQ(one.find("/double"), std::string::npos) << one;
  EXPECT_NE(one.find("\nauto omp over 1 matrices"), std::string::npos) << one;
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
  for (const char* c : {"matrix", "origin", "scale", "rows", "cols", "nnz", "nnz_row_mean", "nnz_row_std",
                        "backend", "kernel", "format", "baseline", "threads", "block_size", "hack",
                        "nz_per_block", "k", "layout", "precision", "status", "check", "max_rel_error", "mean_rel_error",
                        "convert_s", "setup_s", "time_median_s", "time_min_s", "gflops", "speedup",
                        "efficiency", "bandwidth_gbs", "ceiling_gbs", "bandwidth_share", "iter50_s",
                        "iter500_s", "detail", "chosen", "planning_s", "duel_oracle", "duel_baseline", "hostname", "cpu_model", "device", "compiler", "git_commit",
                        // the timing's spread, the threads asked for, the pinning and the ceilings' spread
                        "threads_requested", "time_mean_s", "time_max_s", "time_cv", "time_drift", "measurements",
                        "noise_threshold", "omp_proc_bind", "omp_places", "omp_num_threads", "cpu_triad_gbs",
                        "cpu_triad_min_gbs", "cpu_triad_max_gbs", "cpu_triad_runs", "gpu_copy_gbs", "gpu_copy_min_gbs",
                        "gpu_copy_max_gbs", "gpu_copy_runs"})
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
    if (value) setenv(name, value, 1);
    else unsetenv(name);
  }
  ~EnvScope() {
    if (old_) setenv(name_.c_str(), old_->c_str(), 1);
    else unsetenv(name_.c_str());
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

std::string run_report(const std::string& dir, const std::string& csv, const std::string& out) {
  const std::string cmd = fmt::format("{} report {} -o {}/{} > {}/log 2>&1", SPMV_CLI, csv, dir, out, dir);
  std::stringstream log, md;
  if (std::system(cmd.c_str()) != 0) {
    log << std::ifstream(dir + "/log").rdbuf();
    ADD_FAILURE() << cmd << "\n" << log.str();
    return "";
  }
  md << std::ifstream(dir + "/" + out + "/report.md").rdbuf();
  return md.str();
}

// A CSV that is not the benchmark's, a CSV cut short, a folder given as the CSV, an output that
// cannot be a folder: one line naming the file (and line), exit 1, no Python traceback and no
// "needs matplotlib" (which it has).
TEST(Bench, ReportRefusesBadInputInOneLine) {
  const test::ScratchDir scratch;
  const std::string dir = scratch.str();
  std::ofstream(dir + "/other.csv") << "a,b\n1,2\n";
  std::ofstream(dir + "/cut.csv") << "matrix,backend,kernel,status,check,gflops,k\nm,omp,csr,ok,passed,1.5,1\nm,omp\n";
  std::ofstream(dir + "/file") << "x";
  const auto report = [&](const std::string& args) {
    const int rc = std::system(fmt::format("{} report {} > {}/log 2>&1", SPMV_CLI, args, dir).c_str());
    std::stringstream log;
    log << std::ifstream(dir + "/log").rdbuf();
    return std::pair{WIFEXITED(rc) ? WEXITSTATUS(rc) : -1, log.str()};
  };
  EXPECT_EQ(report(dir + "/other.csv -o " + dir + "/r"),
            std::pair(1, dir + "/other.csv: not a results CSV of `spmv bench` (no column 'matrix')\n"));
  EXPECT_EQ(report(dir + "/cut.csv -o " + dir + "/r"), std::pair(1, dir + "/cut.csv:3: 7 columns in the header, 2 in this row\n"));
  EXPECT_EQ(report(dir + " -o " + dir + "/r"), std::pair(1, dir + ": Is a directory\n"));
  std::ofstream(dir + "/binary.csv") << std::string("\xff\xfe\x00\x01", 4);
  const auto binary = report(dir + "/binary.csv -o " + dir + "/r");
  EXPECT_EQ(binary.first, 1);
  EXPECT_EQ(binary.second.rfind(dir + "/binary.csv: not a CSV: ", 0), 0u) << binary.second;
  EXPECT_EQ(std::count(binary.second.begin(), binary.second.end(), '\n'), 1) << binary.second;
  std::ofstream(dir + "/min.csv") << "matrix,backend,kernel,status,check,gflops,k\nm,omp,csr,ok,passed,1.5,1\n";
  EXPECT_EQ(report(dir + "/min.csv -o " + dir + "/file"), std::pair(1, dir + "/file: File exists\n"));
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
  // mat0 gets an auto row: its fake-good row at 2 threads, a quarter slower, with the planner's fields.
  Row planned = *find_row(rows, "fake-good", 2);
  planned.kernel = "auto";
  planned.chosen = "omp/fake-good threads=2";
  planned.planning_s = 1e-3;
  planned.time_median_s *= 1.25;
  planned.gflops /= 1.25;
  planned.duel_oracle = 0.9;  // timed interleaved: 0.9 (the sweep's medians say 0.8)
  rows.push_back(planned);
  const test::ScratchDir scratch;
  const std::string dir = scratch.str();
  write_csv(dir + "/results.csv", rows, machine_info(), Ceilings{10e9, 2, 0});
  const std::string s = run_report(dir, dir + "/results.csv", "out");
  ASSERT_FALSE(s.empty());
  for (const char* png : {"gflops_vs_threads_omp_fake-good.png", "speedup_vs_threads_omp_fake-good.png",
                          "efficiency_vs_threads_omp_fake-good.png",
                          "gflops_vs_threads_omp_fake-hll_hack_32.png", "roofline.png",
                          "conversion_cost.png", "cpu_kernels.png", "bandwidth_share.png"}) {
    EXPECT_TRUE(fs::exists(dir + "/out/" + png)) << png;
    if (fs::exists(dir + "/out/" + png)) EXPECT_GT(fs::file_size(dir + "/out/" + png), 1000u) << png;
  }
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
  // The planner's section: one table row (mat0), its summary under the table and at the top.
  EXPECT_TRUE(fs::exists(dir + "/out/auto_vs_oracle.png"));
  EXPECT_NE(s.find("### auto omp k=1"), std::string::npos) << s;
  EXPECT_NE(s.find("| mat0 * | omp/fake-good threads=2 |"), std::string::npos) << s;
  double oracle_s = 1e300;  // the sweep's oracle: mat0's fastest usable omp row
  for (const Row& r : rows)
    if (r.matrix == "mat0" && r.backend == "omp" && r.usable() && !r.baseline && r.kernel != "auto")
      oracle_s = std::min(oracle_s, r.time_median_s);
  // auto/oracle from the interleaved timing, then the sweep's (from the CSV's rounded times: within
  // a unit of its third decimal of the ratio computed here)
  const auto row0 = s.find("| mat0 * | omp/fake-good threads=2 |");
  const auto duel = s.find("| 0.900 | ", row0);
  ASSERT_NE(duel, std::string::npos) << s;
  ASSERT_LT(duel, s.find('\n', row0)) << s;
  EXPECT_NEAR(std::stod(s.substr(duel + 10, 5)), oracle_s / planned.time_median_s, 0.0015) << s;
  EXPECT_EQ(s.find("| mat1 * | omp/fake-good threads=2 |"), std::string::npos) << s;
  EXPECT_NE(s.find("- auto omp k=1 over 1 matrices: auto/oracle geomean"), std::string::npos) << s;

  // A CSV from before the planner (no auto rows, no chosen/planning_s columns) still reports.
  std::ifstream in(dir + "/results.csv");
  std::ofstream old(dir + "/old.csv");
  std::vector<std::size_t> keep;
  std::size_t kernel = 0;
  for (std::string line; std::getline(in, line);) {
    const auto v = split_csv_line(line);
    if (keep.empty()) {
      kernel = std::find(v.begin(), v.end(), "kernel") - v.begin();
      for (std::size_t i = 0; i < v.size(); ++i)
        if (v[i] != "chosen" && v[i] != "planning_s") keep.push_back(i);
    }
    if (v[kernel] == "auto") continue;
    for (std::size_t i : keep)
      old << (i == keep.front() ? "" : ",") << (v[i].find(',') == std::string::npos ? v[i] : '"' + v[i] + '"');
    old << "\n";
  }
  old.close();
  const std::string before = run_report(dir, dir + "/old.csv", "old");
  EXPECT_NE(before.find("auto was not measured"), std::string::npos) << before;
  EXPECT_FALSE(fs::exists(dir + "/old/auto_vs_oracle.png"));
}

// A CSV of two precisions: the other sections read the double rows only (a kernel measured in
// single alone is no column of the GFLOPS table), and a section compares the precisions per matrix
// and backend: our best GFLOPS in each and single over double.
TEST(Bench, ReportComparesPrecisions) {
  std::vector<KernelSpec> reg;
  reg.push_back(fake("fake-good", Backend::Omp, {"threads"}, 1.0, false, {Precision::Double, Precision::Single}));
  reg.push_back(fake("fake-float", Backend::Omp, {}, 1.0, false, {Precision::Single}, Precision::Single));
  SweepConfig cfg = quick_config(reg);
  cfg.precisions = {Precision::Double, Precision::Single};
  cfg.duel_rounds = 0;
  const Csr a = test::csr_from_lengths(std::vector<offset_t>(400, 6), 400, 6);
  auto rows = bench_matrix(a, source("mat0"), cfg, Ceilings{10e9, 2, 0});
  // An auto row in each precision: fake-good at 2 threads of that precision, twice as slow.
  for (const char* p : {"double", "single"})
    for (const Row& r : std::vector<Row>(rows))
      if (r.kernel == "fake-good" && r.threads == 2 && r.precision == p) {
        Row planned = r;
        planned.kernel = "auto";
        planned.chosen = "omp/fake-good threads=2";
        planned.time_median_s *= 2;
        planned.gflops /= 2;
        rows.push_back(planned);
      }
  double best[2] = {0, 0};  // double, single
  for (const Row& r : rows) {
    ASSERT_TRUE(r.usable() || r.status.rfind("skipped: kernel 'fake-float'", 0) == 0) << r.kernel << " " << r.status;
    if (r.usable()) best[r.precision == "single"] = std::max(best[r.precision == "single"], r.gflops);
  }
  ASSERT_GT(best[0], 0);
  ASSERT_GT(best[1], 0);
  const test::ScratchDir scratch;
  const std::string dir = scratch.str();
  write_csv(dir + "/results.csv", rows, machine_info(), Ceilings{10e9, 2, 0});
  const std::string s = run_report(dir, dir + "/results.csv", "out");
  ASSERT_FALSE(s.empty());
  EXPECT_NE(s.find("Precisions measured: double, single."), std::string::npos) << s;
  const auto h = s.find("| matrix | rows | nnz |");
  ASSERT_NE(h, std::string::npos) << s;
  const std::string header = s.substr(h, s.find('\n', h) - h);
  EXPECT_NE(header.find("omp/fake-good"), std::string::npos) << header;
  EXPECT_EQ(header.find("omp/fake-float"), std::string::npos) << header;  // single only: not a double column
  ASSERT_NE(s.find("## Precisions: best GFLOPS per backend"), std::string::npos) << s;
  EXPECT_NE(s.find("| matrix | backend | double MB | double GFLOPS | single GFLOPS | single/double |"), std::string::npos)
      << s;
  const auto l = s.find("| mat0 * | omp | ");
  ASSERT_NE(l, std::string::npos) << s;
  std::string line = s.substr(l, s.find('\n', l) - l);
  line.pop_back();  // the closing '|'
  const double ratio = std::stod(line.substr(line.rfind('|') + 1));
  EXPECT_NEAR(ratio, best[1] / best[0], 0.006) << line;  // two decimals, from the CSV's six digits
  EXPECT_NE(s.find("- omp single/double over 1 matrices: geometric mean"), std::string::npos) << s;
  EXPECT_TRUE(fs::exists(dir + "/out/precision_ratios.png"));
  // auto in each precision against the oracle of its own (so at most 0.5: twice its oracle's row).
  for (const char* p : {"double", "single"}) {
    const auto at = s.find(fmt::format("### auto omp k=1 {}\n", p));
    ASSERT_NE(at, std::string::npos) << p << "\n" << s;
    const auto row = s.find("| mat0 * | omp/fake-good threads=2 | ", at);
    ASSERT_NE(row, std::string::npos) << s;
    const std::string line = s.substr(row, s.find('\n', row) - row);
    std::vector<std::string> cells;
    for (std::size_t b = 1, e; (e = line.find(" |", b)) != std::string::npos; b = e + 2) cells.push_back(line.substr(b + 1, e - b - 1));
    ASSERT_GE(cells.size(), 7u) << line;
    EXPECT_LE(std::stod(cells[6]), 0.5 + 1e-3) << line;  // auto/oracle
  }
}

TEST(Bench, CliQuickRunEndToEnd) {
  const test::ScratchDir scratch;
  const std::string dir = scratch.str();
  const std::string cmd = fmt::format(
      "SPMV_SHARED_MATRICES={} {} bench --quick --noise-threshold 0 --no-progress --out {}/results.csv --cache-dir {}/cache "
      "> {}/stdout 2> {}/stderr",
      test::shared_matrices_dir(), SPMV_CLI, dir, dir, dir, dir);
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  std::stringstream out, csv;
  out << std::ifstream(dir + "/stdout").rdbuf();
  csv << std::ifstream(dir + "/results.csv").rdbuf();
  EXPECT_NE(out.str().find("best CPU kernel"), std::string::npos) << out.str();
  EXPECT_NE(csv.str().find(",real,"), std::string::npos);
  EXPECT_NE(csv.str().find(",synthetic"), std::string::npos);
  // auto's rows carry the interleaved timing against the oracle (on by default).
  std::string line;
  std::getline(csv, line);
  const auto cols = split_csv_line(line);
  const auto col = [&](const char* c) { return std::find(cols.begin(), cols.end(), c) - cols.begin(); };
  int autos = 0, dueled = 0;
  while (std::getline(csv, line)) {
    const auto v = split_csv_line(line);
    if (v[col("kernel")] != "auto" || v[col("status")] != "ok") continue;
    ++autos;
    dueled += !v[col("duel_oracle")].empty() && std::stod(v[col("duel_oracle")]) > 0;
  }
  EXPECT_GT(autos, 0);
  EXPECT_EQ(dueled, autos);
  EXPECT_TRUE(fs::exists(dir + "/results.json"));
}

// The course reports' tables from rows of known times: each figure follows from its definition
// (speedup = T_serial of the same format / T; over serial CSR beside it; T_cpu / T_gpu per
// format; 000 Table 3's best and worst; the theoretical peak at arithmetic intensity 1/6).
TEST(Bench, ReportReproducesTheSeedTables) {
  std::vector<Row> rows;
  const auto add = [&](const std::string& matrix, const std::string& backend, const std::string& kernel,
                       const std::string& format, int threads, double seconds, bool baseline = false) {
    Row r;
    r.matrix = matrix;
    r.origin = matrix == "alike" ? "synthetic" : "real";
    r.rows = r.cols = 1000;
    r.nnz = 1'000'000;
    r.nnz_row_mean = 1000;
    r.nnz_row_std = matrix == "alike" ? 2000 : 10;  // the alike's rows irregular
    r.backend = backend;
    r.kernel = kernel;
    r.format = format;
    r.baseline = baseline;
    r.threads = threads;
    r.block_size = backend == "cuda" ? 256 : 0;
    r.check = "passed";
    r.time_median_s = r.time_min_s = seconds;
    r.gflops = 2e-9 * static_cast<double>(r.nnz) / seconds;
    r.speedup = 4e-3 / seconds;  // as the bench writes it: over its own run's serial CSR
    rows.push_back(r);
  };
  for (const std::string m : {"real1", "alike"}) {
    add(m, "serial", "csr", "csr", 1, 4e-3);
    add(m, "serial", "hll", "hll", 1, 8e-3);
    add(m, "omp", "csr", "csr", 1, 3e-3);
    add(m, "omp", "csr", "csr", 2, 1e-3);
    add(m, "omp", "hll", "hll", 2, 2e-3);
    add(m, "omp", "hll", "hll", 4, 0.5e-3);  // beyond the cores: not in the fixed-thread tables
    add(m, "cuda", "csr-scalar", "csr", 0, 5e-4);
    add(m, "cuda", "hll", "hll", 0, 2.5e-4);
    add(m, "cuda", "cusparse", "csr", 0, 1e-4, true);  // a baseline: never marked best or worst
    add(m, "serial", "csr", "csr", 1, 2e-3);  // another run's serial CSR (CSVs joined): the column rules
  }
  const test::ScratchDir scratch;
  const std::string dir = scratch.str();
  MachineInfo m = machine_info();
  m.cores = 2;
  Ceilings c{10e9, 2, 1000e9};
  c.gpu_peak = 448.064e9;
  write_csv(dir + "/seed.csv", rows, m, c);
  const std::string s = run_report(dir, dir + "/seed.csv", "seed");
  ASSERT_FALSE(s.empty());
  const auto line = [&](const std::string& heading, const std::string& first_cells) {
    const auto h = s.find(heading);
    if (h == std::string::npos) return std::string("no heading: " + heading);
    const auto l = s.find("\n| " + first_cells, h);
    return l == std::string::npos ? "no line: " + first_cells : s.substr(l + 1, s.find('\n', l + 1) - l - 1);
  };
  // 000 Tables 1-2 at the 2 cores: CSR 4 ms serial over 1 ms; HLL over serial HLL 8/2, over serial CSR 4/2.
  EXPECT_EQ(line("### CPU, CSR format, 2 threads (000 Tables 1-2)", "real1 |"), "| real1 | 1.000 | 2 | 4 | csr |");
  EXPECT_EQ(line("### CPU, HLL format, 2 threads (000 Tables 1-2)", "alike * |"), "| alike * | 2.000 | 1 | 4 | 2 | hll |");
  // 000 Table 3: GFLOPS 8 (hll) the best of ours, 4 (csr-scalar) the worst; cuSPARSE's 20 unmarked.
  EXPECT_EQ(line("## GPU: GFLOPS per kernel", "real1 |"), "| real1 | 1000 | 1000000 | 1000 | 10 | _4_ | 20 | **8** |");
  // 000 Table 4: csr-scalar over serial CSR 4/0.5, hll over serial HLL 8/0.25.
  EXPECT_EQ(line("(000 Table 4)", "real1 |"), "| real1 | 8 | 32 |");
  // 002: speedups over serial CSR, best setting per format (HLL's best CPU setting: 4 threads).
  EXPECT_EQ(line("(002 Tables 1-2)", "real1 |"), "| real1 | 4 | 8 | 8 | 16 |");
  // 002 Figs. 11-12: best CPU time over best GPU time, per format.
  EXPECT_EQ(line("(002 Figures 11-12)", "alike * |"), "| alike * | 2 | 2 |");
  EXPECT_NE(s.find("Irregular here: alike *."), std::string::npos) << s;
  EXPECT_NE(s.find("GPU theoretical peak (memory clock x bus width x 2, as 000 computes 448 GB/s) 448 GB/s: at 2 flops per "
                   "12 bytes of matrix (000's arithmetic intensity 1/6) at most 75 GFLOPS"), std::string::npos) << s;
  for (const char* png : {"seed_cpu_over_gpu.png", "seed_csr_vs_hll_openmp_gflops.png", "seed_csr_vs_hll_openmp_efficiency.png",
                          "seed_csr_vs_hll_cuda_speedup.png", "gpu_kernels.png", "roofline.png"})
    EXPECT_TRUE(fs::exists(dir + "/seed/" + png)) << png;
}

}  // namespace
}  // namespace spmv::bench
