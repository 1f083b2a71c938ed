// GPU tests: every CUDA kernel in the registry against the reference product, on the edge cases,
// every shared SuiteSparse matrix and a dc1-like irregular matrix. Run with `ctest -L gpu` on a
// machine with a GPU; without one they fail (a GPU test that cannot run has not passed).
#include <gtest/gtest.h>
#include <spmv/device.hpp>
#include <spmv/generate.hpp>
#include <spmv/io.hpp>
#include <spmv/spmv.hpp>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "cuda/cuda_kernels.hpp"
#include "test_util.hpp"

using namespace spmv;

namespace {

std::vector<const KernelSpec*> cuda_kernels() {
  std::vector<const KernelSpec*> v;
  for (const auto& k : kernels())
    if (k.backend == Backend::Cuda) v.push_back(&k);
  return v;
}

#define REQUIRE_GPU()                                                                     \
  ASSERT_GT(device::cuda_device_count(), 0)                                              \
      << "no usable CUDA device: the gpu tests must run on a machine with a GPU";       \
  ASSERT_FALSE(cuda_kernels().empty()) << "the CUDA backend registered no kernels"

// Padded formats (ours, and cuSPARSE's sliced ELL built from CSR) may refuse a matrix whose padding
// exceeds the memory limits; that refusal is a result (checked for its message), never a pass of the
// product check.
bool pads(const KernelSpec& k) { return k.format == "ell" || k.format == "hll" || k.name == "cusparse-sell"; }

struct Outcome {
  bool refused = false;
  CheckResult check;
};

Outcome run_kernel(const Csr& a, const KernelSpec& k, const PlanOptions& opt, const Reference& ref,
                   std::span<const double> x) {
  Outcome o;
  std::unique_ptr<Plan> plan;
  try {
    plan = make_plan(a, Backend::Cuda, k.name, opt);
  } catch (const Unsupported& e) {
    if (!pads(k) || std::string(e.what()).find("would need") == std::string::npos) throw;
    o.refused = true;
    return o;
  }
  std::vector<double> y(static_cast<std::size_t>(a.rows) * opt.k, 12345.0);  // garbage must be overwritten
  plan->set_x(x);
  plan->run(2);  // twice: a product must not depend on the previous y
  plan->get_y(y);
  o.check = check_product(a, ref, y, opt.k, opt.layout);
  return o;
}

TEST(CudaKernels, EdgeCasesAllBlockSizesAndK) {
  REQUIRE_GPU();
  int checked = 0;
  for (const auto& [name, a] : test::edge_cases()) {
    for (int k : {1, 4}) {
      const auto x = make_vector("random:3", static_cast<std::size_t>(a.cols) * k);
      const Reference ref = reference_product(a, x, k, Layout::RowMajor);
      for (const KernelSpec* spec : cuda_kernels()) {
        if (k > 1 && !spec->spmm) continue;
        for (int bs : {128, 256, 1024}) {
          PlanOptions opt;
          opt.block_size = bs;
          opt.k = k;
          const Outcome o = run_kernel(a, *spec, opt, ref, x);
          if (o.refused) continue;
          EXPECT_TRUE(o.check.passed) << spec->name << " on " << name << " block " << bs << " k " << k << ": "
                                      << o.check.message;
          ++checked;
        }
      }
    }
  }
  EXPECT_GT(checked, 100);
}

// Column-major X and Y: cuSPARSE natively, our kernels through the plan's host-side transposes.
TEST(CudaKernels, SpmmColumnMajorEveryKernel) {
  REQUIRE_GPU();
  const Csr a = test::csr_from_lengths(std::vector<offset_t>(300, 7), 250, 11);
  const int k = 3;
  const auto x = make_vector("random:4", static_cast<std::size_t>(a.cols) * k);
  const Reference ref = reference_product(a, x, k, Layout::ColMajor);
  int checked = 0;
  for (const KernelSpec* spec : cuda_kernels()) {
    if (!spec->spmm) continue;
    PlanOptions opt;
    opt.k = k;
    opt.layout = Layout::ColMajor;
    const Outcome o = run_kernel(a, *spec, opt, ref, x);
    EXPECT_TRUE(o.check.passed) << spec->name << ": " << o.check.message;
    ++checked;
  }
  EXPECT_GE(checked, 3);  // csr, hll and the cuSPARSE entries at least
}

// Every cuSPARSE SpMV algorithm for a general matrix is a registered baseline (the tests above
// run each against the reference); the sliced ELL one respects the memory limits.
TEST(CudaKernels, CusparseBaselines) {
  REQUIRE_GPU();
  for (const char* name : {"cusparse", "cusparse-alg1", "cusparse-alg2", "cusparse-coo-alg1", "cusparse-coo-alg2",
                           "cusparse-sell"}) {
    const KernelSpec* k = find_kernel(Backend::Cuda, name);
    ASSERT_NE(k, nullptr) << name;
    EXPECT_TRUE(k->baseline) << name;
  }
  std::vector<offset_t> len(2000, 1);
  len[1234] = 5000;  // one slice 5000 wide
  const Csr a = test::csr_from_lengths(len, 6000, 6);
  PlanOptions tight;
  tight.memory_budget_bytes = 1e5;
  try {
    make_plan(a, Backend::Cuda, "cusparse-sell", tight);
    ADD_FAILURE() << "cusparse-sell ignored the memory budget";
  } catch (const Unsupported& e) {
    EXPECT_NE(std::string(e.what()).find("would need"), std::string::npos) << e.what();
  }
  auto p = make_plan(a, Backend::Cuda, "cusparse-sell");
  EXPECT_EQ(p->stored_entries, 32 * (5000 + 62));  // the wide slice and 62 slices of width 1 (2000 rows)
  EXPECT_GT(p->convert_seconds, 0);
}

TEST(CudaKernels, SubwarpAndNzPerBlockOptions) {
  REQUIRE_GPU();
  const auto cases = test::edge_cases();
  for (const auto& [name, a] : cases) {
    const auto x = make_vector("random:5", a.cols);
    const Reference ref = reference_product(a, x, 1, Layout::RowMajor);
    for (int sw : {2, 4, 8, 16, 32}) {
      PlanOptions opt;
      opt.subwarp = sw;
      const Outcome o = run_kernel(a, get_kernel(Backend::Cuda, "csr-vector"), opt, ref, x);
      EXPECT_TRUE(o.check.passed) << "csr-vector subwarp " << sw << " on " << name << ": " << o.check.message;
    }
    // HLL: 1-32 threads per row, hacks narrower than a warp (7: hacks straddle a warp's rows) and
    // wider (64).
    for (int sw : {1, 2, 4, 8, 16, 32})
      for (int hack : {7, 32, 64}) {
        PlanOptions opt;
        opt.subwarp = sw;
        opt.hack = hack;
        const Outcome o = run_kernel(a, get_kernel(Backend::Cuda, "hll"), opt, ref, x);
        if (o.refused) continue;
        EXPECT_TRUE(o.check.passed) << "hll subwarp " << sw << " hack " << hack << " on " << name << ": "
                                    << o.check.message;
      }
    for (offset_t nb : {1, 7, 64, 1000}) {  // 1: every non-empty row is "long"; 7: few rows per block
      PlanOptions opt;
      opt.nz_per_block = nb;
      opt.block_size = 128;
      const Outcome o = run_kernel(a, get_kernel(Backend::Cuda, "csr-adaptive"), opt, ref, x);
      EXPECT_TRUE(o.check.passed) << "csr-adaptive nz_per_block " << nb << " on " << name << ": " << o.check.message;
    }
  }
  PlanOptions bad;
  bad.block_size = 100;
  EXPECT_THROW(make_plan(cases[3].second, Backend::Cuda, "csr-vector", bad), Unsupported);
  PlanOptions three;
  three.subwarp = 3;
  EXPECT_THROW(make_plan(cases[3].second, Backend::Cuda, "hll", three), Unsupported);
}

// Rows of 100k entries next to rows of 2 (like dc1): every kernel, and merge-path bit-identical.
Csr dc1_like() {
  std::vector<offset_t> l(40000, 2);
  for (int i = 0; i < 40000; i += 9973) l[i] = 100000;
  l[39999] = 100000;  // a long row at the very end
  for (int i = 100; i < 400; ++i) l[i] = 0;
  return test::csr_from_lengths(l, 120000, 21);
}

TEST(CudaKernels, Dc1LikeIrregular) {
  REQUIRE_GPU();
  const Csr a = dc1_like();
  const auto x = make_vector("random:6", a.cols);
  const Reference ref = reference_product(a, x, 1, Layout::RowMajor);
  for (const KernelSpec* spec : cuda_kernels()) {
    for (int bs : {128, 1024}) {
      PlanOptions opt;
      opt.block_size = bs;
      const Outcome o = run_kernel(a, *spec, opt, ref, x);
      if (o.refused) continue;
      EXPECT_TRUE(o.check.passed) << spec->name << " block " << bs << ": " << o.check.message;
    }
  }
}

// The planner's candidates share one upload: every kernel with a sharing factory, made one after
// another from the same device CSR (as in a trial, all alive at once), matches the reference.
TEST(CudaKernels, PlansSharingOneUpload) {
  REQUIRE_GPU();
  auto cases = test::edge_cases();
  cases.emplace_back("dc1_like", dc1_like());
  for (const auto& [name, a] : cases) {
    const auto x = make_vector("random:8", a.cols);
    const Reference ref = reference_product(a, x, 1, Layout::RowMajor);
    cuda::SharedDeviceCsr dev;
    std::vector<std::unique_ptr<Plan>> plans;
    for (const char* k : {"csr-vector", "hll", "csr5", "ell", "csr-adaptive", "csr-scalar", "csr-merge"}) {
      std::unique_ptr<Plan> p;
      try {
        p = cuda::make_sharing_upload(a, k, PlanOptions{}, dev);
      } catch (const Unsupported& e) {  // a padded format over the memory limits
        EXPECT_NE(std::string(e.what()).find("would need"), std::string::npos) << k << " on " << name << ": " << e.what();
        continue;
      }
      ASSERT_NE(p, nullptr) << k;
      plans.push_back(std::move(p));
    }
    EXPECT_GE(plans.size(), 5u) << name;
    for (auto& p : plans) {  // all alive, sharing x and y: each product checked right after it runs
      std::vector<double> y(a.rows, 12345.0);
      p->multiply(x, y);
      const CheckResult c = check_product(a, ref, y);
      EXPECT_TRUE(c.passed) << p->detail << " on " << name << ": " << c.message;
    }
  }
}

TEST(CudaKernels, MergeIsDeterministic) {
  REQUIRE_GPU();
  const Csr a = dc1_like();
  const auto x = make_vector("random:7", a.cols);
  for (int bs : {128, 256, 1024}) {
    PlanOptions opt;
    opt.block_size = bs;
    std::vector<double> y1(a.rows), y2(a.rows), y3(a.rows);
    auto p = make_plan(a, Backend::Cuda, "csr-merge", opt);
    p->multiply(x, y1);
    p->run(5);
    p->get_y(y2);
    make_plan(a, Backend::Cuda, "csr-merge", opt)->multiply(x, y3);
    EXPECT_EQ(std::memcmp(y1.data(), y2.data(), y1.size() * sizeof(double)), 0) << "block " << bs;
    EXPECT_EQ(std::memcmp(y1.data(), y3.data(), y1.size() * sizeof(double)), 0) << "block " << bs;
    const CheckResult c = check_product(a, reference_product(a, x), y1);
    EXPECT_TRUE(c.passed) << c.message;
  }
}

// cuSPARSE documents CSR_ALG2 and COO_ALG2 as bit-wise deterministic run to run.
TEST(CudaKernels, CusparseDeterministicAlgorithms) {
  REQUIRE_GPU();
  const Csr a = dc1_like();
  const auto x = make_vector("random:10", a.cols);
  for (const char* name : {"cusparse-alg2", "cusparse-coo-alg2"}) {
    auto p = make_plan(a, Backend::Cuda, name);
    std::vector<double> y1(a.rows), y2(a.rows);
    p->multiply(x, y1);
    p->run(5);
    p->get_y(y2);
    EXPECT_EQ(std::memcmp(y1.data(), y2.data(), y1.size() * sizeof(double)), 0) << name;
  }
}

// Kernels that split long rows over blocks (adaptive for k = 1, the CSR SpMM for k > 1) reset
// their arrival counters themselves: later products must be right and bit-identical too.
TEST(CudaKernels, SplitRowKernelsRepeatBitIdentical) {
  REQUIRE_GPU();
  const Csr a = dc1_like();
  for (int k : {1, 4, 40}) {
    const auto x = make_vector("random:9", static_cast<std::size_t>(a.cols) * k);
    const Reference ref = reference_product(a, x, k, Layout::RowMajor);
    for (const char* name : {"csr-adaptive", "csr"}) {
      if (k > 1 && std::string(name) != "csr") continue;
      PlanOptions opt;
      opt.k = k;
      opt.block_size = 128;
      auto p = make_plan(a, Backend::Cuda, name, opt);
      std::vector<double> y1(static_cast<std::size_t>(a.rows) * k), y2(y1.size());
      p->multiply(x, y1);
      p->run(7);
      p->get_y(y2);
      EXPECT_EQ(std::memcmp(y1.data(), y2.data(), y1.size() * sizeof(double)), 0) << name << " k " << k;
      const CheckResult c = check_product(a, ref, y2, k, Layout::RowMajor);
      EXPECT_TRUE(c.passed) << name << " k " << k << ": " << c.message;
    }
  }
}

// The planner's features computed on the device equal the host's, field for field (the same sums
// of integers), on the edge cases, a matrix of many 64-row groups and every shared real matrix.
TEST(CudaKernels, DeviceFeaturesEqualHostFeatures) {
  REQUIRE_GPU();
  std::vector<std::pair<std::string, Csr>> cases = test::edge_cases();
  cases.emplace_back("dc1-like", dc1_like());
  // More 64-row groups than the kernel has warps: its grid-stride loop.
  cases.emplace_back("powerlaw 2.2M rows", gen::generate({.kind = gen::Kind::Powerlaw, .rows = 2'200'000, .mean = 3, .std = 4}));
  const std::filesystem::path dir = test::shared_matrices_dir();
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().string().ends_with(".mtx.gz")) {
      Csr a = io::load_csr(e.path().string());
      if (!a.is_complex()) cases.emplace_back(e.path().filename().string(), std::move(a));
    }
  ASSERT_GT(cases.size(), 60u);
  for (const auto& [name, a] : cases) {
    cuda::SharedDeviceCsr dev;
    const MatrixFeatures d = cuda::analyze_on_device(a, dev), h = analyze(a);
    EXPECT_EQ(d.rows, h.rows) << name;
    EXPECT_EQ(d.cols, h.cols) << name;
    EXPECT_EQ(d.nnz, h.nnz) << name;
    EXPECT_EQ(d.max_row, h.max_row) << name;
    EXPECT_EQ(d.empty_rows, h.empty_rows) << name;
    EXPECT_EQ(d.mean, h.mean) << name;
    EXPECT_EQ(d.std, h.std) << name;
    EXPECT_EQ(d.ell_padding, h.ell_padding) << name;
    for (int i = 0; i < 3; ++i) EXPECT_EQ(d.hll_padding[i], h.hll_padding[i]) << name << " hack " << (16 << i);
    EXPECT_EQ(d.csr_bytes, h.csr_bytes) << name;
  }
}

