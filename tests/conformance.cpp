// Conformance: every registered kernel of the backends this binary tests (Serial and Omp in
// spmv_tests, Cuda in spmv_gpu_tests; see conformance.hpp) against the accurate reference, on the
// same cases: the edge cases at k = 1 and k > 1 in both layouts where the kernel does SpMM, every
// setting that matters (threads, block sizes, hacks, variants, subwarps, row-block sizes), a
// dc1-like irregular matrix, the memory refusals of the padded formats and every shared
// SuiteSparse matrix. On CUDA every test first asserts a device: a GPU test that cannot run has
// not passed.
#include <spmv/device.hpp>
#include <spmv/io.hpp>
#include <spmv/params.hpp>

#include <algorithm>
#include <functional>
#include <regex>

#include "conformance.hpp"

using namespace spmv;
using test::run_one;
using test::tested_kernels;

namespace {

// One setting of a kernel's options, with what its plan's detail must then say.
struct Setting {
  PlanOptions opt;
  std::string detail_has;
};

// The values the conformance test tries of a setting (kernel_params()' test_values).
const std::vector<long long>& tried(const char* param) { return find_param(param)->test_values; }

// The settings every case runs under: each thread count (Omp; Serial runs one thread) or each
// block size (kernels taking one); otherwise the defaults.
std::vector<Setting> main_settings(const KernelSpec& k) {
  std::vector<Setting> v;
  if (k.backend == Backend::Omp)
    for (const long long t : tried("threads")) v.push_back({.opt = {.threads = static_cast<int>(t)}});
  else if (k.backend == Backend::Serial)
    v.push_back({.opt = {.threads = 1}});
  else if (takes(k, "block_size"))
    for (const long long bs : tried("block_size"))
      v.push_back({.opt = {.kernel = {.block_size = static_cast<int>(bs)}}});
  else
    v.push_back({});
  return v;
}

// The kernel's own settings, each swept on its own at the values kernel_params() gives for the
// test: the SpMV inner loops and OpenMP schedules (forced, so both are correct whatever this
// machine's trial prefers; CSR5's own are tested in test_csr5), hack sizes (crossed with the threads
// per row where the kernel takes both: CUDA HLL), threads per row, CSR-adaptive row blocks,
// OpenMP CSR-dynamic chunks (under the dynamic schedule), rows a chunk (CSR-dynamic, ELL's dynamic
// schedule). k: the right-hand-side counts each runs at.
struct Sweep {
  Setting s;
  std::vector<int> ks = {1};
};

// The kernel's variant group of that name ("inner": the CPU row kernels'), or null.
const VariantGroup* group(const KernelSpec& k, std::string_view name) {
  const auto g =
      std::find_if(k.variants.begin(), k.variants.end(), [&](const VariantGroup& g) { return g.name == name; });
  return g == k.variants.end() ? nullptr : &*g;
}
bool has_group(const KernelSpec& k, std::string_view name) { return group(k, name) != nullptr; }

std::vector<Sweep> param_sweeps(const KernelSpec& k) {
  std::vector<Sweep> v;
  const std::vector<int> threads = k.backend == Backend::Omp ? std::vector<int>{1, 3} : std::vector<int>{1};
  if (has_group(k, "inner")) {
    std::vector<std::string> variants = {"simd", "scalar"};
    if (has_group(k, "schedule"))
      variants.insert(variants.end(), {"dynamic:scalar", "dynamic:simd", "balanced:scalar", "balanced:simd"});
    for (const auto& variant : variants)
      for (const int t : threads)
        v.push_back({.s = {.opt = {.threads = t, .kernel = {.variant = variant}},
                           .detail_has = "inner=" + variant.substr(variant.find(':') + 1)}});
  }
  // 004's SpMM mappings, each forced in both layouts: OpenMP ELL's rows or elements; CUDA ELL's and
  // HLL's lanes, a thread or two a element (K past 32: lanes take several columns).
  if (const VariantGroup* g = group(k, "spmm"))
    for (const std::string& word : g->words)
      for (const int t : threads)
        for (const Layout layout : {Layout::RowMajor, Layout::ColMajor})
          v.push_back({.s = {.opt = {.threads = t, .layout = layout, .kernel = {.variant = word}},
                             .detail_has = k.backend == Backend::Cuda ? "spmm=" + word : ""},
                       .ks = {2, 5, 40}});
  if (has_group(k, "storage"))  // OpenMP ell-rowlen: 004's ELL without padding in storage
    for (const int t : threads)
      for (const auto& [words, chunk] : {std::pair{"unpadded", 0}, {"unpadded:elements", 0}, {"unpadded:scalar", 3}})
        v.push_back({.s = {.opt = {.threads = t, .kernel = {.chunk_rows = chunk, .variant = words}},
                           .detail_has = "storage=unpadded"},
                     .ks = {1, 5}});
  if (has_group(k, "k-lanes"))  // CUDA CSR SpMM: lanes along K named (004's Vector_by_row is c1:w32:k8)
    for (const auto& [shape, kl] : {std::pair{"c1:w32:k8", "8"}, {"c1:w8:k2", "2"}, {"c2:w16:k4", "4"}})
      v.push_back({.s = {.opt = {.kernel = {.variant = shape}}, .detail_has = std::string("lanes_along_k=") + kl},
                   .ks = {4, 8, 20}});
  if (has_group(k, "block-rows"))  // CUDA CSR SpMM: every row a block (004's CSR_Adaptive_sub_blocks)
    for (const Layout layout : {Layout::RowMajor, Layout::ColMajor})
      v.push_back({.s = {.opt = {.layout = layout, .kernel = {.variant = "blocks"}}, .detail_has = "rows=blocks"},
                   .ks = {2, 5, 40}});
  if (has_group(k, "rows"))  // CUDA ELL reading each row's length (002's MAXNZ(1:M))
    v.push_back({.s = {.opt = {.kernel = {.variant = "lengths"}}, .detail_has = "rows=lengths"}, .ks = {1, 5}});
  if (has_group(k, "sigma"))  // CUDA CSR5: the paper's sigma rule (the matrices' own sigma, 4 to 32)
    v.push_back({.s = {.opt = {.kernel = {.variant = "paper"}}, .detail_has = "sigma_rule=paper"}, .ks = {1, 5}});
  if (has_group(k, "split"))  // OpenMP HLL: 001's equal hacks a thread and its loop skipping zeros
    for (const char* words : {"hacks", "skip", "hacks:skip"})
      for (const int t : threads)
        v.push_back({.s = {.opt = {.threads = t, .kernel = {.variant = words}},
                           .detail_has = std::string(words) == "skip" ? "padding=skip" : "split=hacks"},
                     .ks = {1, 5}});
  if (has_group(k, "values"))  // the compact formats' modes (compact_formats.cpp: the cases each is for)
    for (const char* index : {"narrow", "wide"})
      for (const char* values : {"shared", "plain"})
        v.push_back({.s = {.opt = {.threads = threads.back(), .kernel = {.variant = std::string(index) + ":" + values}},
                           .detail_has = std::string("index=") + index}});
  const auto with = [](const char* param, long long value, PlanOptions o = {}) {
    find_param(param)->set(o, value);
    return o;
  };
  if (takes(k, "hack")) {
    const std::vector<long long> lanes = takes(k, "subwarp") ? tried("subwarp") : std::vector<long long>{0};
    for (const long long hack : tried("hack"))
      for (const long long sw : lanes)
        v.push_back({.s = {.opt = with("subwarp", sw, with("hack", hack, {.threads = threads.back()}))}, .ks = {1, 5}});
  }
  if (takes(k, "subwarp"))
    for (const long long sw : tried("subwarp")) v.push_back({.s = {.opt = with("subwarp", sw)}});
  if (takes(k, "nz_per_block"))  // 1: every non-empty row is "long"; 7: few rows per block
    for (const long long nb : tried("nz_per_block"))
      v.push_back({.s = {.opt = with("nz_per_block", nb, {.kernel = {.block_size = 128}})}, .ks = {1, 5}});
  if (takes(k, "nz_per_chunk"))  // 1: a chunk per row; 7: rows split across chunks' edges
    for (const long long nc : tried("nz_per_chunk"))
      v.push_back(
          {.s = {.opt = with("nz_per_chunk", nc,
                             {.threads = threads.back(),
                              .kernel = {.variant = has_group(k, "schedule") ? "dynamic:scalar" : "scalar"}})}});
  if (takes(k, "chunk_rows"))  // 1: a chunk per row; 3: 002's ELL chunk; 1000: fewer chunks than threads
    for (const long long cr : tried("chunk_rows"))
      v.push_back({.s = {.opt = with("chunk_rows", cr,
                                     {.threads = threads.back(),
                                      .kernel = {.variant = has_group(k, "schedule") ? "dynamic:scalar" : "scalar"}}),
                         .detail_has = "chunk_rows=" + std::to_string(cr)},
                   .ks = {1, 5}});
  return v;
}

}  // namespace

