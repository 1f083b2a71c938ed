// Every CPU kernel in the registry (serial and OpenMP), at several thread counts, right-hand-side
// counts and layouts, on the generated edge cases and on every shared SuiteSparse matrix, checked
// against the accurate reference. Plus the memory refusal of ELL and the CLI path.
#include <gtest/gtest.h>
#include <spmv/spmv.hpp>

#include <cstdlib>
#include <fmt/format.h>
#include <filesystem>
#include <fstream>
#include <regex>

#include "cpu/row_kernels.hpp"
#include "test_util.hpp"

using namespace spmv;

namespace {

std::vector<const KernelSpec*> cpu_kernels() {
  std::vector<const KernelSpec*> v;
  for (const auto& k : kernels())
    if (k.backend == Backend::Serial || k.backend == Backend::Omp) v.push_back(&k);
  return v;
}

std::vector<int> thread_counts(const KernelSpec& k) {
  if (k.backend == Backend::Serial) return {1};
  return {1, 2, 3, 7, 16};
}

bool pads(const KernelSpec& k) { return k.format == "ell" || k.format == "ell-rowlen" || k.format == "hll"; }

// Padded slots / nonzeros of the format the kernel uses.
double padding_ratio(const KernelSpec& k, const Csr& a, int hack) {
  const double nnz = std::max<double>(1.0, static_cast<double>(a.nnz()));
  if (k.format == "hll") return static_cast<double>(hll_slots(a, hack)) / nnz;
  return ell_bytes(a) / 12.0 / nnz;
}

// The kernel a plan of "auto" chose, from Plan::chosen ("omp/hll hack=16 threads=2"); sets hack
// to the chosen one.
const KernelSpec& chosen_spec(Backend b, const std::string& chosen, int& hack) {
  const auto slash = chosen.find('/');
  const std::string name = chosen.substr(slash + 1, chosen.find(' ', slash) - slash - 1);
  if (const auto h = chosen.find("hack="); h != std::string::npos) hack = std::stoi(chosen.substr(h + 5));
  return get_kernel(b, name);
}

// Runs one configuration; returns "" on success, else what went wrong. A memory refusal is
// accepted only from a padded format, with the "would need" message, on a matrix whose padding
// ratio is really large (the budget allows 20x CSR before refusing).
std::string run_one(const KernelSpec& spec, const Csr& a, PlanOptions opt, const std::string& what) {
  const std::string where = fmt::format("{} [{} {} threads={} k={} layout={} hack={}]", what,
                                        to_string(spec.backend), spec.name, opt.threads, opt.k,
                                        opt.layout == Layout::RowMajor ? "row" : "col", opt.hack);
  std::unique_ptr<Plan> plan;
  try {
    plan = make_plan(a, spec.backend, spec.name, opt);
  } catch (const Unsupported& e) {
    const std::string msg = e.what();
    if (!pads(spec) || msg.find("would need") == std::string::npos)
      return where + ": unexpected refusal: " + msg;
    if (padding_ratio(spec, a, opt.hack) < 10)
      return where + fmt::format(": refused with padding ratio only {:.2f}: {}", padding_ratio(spec, a, opt.hack), msg);
    return "";
  }
  const std::size_t nx = static_cast<std::size_t>(a.cols) * opt.k, ny = static_cast<std::size_t>(a.rows) * opt.k;
  const auto x = make_vector("random:11", nx);
  std::vector<double> y(ny, std::nan(""));
  plan->multiply(x, y);
  // A second product on the same plan must give the same answer (no state left from the first).
  std::vector<double> y2(ny, std::nan(""));
  plan->run(1);
  plan->get_y(y2);
  const Reference ref = reference_product(a, x, opt.k, opt.layout);
  const CheckResult c = check_product(a, ref, y, opt.k, opt.layout);
  if (!c.passed) return where + ": " + c.message;
  for (std::size_t i = 0; i < ny; ++i)
    if (!(y[i] == y2[i])) return where + fmt::format(": second run differs at {}", i);
  offset_t max_len = 0;
  for (index_t r = 0; r < a.rows; ++r) max_len = std::max(max_len, a.row_length(r));
  // The planner stores what its choice stores ("omp/hll hack=16 threads=2": HLL with hack 16).
  const KernelSpec& stored = spec.name == "auto" ? chosen_spec(spec.backend, plan->chosen, opt.hack) : spec;
  const offset_t want_slots = stored.format == "hll" ? hll_slots(a, opt.hack)
                              : pads(stored)         ? static_cast<offset_t>(a.rows) * max_len
                                                     : a.nnz();
  if (plan->stored_entries != want_slots)
    return where + fmt::format(": stored_entries {} != {}", plan->stored_entries, want_slots);
  if (plan->bytes_per_product < 12 * a.nnz() + 8 * static_cast<offset_t>(a.rows) * opt.k)
    return where + ": bytes_per_product below the data the product must read";
  return "";
}

}  // namespace