TEST(CudaKernels, SharedMatrices) {
  REQUIRE_GPU();
  const std::filesystem::path dir = test::shared_matrices_dir();
  std::ifstream manifest(dir / "MANIFEST.tsv");
  ASSERT_TRUE(manifest) << "no MANIFEST.tsv in " << dir;
  std::string line;
  std::getline(manifest, line);  // header
  int matrices = 0, complex = 0;
  while (std::getline(manifest, line)) {
    std::istringstream f(line);
    std::vector<std::string> cells;
    for (std::string c; std::getline(f, c, '\t');) cells.push_back(c);
    if (cells.size() < 7) continue;
    const Csr a = io::load_csr((dir / cells[1]).string());
    if (a.is_complex()) {
      for (const KernelSpec* spec : cuda_kernels())
        EXPECT_THROW(make_plan(a, Backend::Cuda, spec->name), Unsupported) << spec->name << " on " << cells[0];
      ++complex;
      continue;
    }
    const auto x = make_vector("random:8", a.cols);
    const Reference ref = reference_product(a, x, 1, Layout::RowMajor);
    for (const KernelSpec* spec : cuda_kernels()) {
      const Outcome o = run_kernel(a, *spec, PlanOptions{}, ref, x);
      if (o.refused) continue;
      EXPECT_TRUE(o.check.passed) << spec->name << " on " << cells[0] << ": " << o.check.message;
    }
    ++matrices;
  }
  EXPECT_GT(matrices, 50);
  std::printf("[ info ] %d real matrices checked with every CUDA kernel, %d complex ones refused\n", matrices, complex);
}

}  // namespace
