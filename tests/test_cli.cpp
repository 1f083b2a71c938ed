// The spmv command line, run as a process (path from the SPMV_CLI compile definition): output
// keys and values, exit status 0/1/2, --x / --output files, convert to the binary cache.
#include <gtest/gtest.h>
#include <spmv/io.hpp>
#include <spmv/plan.hpp>
#include <spmv/version.hpp>

#include <cstring>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <map>
#include <sstream>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli_util.hpp"
#include "straight_csr_cases.hpp"  // gzipped
#include "test_util.hpp"

using namespace spmv;
namespace fs = std::filesystem;

using namespace spmv::test;

// cli_small.mtx: 4 x 5, rows of 2, 1, 0 and 3 entries.
// --version: the library's version (CMake's) and the commit it was built from, as the library says.
TEST_F(Cli, VersionNamesTheLibraryVersionAndCommit) {
  const Result r = run("--version");
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out, fmt::format("spmv {} (commit {})\n", spmv::version(), spmv::git_commit()));
  EXPECT_NE(std::string(spmv::version()), "");
}

TEST_F(Cli, InfoPrintsTheMatrixNumbers) {
  const Result r = run("info " + kDir + "/cli_small.mtx");
  ASSERT_EQ(r.status, 0) << r.err;
  auto k = keys(r.out);
  // nnz_per_row_std: the population std of {2,1,0,3}, sqrt(1.25); ELL pads 4 rows to 3 slots.
  for (const auto& [key, want] : std::map<std::string, std::string>{{"rows", "4"},
                                                                    {"cols", "5"},
                                                                    {"nnz", "6"},
                                                                    {"field", "real"},
                                                                    {"symmetry", "general"},
                                                                    {"nnz_per_row_mean", "1.5"},
                                                                    {"nnz_per_row_std", "1.11803"},
                                                                    {"max_row_nnz", "3"},
                                                                    {"empty_rows", "1"},
                                                                    {"ell_padding_ratio", "2"}})
    EXPECT_EQ(k[key], want) << key;
}

TEST_F(Cli, InfoOfASymmetricFileCountsTheExpandedEntries) {
  const Result r = run("info " + kDir + "/coord_real_symmetric.mtx");
  ASSERT_EQ(r.status, 0) << r.err;
  auto k = keys(r.out);
  EXPECT_EQ(k["nnz"], "6");
  EXPECT_EQ(k["symmetry"], "symmetric");
  EXPECT_EQ(k["max_row_nnz"], "3");
}

TEST_F(Cli, ReadsAPipe) {
  const Result r = run("info /dev/stdin", kDir + "/cli_small.mtx");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(keys(r.out)["nnz"], "6");
  EXPECT_EQ(keys(r.out)["empty_rows"], "1");
}

TEST_F(Cli, RunChecksTheProduct) {
  const Result r = run("run " + kDir + "/cli_small.mtx --repeat 2");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(keys(r.out)["check"], "passed");
}

TEST_F(Cli, RunDefaultsToThePlannerOnTheFastestBackend) {
  const Result r = run("run " + kDir + "/cli_small.mtx --repeat 2");
  ASSERT_EQ(r.status, 0) << r.err;
  auto k = keys(r.out);
  const std::string backend = to_string(default_backend());
  EXPECT_EQ(k["backend"], backend + " (the fastest present)");
  EXPECT_EQ(k["kernel"], "auto");
  EXPECT_EQ(k["plan"].rfind("auto -> " + backend + "/", 0), 0u) << k["plan"];
  const Result one = run("run " + kDir + "/cli_small.mtx --repeat 1 --backend omp --products 1 --no-trial");
  ASSERT_EQ(one.status, 0) << one.err;
  k = keys(one.out);
  EXPECT_EQ(k["plan"].rfind("auto -> omp/csr ", 0), 0u) << k["plan"];
  EXPECT_NE(k["plan"].find("model only"), std::string::npos) << k["plan"];
  EXPECT_EQ(k["convert_s"], "0");
}

TEST_F(Cli, RunReadsXAndWritesY) {
  io::write_dense_vector(tmp("x.mtx"), {1, 2, 3, 4, 5});
  const Result r =
      run(fmt::format("run {}/cli_small.mtx --x {} --output {} --repeat 1", kDir, tmp("x.mtx"), tmp("y.mtx")));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(keys(r.out)["check"], "passed");
  // y = A x by hand: row 1: 2*1 - 1*5; row 2: 3*2; row 3 empty; row 4: 1*1 + 4*3 + 0.5*4.
  EXPECT_EQ(io::read_dense_vector(tmp("y.mtx")), (std::vector<double>{-3, 6, 0, 15}));
}