// The kernels the rest of the project names are registered, baselines flagged, and the families
// that must do SpMM declare it.
TEST(CONFORMANCE, RegistryHasTheKernels) {
  REQUIRE_BACKEND();
  struct Want {
    Backend b;
    std::vector<const char*> names, spmm, baselines;
  };
#if defined(SPMV_TEST_BACKEND_CUDA)
  const std::vector<Want> want = {
      {Backend::Cuda,
       {"auto", "csr", "csr-scalar", "csr-vector", "csr-adaptive", "csr-merge", "csr5", "ell", "hll", "csr-scatter",
        "cusparse", "cusparse-alg1", "cusparse-alg2", "cusparse-coo-alg1", "cusparse-coo-alg2", "cusparse-sell"},
       {"auto", "csr", "csr-adaptive", "csr5", "ell", "hll", "csr-scatter", "cusparse"},
       {"cusparse", "cusparse-alg1", "cusparse-alg2", "cusparse-coo-alg1", "cusparse-coo-alg2", "cusparse-sell"}}};
#else
  // Every kernel must do SpMM.
  const std::vector<Want> want = {
      {Backend::Serial,
       {"auto", "csr", "ell", "ell-rowlen", "hll", "csr5", "csr-scatter"},
       {"auto", "csr", "ell", "ell-rowlen", "hll", "csr5", "csr-scatter"},
       {}},
      {Backend::Omp,
       {"auto", "csr", "csr-dynamic", "csr-balanced", "ell", "ell-rowlen", "hll", "csr5", "csr-scatter"},
       {"auto", "csr", "csr-dynamic", "csr-balanced", "ell", "ell-rowlen", "hll", "csr5", "csr-scatter"},
       {}}};
  for (const KernelSpec* k : tested_kernels()) EXPECT_TRUE(k->spmm) << k->name << " should accept k > 1";
  // Eigen is optional (SPMV_WITH_EIGEN); when built in it is a baseline.
  if (const KernelSpec* e = find_kernel(Backend::Omp, "eigen")) EXPECT_TRUE(e->baseline);
#endif
  for (const Want& w : want) {
    for (const char* n : w.names) EXPECT_NE(find_kernel(w.b, n), nullptr) << to_string(w.b) << " " << n;
    for (const char* n : w.spmm)
      if (const KernelSpec* k = find_kernel(w.b, n)) EXPECT_TRUE(k->spmm) << n << " should accept k > 1";
    for (const char* n : w.baselines)
      if (const KernelSpec* k = find_kernel(w.b, n)) EXPECT_TRUE(k->baseline) << n;
  }
}

