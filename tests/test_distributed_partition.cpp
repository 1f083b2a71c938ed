// The split of a matrix over ranks (src/distributed/partition.hpp), without MPI: for 1-5 ranks,
// ranks that own no rows, rectangular matrices both ways and empty halos, each rank's diagonal
// and off-diagonal blocks multiplied by its x block and its halo (gathered as the halo pattern
// says the owners send it) give the rows of the global product; the halo is exactly the columns
// outside the rank's block that its rows touch.
#include <gtest/gtest.h>
#include <spmv/spmv.hpp>

#include <set>

#include "distributed/partition.hpp"
#include "test_util.hpp"

namespace spmv {
namespace {

std::vector<double> product(const Csr& m, const std::vector<double>& x) {
  std::vector<double> y(static_cast<std::size_t>(m.rows), 0.0);
  for (index_t r = 0; r < m.rows; ++r)
    for (offset_t q = m.row_ptr[r]; q < m.row_ptr[r + 1]; ++q) y[r] += m.val[q] * x[m.col[q]];
  return y;
}

void expect_split_reproduces(const Csr& a, int ranks, const std::string& what) {
  const dist::Ownership rows = dist::partition_rows(a, ranks), cols = dist::partition_columns(a, rows);
  ASSERT_EQ(rows.ranks(), ranks);
  ASSERT_EQ(rows.begin(0), 0);
  ASSERT_EQ(rows.end(ranks - 1), a.rows);
  ASSERT_EQ(cols.end(ranks - 1), a.cols);
  std::vector<dist::LocalPart> parts;
  for (int r = 0; r < ranks; ++r) parts.push_back(dist::split_rows(a, rows, cols, r));
  const auto pat = dist::halo_patterns(parts, cols);
  const std::vector<double> x = make_vector("random:5", static_cast<std::size_t>(a.cols));
  const std::vector<double> want = product(a, x);
  offset_t nnz = 0;
  for (int r = 0; r < ranks; ++r) {
    const dist::LocalPart& p = parts[static_cast<std::size_t>(r)];
    nnz += p.diag.nnz() + p.offd.nnz();
    EXPECT_EQ(csr_structure_error(p.diag.view()), "") << what << " rank " << r;
    EXPECT_EQ(csr_structure_error(p.offd.view()), "") << what << " rank " << r;
    // The halo: every column outside the rank's block that its rows touch, once, sorted.
    std::set<index_t> touched;
    for (index_t i = rows.begin(r); i < rows.end(r); ++i)
      for (offset_t q = a.row_ptr[i]; q < a.row_ptr[i + 1]; ++q)
        if (a.col[q] < cols.begin(r) || a.col[q] >= cols.end(r)) touched.insert(a.col[q]);
    EXPECT_EQ(std::vector<index_t>(touched.begin(), touched.end()), p.halo) << what << " rank " << r;
    // The halo as the owners send it: each owner's send list to r, in owner order.
    std::vector<double> halo;
    for (int q = 0; q < ranks; ++q) {
      const auto& send = pat[static_cast<std::size_t>(q)].send[static_cast<std::size_t>(r)];
      EXPECT_EQ(static_cast<index_t>(send.size()), pat[static_cast<std::size_t>(r)].recv[static_cast<std::size_t>(q)]);
      for (const index_t local : send) {
        ASSERT_LT(local, cols.size(q));
        halo.push_back(x[static_cast<std::size_t>(cols.begin(q) + local)]);
      }
    }
    ASSERT_EQ(halo.size(), p.halo.size()) << what << " rank " << r;
    const std::vector<double> own(x.begin() + cols.begin(r), x.begin() + cols.end(r));
    const std::vector<double> yd = product(p.diag, own), yo = product(p.offd, halo);
    for (index_t i = 0; i < rows.size(r); ++i)
      EXPECT_NEAR(yd[i] + yo[i], want[static_cast<std::size_t>(rows.begin(r) + i)], 1e-12 * (1 + std::abs(want[i])))
          << what << " rank " << r << " row " << i;
  }
  EXPECT_EQ(nnz, a.nnz()) << what;
}

TEST(DistributedPartition, BlocksAndHalosReproduceTheProduct) {
  auto cases = test::edge_cases();
  cases.emplace_back("rect_wide", coo_to_csr(test::random_coo(7, 300, 0.05, 3)));
  cases.emplace_back("rect_tall", coo_to_csr(test::random_coo(300, 7, 0.05, 4)));
  cases.emplace_back("diagonal", coo_to_csr(test::random_coo(50, 50, 0.0, 5)));  // no entries: empty halos
  for (const auto& [name, a] : cases)
    for (const int ranks : {1, 2, 3, 4, 5}) expect_split_reproduces(a, ranks, name + " x" + std::to_string(ranks));
}

TEST(DistributedPartition, RowsBalancedByNonzerosRanksMayOwnNone) {
  // One dominant row: the rank holding it holds little else; more ranks than rows: some own none.
  std::vector<offset_t> lengths(40, 1);
  lengths[3] = 400;
  const Csr a = test::csr_from_lengths(lengths, 500, 7);
  const dist::Ownership rows = dist::partition_rows(a, 4);
  // 439 nonzeros + 40 rows: the dominant row ends the first quarter; its rank takes no row after it.
  EXPECT_EQ(rows.end(rows.owner(3)), 4) << "the dominant row's rank";
  EXPECT_EQ(rows.size(3), 36);
  const Csr three = test::csr_from_lengths({2, 2, 2}, 3, 8);
  const dist::Ownership many = dist::partition_rows(three, 5);
  int empty = 0;
  for (int r = 0; r < 5; ++r) empty += many.size(r) == 0;
  EXPECT_GE(empty, 2);
  for (index_t i = 0; i < 3; ++i) EXPECT_GT(many.size(many.owner(i)), 0) << i;
  expect_split_reproduces(three, 5, "more ranks than rows");
  EXPECT_THROW(dist::partition_rows(a, 0), Error);
}

}  // namespace
}  // namespace spmv
