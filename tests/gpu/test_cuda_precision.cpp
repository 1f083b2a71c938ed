// CUDA single and mixed precision: what the conformance tests (every kernel in every
// precision its KernelSpec lists, with its own choices) do not reach: the CSR SpMM shapes and the
// padded formats' column-major modes forced one by one (float X and Y through the device
// transposes; float4 / float2 loads), the planner's candidates sharing one float upload (CSR5's
// device conversion included), x and y given and taken in either type (converted on the host), and
// the bytes a product moves. CSR5's own cases per precision are in test_csr5_gpu.cpp.
#include <gtest/gtest.h>
#include <spmv/device.hpp>
#include <spmv/spmv.hpp>

#include <fmt/format.h>

#include <cmath>

#include "cuda/cuda_kernels.hpp"
#include "test_util.hpp"

using namespace spmv;

namespace {

void require_gpu() {
  ASSERT_TRUE(device::cuda_built()) << "built without the CUDA backend";
  ASSERT_GT(device::cuda_device_count(), 0) << "no CUDA device";
}

constexpr Precision kFloatValued[] = {Precision::Single, Precision::Mixed};

// x as a plan of precision p computes with it: rounded to float (and widened exactly) for single.
std::vector<double> as_used(std::vector<double> x, Precision p) {
  if (p == Precision::Single)
    for (double& v : x) v = static_cast<float>(v);
  return x;
}

// "" when the plan's product (x given in double, y taken in double) matches the reference within
// its precision's tolerance, else why not.
std::string mismatch(const Csr& a, Plan& plan, const PlanOptions& o) {
  const auto x = make_vector("random:11", static_cast<std::size_t>(a.cols) * o.k);
  std::vector<double> y(static_cast<std::size_t>(a.rows) * o.k, std::nan(""));
  plan.multiply(x, y);
  plan.run(2);  // repeated products must not accumulate (the long-row kernels' counters)
  plan.get_y(y);
  const auto ref = reference_product(a, as_used(x, o.precision), o.k, o.layout);
  const CheckResult c = check_product(a, ref, y, o.k, o.layout, o.precision);
  return c.passed ? "" : c.message;
}

std::string check(const Csr& a, const std::string& kernel, const PlanOptions& o, const std::string& what) {
  const auto plan = make_plan(a, Backend::Cuda, kernel, o);
  const std::string m = mismatch(a, *plan, o);
  return m.empty() ? ""
                   : fmt::format("{} {} {} k={} {} variant={}: {}", what, kernel, to_string(o.precision), o.k,
                                 o.layout == Layout::RowMajor ? "row" : "col", o.kernel.variant, m);
}

Csr long_rows_case() {
  std::vector<offset_t> l(3000, 3);
  l[5] = 40000;  // pieces of the long-row kernel
  l[2000] = 1500;
  return test::csr_from_lengths(l, 45000, 4);
}

}  // namespace

// Every CSR SpMM mapping in single and mixed: row-major (float4 / float2 rows of X at C = 4 / 2),
// column-major in place, through both transposes (t) or X's alone (x), rows longest first (s).
TEST(CudaPrecision, CsrSpmmShapes) {
  require_gpu();
  auto cases = test::edge_cases();
  cases.emplace_back("long_rows", long_rows_case());
  int runs = 0;
  for (const Precision p : kFloatValued)
    for (const auto& [name, a] : cases)
      for (const int k : {2, 4, 8, 33, 64}) {  // 33: C = 1 only; 64: two per lane in the long-row kernel
        for (const int c : {1, 2, 4})
          for (const int w : {1, 8, 32}) {
            if (k % c != 0) continue;
            for (const char* how : {"", ":sorted"}) {
              const PlanOptions o{.k = k,
                                  .layout = Layout::RowMajor,
                                  .precision = p,
                                  .kernel = {.variant = fmt::format("c{}:w{}{}", c, w, how)}};
              EXPECT_EQ(check(a, "csr", o, name), "");
              ++runs;
            }
            for (const char* how : {":transpose", ":transpose-x", ":transpose:sorted"}) {
              const PlanOptions o{.k = k,
                                  .layout = Layout::ColMajor,
                                  .precision = p,
                                  .kernel = {.variant = fmt::format("c{}:w{}{}", c, w, how)}};
              EXPECT_EQ(check(a, "csr", o, name), "");
              ++runs;
            }
          }
        for (const int c : {1, 2, 4, 8})
          for (const int w : {1, 4, 32}) {
            const PlanOptions o{.k = k,
                                .layout = Layout::ColMajor,
                                .precision = p,
                                .kernel = {.variant = fmt::format("c{}:w{}", c, w)}};
            EXPECT_EQ(check(a, "csr", o, name), "");
            ++runs;
          }
      }
  EXPECT_GT(runs, 1000);
}

