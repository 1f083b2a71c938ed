// Column-major SpMM on the OpenMP CPU plans: the native column-major kernel and the path through
// row-major copies (variant "transpose": X copied row-major inside the product, the row-major
// kernel, Y written back from per-thread tiles), each forced, against the reference at several k
// and thread counts; the trial's choice recorded in the detail; X changed between products (the
// copy must be made by every product, not once).
#include <gtest/gtest.h>
#include <spmv/spmv.hpp>

#include <cmath>
#include <fmt/format.h>
#include <regex>

#include "test_util.hpp"

using namespace spmv;

namespace {

// The edge cases that matter here plus one larger irregular matrix (several tiles of rows per part
// at every k; columns other than rows).
std::vector<std::pair<std::string, Csr>> layout_cases() {
  std::vector<std::pair<std::string, Csr>> v;
  for (auto& [name, a] : test::edge_cases())
    if (name == "irregular_5000" || name == "empty_rows_everywhere" || name == "wide_3x50" || name == "tall_200x3" ||
        name == "one_dominant_row" || name == "zero_rows" || name == "empty_0nnz")
      v.emplace_back(name, std::move(a));
  std::vector<offset_t> l(12000);
  for (std::size_t i = 0; i < l.size(); ++i) l[i] = (i * 2654435761u) % 97 == 0 ? 300 : (i * 40503u) % 13;
  v.emplace_back("skewed_12000x9000", test::csr_from_lengths(l, 9000, 21));
  return v;
}

// multiply with `x`, then again with `x2` through set_x/run/get_y; both checked. "" when all is well.
std::string check_plan(Plan& plan, const Csr& a, int k, Layout layout, const std::string& where) {
  const std::size_t nx = static_cast<std::size_t>(a.cols) * k, ny = static_cast<std::size_t>(a.rows) * k;
  for (const char* spec : {"random:5", "random:6"}) {
    const auto x = make_vector(spec, nx);
    std::vector<double> y(ny, std::nan(""));
    plan.set_x(x);
    plan.run(1);
    plan.get_y(y);
    const Reference ref = reference_product(a, x, k, layout);
    if (const CheckResult c = check_product(a, ref, y, k, layout); !c.passed)
      return fmt::format("{} x={}: {}", where, spec, c.message);
  }
  return "";
}

}  // namespace

// Every OpenMP SpMM plan, each path forced, column-major, k and threads swept.
TEST(CpuSpmmLayout, BothPathsMatchTheReference) {
  const auto cases = layout_cases();
  struct Forced {
    const char* kernel;
    std::string variant, via;
  };
  std::vector<Forced> forced;
  for (const char* via : {"native", "transpose"}) {
    for (const char* kernel : {"csr", "csr-dynamic", "csr-balanced", "ell", "ell-rowlen", "hll"})
      forced.push_back({kernel, via, via});
    for (const char* sched : {"dynamic", "balanced"}) forced.push_back({"csr", fmt::format("{}:{}", sched, via), via});
  }
  int runs = 0;
  for (const auto& f : forced)
    for (const int k : {2, 3, 8, 29, 64})
      for (const int threads : {1, 2, 3, 7})
        for (const auto& [name, a] : cases) {
          if (name == "one_dominant_row" && std::string(f.kernel).starts_with("ell")) continue;  // 10M padded slots
          PlanOptions opt;
          opt.k = k;
          opt.layout = Layout::ColMajor;
          opt.threads = threads;
          opt.kernel.variant = f.variant;
          const std::string where =
              fmt::format("{} variant={} k={} threads={} on {}", f.kernel, f.variant, k, threads, name);
          auto plan = make_plan(a, Backend::Omp, f.kernel, opt);
          EXPECT_NE(plan->detail.find("layout=col via=" + f.via), std::string::npos) << where << ": " << plan->detail;
          EXPECT_EQ(check_plan(*plan, a, k, opt.layout, where), "");
          ++runs;
        }
  EXPECT_EQ(runs, (16 * 8 - 4) * 5 * 4);
}

// Unforced, column-major k > 1 times both paths and says which won; row-major and k = 1 have one
// path, so "transpose" changes nothing there and the detail says no layout.
TEST(CpuSpmmLayout, TrialRecordsTheChoice) {
  const auto cases = layout_cases();
  const Csr& a = cases.back().second;
  for (const char* kernel : {"csr", "ell", "hll"}) {
    PlanOptions opt;
    opt.k = 16;
    opt.layout = Layout::ColMajor;
    opt.threads = 2;
    auto plan = make_plan(a, Backend::Omp, kernel, opt);
    EXPECT_TRUE(std::regex_search(plan->detail, std::regex("layout=col via=(native|transpose)"))) << plan->detail;
    EXPECT_NE(plan->detail.find("transpose"), std::string::npos) << plan->detail;
    EXPECT_NE(plan->detail.find("native"), std::string::npos) << plan->detail;  // both timed
    EXPECT_EQ(check_plan(*plan, a, opt.k, opt.layout, kernel), "");
    for (const auto& [k, layout] : {std::pair{16, Layout::RowMajor}, std::pair{1, Layout::ColMajor}}) {
      opt.k = k;
      opt.layout = layout;
      opt.kernel.variant = "transpose";
      auto other = make_plan(a, Backend::Omp, kernel, opt);
      EXPECT_EQ(other->detail.find("via="), std::string::npos) << other->detail;
      EXPECT_EQ(check_plan(*other, a, k, layout, kernel), "");
      opt.kernel.variant = "auto";
    }
  }
  PlanOptions opt;
  opt.k = 4;
  opt.layout = Layout::ColMajor;
  opt.kernel.variant = "sideways";
  EXPECT_THROW(make_plan(a, Backend::Omp, "csr", opt), Unsupported);
  opt.kernel.variant = "simd:transpose:dynamic";  // tokens in any order
  EXPECT_NE(make_plan(a, Backend::Omp, "csr", opt)->detail.find("variant=dynamic"), std::string::npos);
}