TEST_F(Cli, WrongLengthXIsAnError) {
  io::write_dense_vector(tmp("x.mtx"), {1, 2, 3});
  const Result r = run(fmt::format("run {}/cli_small.mtx --x {}", kDir, tmp("x.mtx")));
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, tmp("x.mtx") + ": vector has 3 values, the matrix needs 5\n");
}

// Sizes from the input checked before allocating: a coordinate vector whose size line
// claims 2^31-1 x 2^31-1, and --k 2^31-1, were uncaught std::length_error aborts (exit 134). Now the
// size line is checked against the memory budget (given here, so that the test does not depend on
// the machine) before anything is allocated.
TEST_F(Cli, HugeSizesFromTheInputAreRefusedNotAborted) {
  {
    std::ofstream(tmp("huge_vec.mtx")) << "%%MatrixMarket matrix coordinate real general\n2147483647 2147483647 0\n";
    const Result r = run(fmt::format("run {}/cli_small.mtx --x {} --memory-budget 1G", kDir, tmp("huge_vec.mtx")));
    EXPECT_EQ(r.status, 1) << r.err;
    EXPECT_EQ(r.err, tmp("huge_vec.mtx") +
                         ":2: a 2147483647 x 2147483647 matrix with 0 entries needs 16.0 GiB "
                         "(row pointers 16.0 GiB, entries 0 B); the memory budget is 1.0 GiB\n");
  }
  // olm1000 (1000 x 1000): 32 TiB, over any machine's budget, refused at its size line (line 14).
  const Result r = run(fmt::format("run {}/olm1000.mtx.gz --k 2147483647", test::shared_matrices_dir()));
  EXPECT_EQ(r.status, 1) << r.err;
  // (1000 rows and 1000 columns at 40 + 24 bytes a right-hand side: 64000 x 2^31 bytes.)
  EXPECT_NE(
      r.err.find("olm1000.mtx.gz:14: a 1000 x 1000 matrix with 3996 entries needs 128000.0 GiB (row pointers 7.8 KiB, "
                 "entries 62.4 KiB, X and Y at --k 2147483647, the reference and the plan's copies 128000.0 GiB); "
                 "the memory budget is "),
      std::string::npos)
      << r.err;
}

TEST_F(Cli, MalformedFileExitsOneWithFileAndLine) {
  for (const char* cmd : {"info", "run", "convert"}) {
    const std::string extra = std::string(cmd) == "convert" ? " " + tmp("out.spmvbin") : "";
    const Result r = run(fmt::format("{} {}/bad_index_zero.mtx{}", cmd, kDir, extra));
    EXPECT_EQ(r.status, 1) << cmd;
    EXPECT_EQ(r.err, kDir + "/bad_index_zero.mtx:4: row index 0 out of range 1..3\n") << cmd;
  }
}

// Every subcommand that reads a matrix takes a FIFO and /dev/stdin: the path is opened once (convert
// from a FIFO once hung 6 times out of 6, info and run 2 of 6). A writer that writes once; a
// second open would wait forever, so the command runs under `timeout` (exit 124 on a hang).
TEST_F(Cli, FifoAndStdinWorkForEverySubcommand) {
  const std::string fifo = tmp("in.fifo");
  for (const std::string& args : {"info " + fifo, "run " + fifo, "convert " + fifo + " " + tmp("out.spmvbin"),
                                  "convert " + fifo + " " + tmp("out.mtx")}) {
    fs::remove(fifo);
    ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
    const int rc = std::system(fmt::format("(cat '{}/cli_small.mtx' > '{}' &); timeout 20 '{}' {} > '{}' 2>&1", kDir,
                                           fifo, SPMV_CLI, args, tmp("fifo_out.txt"))
                                   .c_str());
    EXPECT_EQ(WIFEXITED(rc) ? WEXITSTATUS(rc) : -1, 0) << args << "\n" << slurp(tmp("fifo_out.txt"));
  }
  EXPECT_EQ(io::load_csr(tmp("out.spmvbin")).nnz(), io::load_csr(kDir + "/cli_small.mtx").nnz());
  EXPECT_EQ(io::load_csr(tmp("out.mtx")).val, io::load_csr(kDir + "/cli_small.mtx").val);
  const Result r = run("info /dev/stdin", kDir + "/cli_small.mtx");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(keys(r.out)["nnz"], std::to_string(io::load_csr(kDir + "/cli_small.mtx").nnz()));
}

