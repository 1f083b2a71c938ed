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
        plan = make_plan(copy, b, kernel, {.threads = 2, .operation = Operation::Transpose});
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

}  // namespace
}  // namespace spmv
