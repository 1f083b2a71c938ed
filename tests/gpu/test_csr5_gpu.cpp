// CSR5 on CUDA against the reference product: edge cases, CSR5's adversarial cases, every shared
// matrix, the three ways of combining rows across tiles (single-pass, two-pass, atomic),
// bit-identical results of the deterministic modes, and SpMM in both layouts.
#include <gtest/gtest.h>
#include <spmv/device.hpp>
#include "cuda/csr5_convert.hpp"
#include <spmv/spmv.hpp>

#include <bit>
#include <cstring>
#include <tuple>

#include "csr5_cases.hpp"
#include "cuda/tuning.hpp"
#include "test_util.hpp"

using namespace spmv;

namespace {

// These tests exist to exercise a GPU: without one they fail, never pass vacuously.
void require_gpu() {
  ASSERT_TRUE(device::cuda_built()) << "built without the CUDA backend";
  ASSERT_GT(device::cuda_device_count(), 0) << "no CUDA device";
}

std::vector<double> product(const Csr& a, const PlanOptions& o, const std::vector<double>& x) {
  auto plan = make_plan(a, Backend::Cuda, "csr5", o);
  std::vector<double> y(a.rows, 12345.0);
  plan->multiply(x, y);
  plan->run(3);  // repeated products must not accumulate
  plan->get_y(y);
  return y;
}

void expect_ok(const Csr& a, const PlanOptions& o, const std::string& what) {
  const auto x = make_vector("random:7", a.cols);
  const auto y = product(a, o, x);
  const auto res = check_product(a, reference_product(a, x), y);
  ASSERT_TRUE(res.passed) << what << ": " << res.message;
}

}  // namespace

constexpr const char* kModes[] = {"single", "two-pass", "atomic"};

// The atomic mode is the only one that is not deterministic.
static PlanOptions with_mode(const std::string& variant) {
  PlanOptions o;
  o.kernel.variant = variant;
  o.kernel.deterministic = variant.find("atomic") == std::string::npos;
  return o;
}

TEST(Csr5Gpu, EdgeAndAdversarialCasesEveryModeManySigmas) {
  require_gpu();
  for (const auto& [name, a] : test::csr5_all_cases())
    for (int sigma : {0, 1, 4, 6, 17, 32, 48})
      for (const char* mode : kModes) {
        PlanOptions o = with_mode(mode);
        o.kernel.csr5_sigma = sigma;
        o.kernel.block_size = sigma == 17 ? 96 : 256;
        expect_ok(a, o, name + " sigma=" + std::to_string(sigma) + " " + mode);
      }
}

// SpMM (k > 1): every adversarial case (rows across many tiles, empty rows in hinted tiles, the
// tail), several tile heights, K of 1, 2 and 4 right-hand sides a lane and a K that no block of
// columns divides evenly but by 1, in both layouts; repeated products must not accumulate.
TEST(Csr5Gpu, SpmmEveryCaseBothLayouts) {
  require_gpu();
  int runs = 0;
  for (const auto& [name, a] : test::csr5_all_cases())
    for (int sigma : {0, 4, 17})
      for (const int k : {2, 3, 4, 8})
        for (const Layout lay : {Layout::RowMajor, Layout::ColMajor}) {
          PlanOptions o;
          o.kernel.csr5_sigma = sigma;
          o.k = k;
          o.layout = lay;
          o.kernel.block_size = sigma == 17 ? 1024 : 0;  // the kernels built for blocks past 256 threads
          const auto plan = make_plan(a, Backend::Cuda, "csr5", o);
          EXPECT_EQ(test::spmm_mismatch(a, *plan, k, lay, "random:9"), "")
              << name << " sigma=" << sigma << " k=" << k << (lay == Layout::RowMajor ? " row" : " col");
          ++runs;
        }
  EXPECT_GT(runs, 100);
  const Csr small = test::csr_from_lengths({3, 4}, 10, 1);
  for (const char* v : {"single", "atomic", "b4"}) {  // the SpMV's modes
    PlanOptions o = with_mode(v);
    o.k = 2;
    EXPECT_THROW(make_plan(small, Backend::Cuda, "csr5", o), Unsupported) << v;
  }
}