// Hostile inputs refused with file, line and a short message in bounded memory (the command runs
// with 1 GiB of address space: a large allocation would say "out of memory" instead).
TEST_F(Cli, HostileInputsAreRefusedInBoundedMemory) {
  const auto bounded = [&](const std::string& args) {
    const int rc = std::system(
        fmt::format("(ulimit -v 1048576; '{}' {}) > '{}' 2> '{}'", SPMV_CLI, args, tmp("o.txt"), tmp("e.txt")).c_str());
    return Result{WIFEXITED(rc) ? WEXITSTATUS(rc) : -1, slurp(tmp("o.txt")), slurp(tmp("e.txt"))};
  };
  const std::string banner =
      "missing banner: the first line must be '%%MatrixMarket matrix <format> <field> <symmetry>'";
  Result r = bounded("info /dev/zero");
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, "/dev/zero:1: " + banner + "\n");
  std::ofstream(tmp("rows.mtx")) << "%%MatrixMarket matrix coordinate real general\n2147483647 1 1\n1 1 1\n";
  r = bounded("run " + tmp("rows.mtx") + " --memory-budget 4G");
  EXPECT_EQ(r.status, 1);
  // run's vectors, reference and plan: 60 bytes a row (120 GiB), 24 a column.
  EXPECT_EQ(r.err, tmp("rows.mtx") +
                       ":2: a 2147483647 x 1 matrix with 1 entries needs 136.0 GiB (row pointers 16.0 GiB, "
                       "entries 16 B, x, y, the reference and the plan's copies 120.0 GiB); the memory "
                       "budget is 4.0 GiB\n");
  std::ofstream(tmp("x.mtx")) << "%%MatrixMarket matrix coordinate real general\n" << std::string(1 << 20, 'x') << "\n";
  r = bounded("info " + tmp("x.mtx"));
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, tmp("x.mtx") + ":2: a line longer than 65536 bytes before the size line\n");
}

// A matrix with infinities passes its check on every CPU backend (it once failed: the reference's
// compensation made +-inf rows NaN), and a row overflowing in double is passed with a note.
// What `run` holds beside the matrix counts in its memory budget: y, the plan's y, the reference's
// three arrays and the plan's per-row arrays (a matrix of 2^31 rows and one entry passed
// a 62.9 GiB budget counting x and y alone and took more than 33 GB). 2^22 rows and one entry:
// refused under a budget that x and y alone (64 MiB) would pass; run, its peak stays within what
// the budget was told (68 bytes a row, 24 a column) and the process's own few MiB.
TEST_F(Cli, RunCountsItsVectorsReferenceAndPlanInTheBudget) {
  const index_t rows = 1 << 22;
  std::ofstream(tmp("tall.mtx")) << "%%MatrixMarket matrix coordinate real general\n" << rows << " 1 1\n5 1 2.5\n";
  const Result refused = run("run " + tmp("tall.mtx") + " --memory-budget 128M");
  EXPECT_EQ(refused.status, 1);
  // (272 MiB in all: 32 MiB of row pointers and 240 MiB for run; sizes from 0.1 GiB are given in GiB.)
  EXPECT_EQ(refused.err, tmp("tall.mtx") +
                             ":2: a 4194304 x 1 matrix with 1 entries needs 0.3 GiB (row pointers 32.0 MiB, "
                             "entries 16 B, x, y, the reference and the plan's copies 0.2 GiB); the memory "
                             "budget is 0.1 GiB\n");
  const Peak ok =
      run_for_peak({"run", tmp("tall.mtx"), "--backend", "omp", "--memory-budget", "300M", "--repeat", "2"});
  ASSERT_EQ(ok.status, 0);
  const double peak_mib = ok.mib;
  EXPECT_LE(peak_mib, 272.0 + 24.0) << "peak " << peak_mib << " MiB";
  EXPECT_GE(peak_mib, 150.0)
      << "peak " << peak_mib
      << " MiB";  // the row pointers, y, the plan's y and the reference: the count is no idle bound
}