TEST(CpuKernels, RegistryHasTheCpuKernels) {
  for (const char* name : {"csr", "ell", "ell-rowlen", "hll"}) {
    EXPECT_NE(find_kernel(Backend::Serial, name), nullptr) << name;
    EXPECT_NE(find_kernel(Backend::Omp, name), nullptr) << name;
  }
  for (const char* name : {"csr-dynamic", "csr-balanced"}) EXPECT_NE(find_kernel(Backend::Omp, name), nullptr) << name;
#ifdef SPMV_HAVE_EIGEN
  ASSERT_NE(find_kernel(Backend::Omp, "eigen"), nullptr);
  EXPECT_TRUE(find_kernel(Backend::Omp, "eigen")->baseline);
#endif
  // The CSR, ELL and HLL families must all do SpMM (CSR5 is SpMV only and refuses k > 1).
  for (const KernelSpec* k : cpu_kernels())
    if (k->format != "csr5") EXPECT_TRUE(k->spmm) << k->name << " should accept k > 1";
}

TEST(CpuKernels, EdgeCasesAllThreadsAndRightHandSides) {
  const auto cases = test::edge_cases();
  int runs = 0;
  for (const KernelSpec* spec : cpu_kernels())
    for (const int t : thread_counts(*spec))
      for (const auto& [name, a] : cases)
        for (const int k : {1, 3})
          for (const Layout lay : {Layout::RowMajor, Layout::ColMajor}) {
            if (k == 1 && lay == Layout::ColMajor) continue;  // identical for one column
            if (k > 1 && !spec->spmm) continue;  // make_plan's refusal is tested in test_core
            PlanOptions opt;
            opt.threads = t;
            opt.k = k;
            opt.layout = lay;
            const std::string err = run_one(*spec, a, opt, name);
            EXPECT_EQ(err, "");
            ++runs;
          }
  EXPECT_GT(runs, 500);
}

// Wider SpMM: the 16/8/4/2/1 column blocks all appear for k = 8 and k = 33 (16+16+1).
TEST(CpuKernels, WideSpmmBothLayouts) {
  const auto cases = test::edge_cases();
  for (const KernelSpec* spec : cpu_kernels()) {
    if (!spec->spmm) continue;
    for (const int k : {8, 33})
      for (const Layout lay : {Layout::RowMajor, Layout::ColMajor})
        for (const char* name : {"irregular_5000", "empty_rows_everywhere", "wide_3x50", "tall_200x3"}) {
          const auto it = std::find_if(cases.begin(), cases.end(), [&](const auto& c) { return c.first == name; });
          ASSERT_NE(it, cases.end());
          PlanOptions opt;
          opt.threads = spec->backend == Backend::Omp ? 3 : 1;
          opt.k = k;
          opt.layout = lay;
          EXPECT_EQ(run_one(*spec, it->second, opt, name), "");
        }
  }
}

// A kernel that does not declare SpMM refuses k > 1 clearly instead of computing one column.
TEST(CpuKernels, SpmvOnlyKernelsRefuseSeveralRightHandSides) {
  const Csr a = test::csr_from_lengths({2, 0, 3}, 4, 1);
  for (const KernelSpec* spec : cpu_kernels()) {
    if (spec->spmm) continue;
    PlanOptions opt;
    opt.k = 2;
    try {
      make_plan(a, spec->backend, spec->name, opt);
      ADD_FAILURE() << spec->name << " accepted k = 2";
    } catch (const Unsupported& e) {
      EXPECT_NE(std::string(e.what()).find("one right-hand side"), std::string::npos) << e.what();
    }
  }
}

// The trial picks one SpMV inner loop per plan; forcing each one through the variant makes sure
// both are correct whatever this machine's trial prefers.
TEST(CpuKernels, ForcedVariantsAreCorrect) {
  const auto cases = test::edge_cases();
  int runs = 0;
  for (const KernelSpec* spec : cpu_kernels()) {
    if (std::find(spec->params.begin(), spec->params.end(), "variant") == spec->params.end()) continue;
    if (spec->format == "csr5") continue;  // its own variants (simd, lanes) are tested in test_csr5
    std::vector<std::string> variants = {"simd", "scalar"};
    if (spec->name == "csr" && spec->backend == Backend::Omp)
      variants.insert(variants.end(), {"dynamic:scalar", "dynamic:simd", "balanced:scalar", "balanced:simd"});
    for (const auto& variant : variants)
      for (const int t : spec->backend == Backend::Omp ? std::vector<int>{1, 3} : std::vector<int>{1})
        for (const auto& [name, a] : cases) {
          PlanOptions opt;
          opt.threads = t;
          opt.variant = variant;
          EXPECT_EQ(run_one(*spec, a, opt, name + " variant " + variant), "");
          try {
            auto plan = make_plan(a, spec->backend, spec->name, opt);
            const std::string inner = variant.substr(variant.find(':') + 1);
            EXPECT_NE(plan->detail.find("inner=" + inner), std::string::npos) << spec->name << " " << plan->detail;
            ++runs;
          } catch (const Unsupported&) {  // a memory refusal, already validated by run_one
          }
        }
  }
  EXPECT_GT(runs, 100);
}