// The device conversion must build exactly what the host conversion builds (V: the values' type;
// float values rounded on the host either way).
template <class V = double>
void expect_same_conversion(const Csr& a, int sigma, const std::string& what) {
  const BasicCsr5<V> h = csr_to_csr5<V>(a, 32, sigma);
  const BasicCsr5<V> d = cuda::csr_to_csr5_on_device<V>(a, sigma);
  const auto arrays = [](const BasicCsr5<V>& f) {
    return std::tie(f.tiles, f.desc_words, f.tile_ptr, f.tile_desc, f.empty_offset_ptr, f.empty_offset, f.col);
  };
  ASSERT_EQ(arrays(h), arrays(d)) << what;
  ASSERT_EQ(h.val.size(), d.val.size()) << what;
  EXPECT_EQ(0, std::memcmp(h.val.data(), d.val.data(), h.val.size() * sizeof(V))) << what;
}

TEST(Csr5Gpu, DeviceConversionEqualsHostConversion) {
  require_gpu();
  for (const auto& [name, a] : test::csr5_all_cases())
    for (int sigma : {1, 4, 6, 17, 32, 48}) expect_same_conversion(a, sigma, name + " sigma=" + std::to_string(sigma));
  std::vector<offset_t> l(3000, 2);
  for (int i = 0; i < 3000; i += 7) l[i] = 0;  // many empty rows: hinted tiles
  l[100] = 5000;
  const Csr a = test::csr_from_lengths(l, 4000, 3);
  for (int sigma : {4, 16, 33}) expect_same_conversion(a, sigma, "empty rows sigma=" + std::to_string(sigma));
  int checked = 0;
  for (const auto& [name, file] : test::shared_matrix_files()) {
    if (++checked > 12) break;  // a dozen real matrices; the product test covers all of them
    const Csr m = io::load_csr(file);
    expect_same_conversion(m, cuda::tuning::csr5_sigma_paper(m.rows ? double(m.nnz()) / m.rows : 0.0), name);
  }
}

TEST(Csr5Gpu, LoadBatchVariants) {
  require_gpu();
  for (const auto& [name, a] : test::csr5_all_cases())
    for (int sigma : {0, 5, 17})
      for (const char* v : {"b4", "b16", "single:b4", "two-pass:b16", "atomic:b4", "b16:atomic"}) {
        PlanOptions o = with_mode(v);
        o.kernel.csr5_sigma = sigma;
        expect_ok(a, o, name + " sigma=" + std::to_string(sigma) + " " + v);
      }
  const Csr small = test::csr_from_lengths({3, 4}, 10, 1);
  for (const char* bad : {"b3", "single-b4", "fast", "single:two-pass", "b4:b8"}) {
    PlanOptions o = with_mode(bad);
    EXPECT_THROW(make_plan(small, Backend::Cuda, "csr5", o), Unsupported) << bad;
  }
  PlanOptions o = with_mode("atomic");
  o.kernel.deterministic = true;  // atomics reorder the sums: refused when determinism is asked for
  EXPECT_THROW(make_plan(small, Backend::Cuda, "csr5", o), Unsupported);
}

TEST(Csr5Gpu, DeterministicModeIsBitIdenticalAcrossRuns) {
  require_gpu();
  // Long rows spanning many tiles: the case where atomics would reorder the sums.
  std::vector<offset_t> l(20000, 3);
  for (int i = 0; i < 20; ++i) l[i * 997] = 40000;
  const Csr a = test::csr_from_lengths(l, 60000, 5);
  const auto x = make_vector("random:9", a.cols);
  for (const char* mode : {"single", "two-pass"}) {
    const PlanOptions o = with_mode(mode);
    const auto y0 = product(a, o, x);
    ASSERT_TRUE(check_product(a, reference_product(a, x), y0).passed) << mode;
    for (int run = 0; run < 5; ++run) {
      const auto y = product(a, o, x);
      ASSERT_EQ(0, std::memcmp(y.data(), y0.data(), y.size() * sizeof(double))) << mode << " run " << run;
    }
  }
}

// The single-pass kernel's long-row parts stay in place between products, stamped with the
// product's number: a product must sum only its own. Alternating x on one plan makes any part left
// from the previous product show as a wrong row.
TEST(Csr5Gpu, SinglePassSumsOnlyThisProductsParts) {
  require_gpu();
  std::vector<offset_t> l(5000, 2);
  for (int i = 0; i < 10; ++i) l[i * 499] = 50000;  // rows of ~200 tiles: several rounds of parts
  const Csr a = test::csr_from_lengths(l, 60000, 11);
  const std::vector<double> xs[2] = {make_vector("random:1", a.cols), make_vector("random:2", a.cols)};
  const Reference refs[2] = {reference_product(a, xs[0]), reference_product(a, xs[1])};
  auto plan = make_plan(a, Backend::Cuda, "csr5", with_mode("single"));
  ASSERT_NE(plan->detail.find("single-pass"), std::string::npos) << plan->detail;
  std::vector<double> y(a.rows);
  for (int i = 0; i < 8; ++i) {
    plan->multiply(xs[i % 2], y);
    const auto res = check_product(a, refs[i % 2], y);
    ASSERT_TRUE(res.passed) << "product " << i << ": " << res.message;
  }
}