// A gzipped binary cache (its size unknown until read) whose header claims 2^26 rows and no payload:
// refused at the payload's end, having committed only what arrived (its 512 MiB of row pointers
// were committed before a byte of them was read).
TEST_F(Cli, AGzippedCacheClaimingHugeSizesCommitsOnlyWhatArrives) {
  std::string header = slurp(std::string(SPMV_TEST_DATA) + "/v1_coord_real_general.spmvbin")
                           .substr(0, 64);  // version 1: no header checksum
  const std::int32_t rows = 1 << 26, cols = 1;
  const std::int64_t nnz = 0, payload = 8 * (std::int64_t{rows} + 1);
  std::memcpy(header.data() + 16, &rows, 4);
  std::memcpy(header.data() + 20, &cols, 4);
  std::memcpy(header.data() + 24, &nnz, 8);
  std::memcpy(header.data() + 40, &payload, 8);
  std::ofstream(tmp("tall.spmvbin.gz"), std::ios::binary) << gzipped(header);
  const Result r = run("info " + tmp("tall.spmvbin.gz"));
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, tmp("tall.spmvbin.gz") +
                       ": truncated binary cache: the payload: the file ended after 0 of 536870920 bytes\n");
  const Peak p = run_for_peak({"info", tmp("tall.spmvbin.gz")});
  EXPECT_EQ(p.status, 1);
  EXPECT_LT(p.mib, 100.0);
}

// A file whose repeats start after a million distinct positions (three million `1 1 1` lines) is
// read in one thread within 1.2x its CSR + 64 MiB: the merger's table holds 4-byte slots in a
// mapping of its own, and the COO's pages past its entries go back before the conversion (a table of
// 16-byte keys and slots, and the tables it outgrew kept by malloc, passed the bound).
TEST_F(Cli, LateRepeatsAreReadWithinTheMemoryBound) {
  const int distinct = 1000000, repeats = 3000000;
  {
    std::ofstream f(tmp("late.mtx"));
    f << "%%MatrixMarket matrix coordinate real general\n"
      << distinct << ' ' << distinct << ' ' << distinct + repeats << '\n';
    for (int i = 0; i < distinct; ++i)  // (1,1) first: the repeats are summed into it
      f << 1 + static_cast<std::int64_t>(i) * 7919 % distinct << ' ' << 1 + i % (distinct - 1) << " 0." << i << '\n';
    for (int i = 0; i < repeats; ++i) f << "1 1 1\n";
  }
  const Result r = run("info " + tmp("late.mtx"));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(keys(r.out)["nnz"], std::to_string(distinct));
  // The read's own memory: the peak less the process's on a 4 x 5 matrix (larger where the CLI
  // links the CUDA runtime).
  const Peak base = run_for_peak({"info", kDir + "/cli_small.mtx"}, {"OMP_NUM_THREADS=1"});
  const Peak p = run_for_peak({"info", tmp("late.mtx")}, {"OMP_NUM_THREADS=1"});
  ASSERT_EQ(base.status, 0);
  ASSERT_EQ(p.status, 0);
  const double csr_mib = (12.0 * distinct + 8.0 * (distinct + 1)) / (1 << 20);
  EXPECT_LE(p.mib - base.mib, 1.2 * csr_mib + 64.0)
      << "peak " << p.mib << " MiB, " << base.mib << " MiB on a 4 x 5 matrix";
}

// --threads past the library's limit (twice the hardware threads, at least 256) is bad usage; the
// same through OMP_NUM_THREADS is cut to the limit (libgomp crashed creating some 65,000 threads).
// HLL's --hack past the matrix's rows pads nothing: each thread's scratch holds at most the rows
// (a hack of 10^8 took 1.6 GB for a 4 x 5 matrix on 2 threads).
TEST_F(Cli, ThreadsAndHackSizesPastWhatTheyCanUseAreBounded) {
  const Result r = run("run " + kDir + "/cli_small.mtx --threads 100000");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(
      r.err.find(fmt::format("--threads: must be an integer in [1, {}], or 0 (every core OpenMP offers), got '100000'",
                             max_threads())),
      std::string::npos)
      << r.err;
  const int rc =
      std::system(fmt::format("OMP_NUM_THREADS=100000 '{}' run '{}/cli_small.mtx' --backend omp --kernel csr "
                              "--repeat 2 > '{}' 2>&1",
                              SPMV_CLI, kDir, tmp("omp.txt"))
                      .c_str());
  EXPECT_EQ(WIFEXITED(rc) ? WEXITSTATUS(rc) : -1, 0) << slurp(tmp("omp.txt"));
  const Peak hll = run_for_peak({"run", kDir + "/cli_small.mtx", "--backend", "omp", "--threads", "2", "--kernel",
                                 "hll", "--hack", "100000000", "--repeat", "2"});
  EXPECT_EQ(hll.status, 0);
  EXPECT_LT(hll.mib, 100.0);
}

