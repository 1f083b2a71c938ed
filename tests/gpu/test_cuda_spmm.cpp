// CUDA SpMM: every shape of the CSR SpMM family (right-hand sides per lane x lanes per row, in both
// layouts; the SpMM report's mappings are corners of it) forced one by one against the reference,
// and column-major through device transposes around the row-major kernel (both, or X alone with Y
// written column-major), on the edge cases and a dc1-like matrix whose long rows take the
// block-per-piece kernel; ELL and HLL with column-major X and Y in place or transposed; the
// shape the trial keeps is one of its candidates; the SpMM report's kernels by their words;
// cuSPARSE's SpMM algorithms in both layouts, a refusal accepted only as "does not support" a layout.
#include <gtest/gtest.h>
#include <spmv/device.hpp>
#include <spmv/spmv.hpp>

#include <fmt/format.h>

#include "test_util.hpp"

using namespace spmv;

namespace {

void require_gpu() {
  ASSERT_TRUE(device::cuda_built()) << "built without the CUDA backend";
  ASSERT_GT(device::cuda_device_count(), 0) << "no CUDA device";
}

// "" when the kernel's product matches the reference, else why not.
std::string check(const Csr& a, const std::string& kernel, PlanOptions o, const std::string& what) {
  const auto plan = make_plan(a, Backend::Cuda, kernel, o);
  const auto x = make_vector("random:3", static_cast<std::size_t>(a.cols) * o.k);
  std::vector<double> y(static_cast<std::size_t>(a.rows) * o.k, std::nan(""));
  plan->multiply(x, y);
  plan->run(2);  // repeated products must not accumulate (the long-row kernel's counters)
  plan->get_y(y);
  const CheckResult c = check_product(a, reference_product(a, x, o.k, o.layout), y, o.k, o.layout);
  return c.passed ? ""
                  : fmt::format("{} {} k={} {} variant={}: {}", what, kernel, o.k,
                                o.layout == Layout::RowMajor ? "row" : "col", o.kernel.variant, c.message);
}

// The edge cases and a dc1-like matrix whose long rows take the block-per-piece kernel in pieces.
std::vector<std::pair<std::string, Csr>> spmm_cases() {
  auto cases = test::edge_cases();
  std::vector<offset_t> l(3000, 3);
  l[5] = 40000;  // pieces of the long-row kernel
  l[2000] = 1500;
  cases.emplace_back("dc1_like", test::csr_from_lengths(l, 45000, 4));
  return cases;
}

}  // namespace

TEST(CudaSpmm, EveryShapeBothLayouts) {
  require_gpu();
  const auto cases = spmm_cases();
  int runs = 0;
  for (const auto& [name, a] : cases)
    for (const int k : {2, 3, 4, 5, 16, 33, 64}) {  // 2-4: the skinny transposes
      for (const int c : {1, 2, 4})
        for (const int w : {1, 2, 8, 32}) {
          if (k % c != 0) continue;
          EXPECT_EQ(
              check(a, "csr", {.k = k, .layout = Layout::RowMajor, .kernel = {.variant = fmt::format("c{}:w{}", c, w)}},
                    name),
              "");
          ++runs;
        }
      for (const int c : {1, 2, 4, 8})
        for (const int w : {1, 4, 32}) {
          EXPECT_EQ(
              check(a, "csr", {.k = k, .layout = Layout::ColMajor, .kernel = {.variant = fmt::format("w{}:c{}", w, c)}},
                    name),
              "");
          ++runs;
        }
      // Transposed on the device around the row-major kernel, or X alone with Y written column-major
      // by the kernel.
      for (const char* how : {":transpose", ":transpose-x"})
        for (const int c : {1, 2, 4})
          for (const int w : {1, 8, 32}) {
            if (k % c != 0) continue;
            EXPECT_EQ(
                check(a, "csr",
                      {.k = k, .layout = Layout::ColMajor, .kernel = {.variant = fmt::format("c{}:w{}{}", c, w, how)}},
                      name),
                "");
            ++runs;
          }
      // The rows longest first (the long rows left to the block-per-piece kernel), every kernel.
      for (const int w : {1, 8}) {
        const int c = k % 4 == 0 ? 4 : 1;
        for (const auto& [layout, suffix] : {std::pair{Layout::RowMajor, ":sorted"},
                                             {Layout::ColMajor, ":sorted"},
                                             {Layout::ColMajor, ":sorted:transpose"},
                                             {Layout::ColMajor, ":transpose-x:sorted"}}) {
          EXPECT_EQ(
              check(a, "csr", {.k = k, .layout = layout, .kernel = {.variant = fmt::format("c{}:w{}{}", c, w, suffix)}},
                    name),
              "");
          ++runs;
        }
      }
    }
  EXPECT_GT(runs, 800);
}