TEST(CpuKernels, HllHackSizes) {
  const auto cases = test::edge_cases();
  for (const Backend b : {Backend::Serial, Backend::Omp})
    for (const int hack : {1, 7, 16, 32, 64, 4096})
      for (const auto& [name, a] : cases)
        for (const int k : {1, 5}) {
          PlanOptions opt;
          opt.threads = b == Backend::Omp ? 3 : 1;
          opt.hack = hack;
          opt.k = k;
          const std::string err = run_one(get_kernel(b, "hll"), a, opt, name);
          EXPECT_EQ(err, "");
          // (run_one checks stored_entries == hll_slots; a refusal must come from huge padding.)
          if (hack == 4096 && name == "one_dominant_row") {
            EXPECT_THROW(make_plan(a, b, "hll", opt), Unsupported) << "one hack padded to 5000 wide";
          }
        }
}

// Padding must cost bandwidth in the plan's byte count: ELL counts every slot, ELL-rowlen only the
// true entries plus a length per row.
TEST(CpuKernels, PaddedBytesPerProduct) {
  const Csr a = test::csr_from_lengths({1, 9, 2, 0, 4}, 20, 3);  // nnz 16, ELL 5 x 9 = 45 slots
  for (const Backend b : {Backend::Serial, Backend::Omp}) {
    auto ell = make_plan(a, b, "ell", {});
    auto rowlen = make_plan(a, b, "ell-rowlen", {});
    EXPECT_EQ(ell->stored_entries, 45);
    EXPECT_EQ(rowlen->stored_entries, 45);
    EXPECT_EQ(ell->bytes_per_product, 12 * 45 + 8 * 20 + 8 * 5);
    EXPECT_EQ(rowlen->bytes_per_product, 12 * 16 + 4 * 5 + 8 * 20 + 8 * 5);
  }
}

TEST(CpuKernels, AutoCsrRecordsItsChoice) {
  const Csr a = test::edge_cases().back().second;
  for (const int t : {1, 4}) {
    PlanOptions opt;
    opt.threads = t;
    auto plan = make_plan(a, Backend::Omp, "csr", opt);
    EXPECT_TRUE(std::regex_search(plan->detail, std::regex("^variant=(balanced|dynamic|serial|balanced-[0-9]+) .*inner=(simd|scalar)"))) << plan->detail;
    opt.variant = "dynamic";
    EXPECT_EQ(make_plan(a, Backend::Omp, "csr", opt)->detail.rfind("variant=dynamic", 0), 0u);
    opt.variant = "bogus";
    EXPECT_THROW(make_plan(a, Backend::Omp, "csr", opt), Unsupported);
    EXPECT_THROW(make_plan(a, Backend::Omp, "hll", opt), Unsupported);
    opt.variant = "dynamic";  // a schedule means nothing to ELL
    EXPECT_THROW(make_plan(a, Backend::Omp, "ell", opt), Unsupported);
  }
}

TEST(CpuKernels, BalancedBoundsSplitWorkEvenly) {
  // Row lengths 0..99 repeated; parts must cover [0, n) in order and each hold about total/parts.
  std::vector<offset_t> prefix{0};
  for (int r = 0; r < 10000; ++r) prefix.push_back(prefix.back() + r % 100 + 1);
  for (const int parts : {1, 2, 3, 7, 16, 20000}) {
    const auto b = cpu::balanced_bounds(10000, parts, [&](index_t i) { return prefix[i]; });
    ASSERT_EQ(b.size(), static_cast<std::size_t>(parts) + 1);
    EXPECT_EQ(b.front(), 0);
    EXPECT_EQ(b.back(), 10000);
    const double ideal = static_cast<double>(prefix.back()) / parts;
    for (int p = 0; p < parts; ++p) {
      ASSERT_LE(b[p], b[p + 1]);
      EXPECT_LE(static_cast<double>(prefix[b[p + 1]] - prefix[b[p]]), ideal + 101) << "part " << p;
    }
  }
}