// X and Y of --k > 1 are Matrix Market arrays, column-major whatever --layout the product runs in:
// X = [[1, 3], [2, 4], ...] as cols x k; a 4-value file for the 5-column matrix at k = 2, or a
// 10 x 1 array, is refused (they were read in the product's layout, and row-major gave A X^T).
TEST_F(Cli, XAndYOfSeveralColumnsAreColumnMajorArrays) {
  // cli_small.mtx (4 x 5): y = A x for x = e_j gives column j; X's columns are 1..5 and 10..50.
  std::vector<double> x;
  for (int j = 0; j < 2; ++j)
    for (int i = 0; i < 5; ++i) x.push_back((i + 1) * (j == 0 ? 1.0 : 10.0));
  io::write_dense_matrix(tmp("X.mtx"), x, 5, 2);
  const Csr a = io::load_csr(kDir + "/cli_small.mtx");
  std::vector<double> want(8, 0.0);  // column-major 4 x 2
  for (index_t r = 0; r < 4; ++r)
    for (offset_t p = a.row_ptr[r]; p < a.row_ptr[r + 1]; ++p)
      for (int j = 0; j < 2; ++j) want[j * 4 + r] += a.val[p] * x[j * 5 + a.col[p]];
  for (const char* layout : {"row", "col"}) {
    const Result r = run(
        fmt::format("run {}/cli_small.mtx --k 2 --x {} --layout {} -o {}", kDir, tmp("X.mtx"), layout, tmp("Y.mtx")));
    ASSERT_EQ(r.status, 0) << layout << r.err;
    const io::DenseMatrix y = io::read_dense_matrix(tmp("Y.mtx"));
    EXPECT_EQ(y.rows, 4) << layout;
    EXPECT_EQ(y.cols, 2) << layout;
    EXPECT_EQ(y.values, want) << layout;
  }
  io::write_dense_matrix(tmp("X10.mtx"), std::vector<double>(10, 1.0), 10, 1);
  const Result r = run(fmt::format("run {}/cli_small.mtx --k 2 --x {}", kDir, tmp("X10.mtx")));
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, tmp("X10.mtx") + ": a 10 x 1 array; X must be 5 x 2 (the matrix's columns x --k)\n");
  // y goes gzip-compressed to a .gz name; a binary cache's name is bad usage (y was written there as text).
  ASSERT_EQ(run(fmt::format("run {}/cli_small.mtx --x {} -o {}", kDir, "ones", tmp("y.mtx.gz"))).status, 0);
  EXPECT_EQ(io::read_dense_matrix(tmp("y.mtx.gz")).rows, 4);
  const Result bin = run(fmt::format("run {}/cli_small.mtx -o {}", kDir, tmp("y.spmvbin")));
  EXPECT_EQ(bin.status, 2);
  EXPECT_NE(
      bin.err.find(
          "y is written as a Matrix Market array (.mtx, .mtx.gz); a binary cache (.spmvbin) holds a sparse matrix"),
      std::string::npos)
      << bin.err;
  EXPECT_FALSE(std::filesystem::exists(tmp("y.spmvbin")));
}

// Control bytes in a message (a file name with ESC or a newline) reach the terminal as \xNN.
TEST_F(Cli, MessagesShowControlBytesEscaped) {
  const Result r = run("info " + tmp("bad\x1b[31mname.mtx"));
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, tmp("bad\\x1b[31mname.mtx") + ": cannot open: No such file or directory\n");
}

TEST_F(Cli, InfinitiesPassTheCheck) {
  std::ofstream(tmp("inf.mtx")) << "%%MatrixMarket matrix coordinate real general\n3 3 6\n1 1 inf\n1 2 2\n2 1 -inf\n"
                                   "3 1 1e308\n3 2 1e308\n3 3 -1e308\n";
  for (const char* backend : {"serial", "omp"}) {
    const Result r = run(fmt::format("run {} --backend {} --x ones", tmp("inf.mtx"), backend));
    EXPECT_EQ(r.status, 0) << backend << r.err;
    EXPECT_EQ(keys(r.out)["check"], "passed") << backend;
    EXPECT_EQ(keys(r.out)["check_note"], "1 component overflow the double range in their partial sums: not compared");
  }
}