// ELL and HLL with column-major X and Y: read in place or through device transposes, each forced
// and by the trial, on every edge case; a variant they do not know is refused.
TEST(CudaSpmm, PaddedFormatsColumnMajorInPlaceOrTransposed) {
  require_gpu();
  int runs = 0;
  for (const auto& [name, a] : test::edge_cases())
    for (const char* kernel : {"ell", "hll"})
      for (const int k : {2, 3, 4, 5, 16, 33})
        for (const char* variant : {"native", "transpose", "auto"}) {
          const PlanOptions o{.k = k, .layout = Layout::ColMajor, .kernel = {.variant = variant}};
          try {
            EXPECT_EQ(check(a, kernel, o, name), "");
            ++runs;
          } catch (const Unsupported& e) {  // only ELL's padding past its memory limit (one dominant row)
            EXPECT_EQ(std::string(kernel) + std::string(e.what()).substr(0, 14), "ellELL would need") << e.what();
          }
        }
  EXPECT_GT(runs, 300);
  const Csr a = test::csr_from_lengths(std::vector<offset_t>(2000, 7), 2000, 5);
  const auto plan = make_plan(a, Backend::Cuda, "hll", {.k = 4, .layout = Layout::ColMajor});
  EXPECT_NE(plan->detail.find("trial us: native"), std::string::npos) << plan->detail;
  EXPECT_THROW(
      make_plan(a, Backend::Cuda, "ell", {.k = 4, .layout = Layout::ColMajor, .kernel = {.variant = "inplace"}}),
      Unsupported);
}

TEST(CudaSpmm, TrialKeepsACandidateAndSaysSo) {
  require_gpu();
  const Csr a = test::csr_from_lengths(std::vector<offset_t>(20000, 12), 20000, 9);
  for (const Layout l : {Layout::RowMajor, Layout::ColMajor}) {
    const auto plan = make_plan(a, Backend::Cuda, "csr", {.k = 16, .layout = l});
    EXPECT_NE(plan->detail.find(l == Layout::RowMajor ? "layout=row" : "layout=col"), std::string::npos)
        << plan->detail;
    EXPECT_NE(plan->detail.find("trial us:"), std::string::npos) << plan->detail;
    const std::string kept = plan->detail.substr(plan->detail.find("rhs_per_lane="));
    const int c = std::stoi(kept.substr(13));
    const int w = std::stoi(kept.substr(kept.find("lanes_per_row=") + 14));
    const bool t = kept.find(" transposed") != std::string::npos, x = kept.find(" x_transposed") != std::string::npos;
    EXPECT_TRUE(l == Layout::ColMajor || (!t && !x)) << plan->detail;
    EXPECT_NE(plan->detail.find(fmt::format("c{}:w{}{}{} ", c, w, t ? ":transpose" : "", x ? ":transpose-x" : "")),
              std::string::npos)
        << "kept shape not among the trial's: " << plan->detail;
    EXPECT_EQ(check(a, "csr", {.k = 16, .layout = l}, "trial"), "");
  }
  // Words alone narrow the trial's shapes: column-major through the device transposes.
  const auto narrowed =
      make_plan(a, Backend::Cuda, "csr", {.k = 16, .layout = Layout::ColMajor, .kernel = {.variant = "transpose"}});
  EXPECT_NE(narrowed->detail.find(" transposed"), std::string::npos) << narrowed->detail;
  EXPECT_EQ(narrowed->detail.find(" x_transposed"), std::string::npos) << narrowed->detail;
  EXPECT_THROW(make_plan(a, Backend::Cuda, "csr", {.k = 6, .kernel = {.variant = "c4:w8"}}),
               Unsupported);  // 4 does not divide 6
  EXPECT_THROW(make_plan(a, Backend::Cuda, "csr", {.k = 8, .kernel = {.variant = "c2:w3"}}), Unsupported);  // 3 lanes
  EXPECT_THROW(make_plan(a, Backend::Cuda, "csr", {.k = 8, .kernel = {.variant = "c2:w8:transpose"}}),
               Unsupported);  // row-major: nothing to transpose
  EXPECT_THROW(make_plan(a, Backend::Cuda, "csr", {.k = 8, .kernel = {.variant = "transpose-x"}}),
               Unsupported);  // row-major: no X to transpose, no shape of the model's
  EXPECT_THROW(
      make_plan(a, Backend::Cuda, "csr", {.k = 8, .layout = Layout::ColMajor, .kernel = {.variant = "c2:w8:q"}}),
      Unsupported);
  EXPECT_THROW(make_plan(a, Backend::Cuda, "csr",
                         {.k = 8, .layout = Layout::ColMajor, .kernel = {.variant = "c2:w8:transpose:transpose-x"}}),
               Unsupported);
}