// A dc1-like matrix: 116835 rows, one of them with 100000 entries. ELL would need ~131 GiB; the
// plan must refuse with the sizes in the message, before allocating anything.
TEST(CpuKernels, EllRefusesDominantRowBeforeAllocating) {
  std::vector<offset_t> lengths(116835, 4);
  lengths[5000] = 100000;
  const Csr a = test::csr_from_lengths(lengths, 116835, 17);
  PlanOptions opt;
  opt.threads = 2;
  opt.memory_budget_bytes = 1024.0 * 1024 * 1024;
  const std::regex want(R"(ELL would need [0-9.]+ GiB, [0-9.]+ times CSR; limit is 1\.00 GiB)");
  for (const Backend b : {Backend::Serial, Backend::Omp})
    for (const char* kernel : {"ell", "ell-rowlen"}) {
      try {
        make_plan(a, b, kernel, opt);
        ADD_FAILURE() << kernel << " accepted a matrix needing ~131 GiB";
      } catch (const Unsupported& e) {
        EXPECT_TRUE(std::regex_search(e.what(), want)) << e.what();
        EXPECT_NE(std::string(e.what()).find("would need 130."), std::string::npos) << e.what();
      }
    }
  // HLL confines the long row's padding to its own hack: it fits and computes the right answer.
  opt.hack = 32;
  EXPECT_EQ(run_one(get_kernel(Backend::Omp, "hll"), a, opt, "dc1-like"), "");
}

// ---- Shared SuiteSparse matrices (k = 1) ----

namespace {
std::vector<std::filesystem::path> shared_matrix_files() {
  std::vector<std::filesystem::path> v;
  const std::filesystem::path dir = test::shared_matrices_dir();
  if (!std::filesystem::is_directory(dir)) return v;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().string().ends_with(".mtx.gz") || e.path().string().ends_with(".mtx")) v.push_back(e.path());
  std::sort(v.begin(), v.end());
  return v;
}
}  // namespace

TEST(CpuKernels, EverySharedMatrixEveryKernelAndThreadCount) {
  const auto files = shared_matrix_files();
  ASSERT_GE(files.size(), 10u) << "shared matrices missing in " << test::shared_matrices_dir();
  int checked = 0;
  for (const auto& f : files) {
    const Csr a = io::load_csr(f.string());
    if (a.is_complex()) continue;  // real kernels refuse complex matrices (tested in core)
    const auto x = make_vector("random:5", a.cols);
    const Reference ref = reference_product(a, x);
    std::vector<double> y(a.rows);
    for (const KernelSpec* spec : cpu_kernels())
      for (const int t : thread_counts(*spec)) {
        PlanOptions opt;
        opt.threads = t;
        // Inner loops forced in turn (both run on real matrices, and no plan-time trial costs test
        // time); the omp "csr" trial itself runs at 16 threads.
        const bool has_variant =
            std::find(spec->params.begin(), spec->params.end(), "variant") != spec->params.end() &&
            spec->format != "csr5";  // csr5's own variants are covered by test_csr5
        if (has_variant) opt.variant = (t + spec->name.size()) % 2 ? "simd" : "scalar";
        if (has_variant && spec->name == "csr" && spec->backend == Backend::Omp)
          opt.variant = t == 16 ? "auto" : t % 2 ? "balanced:simd" : "dynamic:scalar";
        std::unique_ptr<Plan> plan;
        try {
          plan = make_plan(a, spec->backend, spec->name, opt);
        } catch (const Unsupported& e) {
          EXPECT_TRUE(pads(*spec) && std::string(e.what()).find("would need") != std::string::npos &&
                      padding_ratio(*spec, a, opt.hack) >= 10)
              << f.filename() << " " << spec->name << ": " << e.what();
          continue;
        }
        std::fill(y.begin(), y.end(), std::nan(""));
        plan->multiply(x, y);
        const CheckResult c = check_product(a, ref, y);
        EXPECT_TRUE(c.passed) << f.filename() << " " << to_string(spec->backend) << " " << spec->name
                              << " threads=" << t << " variant=" << opt.variant << ": " << c.message;
        ++checked;
      }
  }
  EXPECT_GT(checked, 100);
}

TEST(CpuKernels, CliRunsHllOnOmp) {
  const auto files = shared_matrix_files();
  ASSERT_FALSE(files.empty());
  const std::string out = (std::filesystem::temp_directory_path() / "spmv_cpu_cli_test.txt").string();
  const std::string cmd = fmt::format("{} run {} --format hll --hack 16 --backend omp --threads 4 > {} 2>&1",
                                      SPMV_CLI, files.front().string(), out);
  const int rc = std::system(cmd.c_str());
  std::ifstream in(out);
  const std::string text((std::istreambuf_iterator<char>(in)), {});
  EXPECT_EQ(rc, 0) << text;
  EXPECT_NE(text.find("kernel: hll"), std::string::npos) << text;
  EXPECT_NE(text.find("check: passed"), std::string::npos) << text;
  EXPECT_NE(text.find("hack=16"), std::string::npos) << text;
  std::filesystem::remove(out);
}