// A CPU kernel (auto and the baselines left out) that has (has = true) or lacks precision p;
// nullptr where none does.
const KernelSpec* cpu_kernel(Precision p, bool has) {
  for (const KernelSpec& k : kernels())
    if (k.backend == Backend::Omp && k.name != "auto" && !k.baseline && supports(k, p) == has) return &k;
  return nullptr;
}

// --precision single: x rounded to float, the product in float, checked with single's bound.
// x = 0.1 everywhere: row 2 of cli_small is 3 * x_2, which in float is 3.0f * 0.1f (one rounding
// of the exact product of two floats), not double's 3 * 0.1.
TEST_F(Cli, RunInSinglePrecision) {
  const KernelSpec* k = cpu_kernel(Precision::Single, true);
  ASSERT_NE(k, nullptr) << "no CPU kernel computes in single precision";
  io::write_dense_vector(tmp("x.mtx"), std::vector<double>(5, 0.1));
  const Result r =
      run(fmt::format("run {}/cli_small.mtx --backend omp --kernel {} --precision single --x {} --output {} "
                      "--repeat 1",
                      kDir, k->name, tmp("x.mtx"), tmp("y.mtx")));
  ASSERT_EQ(r.status, 0) << r.err;
  auto v = keys(r.out);
  EXPECT_EQ(v["precision"], "single");
  EXPECT_EQ(v["check"], "passed");
  EXPECT_EQ(v["kernel"], k->name);
  const std::vector<double> y = io::read_dense_vector(tmp("y.mtx"));
  ASSERT_EQ(y.size(), 4u);
  EXPECT_EQ(y[1], static_cast<double>(3.0f * 0.1f));
  EXPECT_NE(y[1], 3 * 0.1);
  EXPECT_EQ(y[2], 0.0);  // the empty row
  // The default is double: the same run without --precision says so and computes 3 * 0.1.
  const Result d = run(fmt::format("run {}/cli_small.mtx --backend omp --kernel {} --x {} --output {} --repeat 1", kDir,
                                   k->name, tmp("x.mtx"), tmp("yd.mtx")));
  ASSERT_EQ(d.status, 0) << d.err;
  EXPECT_EQ(keys(d.out)["precision"], "double");
  EXPECT_EQ(io::read_dense_vector(tmp("yd.mtx"))[1], 3 * 0.1);
}

// --precision mixed: float values, double x and sums. A value 0.1 times x = 1 gives float's 0.1
// widened, where double gives 0.1.
TEST_F(Cli, RunInMixedPrecision) {
  const KernelSpec* k = cpu_kernel(Precision::Mixed, true);
  ASSERT_NE(k, nullptr) << "no CPU kernel computes in mixed precision";
  std::ofstream(tmp("tenth.mtx")) << "%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 0.1\n2 2 3\n";
  const Result r = run(fmt::format("run {} --backend omp --kernel {} --precision mixed --x ones --output {} --repeat 1",
                                   tmp("tenth.mtx"), k->name, tmp("y.mtx")));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(keys(r.out)["precision"], "mixed");
  EXPECT_EQ(keys(r.out)["check"], "passed");
  const std::vector<double> y = io::read_dense_vector(tmp("y.mtx"));
  ASSERT_EQ(y.size(), 2u);
  EXPECT_EQ(y[0], static_cast<double>(0.1f));
  EXPECT_EQ(y[1], 3.0);
}