// Rows of very different lengths (a web graph's: most of one entry, some of dozens, a few past the
// long-row bound): the trial also times shapes on the rows longest first, and says so.
TEST(CudaSpmm, TrialTriesTheRowsLongestFirstWhereLengthsVary) {
  require_gpu();
  std::vector<offset_t> l(30000, 1);
  for (std::size_t i = 0; i < l.size(); i += 9) l[i] = 40;
  l[77] = 5000;
  const Csr a = test::csr_from_lengths(l, 30000, 13);
  for (const Layout layout : {Layout::RowMajor, Layout::ColMajor}) {
    // No trial against CSR-adaptive (CsrSpmm.IrregularRowsTryCsrAdaptive): the CSR SpMM kernel's.
    const auto plan = make_plan(a, Backend::Cuda, "csr", {.k = 4, .layout = layout, .trial = false});
    const std::string trial = plan->detail.substr(plan->detail.find("trial us:"));
    EXPECT_NE(trial.find(":sorted "), std::string::npos) << plan->detail;
    EXPECT_EQ(check(a, "csr", {.k = 4, .layout = layout}, "sorted trial"), "");
  }
  // Regular rows: no sorted shape is tried.
  const Csr regular = test::csr_from_lengths(std::vector<offset_t>(20000, 12), 20000, 9);
  const auto plan = make_plan(regular, Backend::Cuda, "csr", {.k = 4});
  EXPECT_EQ(plan->detail.substr(plan->detail.find("trial us:")).find(":sorted "), std::string::npos) << plan->detail;
  // The words in any order.
  const auto sorted = make_plan(a, Backend::Cuda, "csr", {.k = 8, .kernel = {.variant = "sorted:w8:c2"}});
  EXPECT_NE(sorted->detail.find("rhs_per_lane=2 lanes_per_row=8 longest_rows_first"), std::string::npos)
      << sorted->detail;
}

// The SpMM report's (004) CUDA kernels by their words, against the reference on the edge cases and
// a dc1-like matrix (rows cut into pieces), both layouts, K up to past a warp: ELL and HLL by lanes,
// a thread per element (ELLPACK_kernel) or two (ELLPACK_Sub_warp); CSR with its lanes along K named
// (CSR_Vector_by_row: c1:w32:k8), every row a block (CSR_Adaptive_sub_blocks), and CSR-adaptive's
// block per row block and column (CSR-Adaptive SpMM) at several row-block sizes.
TEST(CudaSpmm, TheSpmmReportsKernelsByTheirWords) {
  require_gpu();
  const auto cases = spmm_cases();
  int runs = 0;
  const auto expect = [&](const Csr& a, const char* kernel, const PlanOptions& o, const std::string& name) {
    try {
      EXPECT_EQ(check(a, kernel, o, name), "");
      ++runs;
    } catch (const Unsupported& e) {  // only ELL's padding past its memory limit (one dominant row)
      EXPECT_EQ(std::string(kernel) + std::string(e.what()).substr(0, 14), "ellELL would need") << e.what();
    }
  };
  for (const auto& [name, a] : cases)
    for (const Layout layout : {Layout::RowMajor, Layout::ColMajor})
      for (const int k : {2, 3, 8, 33}) {
        for (const char* kernel : {"ell", "hll"})
          for (const char* mapping : {"lanes", "elements", "subwarp"})
            expect(a, kernel, {.k = k, .layout = layout, .kernel = {.variant = mapping}}, name);
        expect(a, "csr", {.k = k, .layout = layout, .kernel = {.variant = "blocks"}}, name);
        for (const int nz : {0, 1, 7})
          for (const int block : {32, 256})
            expect(a, "csr-adaptive", {.k = k, .layout = layout, .kernel = {.block_size = block, .nz_per_block = nz}},
                   name);
        if (layout == Layout::RowMajor)
          for (const char* shape : {"c1:w32:k8", "c1:w8:k2", "c1:w4:k1"})
            expect(a, "csr", {.k = k, .kernel = {.variant = shape}}, name);
      }
  EXPECT_GT(runs, 1000);

  // The plans say what they run; without a word the padded formats' trial picks the mapping.
  const Csr a = test::csr_from_lengths(std::vector<offset_t>(20000, 12), 20000, 9);
  const auto by_row = make_plan(a, Backend::Cuda, "csr", {.k = 16, .kernel = {.variant = "c1:w32:k8"}});
  EXPECT_NE(by_row->detail.find("rhs_per_lane=1 lanes_per_row=32 lanes_along_k=8"), std::string::npos)
      << by_row->detail;
  const auto blocks = make_plan(a, Backend::Cuda, "csr", {.k = 4, .kernel = {.variant = "blocks"}});
  EXPECT_NE(blocks->detail.find("rows=blocks long_rows=20000 (over 0)"), std::string::npos) << blocks->detail;
  const auto adaptive = make_plan(a, Backend::Cuda, "csr-adaptive", {.k = 4, .layout = Layout::ColMajor});
  EXPECT_NE(adaptive->detail.find("spmm=block_per_element layout=col"), std::string::npos) << adaptive->detail;
  for (const char* kernel : {"ell", "hll"}) {
    const auto trial = make_plan(a, Backend::Cuda, kernel, {.k = 8});
    EXPECT_NE(trial->detail.find("(trial us: lanes "), std::string::npos) << trial->detail;
    EXPECT_EQ(check(a, kernel, {.k = 8}, "trial"), "");
    const auto forced = make_plan(a, Backend::Cuda, kernel, {.k = 8, .kernel = {.variant = "subwarp"}});
    EXPECT_NE(forced->detail.find("spmm=subwarp"), std::string::npos) << forced->detail;
    EXPECT_EQ(forced->detail.find("trial us: lanes"), std::string::npos) << forced->detail;
  }
  // Lanes along K need the shape, fit in its lanes, and are the row-major kernel's.
  EXPECT_THROW(make_plan(a, Backend::Cuda, "csr", {.k = 8, .kernel = {.variant = "k8"}}), Unsupported);
  EXPECT_THROW(make_plan(a, Backend::Cuda, "csr", {.k = 8, .kernel = {.variant = "c1:w8:k16"}}), Unsupported);
  EXPECT_THROW(
      make_plan(a, Backend::Cuda, "csr", {.k = 8, .layout = Layout::ColMajor, .kernel = {.variant = "c1:w8:k4"}}),
      Unsupported);
}

