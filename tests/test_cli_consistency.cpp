// The command line as a new user meets it: help without a command, defaults in the help,
// exit status 2 for bad usage with a plain message, -q/-v, --json, -o/--output on every command that
// writes, the check's own measure and a seeded random x in `run`, the matrix cache's place.
#include <spmv/io.hpp>

#include <cstdlib>
#include <filesystem>

#include "cli_util.hpp"

namespace spmv::test {
namespace {

namespace fs = std::filesystem;
const std::string kSmall = kDir + "/cli_small.mtx";  // 4 x 5, 6 entries, row 3 empty

// The line of `help` that documents `option`.
std::string help_line(const std::string& help, const std::string& option) {
  const auto at = help.find(option);
  if (at == std::string::npos) return {};
  return help.substr(at, help.find('\n', at) - at);
}

// Runs python3 on `code` with the file as sys.argv[1]; its exit status (0: every assert held).
int python_check(const std::string& file, const std::string& code) {
  return std::system(fmt::format("python3 -c \"{}\" '{}'", code, file).c_str());
}

// Sets an environment variable for the commands a test starts, restored at scope exit.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (old_)
      setenv(name_, old_->c_str(), 1);
    else
      unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

TEST_F(Cli, NoCommandAndHelpPrintTheHelp) {
  for (const char* args : {"", "help"}) {
    const Result r = run(args);
    EXPECT_EQ(r.status, 0) << args;
    EXPECT_EQ(r.err, "") << args;
    for (const char* cmd : {"Usage", "run", "bench", "convert", "report", "info", "kernels", "generate"})
      EXPECT_NE(r.out.find(cmd), std::string::npos) << args << " lacks " << cmd << ":\n" << r.out;
  }
  const Result h = run("help run");
  EXPECT_EQ(h.status, 0);
  EXPECT_EQ(h.out, run("run --help").out);
  const Result bad = run("help frobnicate");
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.err.find("no command 'frobnicate'"), std::string::npos) << bad.err;
}

// The help shows defaults and allowed values (CLI11's validators), for run and bench alike.
TEST_F(Cli, HelpShowsDefaultsAndAllowedValues) {
  const std::string run_help = run("run --help").out;
  EXPECT_NE(help_line(run_help, "--threads").find("=0 "), std::string::npos) << run_help;
  EXPECT_NE(help_line(run_help, "--repeat").find("=10 "), std::string::npos) << run_help;
  EXPECT_NE(help_line(run_help, "--x ").find("=random:42 "), std::string::npos) << run_help;
  EXPECT_NE(help_line(run_help, "--layout").find("{row,col}"), std::string::npos) << run_help;
  EXPECT_NE(help_line(run_help, "--backend").find("serial"), std::string::npos) << run_help;
  EXPECT_NE(help_line(run_help, "-o,--output").find("TEXT"), std::string::npos) << run_help;
  const std::string bench_help = run("bench --help").out;
  EXPECT_NE(help_line(bench_help, "--time-budget").find("=480"), std::string::npos) << bench_help;
  EXPECT_NE(help_line(bench_help, "--output").find("=results.csv"), std::string::npos) << bench_help;
  EXPECT_NE(help_line(bench_help, "--precision").find("{double,single,mixed}"), std::string::npos) << bench_help;
  // One spelling in run and bench: singular; the old plural stays accepted but out of the help.
  for (const char* opt : {"--backend", "--kernel", "--format", "--threads", "--precision", "--layout", "--k "})
    EXPECT_NE(bench_help.find(opt), std::string::npos) << opt;
  for (const char* old : {"--backends", "--kernels", "--precisions", "--out "})
    EXPECT_EQ(bench_help.find(old), std::string::npos) << old;
}

// Bad usage: exit 2 and a short message that names the option, never CLI11's 309-digit range.
TEST_F(Cli, BadValuesExitTwoWithAPlainMessage) {
  const struct {
    std::string args, says;
  } cases[] = {
      {"run " + kSmall + " --threads -1", "--threads: must be an integer in [1, "},
      {"run " + kSmall + " --repeat 0", "must be a positive integer, got '0'"},
      {"run " + kSmall + " --min-sample-ms 0", "must be a number > 0"},
      {"run " + kSmall + " --kernel bogus", "bogus"},
      {"run " + kSmall + " --backend serial --kernel ell-vector", "ell-vector"},
      {"run " + kSmall + " --kernel csr --format csr", "give one"},
      {"run " + kSmall + " --csr5-atomic", "--csr5-atomic"},
      {"bench " + kSmall + " --threads 1,-2", "--threads: must be an integer in [1, "},
      {"bench " + kSmall + " --precisions double,bogus", "{double,single,mixed}"},
      {"bench " + kSmall + " --time-budget -3", "must be a number >= 0"},
      {"bench " + kSmall + " --no-cache --cache-dir x", "excludes"},
      {"generate --kind random --rows 0 -o x.mtx", "must be a positive integer"},
      {"-q -v info " + kSmall, "give one of them"},
      // CLI11 reads integers with base 0 after the check: "010" would be octal eight.
      {"run " + kSmall + " --repeat 010", "got '010' (no leading zeros)"},
      {"bench " + kSmall + " --threads 1,08", "got '08' (no leading zeros)"},
      {"bench " + kSmall + " --time-budget inf", "must be a number >= 0, got 'inf'"},
      {"bench " + kSmall + " --noise-threshold nan", "must be a number in [0, 10], got 'nan'"},
      {"bench " + kSmall + " --block-size 16",
       "--block-size: must be a multiple of 32 in [32, 1024], or 0 (the kernel's own)"},
      {"run " + kSmall + " --block-size 16",
       "--block-size: must be a multiple of 32 in [32, 1024], or 0 (the kernel's own)"},
      {"run " + kSmall + " --subwarp 3",
       "--subwarp: must be a power of two in [1, 32], or 0 (from the mean row length)"},
      {"info " + kSmall + " --memory-budget -5", "must be a size such as 12G, 500M or a number of bytes, got '-5'"},
      {"generate --kind random --rows 10 --nnz-per-row nan -o x.mtx", "--nnz-per-row: must be a number > 0"},
      {"generate --kind random --rows 10 --cols -5 -o x.mtx", "--cols: must be a positive integer"},
      // More nonzeros than the matrix holds (--nnz was cut to rows x cols; --nnz-per-row 1e300
      // gave a memory message of "0 nonzeros" and "inf GiB").
      {"generate --kind random --rows 10 --nnz 1000 -o x.mtx", "--nnz 1000: a 10 x 10 matrix holds at most 100"},
      {"generate --kind random --rows 10 --cols 4 --nnz-per-row 5 -o x.mtx",
       "--nnz-per-row 5: a row holds at most the 4 columns"},
      {"run " + kSmall + " -o y.spmvbin", "a binary cache (.spmvbin) holds a sparse matrix"},
      {"generate --like cage4 --scale nan -o x.mtx", "--scale: must be a number in (0, 1]"},
      {"bench " + kSmall + " --backends foo", "--backends: foo not in {serial,omp,cuda}"},
      {"bench " + kSmall + " --variant auto,elemnts", "--variant elemnts: no kernel has these words"},
  };
  for (const auto& c : cases) {
    const Result r = run(c.args);
    EXPECT_EQ(r.status, 2) << c.args << "\n" << r.err;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << c.args << "\n" << r.err;
    EXPECT_EQ(r.err.rfind(": ", 0), std::string::npos) << c.args << ": a message without the option's name\n" << r.err;
    EXPECT_LT(r.err.size(), 600u) << c.args << "\n" << r.err;
    EXPECT_EQ(r.out, "") << c.args;
  }
}

// A mistyped command or option: exit 2, naming the nearest one; an unknown generator kind lists the
// kinds.
TEST_F(Cli, MistypedNamesSuggestTheNearest) {
  struct Case {
    std::string args, says;
  };
  const std::vector<Case> cases = {
      {"rnu " + kSmall, "spmv: no command 'rnu' (did you mean 'run'?)"},
      {"run " + kSmall + " --thread 2", "spmv run: no option '--thread' (did you mean '--threads'?)"},
      {"bench --kernal auto", "spmv bench: no option '--kernal' (did you mean '--kernel'?)"},
      {"run " + kSmall + " --frobnicate", "spmv run: no option '--frobnicate'\n"},
      {"generate --kind stencil --rows 10 --nnz-per-row 2 -o " + tmp("g.mtx"),
       "--kind: stencil not in {stencil3d,mesh2d,powerlaw,road,kkt,circuit,random,fem}"},
  };
  for (const Case& c : cases) {
    const Result r = run(c.args);
    EXPECT_EQ(r.status, 2) << c.args << "\n" << r.err;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << c.args << "\n" << r.err;
    EXPECT_NE(r.err.find("Run with --help"), std::string::npos) << r.err;
  }
}

// The examples given a file that is not there: its message and exit 1, never an abort.
TEST_F(Cli, ExamplesSayWhatIsWrongWithTheirInput) {
  for (const char* example : {"multiply", "spmm", "cg", "bicgstab"}) {
    const Result r = run_program(std::string(SPMV_EXAMPLES_DIR) + "/" + example, tmp("missing.mtx"));
    EXPECT_EQ(r.status, 1) << example << "\n" << r.err;
    EXPECT_NE(r.err.find("missing.mtx: cannot open"), std::string::npos) << example << "\n" << r.err;
    EXPECT_EQ(r.err.find("terminate"), std::string::npos) << example << "\n" << r.err;
  }
}

// A bench path that is not there: exit 1 at once, naming it (it was a skipped row and exit 0).
TEST_F(Cli, BenchOfAMissingFileSaysSo) {
  const Result r = run("bench " + kSmall + " " + tmp("missing.mtx") + " --backend serial --quick");
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.err.find(tmp("missing.mtx") + ": no such file or folder"), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "");
}

