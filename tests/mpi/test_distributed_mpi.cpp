// The distributed product over MPI (include/spmv/distributed.hpp), run by ctest under mpiexec on
// 1-4 ranks: every rank's block of y, gathered, passes the accurate reference's check for A x and
// A^T x, SpMV and SpMM, alpha and beta, on matrices read by rank 0 and scattered (square,
// rectangular both ways) and on stencils made in place (also with ranks that own no rows); errors
// are thrown on every rank. The backend: SPMV_TEST_BACKEND (serial, omp, cuda; default omp).
#include <gtest/gtest.h>
#include <spmv/device.hpp>
#include <spmv/distributed.hpp>
#include <spmv/formats/transpose.hpp>
#include <spmv/io.hpp>
#include <spmv/reference.hpp>

#include <cmath>
#include <cstdio>
#include <algorithm>
#include <cstdlib>
#include <string>

namespace spmv {
namespace {

int rank_of(MPI_Comm c = MPI_COMM_WORLD) {
  int r = 0;
  MPI_Comm_rank(c, &r);
  return r;
}
int ranks_of(MPI_Comm c = MPI_COMM_WORLD) {
  int n = 0;
  MPI_Comm_size(c, &n);
  return n;
}

Backend test_backend() {
  const char* b = std::getenv("SPMV_TEST_BACKEND");
  return parse_backend(b && *b ? b : "omp");
}

PlanOptions options(int k = 1, Operation op = Operation::NoTranspose) {
  PlanOptions opt;
  opt.threads = 1;  // ranks share the test machine's cores
  opt.k = k;
  opt.operation = op;
  opt.products = 4;
  return opt;
}

// Every rank's block gathered into the whole vector (k values per entry), on every rank.
std::vector<double> gather(const std::vector<double>& mine, index_t total, int k) {
  const int n = ranks_of();
  std::vector<int> counts(static_cast<std::size_t>(n)), displs(static_cast<std::size_t>(n));
  const int count = static_cast<int>(mine.size());
  MPI_Allgather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, MPI_COMM_WORLD);
  for (int r = 1; r < n; ++r) displs[r] = displs[r - 1] + counts[r - 1];
  std::vector<double> all(static_cast<std::size_t>(total) * k);
  MPI_Allgatherv(mine.data(), count, MPI_DOUBLE, all.data(), counts.data(), displs.data(), MPI_DOUBLE, MPI_COMM_WORLD);
  return all;
}

// The distributed product of `rows` (the whole matrix `a` on every rank, for the reference) checked
// for y = alpha op(A) x + beta y0.
void expect_product(const Csr& a, const RankRows& rows, int k, Operation op, double alpha, double beta,
                    const std::string& what) {
  SCOPED_TRACE(what + " k=" + std::to_string(k) + (op == Operation::Transpose ? " A^T" : " A"));
  const auto plan = DistributedPlan::make(MPI_COMM_WORLD, rows, test_backend(), "auto", options(k, op));
  const Csr at = op == Operation::Transpose ? transpose(a.view()) : Csr{};
  const CsrView m = op == Operation::Transpose ? at.view() : a.view();
  ASSERT_EQ(plan->global_rows(), m.rows);
  ASSERT_EQ(plan->global_cols(), m.cols);
  const std::vector<double> x = make_vector("random:7", static_cast<std::size_t>(m.cols) * k);
  const std::vector<double> y0 = make_vector("random:8", static_cast<std::size_t>(m.rows) * k);
  const std::vector<double> xb(x.begin() + plan->x_begin() * k, x.begin() + (plan->x_begin() + plan->x_size()) * k);
  std::vector<double> yb(y0.begin() + plan->y_begin() * k, y0.begin() + (plan->y_begin() + plan->y_size()) * k);
  const Reference ref = reference_product(m, x, k, Layout::RowMajor);
  {  // A x alone: the reference's own check
    std::vector<double> y(yb.size());
    plan->multiply(xb, y);
    const CheckResult c = check_product(m, ref, gather(y, m.rows, k), k, Layout::RowMajor, Precision::Double);
    EXPECT_TRUE(c.passed) << c.message;
  }
  {  // alpha A x + beta y0, in y0's buffer: within a few roundings of alpha ref + beta y0
    std::vector<double> y = yb;
    plan->multiply(xb, y, alpha, beta);
    const std::vector<double> got = gather(y, m.rows, k);
    for (std::size_t i = 0; i < got.size(); ++i) {
      const double want = alpha * ref.y[i] + beta * y0[i];
      const double tol = 1e-12 * (std::abs(alpha) * ref.bound[i] + std::abs(beta * y0[i])) + 1e-300;
      ASSERT_LE(std::abs(got[i] - want), tol) << "entry " << i << ": " << got[i] << " want " << want;
    }
  }
  // A CUDA plan on device vectors: the same bits as through host vectors.
  int products = 2;
  if (plan->on_device()) {
    std::vector<double> host(yb.size()), dev(yb.size());
    plan->multiply(xb, host, alpha, 0.0);
    DeviceVector<double> xd(xb.size()), yd(yb.size());
    xd.upload(xb);
    plan->multiply(xd.span(), yd.span(), alpha, 0.0);
    yd.download(dev);
    EXPECT_EQ(dev, host);
    products += 2;
  }
  // Where time went, and what went over the wire: one product counted per call.
  EXPECT_EQ(plan->timings().products, products);
  long long sent = static_cast<long long>(plan->bytes_sent()), total_sent = 0;
  MPI_Allreduce(&sent, &total_sent, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (ranks_of() == 1) EXPECT_EQ(total_sent, 0);
}

// The test data: SPMV_TEST_DATA in the environment (a copy of the tree elsewhere), else the build's.
std::string data_path(const std::string& name) {
  const char* env = std::getenv("SPMV_TEST_DATA");
  return std::string(env && *env ? env : SPMV_TEST_DATA) + "/suitesparse/" + name + ".mtx.gz";
}

Csr test_matrix(const std::string& name) { return io::load(data_path(name)).matrix; }

void expect_same_csr(const Csr& got, const Csr& want) {
  EXPECT_EQ(got.rows, want.rows);
  EXPECT_EQ(got.cols, want.cols);
  EXPECT_TRUE(std::equal(got.row_ptr.begin(), got.row_ptr.end(), want.row_ptr.begin(), want.row_ptr.end()));
  EXPECT_TRUE(std::equal(got.col.begin(), got.col.end(), want.col.begin(), want.col.end()));
  EXPECT_TRUE(std::equal(got.val.begin(), got.val.end(), want.val.begin(), want.val.end()));
}

TEST(DistributedMpi, ReadAndScatteredMatricesBothOperationsSpmvAndSpmm) {
  // cage9: square nonsymmetric; well1033: 1033 x 320; its transpose 320 x 1033.
  for (const std::string name : {"cage9", "well1033"}) {
    const Csr a = test_matrix(name);
    const RankRows rows = read_rows(MPI_COMM_WORLD, data_path(name));
    EXPECT_EQ(rows.global_rows, a.rows);
    for (const Operation op : {Operation::NoTranspose, Operation::Transpose})
      for (const int k : {1, 3}) expect_product(a, rows, k, op, k == 1 ? 1.0 : -0.5, k == 1 ? 0.0 : 2.0, name);
    const Csr at = transpose(a.view());
    const RankRows trows = scatter_rows(MPI_COMM_WORLD, rank_of() == 0 ? &at : nullptr);
    expect_product(at, trows, 1, Operation::NoTranspose, 1.5, 0.25, name + "^T scattered");
  }
}

TEST(DistributedMpi, BinaryCachesAreReadByEveryRankInParallel) {
  // The same rows as rank 0's reading and scattering, read by each rank from a binary cache;
  // a corrupt part is an error on every rank naming the file.
  const std::string dir = ::testing::TempDir();
  const std::string path = dir + "/spmv_mpi_cage9.spmvbin", bad = dir + "/spmv_mpi_bad.spmvbin";
  const Csr a = test_matrix("cage9");
  if (rank_of() == 0) {
    io::write_binary(path, a.view());
    Csr broken = a;
    broken.col[static_cast<std::size_t>(broken.nnz() - 1)] = broken.cols + 5;  // the last rank's part
    io::write_binary(bad, broken.view());
  }
  MPI_Barrier(MPI_COMM_WORLD);
  const RankRows scattered = read_rows(MPI_COMM_WORLD, data_path("cage9"));
  const RankRows own = read_rows(MPI_COMM_WORLD, path);
  EXPECT_EQ(own.global_rows, a.rows);
  EXPECT_EQ(own.global_cols, a.cols);
  EXPECT_EQ(own.row_begin, scattered.row_begin);
  expect_same_csr(own.rows, scattered.rows);
  expect_product(a, own, 2, Operation::NoTranspose, 1.0, 0.5, "cage9 binary");
  try {
    read_rows(MPI_COMM_WORLD, bad);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("spmv_mpi_bad.spmvbin"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("corrupt"), std::string::npos) << e.what();
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank_of() == 0) {
    std::remove(path.c_str());
    std::remove(bad.c_str());
  }
}

TEST(DistributedMpi, StencilsMadeInPlace) {
  for (const int points : {7, 27}) {
    const RankRows rows = stencil_rows(MPI_COMM_WORLD, 9, points);
    const Csr a = stencil_rows(MPI_COMM_SELF, 9, points).rows;  // the whole matrix, for the reference
    ASSERT_EQ(a.rows, 729);
    EXPECT_EQ(a.nnz(), points == 7 ? 9 * 9 * 9 + 6 * 8 * 9 * 9 : 25 * 25 * 25);  // 27 points: (3n - 2)^3
    expect_product(a, rows, 1, Operation::NoTranspose, 1.0, 0.0, "stencil " + std::to_string(points));
    expect_product(a, rows, 2, Operation::Transpose, 1.0, 1.0, "stencil^T " + std::to_string(points));
  }
  // Three dofs a node (FEM-like): (3n - 2)^3 node pairs, 9 entries each; symmetric.
  const RankRows fem = stencil_rows(MPI_COMM_WORLD, 5, 27, 3);
  const Csr whole = stencil_rows(MPI_COMM_SELF, 5, 27, 3).rows;
  ASSERT_EQ(whole.rows, 375);
  EXPECT_EQ(whole.nnz(), 13 * 13 * 13 * 9);
  EXPECT_EQ(csr_structure_error(whole.view()), "");
  const Csr wt = transpose(whole.view());
  EXPECT_TRUE(std::equal(wt.col.begin(), wt.col.end(), whole.col.begin(), whole.col.end()));
  EXPECT_TRUE(std::equal(wt.val.begin(), wt.val.end(), whole.val.begin(), whole.val.end()));
  expect_product(whole, fem, 3, Operation::NoTranspose, 1.0, 0.0, "fem 3 dofs");
  // One row over every rank: all ranks but one own none, and no rank sends or receives.
  const RankRows one = stencil_rows(MPI_COMM_WORLD, 1, 7);
  const auto lone = DistributedPlan::make(MPI_COMM_WORLD, one, test_backend(), "auto", options());
  EXPECT_EQ(lone->halo_size(), 0);
  EXPECT_EQ(lone->send_size(), 0);
  EXPECT_EQ(lone->neighbours(), 0);
  EXPECT_EQ(lone->y_size(), rank_of() == ranks_of() - 1 ? 1 : 0);  // even blocks: the last rank has it
  expect_product(stencil_rows(MPI_COMM_SELF, 1, 7).rows, one, 1, Operation::NoTranspose, 2.0, 0.0, "1 row");
}

TEST(DistributedMpi, RandomGraphsAreTheSameOnAnyNumberOfRanks) {
  const RankRows rows = random_rows(MPI_COMM_WORLD, 3000, 9);
  const Csr a = random_rows(MPI_COMM_SELF, 3000, 9).rows;
  ASSERT_EQ(a.nnz(), 3000 * 9);
  EXPECT_EQ(csr_structure_error(a.view()), "");
  // This rank's rows are the whole matrix's at its offset.
  for (index_t r = 0; r < rows.rows.rows; ++r)
    for (offset_t q = 0; q < rows.rows.row_length(r); ++q) {
      const offset_t mine = rows.rows.row_ptr[r] + q, whole = a.row_ptr[rows.row_begin + r] + q;
      ASSERT_EQ(rows.rows.col[mine], a.col[whole]);
      ASSERT_EQ(rows.rows.val[mine], a.val[whole]);
    }
  expect_product(a, rows, 1, Operation::NoTranspose, 1.0, 0.0, "random");
  expect_product(a, rows, 1, Operation::Transpose, 1.0, 0.0, "random^T");
}

TEST(DistributedMpi, TheHaloIsWhatTheOtherRanksOwn) {
  // A 7-point stencil of 8^3 rows in even blocks of at least one plane (64 rows): a rank's halo is
  // the plane below its block and the plane above (where there are such rows), and it sends the
  // same to the ranks beside it; both blocks together hold its rows' entries.
  const index_t n = 8, plane = n * n, total = n * n * n;
  const RankRows rows = stencil_rows(MPI_COMM_WORLD, n, 7);
  const auto plan = DistributedPlan::make(MPI_COMM_WORLD, rows, test_backend(), "auto", options());
  const bool below = rows.row_begin > 0, above = rows.row_begin + rows.rows.rows < total;
  ASSERT_GE(rows.rows.rows, plane);
  EXPECT_EQ(plan->halo_size(), plane * (below + above));
  EXPECT_EQ(plan->send_size(), plane * (below + above));
  EXPECT_EQ(plan->neighbours(), below + above);
  EXPECT_EQ(plan->bytes_sent(), static_cast<std::size_t>(plane * (below + above)) * sizeof(double));
  EXPECT_EQ(plan->local_nnz() + plan->remote_nnz(), rows.rows.nnz());
  // Blocks of whole planes: one remote entry a row of the planes beside (more where a block ends
  // inside a plane: its rows' x and y neighbours across the boundary too).
  if (total % (ranks_of() * plane) == 0)
    EXPECT_EQ(plan->remote_nnz(), plane * (below + above));
  else
    EXPECT_GT(plan->remote_nnz(), plane * (below + above));
}

TEST(DistributedMpi, ConjugateGradientsOverTheRanks) {
  // b = A * ones on a 27-point stencil (SPD): CG over the ranks finds ones; host vectors, or
  // device vectors for a CUDA plan; the same iterations on any number of ranks within a few.
  const index_t n = 10;
  const RankRows rows = stencil_rows(MPI_COMM_WORLD, n, 27);
  const auto plan = DistributedPlan::make(MPI_COMM_WORLD, rows, test_backend(), "auto", options());
  const std::size_t m = static_cast<std::size_t>(plan->x_size());
  std::vector<double> ones(m, 1.0), b(m), x(m, 0.0);
  plan->multiply(ones, b);
  SolverOptions opt;
  opt.tolerance = 1e-10;
  SolverResult res;
  if (plan->on_device()) {
    DeviceVector<double> bd(m), xd(m);
    bd.upload(b);
    xd.upload(x);
    res = cg(*plan, bd.span(), xd.span(), opt);
    xd.download(x);
  } else {
    res = cg(*plan, b, x, opt);
  }
  EXPECT_TRUE(res.converged) << res.stopped;
  EXPECT_LE(res.residual, 1e-10);
  EXPECT_GT(res.iterations, 5);
  EXPECT_EQ(res.products, res.iterations + 1);
  double worst = 0;
  for (const double v : x) worst = std::max(worst, std::abs(v - 1.0));
  EXPECT_LT(worst, 1e-7);
  // The same solve on one rank takes the same iterations (the sums' order differs by rounding).
  const RankRows all = stencil_rows(MPI_COMM_SELF, n, 27);
  const auto one = DistributedPlan::make(MPI_COMM_SELF, all, Backend::Omp, "auto", options());
  std::vector<double> b1(static_cast<std::size_t>(all.rows.rows)), x1(b1.size(), 0.0), ones1(b1.size(), 1.0);
  one->multiply(ones1, b1);
  const SolverResult r1 = cg(*one, b1, x1, opt);
  EXPECT_NEAR(res.iterations, r1.iterations, 2);
  // A rank's blocks of the wrong size: an error naming them.
  std::vector<double> short_b(m + 1);
  EXPECT_THROW(cg(*plan, short_b, x, opt), Error);
}

TEST(DistributedMpi, TheExchangeAloneLeavesTheProductsAsTheyWere) {
  // exchange() runs a product's messages without its blocks (the bench times it to tell how much
  // of it the local product hides): between two products, on host vectors and on device vectors
  // of a CUDA plan, for A and A^T, it changes neither product; a wrong-sized x is refused.
  const RankRows rows = stencil_rows(MPI_COMM_WORLD, 8, 27);
  for (const Operation op : {Operation::NoTranspose, Operation::Transpose}) {
    const auto plan = DistributedPlan::make(MPI_COMM_WORLD, rows, test_backend(), "auto", options(1, op));
    const std::vector<double> x = make_vector("random:3", static_cast<std::size_t>(plan->x_size()));
    std::vector<double> before(static_cast<std::size_t>(plan->y_size())), after(before.size());
    plan->multiply(x, before);
    plan->exchange(x);
    plan->exchange(x);
    plan->multiply(x, after);
    EXPECT_EQ(after, before);
    if (plan->on_device()) {
      DeviceVector<double> xd(x.size()), yd(before.size());
      xd.upload(x);
      plan->exchange(xd.span());
      plan->multiply(xd.span(), yd.span());
      plan->exchange(xd.span());
      yd.download(after);
      EXPECT_EQ(after, before);
    }
    const std::vector<double> wrong(x.size() + 1);
    EXPECT_THROW(plan->exchange(wrong), Error);
  }
}

TEST(DistributedMpi, ErrorsReachEveryRank) {
  // Rows that do not tile the matrix in rank order: refused on every rank, naming the rank.
  RankRows rows = stencil_rows(MPI_COMM_WORLD, 4, 7);
  if (ranks_of() > 1 && rank_of() == 1) rows.row_begin += 1;
  if (ranks_of() > 1) {
    try {
      DistributedPlan::make(MPI_COMM_WORLD, rows, test_backend(), "auto", options());
      ADD_FAILURE() << "no error";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("contiguous blocks"), std::string::npos) << e.what();
    }
  }
  // A file rank 0 cannot read: every rank gets its message.
  try {
    read_rows(MPI_COMM_WORLD, "/nonexistent/m.mtx");
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/m.mtx"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("rank 0"), std::string::npos) << e.what();
  }
  // Column-major SpMM is refused.
  PlanOptions col = options(2);
  col.layout = Layout::ColMajor;
  EXPECT_THROW(DistributedPlan::make(MPI_COMM_WORLD, stencil_rows(MPI_COMM_WORLD, 3, 7), test_backend(), "auto", col),
               Unsupported);
}

}  // namespace
}  // namespace spmv

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  ::testing::InitGoogleTest(&argc, argv);
  if (spmv::rank_of() != 0) {  // one rank reports; a failure on another still fails the run (its exit status)
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  const int rc = RUN_ALL_TESTS();
  int worst = 0;
  MPI_Allreduce(&rc, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return worst;
}
