// A^T as CSR (formats/transpose.hpp) and the transposed product's plan beyond the conformance
// test: alpha and beta, the matrix gone after planning, the memory budget, the CLI.
#include <gtest/gtest.h>
#include <spmv/formats/transpose.hpp>
#include <spmv/spmv.hpp>

#include <cmath>

#include "test_util.hpp"

namespace spmv {
namespace {

// The dense matrix of a (row-major rows x cols).
std::vector<double> dense_of(const CsrView& a) { return test::dense(csr_to_coo(a)); }

TEST(Transpose, EveryEdgeCaseAgainstTheDenseTranspose) {
  auto cases = test::edge_cases();
  cases.emplace_back("rect_wide", coo_to_csr(test::random_coo(7, 300, 0.05, 3)));
  cases.emplace_back("rect_tall", coo_to_csr(test::random_coo(300, 7, 0.05, 4)));
  for (const auto& [name, a] : cases) {
    const Csr t = transpose(a);
    EXPECT_EQ(csr_structure_error(t), "") << name;  // columns sorted within rows
    ASSERT_EQ(t.rows, a.cols) << name;
    ASSERT_EQ(t.cols, a.rows) << name;
    const std::vector<double> d = dense_of(a), dt = dense_of(t);
    for (index_t i = 0; i < a.rows; ++i)
      for (index_t j = 0; j < a.cols; ++j)
        ASSERT_EQ(dt[static_cast<std::size_t>(j) * a.rows + i], d[static_cast<std::size_t>(i) * a.cols + j]) << name;
    const Csr back = transpose(t);
    EXPECT_EQ(back.row_ptr, a.row_ptr) << name;
    EXPECT_EQ(back.col, a.col) << name;
    EXPECT_EQ(back.val, a.val) << name;
  }
}

TEST(Transpose, FloatValuesStayFloat) {
  const Csr a = coo_to_csr(test::random_coo(50, 30, 0.1, 5));
  const CsrF32 f = to_float(a);
  const CsrF32 t = transpose_f32(f);
  const Csr t64 = transpose(a);
  EXPECT_EQ(t.row_ptr, t64.row_ptr);
  EXPECT_EQ(t.col, t64.col);
  for (std::size_t i = 0; i < t.val.size(); ++i) EXPECT_EQ(t.val[i], static_cast<float>(t64.val[i]));
  // In the matrix's own value type: float for a float matrix, double for a double one.
  const Transposed tf = transpose_as_stored(f), td = transpose_as_stored(a);
  EXPECT_TRUE(tf.view().values_in_float());
  EXPECT_FALSE(td.view().values_in_float());
  EXPECT_EQ(tf.view().rows, 30);
  EXPECT_EQ(td.view().nnz(), a.nnz());
  EXPECT_THROW(transpose(f), Error);      // float values: transpose_f32
  EXPECT_THROW(transpose_f32(a), Error);  // double values: transpose
}

TEST(Transpose, RefusedPastTheBudgetNamingItsSize) {
  const Csr a = test::csr_from_lengths(std::vector<offset_t>(2000, 10), 2000, 6);
  const std::string e = test::error_of([&] { transpose(a, {.memory_budget_bytes = 1000}); });
  EXPECT_NE(e.find("the transpose would need"), std::string::npos) << e;
  // The plan's transpose is held to the plan's budget too.
  EXPECT_THROW(make_plan(a, Backend::Omp, "csr", {.operation = Operation::Transpose, .memory_budget_bytes = 1000}),
               Unsupported);
}

// y = alpha A^T x + beta y, on a plan whose matrix is gone once it is made (the plan owns A^T).
TEST(Transpose, AlphaBetaAndTheMatrixMayGo) {
  const Csr a = coo_to_csr(test::random_coo(120, 70, 0.08, 7));
  const std::vector<double> x = make_vector("random:3", 120), y0 = make_vector("random:4", 70);
  const std::vector<double> want_ax = test::dense_product(dense_of(transpose(a)), 70, 120, x);
  for (const Backend b : {Backend::Serial, Backend::Omp})
    for (const char* kernel : {"auto", "csr", "hll", "csr5"}) {
      std::unique_ptr<Plan> plan;
      {
        const Csr copy = a;
        // Products enough to repay A^T, so that "auto" makes it too.
        plan = make_plan(copy, b, kernel, {.threads = 2, .operation = Operation::Transpose, .products = 1000000});
      }  // the matrix is gone
      EXPECT_EQ(plan->detail.rfind("A^T made once", 0), 0u) << plan->detail;
      std::vector<double> y = y0;
      plan->multiply(x, y, 2.0, 0.5);
      for (std::size_t i = 0; i < y.size(); ++i)
        EXPECT_NEAR(y[i], 2.0 * want_ax[i] + 0.5 * y0[i], 1e-12 * (1 + std::abs(y[i]))) << kernel << " " << i;
    }
  EXPECT_EQ(parse_operation("t"), Operation::Transpose);
  EXPECT_EQ(parse_operation("n"), Operation::NoTranspose);
  EXPECT_THROW(parse_operation("h"), Unsupported);
}

// The parallel counting sort (parts of rows, each its own counts) gives the serial one's A^T.
TEST(Transpose, ParallelTransposeEqualsTheSerialOne) {
  const Csr a = test::csr_from_lengths(std::vector<offset_t>(20000, 8), 5000, 12);  // 160000 nonzeros
  const Csr one = transpose(a, {.threads = 1});
  EXPECT_EQ(csr_structure_error(one), "");
  for (const int threads : {2, 3, 8}) {
    const Csr t = transpose(a, {.threads = threads});
    EXPECT_EQ(t.row_ptr, one.row_ptr) << threads;
    EXPECT_EQ(t.col, one.col) << threads;
    EXPECT_EQ(t.val, one.val) << threads;
  }
  const Csr back = transpose(one, {.threads = 4});
  EXPECT_EQ(back.row_ptr, a.row_ptr);
  EXPECT_EQ(back.col, a.col);
  EXPECT_EQ(back.val, a.val);
}

// A^T x through the scatter kernel (A as stored) against the dense transpose, y = alpha A^T x + beta y.
void expect_transposed_product(Plan& plan, const Csr& a, const std::string& what) {
  const std::vector<double> x = make_vector("random:8", static_cast<std::size_t>(a.rows));
  const std::vector<double> y0 = make_vector("random:9", static_cast<std::size_t>(a.cols));
  const std::vector<double> want = test::dense_product(dense_of(transpose(a)), a.cols, a.rows, x);
  std::vector<double> y = y0;
  plan.multiply(x, y, -1.5, 2.0);
  for (std::size_t i = 0; i < y.size(); ++i)
    ASSERT_NEAR(y[i], -1.5 * want[i] + 2.0 * y0[i], 1e-12 * (1 + std::abs(want[i]) + std::abs(y0[i]))) << what << i;
}

// "auto" for A^T: the scatter on A as stored where the products expected do not repay making A^T,
// or where A^T is over the memory budget; A^T made once otherwise; the detail says which and why.
TEST(Transpose, PlannerScattersForFewProductsOrWhereATDoesNotFit) {
  const Csr a = test::csr_from_lengths(std::vector<offset_t>(2000, 10), 3000, 13);
  const PlanOptions few{.threads = 2, .operation = Operation::Transpose, .products = 1};
  const auto scatter = make_plan(a, Backend::Omp, "auto", few);
  EXPECT_EQ(scatter->chosen, "omp/csr-scatter threads=2");
  EXPECT_NE(scatter->describe().find("A^T by scatter: 1 products do not repay making A^T"), std::string::npos)
      << scatter->describe();
  expect_transposed_product(*scatter, a, "few products");

  const auto made =
      make_plan(a, Backend::Omp, "auto", {.threads = 2, .operation = Operation::Transpose, .products = 1000000});
  EXPECT_EQ(made->detail.rfind("A^T made once", 0), 0u) << made->detail;
  EXPECT_NE(made->detail.find("repaid within 1000000 products"), std::string::npos) << made->detail;
  expect_transposed_product(*made, a, "many products");

  // A^T over the budget, y's copies within it: the scatter, naming the transpose's refusal.
  PlanOptions tight = few;
  tight.products = 1000000;
  tight.memory_budget_bytes = transpose_bytes(a) - 1;
  const auto over = make_plan(a, Backend::Omp, "auto", tight);
  EXPECT_EQ(over->chosen, "omp/csr-scatter threads=2");
  EXPECT_NE(over->detail.find("the transpose would need"), std::string::npos) << over->detail;
  expect_transposed_product(*over, a, "over the budget");
  // A tall matrix: A^T's product would gather x of A's 300000 rows at random, the scatter adds into
  // copies of y of 50: the scatter, whatever the products.
  const Csr tall = test::csr_from_lengths(std::vector<offset_t>(300000, 4), 50, 15);
  const auto t =
      make_plan(tall, Backend::Omp, "auto", {.threads = 2, .operation = Operation::Transpose, .products = 1000000});
  EXPECT_EQ(t->chosen, "omp/csr-scatter threads=2");
  EXPECT_NE(t->detail.find("which would gather x of 300000 values at random"), std::string::npos) << t->detail;
  expect_transposed_product(*t, tall, "tall");
  // Neither fits: the scatter's own refusal, with its size.
  tight.memory_budget_bytes = 1000;
  const std::string e = test::error_of([&] { make_plan(a, Backend::Omp, "auto", tight); });
  EXPECT_NE(e.find("csr-scatter's copies of y (2) would need"), std::string::npos) << e;
}

// The scatter kernel asked for by name: A^T x reading A in place (the matrix must stay), and A x
// through A^T made once.
TEST(Transpose, ScatterKernelBothOperations) {
  Csr a = coo_to_csr(test::random_coo(90, 140, 0.07, 14));
  for (const Backend b : {Backend::Serial, Backend::Omp}) {
    const auto t = make_plan(a, b, "csr-scatter", {.threads = 3, .operation = Operation::Transpose});
    EXPECT_EQ(t->detail.rfind("rows scattered into 1 copy of y", 0), 0u) << t->detail;
    expect_transposed_product(*t, a, "A^T");
    const auto n = make_plan(a, b, "csr-scatter", {.threads = 3});
    EXPECT_EQ(n->detail.rfind("A^T made once", 0), 0u) << n->detail;
    const std::vector<double> x = make_vector("random:2", 140);
    std::vector<double> y(90), want = test::dense_product(dense_of(a), 90, 140, x);
    n->multiply(x, y);
    for (std::size_t i = 0; i < y.size(); ++i) EXPECT_NEAR(y[i], want[i], 1e-12 * (1 + std::abs(want[i]))) << i;
  }
  // Several parts, each its copy of y over the columns its rows hold (a band: the copies overlap little).
  std::vector<offset_t> lengths(20000, 8);
  const Csr band = test::csr_from_lengths(lengths, 500, 16);
  const auto parts = make_plan(band, Backend::Omp, "csr-scatter", {.threads = 3, .operation = Operation::Transpose});
  EXPECT_EQ(parts->detail.rfind("rows scattered into 3 copies of y", 0), 0u) << parts->detail;
  const std::vector<double> x = make_vector("random:3", 20000), y0 = make_vector("random:4", 500);
  const Csr bt = transpose(band);
  const Reference ref = reference_product(bt, x);
  std::vector<double> y = y0, again = y0;
  parts->multiply(x, y, 0.5, -2.0);
  parts->multiply(x, again, 0.5, -2.0);
  EXPECT_EQ(y, again);  // the same bits: summed in part order
  for (std::size_t i = 0; i < y.size(); ++i)
    ASSERT_NEAR(y[i], 0.5 * ref.y[i] - 2.0 * y0[i], 1e-12 * (1 + ref.bound[i] + std::abs(y0[i]))) << i;
}

}  // namespace
}  // namespace spmv