// A kernel that exists on another backend: exit 2, and the message lists what the backend has.
TEST_F(Cli, KernelOfAnotherBackendIsBadUsage) {
  const Result r = run("run " + kSmall + " --backend omp --kernel csr-vector");
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("csr-vector"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("csr"), std::string::npos) << r.err;
}

// No usable GPU (none visible): a clean message and exit 1, for run and bench alike; no CUDA
// source path, no raw runtime dump.
TEST_F(Cli, CudaWithoutGpuSaysSoCleanly) {
  const ScopedEnv hide("CUDA_VISIBLE_DEVICES", "");
  for (const std::string args :
       {"run " + kSmall + " --backend cuda", "bench " + kSmall + " --backend cuda --no-progress"}) {
    const Result r = run(args);
    EXPECT_EQ(r.status, 1) << args << "\n" << r.err;
    EXPECT_NE(r.err.find("--backend cuda: no usable GPU ("), std::string::npos) << args << "\n" << r.err;
    EXPECT_EQ(r.err.find(".cu"), std::string::npos) << r.err;
    // Not the runtime's "driver version is insufficient", which it also says where there is no driver.
    EXPECT_EQ(r.err.find("insufficient"), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
}

// A plan's bytes per nonzero (matrix, x and y a product): plain CSR in double at least its 12, the
// compact format on a generated stencil of 3 values (2-byte column offsets, 1-byte indices) under 5.
TEST_F(Cli, RunPrintsBytesPerNonzero) {
  const std::string m = tmp("stencil_v3.spmvbin");
  ASSERT_EQ(run("generate --kind stencil3d --rows 8000 --nnz-per-row 27 --values 3 -o " + m).status, 0);
  const Result csr = run("run " + m + " --backend omp --kernel csr --repeat 3");
  ASSERT_EQ(csr.status, 0) << csr.err;
  EXPECT_GE(std::stod(keys(csr.out)["bytes_per_nonzero"]), 12.0) << csr.out;
  const Result compact = run("run " + m + " --backend omp --kernel csr-compact --repeat 3");
  ASSERT_EQ(compact.status, 0) << compact.err;
  EXPECT_LT(std::stod(keys(compact.out)["bytes_per_nonzero"]), 5.0) << compact.out;
}

// The check's own measure is printed beside the verdict; x is random by default, seeded and
// printed, so the same command gives the same y and another seed another y.
TEST_F(Cli, RunPrintsCheckErrorAndSeededX) {
  const Result r = run("run " + kSmall + " --backend serial -o " + tmp("y42.mtx"));
  ASSERT_EQ(r.status, 0) << r.err;
  auto k = keys(r.out);
  EXPECT_EQ(k["x"], "random:42 (uniform in [-1, 1))");
  EXPECT_EQ(k["check"], "passed");
  ASSERT_FALSE(k["check_error"].empty()) << r.out;
  EXPECT_LE(std::stod(k["check_error"]), 1.0);
  EXPECT_GE(std::stod(k["check_error"]), 0.0);
  EXPECT_LT(r.out.find("check_error"), r.out.find("check: ")) << "the measure comes before the verdict";
  ASSERT_EQ(run("run " + kSmall + " --backend serial -o " + tmp("y42b.mtx")).status, 0);
  ASSERT_EQ(run("run " + kSmall + " --backend serial --x random:7 -o " + tmp("y7.mtx")).status, 0);
  const auto y42 = io::read_dense_vector(tmp("y42.mtx")), y42b = io::read_dense_vector(tmp("y42b.mtx")),
             y7 = io::read_dense_vector(tmp("y7.mtx"));
  ASSERT_EQ(y42.size(), 4u);
  EXPECT_EQ(y42, y42b);
  EXPECT_NE(y42, y7);
  EXPECT_EQ(y42[2], 0.0);  // the empty row
  // x of ones: y is the row sums of cli_small.mtx.
  ASSERT_EQ(run("run " + kSmall + " --backend serial --x ones -o " + tmp("y1.mtx")).status, 0);
  EXPECT_EQ(io::read_dense_vector(tmp("y1.mtx")), (std::vector<double>{1, 3, 0, 5.5}));
  // -v explains the measure.
  const Result v = run("-v run " + kSmall + " --backend serial");
  EXPECT_NE(keys(v.out)["check_measure"].find("tol_i"), std::string::npos) << v.out;
}

// --json: one object that a JSON parser reads, with the same keys and numbers as numbers.
TEST_F(Cli, JsonOfRunAndInfoParses) {
  // The command's JSON written to `file`, then python3's asserts on it (d: the object).
  const auto json_holds = [this](const std::string& args, const std::string& file, const std::string& asserts) {
    const Result r = run(args);
    ASSERT_EQ(r.status, 0) << r.err;
    std::ofstream(tmp(file)) << r.out;
    EXPECT_EQ(python_check(tmp(file), "import json,sys; d=json.load(open(sys.argv[1], encoding='utf-8')); " + asserts),
              0)
        << r.out;
  };
  json_holds("run " + kSmall + " --backend serial --kernel csr --json", "run.json",
             "assert d['rows']==4 and d['cols']==5 and d['nnz']==6, d; "
             "assert d['check']=='passed' and 0 <= d['check_error'] <= 1, d; "
             "assert d['kernel']=='csr' and d['backend']=='serial' and d['threads']==1, d; "
             "assert d['time_s'] > 0 and d['gflops'] > 0, d");
  json_holds("info " + kSmall + " --json", "info.json",
             "assert (d['rows'],d['cols'],d['nnz'],d['empty_rows'],d['max_row_nnz'])==(4,5,6,1,3), d; "
             "assert d['symmetry']=='general', d");
  // A file name that is not UTF-8 (any bytes but '/' and NUL may name a file): still JSON, which
  // must be UTF-8, the stray bytes as U+FFFD.
  const std::string odd = tmp("odd\xff\xfe-name.mtx");
  fs::copy_file(kSmall, odd);
  json_holds("info '" + odd + "' --json", "odd.json",
             "assert d['file'].endswith('odd\\ufffd\\ufffd-name.mtx'), d['file']");
}

// -q: nothing on stdout or stderr, the status alone; before or after the command.
TEST_F(Cli, QuietPrintsNothing) {
  for (const std::string args : {"-q run " + kSmall + " --backend serial", "run " + kSmall + " --backend serial -q",
                                 "--quiet info " + kSmall, "-q convert " + kSmall + " " + tmp("q.spmvbin")}) {
    const Result r = run(args);
    EXPECT_EQ(r.status, 0) << args;
    EXPECT_EQ(r.out, "") << args;
    EXPECT_EQ(r.err, "") << args;
  }
  // Errors still show.
  const Result bad = run("-q info " + tmp("missing.mtx"));
  EXPECT_EQ(bad.status, 1);
  EXPECT_NE(bad.err.find("missing.mtx"), std::string::npos);
}

// -o/--output is the one spelling of every command's output.
TEST_F(Cli, OutputFlagOnEveryCommandThatWrites) {
  ASSERT_EQ(run("run " + kSmall + " --backend serial --output " + tmp("y.mtx")).status, 0);
  EXPECT_EQ(io::read_dense_vector(tmp("y.mtx")).size(), 4u);
  ASSERT_EQ(run("generate --kind random --rows 50 --nnz-per-row 3 -o " + tmp("g.mtx")).status, 0);
  EXPECT_EQ(io::load_csr(tmp("g.mtx")).rows, 50);
  const Result b = run("bench " + kSmall +
                       " --backend serial --kernel csr --no-baselines --duel-rounds 0 --repeat 3 "
                       "--min-sample-ms 1 --no-progress -o " +
                       tmp("b/r.csv"));
  ASSERT_EQ(b.status, 0) << b.err;
  EXPECT_TRUE(fs::exists(tmp("b/r.csv")));
  EXPECT_TRUE(fs::exists(tmp("b/r.json")));
  for (const char* cmd : {"run", "bench", "generate", "report", "convert"})
    EXPECT_NE(run(fmt::format("{} --help", cmd)).out.find("-o,--output"), std::string::npos) << cmd;
}

// The matrix cache: where it goes is printed; --cache-dir and $SPMV_CACHE_DIR move it, --no-cache
// writes nothing; a matrix in the matrices folder that MANIFEST.tsv does not list is benchmarked,
// with a note.
TEST_F(Cli, CacheDirAndUnlistedMatrices) {
  fs::create_directories(tmp("mats"));
  fs::copy_file(kSmall, tmp("mats/listed.mtx"));
  fs::copy_file(kSmall, tmp("mats/extra.mtx"));
  std::ofstream(tmp("mats/MANIFEST.tsv")) << "name\tfile\trows\tcols\tstored_entries\texpanded_nnz\n"
                                             "listed\tlisted.mtx\t4\t5\t6\t6\n";
  // A one-line seed suite whose matrix is missing: one small alike to generate and cache.
  std::ofstream(tmp("suite.tsv")) << "name\trows\tnnz\tnnz_per_row_mean\tnnz_per_row_std\tkind\n"
                                     "alike_one\t400\t2000\t5\t1\trandom\n";
  const std::string common = fmt::format(
      "bench --matrices-dir {} --suite-file {} --backend serial --kernel csr "
      "--no-baselines --duel-rounds 0 --repeat 3 --min-sample-ms 1 --no-progress",
      tmp("mats"), tmp("suite.tsv"));
  {
    const ScopedEnv cache("SPMV_CACHE_DIR", tmp("env_cache"));
    const ScopedEnv home("HOME", tmp("home"));
    const Result r = run(common + " -o " + tmp("r1.csv"));
    ASSERT_EQ(r.status, 0) << r.err << r.out;
    EXPECT_NE(r.err.find("cached in " + tmp("env_cache")), std::string::npos) << r.err;
    EXPECT_FALSE(fs::is_empty(tmp("env_cache")));
    EXPECT_NE(r.err.find("extra.mtx"), std::string::npos) << "the unlisted matrix is named in a note:\n" << r.err;
    const std::string csv = slurp(tmp("r1.csv"));
    EXPECT_NE(csv.find("listed"), std::string::npos);
    EXPECT_NE(csv.find("extra"), std::string::npos) << csv;
    EXPECT_NE(csv.find("alike_one"), std::string::npos) << csv;
    // --cache-dir wins over the environment; --no-cache writes nowhere.
    ASSERT_EQ(run(common + " --cache-dir " + tmp("flag_cache") + " -o " + tmp("r2.csv")).status, 0);
    EXPECT_FALSE(fs::is_empty(tmp("flag_cache")));
    fs::remove_all(tmp("env_cache"));
    const Result n = run(common + " --no-cache -o " + tmp("r3.csv"));
    ASSERT_EQ(n.status, 0) << n.err;
    EXPECT_NE(n.err.find("--no-cache"), std::string::npos) << n.err;
    EXPECT_FALSE(fs::exists(tmp("env_cache")));
    EXPECT_FALSE(fs::exists(tmp("home/.cache")));
    EXPECT_NE(slurp(tmp("r3.csv")).find("alike_one"), std::string::npos);
  }
}

}  // namespace
}  // namespace spmv::test
