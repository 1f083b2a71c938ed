// The compact formats (OpenMP csr-compact; CUDA hll-compact in the GPU suite): columns kept as
// 2-byte offsets where a row's (a slice's) columns span under 65536 and 4-byte elsewhere, values as
// a 1- or 2-byte index into the distinct values where there are at most 65536 and in place past
// that. Each mode, asked for or chosen, against the reference on matrices that force every case.
#include <gtest/gtest.h>
#include <spmv/spmv.hpp>

#include <random>

#include "test_util.hpp"

namespace spmv {
namespace {
using namespace test;

#if defined(SPMV_TEST_BACKEND_CUDA)
constexpr Backend kBackend = Backend::Cuda;
constexpr const char* kKernel = "hll-compact";
constexpr const char* kUnits = "slices";
constexpr index_t kUnitRows = 32;  // a slice
#else
constexpr Backend kBackend = Backend::Omp;
constexpr const char* kKernel = "csr-compact";
constexpr const char* kUnits = "rows";
constexpr index_t kUnitRows = 1;
#endif

// rows x 200000: units (rows or slices) of a band of width 5, except every 4th unit whose first row
// also touches columns 0 and 199999 (a span no 2-byte offset holds); values from `distinct`
// different ones (cycled).
Csr wide_and_narrow(index_t rows, int distinct) {
  Coo c;
  c.rows = rows;
  c.cols = 200000;
  std::size_t q = 0;
  for (index_t r = 0; r < rows; ++r) {
    const index_t b = std::min<index_t>(r * 7, c.cols - 5);
    for (index_t j = 0; j < 5; ++j)
      c.row.push_back(r), c.col.push_back(b + j), c.val.push_back(1.0 + static_cast<double>(q++ % distinct) / 8);
    if ((r / kUnitRows) % 4 == 0 && r % kUnitRows == 0) {
      if (b > 0) c.row.push_back(r), c.col.push_back(0), c.val.push_back(-2.0);
      if (b + 5 < c.cols) c.row.push_back(r), c.col.push_back(c.cols - 1), c.val.push_back(3.0);
    }
  }
  return coo_to_csr(c);
}

std::unique_ptr<Plan> compact_plan(const Csr& a, const std::string& variant, Precision p = Precision::Double,
                                   int k = 1) {
  PlanOptions opt;
  opt.kernel.variant = variant;
  opt.precision = p;
  opt.k = k;
  return make_plan(a, kBackend, kKernel, opt);
}

void expect_product(Plan& plan, const Csr& a, int k = 1) {
  std::vector<double> x = make_vector("random:5", static_cast<std::size_t>(a.cols) * k);
  const CheckedProduct got = checked_product(plan, a.view(), x, k, Layout::RowMajor);
  EXPECT_TRUE(got.check.passed) << got.check.message;
}

TEST(CompactFormat, EveryModeOnRowsThatFitAndRowsThatDoNot) {
  const index_t rows = 40 * kUnitRows;
  const Csr a = wide_and_narrow(rows, 7);
  const index_t units = rows / kUnitRows, wide_units = (units + 3) / 4;
  for (const char* index : {"narrow", "wide"})
    for (const char* values : {"shared", "plain"})
      for (const Precision p : {Precision::Double, Precision::Single}) {
        SCOPED_TRACE(std::string(index) + ":" + values + " " + to_string(p));
        const auto plan = compact_plan(a, std::string(index) + ":" + values, p);
        const std::string narrow_units = index[0] == 'n' ? std::to_string(units - wide_units) : std::string("0");
        EXPECT_NE(plan->detail.find(fmt::format("index={} ({} of {} {}", index, narrow_units, units, kUnits)),
                  std::string::npos)
            << plan->detail;
        EXPECT_NE(plan->detail.find(std::string("values=") + values), std::string::npos) << plan->detail;
        if (values[0] == 's') EXPECT_NE(plan->detail.find("9 distinct, 1-byte"), std::string::npos) << plan->detail;
        expect_product(*plan, a);
      }
}

TEST(CompactFormat, ChosenFromTheMatrix) {
  // Every unit narrow, seven values (and -2 and 3 where a unit is wide): narrow and shared.
  const Csr narrow = wide_and_narrow(8 * kUnitRows, 7);
  Csr all_narrow = narrow;
  {  // drop the far columns: a band only
    Coo c;
    c.rows = narrow.rows, c.cols = narrow.cols;
    for (index_t r = 0; r < narrow.rows; ++r)
      for (offset_t q = narrow.row_ptr[r]; q < narrow.row_ptr[r + 1]; ++q)
        if (narrow.col[q] != 0 && narrow.col[q] != narrow.cols - 1)
          c.row.push_back(r), c.col.push_back(narrow.col[q]), c.val.push_back(narrow.val[q]);
    all_narrow = coo_to_csr(c);
  }
  const auto p = compact_plan(all_narrow, "auto");
  EXPECT_NE(p->detail.find(fmt::format("index=narrow (8 of 8 {} ", kUnits)), std::string::npos) << p->detail;
  EXPECT_NE(p->detail.find("values=shared (7 distinct, 1-byte"), std::string::npos) << p->detail;
  // 7 values, a 2-byte column offset and a 1-byte index a nonzero (the GPU's slices: no padding here).
  const offset_t vec = 2 * 8 * static_cast<offset_t>(all_narrow.rows) + 8 * static_cast<offset_t>(all_narrow.cols);
  EXPECT_LT(p->bytes_per_product, 3 * all_narrow.nnz() + 16 * static_cast<offset_t>(all_narrow.rows) + vec)
      << p->bytes_per_product;
  expect_product(*p, all_narrow);
}

TEST(CompactFormat, MoreDistinctValuesThanAnIndexHoldsStayInPlace) {
  // 70000 entries, all different: shared asked for, plain given, and the detail says why.
  const index_t rows = 14000 / kUnitRows * kUnitRows;
  Coo c;
  c.rows = rows;
  c.cols = rows;
  std::mt19937_64 g(1);
  for (index_t r = 0; r < rows; ++r)
    for (index_t j = 0; j < 5; ++j)
      c.row.push_back(r), c.col.push_back((r + j * 13) % rows),
          c.val.push_back(1.0 + 1e-9 * static_cast<double>(c.val.size()));
  const Csr a = coo_to_csr(c);
  for (const char* v : {"shared", "auto"}) {
    const auto p = compact_plan(a, v);
    EXPECT_NE(p->detail.find("values=plain (over 65536 distinct values)"), std::string::npos) << p->detail;
    expect_product(*p, a);
  }
  // 300 distinct: 2-byte indices.
  for (std::size_t q = 0; q < a.val.size(); ++q) c.val[q] = static_cast<double>(q % 300);
  const Csr b = coo_to_csr(c);
  const auto p = compact_plan(b, "shared");
  EXPECT_NE(p->detail.find("values=shared (30"), std::string::npos) << p->detail;
  EXPECT_NE(p->detail.find("2-byte indices"), std::string::npos) << p->detail;
  expect_product(*p, b);
}

TEST(CompactFormat, SharedMatricesAndEdgeCases) {
  for (const char* name : {"cage9", "bcsstk16", "well1033"}) {
    SCOPED_TRACE(name);
    const Csr a = shared_matrix(name);
    for (const char* variant : {"auto", "wide:plain", "narrow:shared"}) expect_product(*compact_plan(a, variant), a);
  }
  for (const auto& [name, a] : edge_cases()) {
    SCOPED_TRACE(name);
    expect_product(*compact_plan(a, "auto"), a);
  }
}

TEST(CompactFormat, UnknownWordsAreRefusedByName) {
  const Csr a = wide_and_narrow(kUnitRows, 3);
  try {
    compact_plan(a, "tiny");
    FAIL() << "accepted";
  } catch (const Unsupported& e) {
    EXPECT_NE(std::string(e.what()).find(kKernel), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("narrow"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace spmv