TEST(CONFORMANCE, EdgeCasesEverySettingAndRightHandSides) {
  REQUIRE_BACKEND();
  const auto cases = test::edge_cases();
  int runs = 0;
  for (const KernelSpec* spec : tested_kernels())
    for (const Setting& s : main_settings(*spec))
      for (const auto& [name, a] : cases)
        for (const int k : {1, 3})
          for (const Layout lay : {Layout::RowMajor, Layout::ColMajor}) {
            if (k == 1 && lay == Layout::ColMajor) continue;  // identical for one column
            if (k > 1 && !spec->spmm) continue;  // the refusal is SpmvOnlyKernelsRefuseSeveralRightHandSides
            PlanOptions opt = s.opt;
            opt.k = k;
            opt.layout = lay;
            EXPECT_EQ(run_one(*spec, a, opt, name), "");
            ++runs;
          }
  // Not vacuous: every case ran under many kernels and settings (each backend has well over 20).
  EXPECT_GT(runs, 20 * static_cast<int>(cases.size()));
}

// y = A^T x on every kernel (the plan makes A^T once): the edge cases (rectangular both ways, empty
// rows and columns, a dominant row: a dense column of A^T), one and three right-hand sides in both
// layouts, every precision the kernel has.
TEST(CONFORMANCE, TransposedProductOnEveryKernel) {
  REQUIRE_BACKEND();
  const auto cases = test::edge_cases();
  int runs = 0;
  for (const KernelSpec* spec : tested_kernels())
    for (const auto& [name, a] : cases)
      for (const int k : {1, 3})
        for (const Layout lay : {Layout::RowMajor, Layout::ColMajor})
          for (const Precision p : spec->precisions) {
            if ((k == 1 && lay == Layout::ColMajor) || (k > 1 && !spec->spmm)) continue;
            if (k > 1 && p != Precision::Double) continue;  // SpMM's precisions: SingleAndMixedPrecision
            const PlanOptions opt{
                .threads = 2, .k = k, .layout = lay, .precision = p, .operation = Operation::Transpose};
            const std::string r = run_one(*spec, a, opt, name + " A^T");
            if (spec->baseline && r.find("no transposed product") != std::string::npos) continue;
            EXPECT_EQ(r, "");
            ++runs;
          }
  EXPECT_GT(runs, 10 * static_cast<int>(cases.size()));
}