// A precision the kernel lacks: the library's refusal (naming the kernel and the precision), bad
// usage (exit 2) as a kernel the backend lacks is, before the file is read (a missing file gives the
// same message). It exited 1, where the README says 2.
TEST_F(Cli, PrecisionAKernelLacksIsRefused) {
  // An OpenMP kernel (a baseline will do: Eigen has no mixed) without single or mixed.
  const KernelSpec* k = nullptr;
  Precision p = Precision::Single;
  for (const Precision q : {Precision::Single, Precision::Mixed})
    for (const KernelSpec& s : kernels())
      if (!k && s.backend == Backend::Omp && s.name != "auto" && !supports(s, q)) {
        k = &s;
        p = q;
      }
  ASSERT_NE(k, nullptr) << "every CPU kernel computes in single and mixed precision: nothing to refuse";
  const std::string start =
      fmt::format("--precision {0}: kernel '{1}' (omp) has no {0} precision", to_string(p), k->name);
  for (const std::string& file : {kDir + "/cli_small.mtx", tmp("nope.mtx")}) {
    const Result r = run(fmt::format("run {} --backend omp --kernel {} --precision {}", file, k->name, to_string(p)));
    EXPECT_EQ(r.status, 2) << file;
    EXPECT_NE(r.err.find("\nRun with --help for more information.\n"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.rfind(start, 0), 0u) << file << ": " << r.err;
    EXPECT_EQ(r.out, "") << file;
  }
}

// A value beyond float's range: single and mixed read the file into float and refuse it on its
// line; double runs. A float cache from `convert --precision single` runs single and double alike.
TEST_F(Cli, ValuesBeyondFloatAreRefusedInSingleAndMixed) {
  std::ofstream(tmp("big.mtx")) << "%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1\n2 1 1e300\n";
  for (const char* p : {"single", "mixed"}) {
    const Result r = run(fmt::format("run {} --backend omp --precision {}", tmp("big.mtx"), p));
    EXPECT_EQ(r.status, 1) << p;
    EXPECT_NE(r.err.find(tmp("big.mtx") + ":4: value 1e+300 does not fit in single precision"), std::string::npos)
        << p << ": " << r.err;
  }
  EXPECT_EQ(run(fmt::format("run {} --backend omp --repeat 1", tmp("big.mtx"))).status, 0);
  const Result c = run(fmt::format("convert {} {} --precision single", tmp("big.mtx"), tmp("big.spmvbin")));
  EXPECT_EQ(c.status, 1);
  EXPECT_NE(c.err.find(tmp("big.mtx") + ":4: value 1e+300 does not fit"), std::string::npos) << c.err;
}

TEST_F(Cli, ConvertWritesAFloatCache) {
  const std::string in = kDir + "/cli_small.mtx";
  const Result c = run(fmt::format("convert {} {} --precision single", in, tmp("f.spmvbin")));
  ASSERT_EQ(c.status, 0) << c.err;
  EXPECT_NE(c.out.find("values in single precision"), std::string::npos) << c.out;
  const CsrF32 f = io::load_f32(tmp("f.spmvbin")).matrix;
  EXPECT_EQ(f.val, to_float(io::load_csr(in)).val);
  for (const char* p : {"single", "mixed", "double"}) {
    const Result r = run(fmt::format("run {} --backend omp --precision {} --repeat 1", tmp("f.spmvbin"), p));
    EXPECT_EQ(r.status, 0) << p << ": " << r.err;
    EXPECT_EQ(keys(r.out)["check"], "passed") << p;
  }
  EXPECT_EQ(run(fmt::format("convert {} {} --precision single", in, tmp("f.mtx"))).status, 1);
}

// The validator lists the precisions; a bad one is bad usage (exit 2), like any bad option value.
TEST_F(Cli, UnknownPrecisionIsBadUsage) {
  const Result r = run("run " + kDir + "/cli_small.mtx --precision bogus");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("bogus"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("{double,single,mixed}"), std::string::npos) << r.err;
  const Result b = run("bench " + kDir + "/cli_small.mtx --precisions double,bogus");
  EXPECT_EQ(b.status, 2);
  EXPECT_NE(b.err.find("{double,single,mixed}"), std::string::npos) << b.err;
  // The help lists them and the default.
  const Result h = run("run --help");
  const auto at = h.out.find("--precision");
  ASSERT_NE(at, std::string::npos) << h.out;
  const std::string line = h.out.substr(at, h.out.find('\n', at) - at);
  EXPECT_NE(line.find("{double,single,mixed}"), std::string::npos) << line;
  EXPECT_NE(line.find("double"), std::string::npos) << line;
}

// bench --precisions double,single: a row per configuration in each precision, the column filled;
// a kernel with single passes its check in it, one without is skipped naming the precision.
TEST_F(Cli, BenchSweepsPrecisions) {
  const Result r =
      run(fmt::format("bench {}/cli_small.mtx --backends serial,omp --kernels csr --threads 1 "
                      "--precisions double,single --no-baselines --duel-rounds 0 --repeat 3 "
                      "--min-sample-ms 1 --noise-threshold 0 --no-progress --out {}",
                      kDir, tmp("r.csv")));
  ASSERT_EQ(r.status, 0) << r.err << r.out;
  std::ifstream f(tmp("r.csv"));
  std::string line;
  std::getline(f, line);
  const auto split = [](const std::string& l) {
    std::vector<std::string> v;
    std::string cur;
    bool q = false;
    for (char c : l) {
      if (c == '"')
        q = !q;
      else if (c == ',' && !q) {
        v.push_back(cur);
        cur.clear();
      } else
        cur += c;
    }
    v.push_back(cur);
    return v;
  };
  const auto cols = split(line);
  const auto col = [&](const char* c) {
    const auto i = std::find(cols.begin(), cols.end(), c) - cols.begin();
    EXPECT_LT(static_cast<std::size_t>(i), cols.size()) << c;
    return i;
  };
  std::map<std::string, int> seen;  // "backend precision" -> rows
  for (; std::getline(f, line);) {
    const auto v = split(line);
    ASSERT_EQ(v.size(), cols.size()) << line;
    const std::string backend = v[col("backend")], precision = v[col("precision")], status = v[col("status")];
    ++seen[backend + " " + precision];
    const KernelSpec* k = find_kernel(parse_backend(backend), v[col("kernel")]);
    ASSERT_NE(k, nullptr) << line;
    if (supports(*k, parse_precision(precision))) {
      EXPECT_EQ(status, "ok") << line;
      EXPECT_EQ(v[col("check")], "passed") << line;
      EXPECT_GT(std::stod(v[col("gflops")]), 0) << line;
    } else {
      EXPECT_EQ(status.rfind(fmt::format("skipped: kernel 'csr' ({}) has no {} precision", backend, precision), 0), 0u)
          << line;
    }
  }
  EXPECT_EQ(seen, (std::map<std::string, int>{
                      {"serial double", 1}, {"serial single", 1}, {"omp double", 1}, {"omp single", 1}}));
}

TEST_F(Cli, MissingFileExitsOne) {
  const Result r = run("info " + tmp("nope.mtx"));
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, tmp("nope.mtx") + ": cannot open: No such file or directory\n");
}

