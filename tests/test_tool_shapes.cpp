// The tools' shapes (generate.hpp): exact stencil counts and boundary rows, sorted distinct
// columns, determinism for a seed, requested row counts, means and long rows.
#include <gtest/gtest.h>

#include <spmv/bench/generate.hpp>

#include <algorithm>
#include <omp.h>

#include "test_util.hpp"

namespace spmv::gen {
namespace {

// Square, a valid CSR (test_util.hpp), values in [-1, 1).
void expect_valid(const Csr& a, index_t rows) {
  ASSERT_EQ(a.rows, rows);
  ASSERT_EQ(a.cols, rows);
  ASSERT_EQ(a.val.size(), static_cast<std::size_t>(a.nnz()));
  test::expect_valid_csr(a);
  for (const double v : a.val) ASSERT_TRUE(v >= -1.0 && v < 1.0) << v;
}

void expect_same(const Csr& a, const Csr& b) {
  EXPECT_EQ(a.row_ptr, b.row_ptr);
  EXPECT_EQ(a.col, b.col);
  EXPECT_EQ(a.val, b.val);
}

double mean_length(const Csr& a) { return static_cast<double>(a.nnz()) / a.rows; }

TEST(ToolShapes, Stencil27Counts) {
  const index_t n = 7;
  const Csr a = grid_stencil(3, n, 27);
  expect_valid(a, n * n * n);
  EXPECT_EQ(a.nnz(), (3 * n - 2) * (3 * n - 2) * (3 * n - 2));
  EXPECT_EQ(a.row_length(0), 8);                     // corner
  EXPECT_EQ(a.row_length(n * n * n - 1), 8);         // opposite corner
  EXPECT_EQ(a.row_length(1), 12);                    // edge
  EXPECT_EQ(a.row_length((3 * n + 3) * n + 3), 27);  // interior
  EXPECT_EQ(a.row_length((3 * n + 3) * n + 0), 18);  // face
  // Row (z*n + y)*n + x: the corner's neighbours are x, y, z in {0, 1}.
  const std::vector<index_t> corner(a.col.begin(), a.col.begin() + 8);
  EXPECT_EQ(corner, (std::vector<index_t>{0, 1, n, n + 1, n * n, n * n + 1, n * n + n, n * n + n + 1}));
}

TEST(ToolShapes, Stencil7And2dCounts) {
  for (const index_t n : {1, 2, 9}) {
    const Csr s7 = grid_stencil(3, n, 7);
    expect_valid(s7, n * n * n);
    EXPECT_EQ(s7.nnz(), 7 * n * n * n - 6 * n * n) << n;
    const Csr s5 = grid_stencil(2, n, 5);
    expect_valid(s5, n * n);
    EXPECT_EQ(s5.nnz(), 5 * n * n - 4 * n) << n;
    const Csr s9 = grid_stencil(2, n, 9);
    expect_valid(s9, n * n);
    EXPECT_EQ(s9.nnz(), (3 * n - 2) * (3 * n - 2)) << n;
  }
  const index_t n = 9;
  const Csr s7 = grid_stencil(3, n, 7);
  const index_t mid = (4 * n + 4) * n + 4;
  const std::vector<index_t> row(s7.col.begin() + s7.row_ptr[mid], s7.col.begin() + s7.row_ptr[mid + 1]);
  EXPECT_EQ(row, (std::vector<index_t>{mid - n * n, mid - n, mid - 1, mid, mid + 1, mid + n, mid + n * n}));
  const Csr s5 = grid_stencil(2, n, 5);
  EXPECT_EQ(s5.row_length(0), 3);
  EXPECT_EQ(s5.row_length(1), 4);
  EXPECT_EQ(s5.row_length(n + 1), 5);
}

TEST(ToolShapes, StencilRefusesOtherPoints) {
  EXPECT_THROW(grid_stencil(3, 4, 5), Error);
  EXPECT_THROW(grid_stencil(2, 4, 7), Error);
  EXPECT_THROW(grid_stencil(4, 4, 9), Error);
  EXPECT_THROW(grid_stencil(3, 2000, 27), Error);  // 8e9 rows
}

TEST(ToolShapes, RandomRowsExactAndDeterministic) {
  for (const Spread sp : {Spread::Uniform, Spread::HalfDiagonal}) {
    const Csr a = random_rows(5000, 8, sp, 5);
    expect_valid(a, 5000);
    for (index_t r = 0; r < a.rows; ++r) ASSERT_EQ(a.row_length(r), 8) << r;
    expect_same(a, random_rows(5000, 8, sp, 5));
    EXPECT_NE(a.col, random_rows(5000, 8, sp, 6).col);
  }
  // HalfDiagonal: the first half of each row runs from the diagonal on.
  const Csr h = random_rows(1000, 8, Spread::HalfDiagonal, 1);
  for (index_t r = 0; r < 996; ++r)
    for (index_t k = 0; k < 4; ++k)
      ASSERT_TRUE(std::binary_search(h.col.begin() + h.row_ptr[r], h.col.begin() + h.row_ptr[r + 1], r + k));
  // Rows longer than the matrix is wide are clipped.
  const Csr full = random_rows(10, 50, Spread::Uniform, 1);
  expect_valid(full, 10);
  EXPECT_EQ(full.nnz(), 100);
}

TEST(ToolShapes, SameMatrixForAnyThreadCount) {
  const int saved = omp_get_max_threads();
  omp_set_num_threads(1);
  const Csr p1 = pareto_rows(20000, ParetoLaw{}, Spread::Uniform, 3);
  const Csr s1 = grid_stencil(3, 12, 27, 3);
  omp_set_num_threads(std::max(2, saved));
  const Csr p2 = pareto_rows(20000, ParetoLaw{}, Spread::Uniform, 3);
  const Csr s2 = grid_stencil(3, 12, 27, 3);
  omp_set_num_threads(saved);
  expect_same(p1, p2);
  expect_same(s1, s2);
}

TEST(ToolShapes, ParetoRowsMeanAndTail) {
  // Pareto(x_min 3, alpha 1.5) has mean 9; floors, the cap and the shift take some off.
  const index_t n = 200000;
  const Csr a = pareto_rows(n, {.x_min = 3, .alpha = 1.5, .cap = 50000}, Spread::Uniform, 6);
  expect_valid(a, n);
  EXPECT_NEAR(mean_length(a), 8.5, 1.0);
  offset_t longest = 0, shortest = n;
  for (index_t r = 0; r < n; ++r) {
    longest = std::max(longest, a.row_length(r));
    shortest = std::min(shortest, a.row_length(r));
  }
  EXPECT_EQ(shortest, 3);
  EXPECT_GT(longest, 1000);
  EXPECT_LE(longest, 50000);
  expect_same(a, pareto_rows(n, {.x_min = 3, .alpha = 1.5, .cap = 50000}, Spread::Uniform, 6));

  // The shifted variant: lengths from 1, 2 shorter on average.
  const Csr s = pareto_rows(n, {.x_min = 3, .alpha = 1.5, .cap = 10000, .shift = 2}, Spread::Uniform, 6);
  EXPECT_NEAR(mean_length(s), mean_length(a) - 2.0, 0.5);

  // A 2% tail over short rows 0..4 (webbase-like): mostly short, some empty, a few long.
  const ParetoLaw web{.x_min = 10, .alpha = 1.15, .cap = 4700, .tail = 0.02, .short_min = 0, .short_max = 4};
  const Csr w = pareto_rows(n, web, Spread::HalfDiagonal, 2);
  expect_valid(w, n);
  index_t empty = 0, over4 = 0;
  for (index_t r = 0; r < n; ++r) {
    empty += w.row_length(r) == 0;
    over4 += w.row_length(r) > 4;
  }
  EXPECT_NEAR(static_cast<double>(empty) / n, 0.98 / 5, 0.01);
  EXPECT_NEAR(static_cast<double>(over4) / n, 0.02, 0.005);
}

TEST(ToolShapes, FewLongRows) {
  const index_t n = 50000;
  const FewLongRows shape{.short_min = 2, .short_max = 6, .long_rows = 8, .long_len = 20000};
  const Csr a = few_long_rows(n, shape, Spread::Uniform, 7);
  expect_valid(a, n);
  index_t longs = 0;
  for (index_t r = 0; r < n; ++r) {
    const offset_t len = a.row_length(r);
    if (len == 20000)
      ++longs;
    else
      ASSERT_TRUE(len >= 2 && len <= 6) << r << " " << len;
  }
  EXPECT_EQ(longs, 8);
  EXPECT_NEAR(static_cast<double>(a.nnz() - 8 * 20000) / (n - 8), 4.0, 0.1);
  expect_same(a, few_long_rows(n, shape, Spread::Uniform, 7));

  // Dense columns (adder-like): columns 0 and 1 in every row; long rows clipped to the width.
  const FewLongRows adder{.short_min = 4, .short_max = 8, .long_rows = 2, .long_len = 5000, .dense_cols = 2};
  const Csr d = few_long_rows(1813, adder, Spread::HalfDiagonal, 3);
  expect_valid(d, 1813);
  longs = 0;
  for (index_t r = 0; r < d.rows; ++r) {
    ASSERT_EQ(d.col[d.row_ptr[r]], 0);
    ASSERT_EQ(d.col[d.row_ptr[r] + 1], 1);
    longs += d.row_length(r) == 1813;
  }
  EXPECT_EQ(longs, 2);
  EXPECT_THROW(few_long_rows(10, {.short_min = 5, .short_max = 2}), Error);
}

}  // namespace
}  // namespace spmv::gen
