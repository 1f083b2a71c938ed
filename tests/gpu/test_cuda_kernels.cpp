// The CUDA-only tests: what the conformance tests (../conformance.cpp, every CUDA kernel against
// the reference on the edge cases, every block size, hack, subwarp and row-block size, a dc1-like
// matrix and every shared SuiteSparse matrix) do not cover: option validation, cuSPARSE sliced
// ELL's memory budget, plans sharing one upload, run-to-run determinism and the device-side
// features. Run with `ctest -L gpu` on a machine with a GPU; without one they fail (a GPU test that
// cannot run has not passed).
#include <gtest/gtest.h>
#include <spmv/device.hpp>
#include <spmv/bench/generate.hpp>
#include <spmv/io.hpp>
#include <spmv/spmv.hpp>

#include <cstring>
#include <tuple>

#include "cuda/cuda_kernels.hpp"
#include "plan/features.hpp"
#include "test_util.hpp"

using namespace spmv;
using test::dc1_like;

namespace {

#define REQUIRE_GPU() \
  ASSERT_GT(device::cuda_device_count(), 0) << "no usable CUDA device: the gpu tests must run on a machine with a GPU"

// Options a kernel cannot honour are refused, not rounded.
TEST(CudaKernels, InvalidOptionsRefused) {
  REQUIRE_GPU();
  const Csr a = test::edge_cases()[3].second;
  PlanOptions bad;
  bad.kernel.block_size = 100;
  EXPECT_THROW(make_plan(a, Backend::Cuda, "csr-vector", bad), Unsupported);
  PlanOptions three;
  three.kernel.subwarp = 3;
  EXPECT_THROW(make_plan(a, Backend::Cuda, "hll", three), Unsupported);
}

// cuSPARSE's sliced ELL respects the memory limits, and stores 32-row slices.
TEST(CudaKernels, CusparseSellBudgetAndSlices) {
  REQUIRE_GPU();
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
        EXPECT_NE(std::string(e.what()).find("would need"), std::string::npos)
            << k << " on " << name << ": " << e.what();
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
    opt.kernel.block_size = bs;
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
      opt.kernel.block_size = 128;
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
  cases.emplace_back("powerlaw 2.2M rows",
                     gen::generate({.kind = gen::Kind::Powerlaw, .rows = 2'200'000, .mean = 3, .std = 4}));
  for (const auto& [name, file] : test::shared_matrix_files()) {
    Csr a = io::load_csr(file);
    if (!a.is_complex()) cases.emplace_back(name, std::move(a));
  }
  ASSERT_GT(cases.size(), 60u);
  for (const auto& [name, a] : cases) {
    cuda::SharedDeviceCsr dev;
    const MatrixFeatures d = cuda::analyze_on_device(a, dev), h = analyze(a);
    // Every feature, bit for bit (the sums in the same order).
    const auto fields = [](const MatrixFeatures& f) {
      return std::tie(f.rows, f.cols, f.nnz, f.max_row, f.empty_rows, f.mean, f.std, f.ell_padding, f.hll_padding[0],
                      f.hll_padding[1], f.hll_padding[2], f.csr_bytes, f.values_sampled, f.sampled_distinct);
    };
    EXPECT_EQ(fields(d), fields(h)) << name;
  }
}

// "auto" for A^T on the GPU: A^T made once while deterministic is set (the scatter adds with
// atomics), whatever the products; with it off and one product expected, the scatter on A as
// stored, correct with alpha and beta on device vectors.
TEST(CudaKernels, TransposedAutoScattersOnlyWhenNotDeterministic) {
  REQUIRE_GPU();
  const Csr a = test::csr_from_lengths(std::vector<offset_t>(3000, 12), 2000, 21);
  PlanOptions opt{.operation = Operation::Transpose, .products = 1};
  const auto made = make_plan(a, Backend::Cuda, "auto", opt);
  EXPECT_EQ(made->detail.rfind("A^T made once", 0), 0u) << made->detail;
  EXPECT_NE(made->detail.find("deterministic is set"), std::string::npos) << made->detail;
  opt.kernel.deterministic = false;
  const auto scatter = make_plan(a, Backend::Cuda, "auto", opt);
  EXPECT_EQ(scatter->chosen, "cuda/csr-scatter") << scatter->describe();
  const std::vector<double> x = make_vector("random:6", 3000), y0 = make_vector("random:7", 2000);
  const Csr at = transpose(a);
  const Reference ref = reference_product(at, x);
  DeviceVector<double> dx(x), dy(y0);
  scatter->multiply(dx, dy, 2.0, -1.0);
  device::synchronize();
  std::vector<double> y = dy.to_host(), want(2000);
  for (std::size_t i = 0; i < want.size(); ++i) want[i] = 2.0 * ref.y[i] - y0[i];
  for (std::size_t i = 0; i < y.size(); ++i) ASSERT_NEAR(y[i], want[i], 1e-12 * (1 + std::abs(want[i]))) << i;
}

}  // namespace