// Plans over the user's own arrays (CsrView with 64-bit offsets, CsrView32 with 32-bit ones) give
// the reference product on every kernel at its defaults; the CPU CSR kernels (Eigen's too) read the
// user's values in place (a change after planning shows in the next product), others copied them.
TEST(CONFORMANCE, PlansOverUserArrays) {
  REQUIRE_BACKEND();
  const Csr a = test::edge_case(test::edge_cases(), "irregular_5000");
  std::vector<offset_t> rp64(a.row_ptr.begin(), a.row_ptr.end());
  std::vector<std::int32_t> rp32(a.row_ptr.begin(), a.row_ptr.end());
  std::vector<index_t> col(a.col.begin(), a.col.end());
  std::vector<double> val(a.val.begin(), a.val.end());
  const CsrView v64{.rows = a.rows, .cols = a.cols, .row_ptr = rp64, .col = col, .val = val};
  const CsrView32 v32{.rows = a.rows, .cols = a.cols, .row_ptr = rp32, .col = col, .val = val};
  ASSERT_EQ(csr_structure_error(v64), "");
  ASSERT_EQ(csr_structure_error(v32), "");
  const auto x = make_vector("random:5", static_cast<std::size_t>(a.cols));
  const Reference ref = reference_product(a, x);
  Csr doubled = a;
  for (double& w : doubled.val) w *= 2;
  const Reference ref2 = reference_product(doubled, x);
  int borrowed = 0;
  for (const KernelSpec* spec : tested_kernels())
    for (const bool wide : {true, false}) {
      const std::string what = spec->name + (wide ? " CsrView" : " CsrView32");
      const auto plan = wide ? make_plan(v64, spec->backend, spec->name) : make_plan(v32, spec->backend, spec->name);
      std::vector<double> y(static_cast<std::size_t>(a.rows), std::nan(""));
      plan->multiply(x, y);
      const CheckResult c = check_product(a, ref, y);
      EXPECT_TRUE(c.passed) << what << ": " << c.message;
      for (double& w : val) w *= 2;  // what a borrowing plan sees; a copying one does not
      plan->multiply(x, y);
      for (double& w : val) w /= 2;
      int hack = 0;
      const KernelSpec& ran = plan->chosen.empty() ? *spec : test::chosen_spec(spec->backend, plan->chosen, hack);
      // A scatter kernel's plan of A x holds A^T, made once.
      const bool borrows = ran.backend != Backend::Cuda && ran.format == "csr" && !ran.scatters;
      EXPECT_TRUE(check_product(borrows ? doubled : a, borrows ? ref2 : ref, y).passed)
          << what << (borrows ? " must read the user's values in place" : " must hold its own copy");
      borrowed += borrows;
    }
#if defined(SPMV_TEST_BACKEND_CPU)
  EXPECT_GE(borrowed, 10);  // serial csr, Eigen and the OpenMP CSR family, both offset widths
#endif
  const std::vector<std::int32_t> short_rp(rp32.begin(), rp32.end() - 1);
  EXPECT_THROW(make_plan(CsrView32{.rows = a.rows, .cols = a.cols, .row_ptr = short_rp, .col = col, .val = val},
                         tested_kernels().front()->backend, "auto"),
               Error);
  std::vector<index_t> bad_col = col;
  std::swap(bad_col[a.row_ptr[7]], bad_col[a.row_ptr[7] + 1]);
  ASSERT_GE(a.row_length(7), 2);
  EXPECT_EQ(csr_structure_error(CsrView32{.rows = a.rows, .cols = a.cols, .row_ptr = rp32, .col = bad_col, .val = val}),
            "row 7: column indices must be in [0, cols), sorted and without duplicates");
}