TEST_F(Cli, BadUsageExitsTwo) {
  EXPECT_EQ(run("run " + kDir + "/cli_small.mtx --bogus").status, 2);
  EXPECT_EQ(run("frobnicate").status, 2);
  EXPECT_EQ(run("help frobnicate").status, 2);
  EXPECT_EQ(run("info").status, 2);  // FILE is required
  EXPECT_EQ(run("run " + kDir + "/cli_small.mtx --threads -1").status, 2);
}

TEST_F(Cli, HelpOnEverySubcommandExitsZero) {
  for (const char* cmd : {"", "info", "run", "convert", "kernels"}) {
    const Result r = run(fmt::format("{} --help", cmd));
    EXPECT_EQ(r.status, 0) << cmd;
    EXPECT_NE(r.out.find("Usage"), std::string::npos) << cmd << ": " << r.out;
  }
}

TEST_F(Cli, ConvertToBinaryCacheKeepsTheNumbers) {
  for (const char* file : {"cli_small.mtx", "coord_real_symmetric.mtx", "coord_complex_hermitian.mtx"}) {
    SCOPED_TRACE(file);
    const std::string src = kDir + "/" + file, bin = tmp("a.spmvbin");
    const Result c = run(fmt::format("convert {} {}", src, bin));
    ASSERT_EQ(c.status, 0) << c.err;
    EXPECT_TRUE(io::is_binary_cache(bin));
    auto a = keys(run("info " + src).out), b = keys(run("info " + bin).out);
    ASSERT_FALSE(a.empty());
    a.erase("file");
    b.erase("file");
    EXPECT_EQ(a, b);
  }
  // Converting back to Matrix Market reads the same matrix.
  ASSERT_EQ(run(fmt::format("convert {}/cli_small.mtx {}", kDir, tmp("b.spmvbin"))).status, 0);
  ASSERT_EQ(run(fmt::format("convert {} {}", tmp("b.spmvbin"), tmp("back.mtx"))).status, 0);
  const Csr x = io::load_csr(kDir + "/cli_small.mtx"), y = io::load_csr(tmp("back.mtx"));
  EXPECT_EQ(x.row_ptr, y.row_ptr);
  EXPECT_EQ(x.col, y.col);
  EXPECT_EQ(x.val, y.val);
}
