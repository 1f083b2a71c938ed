// The report from the benchmark's CSV (plots and tables, the course reports' tables, bad input) and
// the CLI's bench and report end to end.
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

// Runs `spmv report CSV -o DIR/OUT` and returns its report.md ("" and a failure where it fails).
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
  EXPECT_EQ(report(dir + "/cut.csv -o " + dir + "/r"),
            std::pair(1, dir + "/cut.csv:3: 7 columns in the header, 2 in this row\n"));
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
                          "efficiency_vs_threads_omp_fake-good.png", "gflops_vs_threads_omp_fake-hll_hack_32.png",
                          "roofline.png", "conversion_cost.png", "cpu_kernels.png", "bandwidth_share.png"}) {
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
  EXPECT_EQ(header.find("fake-wrong"), std::string::npos) << header;    // ...never a GFLOPS column
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
  EXPECT_NE(s.find("| matrix | backend | double MB | double GFLOPS | single GFLOPS | single/double |"),
            std::string::npos)
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
    for (std::size_t b = 1, e; (e = line.find(" |", b)) != std::string::npos; b = e + 2)
      cells.push_back(line.substr(b + 1, e - b - 1));
    ASSERT_GE(cells.size(), 7u) << line;
    EXPECT_LE(std::stod(cells[6]), 0.5 + 1e-3) << line;  // auto/oracle
  }
}