// ELL and HLL SpMM in single and mixed: row-major, column-major in place and transposed.
TEST(CudaPrecision, PaddedFormatsSpmm) {
  require_gpu();
  int runs = 0;
  for (const Precision p : kFloatValued)
    for (const auto& [name, a] : test::edge_cases())
      for (const char* kernel : {"ell", "hll"})
        for (const int k : {2, 3, 4, 8, 33})
          for (const char* variant : {"row", "native", "transpose"}) {
            const bool row = std::string(variant) == "row";
            const PlanOptions o{.k = k,
                                .layout = row ? Layout::RowMajor : Layout::ColMajor,
                                .precision = p,
                                .kernel = {.variant = row ? "auto" : variant}};
            try {
              EXPECT_EQ(check(a, kernel, o, name), "");
              ++runs;
            } catch (const Unsupported& e) {  // only ELL's padding past its memory limit (one dominant row)
              EXPECT_EQ(std::string(kernel) + std::string(e.what()).substr(0, 14), "ellELL would need") << e.what();
            }
          }
  EXPECT_GT(runs, 400);
}

// The planner's way: every kernel with a sharing factory made from one device upload of float
// values, all alive at once and sharing x and y, in single and mixed (CSR5 converting the shared
// float values on the device, SpMV and SpMM); a mixed plan can follow single ones on the same upload
// (float values both), a double one cannot.
TEST(CudaPrecision, PlansSharingOneFloatUpload) {
  require_gpu();
  auto cases = test::edge_cases();
  cases.emplace_back("dc1_like", test::dc1_like());
  for (const Precision p : kFloatValued)
    for (const auto& [name, a] : cases) {
      const PlanOptions o{.precision = p};
      cuda::SharedDeviceCsr dev;
      std::vector<std::unique_ptr<Plan>> plans;
      for (const char* k : {"csr-vector", "hll", "ell", "csr-adaptive", "csr-scalar", "csr-merge", "csr5"}) {
        std::unique_ptr<Plan> plan;
        try {
          plan = cuda::make_sharing_upload(a, k, o, dev);
        } catch (const Unsupported& e) {  // a padded format over the memory limits
          EXPECT_NE(std::string(e.what()).find("would need"), std::string::npos)
              << k << " on " << name << ": " << e.what();
          continue;
        }
        ASSERT_NE(plan, nullptr) << k;
        EXPECT_EQ(plan->precision, p);
        plans.push_back(std::move(plan));
      }
      EXPECT_GE(plans.size(), 6u) << name;
      EXPECT_NE(plans.back()->detail.find("device-conversion"), std::string::npos) << name << ": csr5 made";
      for (auto& plan : plans) {
        const std::string m = mismatch(a, *plan, o);
        EXPECT_EQ(m, "") << plan->detail << " on " << name << " " << to_string(p);
      }
      // CSR5's SpMM from the same upload (x and y of its own k), both layouts.
      for (const Layout lay : {Layout::RowMajor, Layout::ColMajor}) {
        const PlanOptions ok{.k = 4, .layout = lay, .precision = p};
        const auto spmm = cuda::make_sharing_upload(a, "csr5", ok, dev);
        ASSERT_NE(spmm, nullptr) << name;
        EXPECT_EQ(spmm->precision, p);
        EXPECT_EQ(mismatch(a, *spmm, ok), "") << spmm->detail << " on " << name << " " << to_string(p);
      }
      if (p == Precision::Single) {
        auto mixed = cuda::make_sharing_upload(a, "csr-vector", {.precision = Precision::Mixed}, dev);
        EXPECT_EQ(mismatch(a, *mixed, {.precision = Precision::Mixed}), "") << name;
        EXPECT_EQ(mismatch(a, *plans.front(), o), "") << name << ": the single plan after a mixed one";
      }
      EXPECT_THROW(cuda::make_sharing_upload(a, "csr-vector", PlanOptions{}, dev), Error) << name;
    }
}