// Wider SpMM: every column block of rows_spmm appears for k = 8, 29 and 33 (row-major: 8, 16+8+4+1,
// 32+1; column-major: 8, 8+8+8+4+1, 4x8+1; k = 3 in EdgeCases adds 2+1).
TEST(CONFORMANCE, WideSpmmBothLayouts) {
  REQUIRE_BACKEND();
  const auto cases = test::edge_cases();
  int runs = 0;
  for (const KernelSpec* spec : tested_kernels()) {
    if (!spec->spmm) continue;
    for (const int k : {8, 29, 33})
      for (const Layout lay : {Layout::RowMajor, Layout::ColMajor})
        for (const char* name : {"irregular_5000", "empty_rows_everywhere", "wide_3x50", "tall_200x3"}) {
          PlanOptions opt;
          opt.threads = spec->backend == Backend::Omp ? 3 : 1;
          opt.k = k;
          opt.layout = lay;
          EXPECT_EQ(run_one(*spec, test::edge_case(cases, name), opt, name), "");
          ++runs;
        }
  }
  EXPECT_GE(runs, 3 * 16);  // csr, hll and one more family at least
}

// Every SpMM kernel at K = 1, 2, 3, 4, 5, 16, 33, 64 in both layouts (each column-block width
// and its remainders) on the edge cases that break SpMM (nnz = 0, one huge row, rectangular,
// empty rows) and on real shared matrices (rectangular well1033 and wm1, symmetric Journals with
// dense rows, skew-symmetric plskz362, mcfe). A refusal counts only with its reason (run_one).
TEST(CONFORMANCE, SpmmEveryKBothLayouts) {
  REQUIRE_BACKEND();
  const auto cases = test::edge_cases();
  std::vector<std::pair<std::string, Csr>> mats;
  for (const char* name : {"empty_0nnz", "one_dominant_row", "wide_3x50", "empty_rows_everywhere"})
    mats.emplace_back(name, test::edge_case(cases, name));
  for (const auto& [name, file] : test::shared_matrix_files())
    if (name == "well1033" || name == "wm1" || name == "Journals" || name == "plskz362" || name == "mcfe")
      mats.emplace_back(name, io::load_csr(file));
  ASSERT_EQ(mats.size(), 9u) << "shared matrices missing from " << test::shared_matrices_dir();
  int runs = 0;
  for (const KernelSpec* spec : tested_kernels()) {
    if (!spec->spmm) continue;
    for (const int k : {1, 2, 3, 4, 5, 16, 33, 64})
      for (const Layout lay : {Layout::RowMajor, Layout::ColMajor})
        for (const auto& [name, a] : mats) {
          if (k == 1 && lay == Layout::ColMajor) continue;
          PlanOptions opt;
          opt.threads = spec->backend == Backend::Omp ? 2 : 1;
          opt.k = k;
          opt.layout = lay;
          EXPECT_EQ(run_one(*spec, a, opt, name), "");
          ++runs;
        }
  }
  EXPECT_GE(runs, 4 * 15 * 9);  // four SpMM kernels at least
}