TEST(Csr5Gpu, RefusesOmegaOtherThanAWarp) {
  require_gpu();
  PlanOptions o;
  o.kernel.csr5_omega = 4;
  EXPECT_THROW(make_plan(test::csr_from_lengths({3, 4}, 10, 1), Backend::Cuda, "csr5", o), Unsupported);
}

TEST(Csr5Gpu, EverySharedMatrix) {
  require_gpu();
  const auto files = test::shared_matrix_files();
  ASSERT_GE(files.size(), test::shared_count(70, 14)) << "MANIFEST.tsv not found in " << test::shared_matrices_dir();
  int checked = 0;
  for (const auto& [name, file] : files) {
    const Csr a = io::load_csr(file);
    if (a.is_complex()) continue;
    for (const char* mode : kModes) expect_ok(a, with_mode(mode), name + " " + mode);
    ++checked;
  }
  EXPECT_GE(checked, static_cast<int>(test::shared_count(70, 13)));
}

// Single and mixed precision: the cases above, each plan checked against the reference
// within its precision's bound (x rounded to float first for single, as the plan rounds it).
namespace {

constexpr Precision kFloatValued[] = {Precision::Single, Precision::Mixed};

std::vector<double> as_used(std::vector<double> x, Precision p) {
  if (p == Precision::Single)
    for (double& v : x) v = static_cast<float>(v);
  return x;
}

// "" when csr5 with options o (its precision, k and layout) matches the reference, the product
// repeated twice (nothing may accumulate), else the plan and why not.
std::string precision_mismatch(const Csr& a, const PlanOptions& o, const std::string& xspec = "random:7") {
  const auto plan = make_plan(a, Backend::Cuda, "csr5", o);
  if (plan->precision != o.precision) return "plan of precision " + std::string(to_string(plan->precision));
  const auto x = make_vector(xspec, static_cast<std::size_t>(a.cols) * o.k);
  std::vector<double> y(static_cast<std::size_t>(a.rows) * o.k, 12345.0);
  plan->multiply(x, y);
  plan->run(2);
  plan->get_y(y);
  const auto res =
      check_product(a, reference_product(a, as_used(x, o.precision), o.k, o.layout), y, o.k, o.layout, o.precision);
  return res.passed ? "" : plan->detail + ": " + res.message;
}

PlanOptions in_precision(PlanOptions o, Precision p) {
  o.precision = p;
  return o;
}

}  // namespace

// Every mode (and a load batch of each kind) over the edge and adversarial cases and tile heights,
// 1024-thread blocks at sigma 48 (single-pass buffer of 192 KiB in float).
TEST(Csr5Gpu, SingleAndMixedEveryModeManySigmas) {
  require_gpu();
  int runs = 0;
  for (const Precision p : kFloatValued)
    for (const auto& [name, a] : test::csr5_all_cases())
      for (int sigma : {0, 1, 6, 17, 32, 48})
        for (const char* mode : {"single", "two-pass", "atomic", "b4", "atomic:b16"}) {
          PlanOptions o = in_precision(with_mode(mode), p);
          o.kernel.csr5_sigma = sigma;
          o.kernel.block_size = sigma == 17 ? 96 : sigma == 48 ? 1024 : 256;
          const std::string what = name + " sigma=" + std::to_string(sigma) + " " + mode + " " + to_string(p);
          try {
            EXPECT_EQ(precision_mismatch(a, o), "") << what;
          } catch (const Unsupported& e) {
            // 1024 threads of the 16-entry batch may need more registers than the SM has (72 a
            // thread in mixed on sm_90): a refusal that says so, never a failed launch.
            EXPECT_TRUE(sigma == 48 && std::string(mode) == "atomic:b16") << what << ": " << e.what();
            EXPECT_NE(std::string(e.what()).find("threads per block, not 1024"), std::string::npos) << e.what();
          }
          ++runs;
        }
  EXPECT_GT(runs, 1000);
}