// x and y in float or double on plans of every precision: converted on the host where the types
// differ, the same product either way.
TEST(CudaPrecision, FloatAndDoubleSpans) {
  require_gpu();
  const Csr a = test::csr_from_lengths(std::vector<offset_t>(3000, 9), 2500, 12);
  const auto xd = make_vector("random:5", a.cols);
  const std::vector<float> xf(xd.begin(), xd.end());
  for (const Precision p : {Precision::Double, Precision::Single, Precision::Mixed}) {
    const auto plan = make_plan(a, Backend::Cuda, "csr-vector", {.precision = p});
    // Double spans in and out.
    std::vector<double> y_dd(a.rows);
    plan->set_x(std::span<const double>(xd));
    plan->run(1);
    plan->get_y(std::span<double>(y_dd));
    // Float x, float y.
    std::vector<float> y_ff(a.rows);
    plan->set_x(std::span<const float>(xf));
    plan->run(1);
    plan->get_y(std::span<float>(y_ff));
    // Float x, double y: the product of the rounded x.
    std::vector<double> y_fd(a.rows);
    plan->get_y(std::span<double>(y_fd));
    for (index_t i = 0; i < a.rows; ++i) {
      EXPECT_EQ(y_ff[i], static_cast<float>(y_fd[i])) << to_string(p) << " row " << i;
      // A single plan rounds double x itself: the same x as the float one.
      if (p == Precision::Single) EXPECT_EQ(y_dd[i], y_fd[i]) << "row " << i;
    }
    const CheckResult c = check_product(a, reference_product(a, as_used(std::vector<double>(xf.begin(), xf.end()), p)),
                                        y_fd, 1, Layout::RowMajor, p);
    EXPECT_TRUE(c.passed) << to_string(p) << ": " << c.message;
    EXPECT_THROW(plan->set_x(std::span<const float>(xf.data(), xf.size() - 1)), Error);
    std::vector<float> short_y(a.rows - 1);
    EXPECT_THROW(plan->get_y(std::span<float>(short_y)), Error);
  }
}

// The bytes a product moves, with 4-byte values (and 4-byte x and y in single); int32 row offsets
// on the device.
TEST(CudaPrecision, BytesPerProduct) {
  require_gpu();
  const Csr a = test::csr_from_lengths(std::vector<offset_t>(1000, 8), 700, 3);
  const offset_t nnz = a.nnz(), rows = a.rows, cols = a.cols;
  for (const Precision p : {Precision::Double, Precision::Single, Precision::Mixed}) {
    const offset_t vb = p == Precision::Double ? 8 : 4, xb = p == Precision::Single ? 4 : 8;
    for (const char* k : {"csr-scalar", "csr-vector", "csr-merge"}) {
      const auto plan = make_plan(a, Backend::Cuda, k, {.precision = p});
      const offset_t csr = (4 + vb) * nnz + 4 * (rows + 1) + xb * (rows + cols);
      if (std::string(k) == "csr-merge")
        EXPECT_GT(plan->bytes_per_product, csr) << to_string(p);  // + tile starts
      else
        EXPECT_EQ(plan->bytes_per_product, csr) << k << " " << to_string(p);
    }
    const auto ell = make_plan(a, Backend::Cuda, "ell", {.precision = p});
    EXPECT_EQ(ell->bytes_per_product, (4 + vb) * nnz + xb * (rows + cols)) << to_string(p);  // no padding here
    // CSR5: CSR's bytes with 8-byte row offsets, plus its tile pointers and descriptors, which do
    // not depend on the precision.
    const offset_t csr64 = (4 + vb) * nnz + 8 * (rows + 1) + xb * (rows + cols);
    const auto csr5 = make_plan(a, Backend::Cuda, "csr5", {.precision = p});
    const auto csr5_double = make_plan(a, Backend::Cuda, "csr5", {});
    const offset_t tiles_bytes = csr5_double->bytes_per_product - (12 * nnz + 8 * (rows + 1) + 8 * (rows + cols));
    EXPECT_GT(tiles_bytes, 0);
    EXPECT_EQ(csr5->bytes_per_product, csr64 + tiles_bytes) << to_string(p);
    if (p == Precision::Mixed) continue;  // cuSPARSE has no mixed precision
    const auto coo = make_plan(a, Backend::Cuda, "cusparse-coo-alg1", {.precision = p});
    EXPECT_EQ(coo->bytes_per_product, (8 + vb) * nnz + xb * (rows + cols)) << to_string(p);
  }
  EXPECT_THROW(make_plan(a, Backend::Cuda, "cusparse", {.precision = Precision::Mixed}), Unsupported);
}