// A kernel that does not declare SpMM refuses k > 1 clearly instead of computing one column.
TEST(CONFORMANCE, SpmvOnlyKernelsRefuseSeveralRightHandSides) {
  REQUIRE_BACKEND();
  const Csr a = test::csr_from_lengths({2, 0, 3}, 4, 1);
  for (const KernelSpec* spec : tested_kernels()) {
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

// Each kernel's own settings (param_sweeps) on every edge case. HLL with hack 4096 puts
// one_dominant_row's 2000 rows into one hack 5000 wide: every backend must refuse it.
TEST(CONFORMANCE, ParameterSweeps) {
  REQUIRE_BACKEND();
  const auto cases = test::edge_cases();
  int runs = 0, detail_checked = 0;
  for (const KernelSpec* spec : tested_kernels())
    for (const Sweep& sw : param_sweeps(*spec))
      for (const auto& [name, a] : cases)
        for (const int k : sw.ks) {
          if (k > 1 && !spec->spmm) continue;
          PlanOptions opt = sw.s.opt;
          opt.k = k;
          // A sweep with k = 1 names what SpMV plans show (the inner loop, ...); an SpMM-only sweep
          // what every plan of it shows.
          const std::string detail_has = k == 1 || sw.ks.front() > 1 ? sw.s.detail_has : "";
          bool refused = false;
          EXPECT_EQ(run_one(*spec, a, opt, name, &refused, detail_has), "");
          if (spec->format == "hll" && opt.kernel.hack == 4096 && name == "one_dominant_row")
            EXPECT_TRUE(refused) << test::describe(*spec, opt) << ": one hack padded to 5000 wide accepted";
          ++runs;
          detail_checked += !refused && !detail_has.empty();
        }
  EXPECT_GT(runs, 300);
#if !defined(SPMV_TEST_BACKEND_CUDA)
  EXPECT_GT(detail_checked, 100);
#endif
}

// Rows of 100k entries next to rows of 2 (like dc1): every kernel at every main setting.
TEST(CONFORMANCE, Dc1LikeIrregular) {
  REQUIRE_BACKEND();
  const Csr a = test::dc1_like();
  int computed = 0;
  for (const KernelSpec* spec : tested_kernels())
    for (const Setting& s : main_settings(*spec)) {
      bool refused = false;
      EXPECT_EQ(run_one(*spec, a, s.opt, "dc1_like", &refused), "");
      computed += !refused;
    }
  EXPECT_GE(computed, 3);
}

// A dc1-like matrix: 116835 rows, one of them with 100000 entries. ELL would need ~131 GiB; the
// plan must refuse with the sizes in the message, before allocating anything. HLL confines the
// long row's padding to its own hack: it fits and computes the right answer.
TEST(CONFORMANCE, EllRefusesDominantRowBeforeAllocating) {
  REQUIRE_BACKEND();
  std::vector<offset_t> lengths(116835, 4);
  lengths[5000] = 100000;
  const Csr a = test::csr_from_lengths(lengths, 116835, 17);
  PlanOptions opt;
  opt.threads = 2;
  opt.memory_budget_bytes = 1024.0 * 1024 * 1024;
  const std::regex want(R"(ELL would need [0-9.]+ GiB, [0-9.]+ times CSR; limit is 1\.00 GiB)");
  int ell = 0, hll = 0;
  for (const KernelSpec* spec : tested_kernels()) {
    if (spec->format == "ell") {
      ++ell;
      try {
        make_plan(a, spec->backend, spec->name, opt);
        ADD_FAILURE() << test::describe(*spec, opt) << " accepted a matrix needing ~131 GiB";
      } catch (const Unsupported& e) {
        EXPECT_TRUE(std::regex_search(e.what(), want)) << e.what();
        EXPECT_NE(std::string(e.what()).find("would need 130."), std::string::npos) << e.what();
      }
    } else if (spec->format == "hll") {
      ++hll;
      PlanOptions h = opt;
      h.kernel.hack = 32;
      bool refused = true;
      EXPECT_EQ(run_one(*spec, a, h, "dc1-like 116835 rows", &refused), "");
      EXPECT_FALSE(refused) << test::describe(*spec, h);
    }
  }
  EXPECT_GE(ell, 1);
  EXPECT_GE(hll, 1);
}

// Every kernel at every main setting on every real shared SuiteSparse matrix (k = 1); every kernel
// refuses the complex ones. On the host the inner loops and schedules are forced in turn (both
// run on real matrices, and no plan-time trial costs test time); the omp "csr" trial itself runs
// at 16 threads.
TEST(CONFORMANCE, EverySharedMatrixEveryKernel) {
  REQUIRE_BACKEND();
  const auto files = test::shared_matrix_files();
  ASSERT_GE(files.size(), test::shared_count(50, 14))
      << "MANIFEST.tsv missing or short in " << test::shared_matrices_dir();
  int checked = 0, real = 0, complex = 0;
  for (const auto& [name, file] : files) {
    const Csr a = io::load_csr(file);
    if (a.is_complex()) {
      for (const KernelSpec* spec : tested_kernels())
        EXPECT_THROW(make_plan(a, spec->backend, spec->name), Unsupported) << spec->name << " on " << name;
      ++complex;
      continue;
    }
    ++real;
    for (const KernelSpec* spec : tested_kernels())
      for (const Setting& s : main_settings(*spec)) {
        PlanOptions opt = s.opt;
        const int t = opt.threads;
        if (has_group(*spec, "inner")) {
          opt.kernel.variant = (t + spec->name.size()) % 2 ? "simd" : "scalar";
          if (has_group(*spec, "schedule"))
            opt.kernel.variant = t == 16 ? "auto" : t % 2 ? "balanced:simd" : "dynamic:scalar";
        }
        EXPECT_EQ(run_one(*spec, a, opt, name), "");
        ++checked;
      }
    // A^T on every matrix: the planner (A^T made once, or the scatter where it chooses it), the
    // scatter kernel on A as stored, and the baselines' own transposed products.
    for (const KernelSpec* spec : tested_kernels())
      if (spec->name == "auto" || spec->scatters || spec->transposes) {
        const PlanOptions opt{.threads = 2, .operation = Operation::Transpose};
        const std::string r = run_one(*spec, a, opt, name + " A^T");
        if (spec->baseline && r.find("no transposed product") != std::string::npos) continue;
        EXPECT_EQ(r, "");
        ++checked;
      }
  }
  EXPECT_GT(real, static_cast<int>(test::shared_count(50, 10)));
  EXPECT_GT(checked, 100);
  std::printf("[ info ] %d real matrices checked with every kernel (%d runs), %d complex ones refused\n", real, checked,
              complex);
}