// "csr" at k > 1 on irregular rows (a few rows of thousands beside rows of one): the CSR SpMM
// kernel and CSR-adaptive are timed, the faster kept and said, its product right in both layouts;
// regular rows, variant words or no trial: the CSR SpMM kernel alone.
TEST(CudaSpmm, IrregularRowsTryCsrAdaptive) {
  require_gpu();
  std::vector<offset_t> l(30000, 1);
  for (std::size_t i = 0; i < l.size(); i += 997) l[i] = 3000;
  const Csr a = test::csr_from_lengths(l, 30000, 21);
  for (const Layout layout : {Layout::RowMajor, Layout::ColMajor}) {
    const auto plan = make_plan(a, Backend::Cuda, "csr", {.k = 8, .layout = layout});
    EXPECT_NE(plan->detail.find("(trial us: csr-spmm "), std::string::npos) << plan->detail;
    const bool adaptive = plan->detail.starts_with("kernel=csr-adaptive ");
    EXPECT_NE(plan->detail.find(adaptive ? "spmm=block_per_element" : "kernel=csr-spmm"), std::string::npos)
        << plan->detail;
    EXPECT_EQ(check(a, "csr", {.k = 8, .layout = layout}, "irregular"), "");
  }
  const Csr regular = test::csr_from_lengths(std::vector<offset_t>(20000, 12), 20000, 9);
  for (const auto& [m, o] : {std::pair{&regular, PlanOptions{.k = 8}},
                             {&a, PlanOptions{.k = 8, .kernel = {.variant = "c1:w8"}}},
                             {&a, PlanOptions{.k = 8, .trial = false}}}) {
    const auto plan = make_plan(*m, Backend::Cuda, "csr", o);
    EXPECT_TRUE(plan->detail.starts_with("kernel=csr-spmm")) << plan->detail;
    EXPECT_EQ(plan->detail.find("csr-adaptive"), std::string::npos) << plan->detail;
  }
}

TEST(CudaSpmm, CusparseSpmmAlgorithmsBothLayouts) {
  require_gpu();
  const Csr a = test::csr_from_lengths(std::vector<offset_t>(5000, 9), 4000, 5);
  int ran = 0;
  for (const char* kernel : {"cusparse", "cusparse-spmm-alg1", "cusparse-spmm-alg2", "cusparse-spmm-alg3"})
    for (const Layout l : {Layout::RowMajor, Layout::ColMajor})
      for (const int k : {1, 4, 64}) {
        try {
          EXPECT_EQ(check(a, kernel, {.k = k, .layout = l}, "regular"), "");
          ++ran;
        } catch (const Unsupported& e) {
          EXPECT_NE(std::string(e.what()).find("does not support"), std::string::npos) << kernel << ": " << e.what();
          EXPECT_NE(std::string(kernel), "cusparse-spmm-alg1") << "CSR_ALG1 takes both layouts";
        }
      }
  EXPECT_GE(ran, 12);  // the default and ALG1 in both layouts at least
}