TEST(Bench, CliQuickRunEndToEnd) {
  const test::ScratchDir scratch;
  const std::string dir = scratch.str();
  const std::string cmd = fmt::format(
      "SPMV_SHARED_MATRICES={} {} bench --quick --noise-threshold 0 --no-progress --out {}/results.csv --cache-dir "
      "{}/cache "
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

// An OpenMP row of matrix "m" (1000 x 1000, a million nonzeros), checked, at `gflops`.
Row omp_row(const std::string& kernel, const std::string& format, int threads, double gflops) {
  Row r;
  r.matrix = "m";
  r.origin = "real";
  r.rows = r.cols = 1000;
  r.nnz = 1'000'000;
  r.nnz_row_mean = 1000;
  r.backend = "omp";
  r.kernel = kernel;
  r.format = format;
  r.threads = r.threads_requested = threads;
  r.check = "passed";
  r.gflops = gflops;
  r.time_median_s = r.time_min_s = r.time_mean_s = 2e-3 / gflops;
  return r;
}

// 003 Fig. 17: CSR5's automatic sigma against the best swept one, each at its best thread count:
// auto (sigma 16 in its detail) at 2 GFLOPS, sigma 8 at 4 (its best over threads), sigma 32 at 1.
TEST(Bench, ReportSetsCsr5sAutomaticSigmaBesideTheBest) {
  std::vector<Row> rows;
  const auto add = [&](const std::string& settings, const std::string& detail, int threads, double gflops) {
    rows.push_back(omp_row("csr5", "csr5", threads, gflops));
    rows.back().settings = settings;
    rows.back().detail = detail;
  };
  add("", "omega=4 sigma=16 tiles=100", 1, 1.0);
  add("", "omega=4 sigma=16 tiles=100", 2, 2.0);
  add("csr5_sigma=8", "omega=4 sigma=8 tiles=200", 1, 1.5);
  add("csr5_sigma=8", "omega=4 sigma=8 tiles=200", 2, 4.0);
  add("csr5_sigma=32", "omega=4 sigma=32 tiles=50", 2, 1.0);
  const test::ScratchDir scratch;
  const std::string dir = scratch.str();
  write_csv(dir + "/sigma.csv", rows, machine_info(), Ceilings{10e9, 2, 0});
  const std::string s = run_report(dir, dir + "/sigma.csv", "sigma");
  EXPECT_NE(s.find("| m | omp | 16 | 2 | 8 | 4 | 0.50 |"), std::string::npos) << s;
  EXPECT_NE(s.find("Automatic / best: geometric mean 0.50, lowest 0.50 (1 matrix-backend pair)."), std::string::npos)
      << s;
}

// 004's SpMM kernels under their names in the SpMM section, each beside auto and our best on its
// matrix, k and layout: ELL's sub-warp word, CSR's by-row shape and CSR-adaptive at k > 1; a
// variant without a name of 004's and the default rows stay out of that table.
TEST(Bench, ReportNamesTheSpmmReportsKernels) {
  std::vector<Row> rows;
  const auto add = [&](const std::string& kernel, const std::string& settings, double gflops) {
    rows.push_back(omp_row(kernel, kernel == "csr-adaptive" ? "csr" : kernel, 0, gflops));
    Row& r = rows.back();
    r.backend = "cuda";
    r.k = 4;
    r.settings = settings;
  };
  add("auto", "", 140);
  add("ell", "", 100);
  add("ell", "variant=subwarp", 150);
  add("csr", "variant=c1:w32:k8", 80);
  add("csr", "variant=c2:w8", 90);
  add("csr-adaptive", "", 60);
  const test::ScratchDir scratch;
  const std::string dir = scratch.str();
  write_csv(dir + "/spmm.csv", rows, machine_info(), Ceilings{10e9, 2, 0});
  const std::string s = run_report(dir, dir + "/spmm.csv", "spmm");
  EXPECT_NE(s.find("| m | 4 | row | ELLPACK_Sub_warp (2 threads an element) | ell variant=subwarp | 150 | 140 | "
                   "150 (ell) | 1.07 |"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("| m | 4 | row | CSR_Vector_by_row (8 sub-warps x 4) | csr variant=c1:w32:k8 | 80 | 140 |"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("| m | 4 | row | CSR-Adaptive SpMM (a block an element) | csr-adaptive | 60 | 140 |"),
            std::string::npos)
      << s;
  EXPECT_EQ(s.find("variant=c2:w8 |"), std::string::npos) << s;
}

// A report written again into the same folder removes the plots the earlier report there drew and
// this one does not (they would pass for this run's); a PNG no report named stays.
TEST(Bench, ReportAgainRemovesTheEarlierReportsPlotsOnly) {
  const test::ScratchDir scratch;
  const std::string dir = scratch.str();
  std::vector<Row> rows;
  for (const char* kernel : {"csr", "hll"})
    for (const int t : {1, 2}) rows.push_back(omp_row(kernel, kernel, t, 1.0 + t));
  write_csv(dir + "/both.csv", rows, machine_info(), Ceilings{10e9, 2, 0});
  ASSERT_NE(run_report(dir, dir + "/both.csv", "r"), "");
  const std::string hll = dir + "/r/gflops_vs_threads_omp_hll.png", csr = dir + "/r/gflops_vs_threads_omp_csr.png";
  ASSERT_TRUE(fs::exists(hll));
  std::ofstream(dir + "/r/mine.png") << "not the report's";
  rows.resize(2);  // csr only
  write_csv(dir + "/csr.csv", rows, machine_info(), Ceilings{10e9, 2, 0});
  const std::string s = run_report(dir, dir + "/csr.csv", "r");
  EXPECT_NE(s, "");
  EXPECT_FALSE(fs::exists(hll)) << "the earlier report's hll plot left beside this one's";
  EXPECT_TRUE(fs::exists(csr));
  EXPECT_TRUE(fs::exists(dir + "/r/mine.png"));
  std::stringstream log;
  log << std::ifstream(dir + "/log").rdbuf();
  EXPECT_NE(log.str().find("an earlier report there drew and this one does not"), std::string::npos) << log.str();
}

// A CSV joined from runs at two commits (the seed suite's CPU and GPU sides) says both in the
// report's header, each with its rows, not the first row's alone.
TEST(Bench, ReportNamesEveryCommitOfAJoinedCsv) {
  const test::ScratchDir scratch;
  const std::string dir = scratch.str();
  MachineInfo mi = machine_info();
  std::string joined;
  for (const auto& [commit, rows] : {std::pair{"aaaaaaa", 2}, {"bbbbbbb", 1}}) {
    mi.git_commit = commit;
    std::vector<Row> v;
    for (int i = 0; i < rows; ++i) v.push_back(omp_row("csr", "csr", i + 1, 1.0 + i));
    write_csv(dir + "/part.csv", v, mi, Ceilings{10e9, 2, 0});
    std::stringstream text;
    text << std::ifstream(dir + "/part.csv").rdbuf();
    const std::string t = text.str();
    joined += joined.empty() ? t : t.substr(t.find('\n') + 1);  // the header once
  }
  std::ofstream(dir + "/joined.csv") << joined;
  const std::string s = run_report(dir, dir + "/joined.csv", "joined");
  EXPECT_NE(s.find("; commits aaaaaaa (2 rows), bbbbbbb (1 row);"), std::string::npos) << s.substr(0, 600);
}

// A noisy run: a kernel whose every configuration stayed noisy shows its fastest median as ~value
// (indicative) instead of a dash, and the summary gives a verdict with what to do about it.
TEST(Bench, ReportMarksNoisyFiguresAndGivesAVerdict) {
  std::vector<Row> rows;
  const auto add = [&](const std::string& kernel, int threads, double gflops, const std::string& status) {
    rows.push_back(omp_row(kernel, "csr", threads, gflops));
    rows.back().status = status;
  };
  add("csr-balanced", 1, 1.0, "ok");
  add("csr-balanced", 2, 2.0, "ok");
  add("csr-dynamic", 1, 1.5, "noisy");
  add("csr-dynamic", 2, 3.0, "noisy");
  const test::ScratchDir scratch;
  const std::string dir = scratch.str();
  write_csv(dir + "/noisy.csv", rows, machine_info(), Ceilings{10e9, 2, 0});
  const std::string s = run_report(dir, dir + "/noisy.csv", "noisy");
  EXPECT_NE(s.find("| m | 1000 | 1000000 | 1000 | 0 | 2 | ~3 |"), std::string::npos) << s;
  EXPECT_NE(s.find("**Verdict: a noisy run.** 2 of 4 configurations (50%)"), std::string::npos) << s;
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
    // 003's grouping by the longest row: the alike irregular (a row of 5000 entries, over 4096) though
    // its lengths spread little; real1 regular though they spread more (the rule is not the std's).
    r.nnz_row_std = matrix == "alike" ? 10 : 2000;
    r.nnz_row_min = 900;
    r.nnz_row_max = matrix == "alike" ? 5000 : 1020;
    r.backend = backend;
    r.kernel = kernel;
    r.format = format;
    r.baseline = baseline;
    r.threads = threads;
    r.block_size = backend == "cuda" ? 256 : 0;
    r.check = "passed";
    r.time_median_s = r.time_min_s = seconds;
    r.time_mean_s = 1.25 * seconds;  // the seeds' measure, shown beside the median
    r.gflops = 2e-9 * static_cast<double>(r.nnz) / seconds;
    r.speedup = 4e-3 / seconds;  // as the bench writes it: over its own run's serial CSR
    r.efficiency = threads > 0 ? r.speedup / threads : 0;
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
    add(m, "cuda", "csr-vector", "csr", 0, 2e-3);  // ours: the sub-warp from the rows
    add(m, "cuda", "csr-vector", "csr", 0, 1e-3);  // 000's CSR-Vector, a warp per row: its own column
    rows.back().settings = "subwarp=32";
    add(m, "cuda", "cusparse", "csr", 0, 1e-4, true);  // a baseline: never marked best or worst
    add(m, "serial", "csr", "csr", 1, 2e-3);           // another run's serial CSR (CSVs joined): the column rules
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
  // 000 Tables 1-2 at the 2 cores: CSR 4 ms serial over 1 ms (mean 1.25); HLL over serial HLL 8/2,
  // over serial CSR 4/2.
  EXPECT_EQ(line("### CPU, CSR format, 2 threads (000 Tables 1-2)", "real1 |"),
            "| real1 | 1.000 | 1.250 | 2 | 4 | csr |");
  EXPECT_EQ(line("### CPU, HLL format, 2 threads (000 Tables 1-2)", "alike * |"),
            "| alike * | 2.000 | 2.500 | 1 | 4 | 2 | hll |");
  // 000 Table 3: GFLOPS 8 (hll) the best of ours, 2 (csr-vector's best setting) the worst; cuSPARSE's
  // 20 unmarked.
  EXPECT_EQ(line("## GPU: GFLOPS per kernel", "real1 |"),
            "| real1 | 1000 | 1000000 | 1000 | 2000 | 4 | _2_ | 20 | **8** |");
  // 000 Table 4: csr-scalar over serial CSR 4/0.5, our csr-vector 4/2, 000's CSR-Vector (a warp per
  // row) 4/1 in a column of its own, hll over serial HLL 8/0.25.
  EXPECT_EQ(line("(000 Table 4)", "real1 |"), "| real1 | 8 | 2 | 4 | 32 |");
  EXPECT_NE(s.find("| matrix | cuda/csr-scalar | cuda/csr-vector | cuda/csr-vector subwarp=32 | cuda/hll |"),
            std::string::npos)
      << s;
  // 002: speedups over serial CSR, best setting per format (HLL's best CPU setting: 4 threads).
  EXPECT_EQ(line("(002 Tables 1-2)", "real1 |"), "| real1 | 4 | 8 | 8 | 16 |");
  // 002 Figs. 11-12: best CPU time over best GPU time, per format.
  EXPECT_EQ(line("(002 Figures 11-12)", "alike * |"), "| alike * | 2 | 2 |");
  EXPECT_NE(s.find("Irregular here (1 of 2): alike *."), std::string::npos) << s;
  EXPECT_NE(
      s.find("GPU theoretical peak (memory clock x bus width x 2, as 000 computes 448 GB/s) 448 GB/s: at 2 flops per "
             "12 bytes of matrix (000's arithmetic intensity 1/6) at most 75 GFLOPS"),
      std::string::npos)
      << s;
  for (const char* png :
       {"seed_cpu_over_gpu.png", "seed_csr_vs_hll_openmp_gflops.png", "seed_csr_vs_hll_openmp_efficiency.png",
        "seed_csr_vs_hll_cuda_speedup.png", "gpu_kernels.png", "roofline.png",
        // the per-matrix curves of kernels run at two thread counts or more (000 Figs. 1-2, 001 Figs. 3-8)
        "per_matrix/gflops_vs_threads_omp_csr.png", "per_matrix/efficiency_vs_threads_omp_hll.png"})
    EXPECT_TRUE(fs::exists(dir + "/seed/" + png)) << png;
  EXPECT_NE(s.find("- [per_matrix/speedup_vs_threads_omp_csr.png](per_matrix/speedup_vs_threads_omp_csr.png)"),
            std::string::npos)
      << s;
}

}  // namespace
}  // namespace spmv::bench