// The single-pass buffer holds a tile's sums in the vectors' type: at sigma 48 and 1024 threads,
// 384 KiB in double and mixed (past every GPU's limit: two-pass instead), 192 KiB in single.
TEST(Csr5Gpu, SinglePassBufferSizedByTheVectorsType) {
  require_gpu();
  const Csr a = test::csr_from_lengths(std::vector<offset_t>(6000, 17), 5000, 3);
  for (const Precision p : {Precision::Double, Precision::Single, Precision::Mixed}) {
    PlanOptions o = in_precision(with_mode("single"), p);
    o.kernel.csr5_sigma = 48;
    o.kernel.block_size = 1024;
    const auto plan = make_plan(a, Backend::Cuda, "csr5", o);
    if (p == Precision::Single)  // fits where the device allows 192 KiB a block (H100, H200), else half of double's
      EXPECT_TRUE(plan->detail.find("single-pass device-conversion") != std::string::npos ||
                  plan->detail.find("would need 192 KiB") != std::string::npos)
          << plan->detail;
    else
      EXPECT_NE(plan->detail.find("would need 384 KiB"), std::string::npos) << to_string(p) << ": " << plan->detail;
    EXPECT_EQ(precision_mismatch(a, o), "") << to_string(p);
  }
}

// SpMM (k > 1) in single and mixed: float4 / float2 rows of X in single, both layouts, 1024-thread
// blocks at sigma 17.
TEST(Csr5Gpu, SpmmSingleAndMixedBothLayouts) {
  require_gpu();
  int runs = 0;
  for (const Precision p : kFloatValued)
    for (const auto& [name, a] : test::csr5_all_cases())
      for (int sigma : {0, 17})
        for (const int k : {2, 3, 4, 8})
          for (const Layout lay : {Layout::RowMajor, Layout::ColMajor}) {
            const PlanOptions o{.k = k,
                                .layout = lay,
                                .precision = p,
                                .kernel = {.block_size = sigma == 17 ? 1024 : 0, .csr5_sigma = sigma}};
            EXPECT_EQ(precision_mismatch(a, o, "random:9"), "")
                << name << " sigma=" << sigma << " k=" << k << (lay == Layout::RowMajor ? " row" : " col") << " "
                << to_string(p);
            ++runs;
          }
  EXPECT_GT(runs, 400);
}

// The same with float values (csr_to_csr5<float>).
TEST(Csr5Gpu, DeviceConversionEqualsHostConversionFloat) {
  require_gpu();
  for (const auto& [name, a] : test::csr5_all_cases())
    for (int sigma : {1, 6, 17, 48}) expect_same_conversion<float>(a, sigma, name + " sigma=" + std::to_string(sigma));
}

// Rows across many tiles in single and mixed: the deterministic modes give the same bits every run,
// and the single-pass parts (a float part held as a double) are this product's only.
TEST(Csr5Gpu, SingleAndMixedDeterministicAndOwnParts) {
  require_gpu();
  std::vector<offset_t> l(20000, 3);
  for (int i = 0; i < 20; ++i) l[i * 997] = 40000;
  const Csr a = test::csr_from_lengths(l, 60000, 5);
  const std::vector<double> xs[2] = {make_vector("random:1", a.cols), make_vector("random:2", a.cols)};
  for (const Precision p : kFloatValued) {
    const Reference refs[2] = {reference_product(a, as_used(xs[0], p)), reference_product(a, as_used(xs[1], p))};
    for (const char* mode : {"single", "two-pass"}) {
      const PlanOptions o = in_precision(with_mode(mode), p);
      const auto y0 = product(a, o, xs[0]);
      ASSERT_TRUE(check_product(a, refs[0], y0, 1, Layout::RowMajor, p).passed) << mode << " " << to_string(p);
      for (int run = 0; run < 3; ++run) {
        const auto y = product(a, o, xs[0]);
        ASSERT_EQ(0, std::memcmp(y.data(), y0.data(), y.size() * sizeof(double))) << mode << " run " << run;
      }
    }
    auto plan = make_plan(a, Backend::Cuda, "csr5", in_precision(with_mode("single"), p));
    ASSERT_NE(plan->detail.find("single-pass"), std::string::npos) << plan->detail;
    std::vector<double> y(a.rows);
    for (int i = 0; i < 6; ++i) {
      plan->multiply(xs[i % 2], y);
      const auto res = check_product(a, refs[i % 2], y, 1, Layout::RowMajor, p);
      ASSERT_TRUE(res.passed) << to_string(p) << " product " << i << ": " << res.message;
    }
  }
}
