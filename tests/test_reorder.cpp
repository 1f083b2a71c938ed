// Symmetric reorderings (spmv/formats/reorder.hpp) and plans made with PlanOptions::reorder: RCM
// gives a permutation that narrows a scrambled grid's band; P A P^T and back is A exactly; every
// CPU kernel's product through a reordered plan passes the reference's check in A's numbering
// (SpMV, SpMM in both layouts, alpha and beta, A^T, host vectors and the resident set_x/run/get_y);
// rectangular matrices are refused by name.
#include <gtest/gtest.h>
#include <spmv/bench/generate.hpp>
#include <spmv/formats/reorder.hpp>
#include <spmv/spmv.hpp>

#include <numeric>
#include <random>

#include "test_util.hpp"

namespace spmv {
namespace {
using namespace test;

// A 2-D 5-point grid of n x n, its numbering scrambled by a random permutation.
Csr scrambled_grid(index_t n, std::uint64_t seed) {
  Coo c;
  c.rows = c.cols = n * n;
  for (index_t y = 0; y < n; ++y)
    for (index_t x = 0; x < n; ++x) {
      const index_t r = y * n + x;
      c.row.push_back(r), c.col.push_back(r), c.val.push_back(4.0);
      if (x > 0) c.row.push_back(r), c.col.push_back(r - 1), c.val.push_back(-1.0);
      if (x + 1 < n) c.row.push_back(r), c.col.push_back(r + 1), c.val.push_back(-1.5);
      if (y > 0) c.row.push_back(r), c.col.push_back(r - n), c.val.push_back(-0.5);
      if (y + 1 < n) c.row.push_back(r), c.col.push_back(r + n), c.val.push_back(-1.0);
    }
  const Csr a = coo_to_csr(c);
  std::vector<index_t> order(static_cast<std::size_t>(a.rows));
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), std::mt19937_64(seed));
  return permute(a, permutation_from_order(std::move(order)));
}

void expect_permutation(const Permutation& p, index_t n) {
  ASSERT_EQ(p.size(), n);
  std::vector<int> seen(static_cast<std::size_t>(n), 0);
  for (index_t i = 0; i < n; ++i) {
    const index_t o = p.order[static_cast<std::size_t>(i)];
    ASSERT_TRUE(o >= 0 && o < n);
    ++seen[static_cast<std::size_t>(o)];
    EXPECT_EQ(p.position[static_cast<std::size_t>(o)], i);
  }
  EXPECT_EQ(std::count(seen.begin(), seen.end(), 1), n);
}

TEST(Reorder, RcmNarrowsAScrambledGridsBand) {
  const index_t n = 40;
  const Csr a = scrambled_grid(n, 3);
  EXPECT_GT(bandwidth(a), n * n / 2);
  const Permutation p = rcm(a);
  expect_permutation(p, a.rows);
  const Csr b = permute(a, p);
  EXPECT_EQ(csr_structure_error(b.view()), "");
  EXPECT_LE(bandwidth(b), 2 * n);  // a grid's RCM band: about one side
  // And back: the inverse permutation gives A itself, bit for bit.
  Permutation back;
  back.order = p.position;
  back.position = p.order;
  const Csr again = permute(b, back);
  expect_same_csr(again, a);
}

// RCM's wide levels run on several threads and must give the one-thread order exactly: random
// rows (levels grow past the parallel threshold of 4096 vertices within a few steps), a grid, the
// shared matrices.
TEST(Reorder, RcmOnThreadsGivesTheOneThreadOrder) {
  std::vector<std::pair<std::string, Csr>> cases;
  cases.emplace_back("random 100000 x 8", gen::generate({.kind = gen::Kind::Random, .rows = 100000, .mean = 8}));
  cases.emplace_back("scrambled 300x300 grid", scrambled_grid(300, 5));
  for (const char* name : {"cage9", "bcsstk16", "pde2961"}) cases.emplace_back(name, shared_matrix(name));
  for (const auto& [name, a] : cases) {
    const Permutation one = rcm(a, {.threads = 1});
    expect_permutation(one, a.rows);
    for (const int t : {2, 3, 8}) EXPECT_EQ(rcm(a, {.threads = t}).order, one.order) << name << " threads " << t;
  }
}

// Reorder::Auto (the default): the planner renumbers a large scrambled mesh only where the products
// expected repay it, keeps a mesh in its own numbering and a power-law graph as it is, and a named
// kernel is never renumbered under it; each decision said in the plan's detail.
TEST(Reorder, AutoRenumbersAScrambledMeshOnlyWhereTheProductsRepayIt) {
  const Csr mesh = gen::grid_stencil(3, 50, 27);  // 125000 rows, 3.3M nonzeros
  std::vector<index_t> order(static_cast<std::size_t>(mesh.rows));
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), std::mt19937_64(11));
  const Csr scrambled = permute(mesh, permutation_from_order(std::move(order)));
  PlanOptions opt;
  ASSERT_EQ(opt.reorder, Reorder::Auto);
  opt.products = 1'000'000'000;
  const auto many = make_plan(scrambled, Backend::Omp, "auto", opt);
  EXPECT_NE(many->detail.find("reordered rcm"), std::string::npos) << many->detail;
  EXPECT_NE(many->detail.find("reorder auto: rcm (scattered columns"), std::string::npos) << many->detail;
  std::vector<double> x = make_vector("random:2", static_cast<std::size_t>(scrambled.cols));
  const CheckedProduct got = checked_product(*many, scrambled.view(), x);
  EXPECT_TRUE(got.check.passed) << got.check.message;
  opt.products = 10;
  const auto few = make_plan(scrambled, Backend::Omp, "auto", opt);
  EXPECT_EQ(few->detail.find("reordered rcm"), std::string::npos) << few->detail;
  EXPECT_NE(few->detail.find("reorder auto: none (scattered columns"), std::string::npos) << few->detail;
  opt.products = 1'000'000'000;
  EXPECT_NE(make_plan(mesh, Backend::Omp, "auto", opt)->detail.find("reorder auto: none (columns near their rows"),
            std::string::npos);
  const Csr graph = gen::generate({.kind = gen::Kind::Powerlaw, .rows = 300000, .mean = 8});
  const auto g = make_plan(graph, Backend::Omp, "auto", opt);
  EXPECT_EQ(g->detail.find("reordered rcm"), std::string::npos) << g->detail;
  const auto named = make_plan(scrambled, Backend::Omp, "csr", opt);
  EXPECT_EQ(named->detail.find("reorder"), std::string::npos) << named->detail;
  opt.reorder = Reorder::None;
  EXPECT_EQ(make_plan(scrambled, Backend::Omp, "auto", opt)->detail.find("reorder"), std::string::npos);
}

TEST(Reorder, ComponentsEmptyRowsAndADenseRow) {
  // Two components, isolated vertices (empty rows) and a row touching every column.
  Coo c;
  c.rows = c.cols = 50;
  for (index_t i = 0; i < 20; ++i) c.row.push_back(i), c.col.push_back((i * 7) % 20), c.val.push_back(1.0 + i);
  for (index_t j = 0; j < 50; ++j) c.row.push_back(30), c.col.push_back(j), c.val.push_back(0.5);
  const Csr a = coo_to_csr(c);
  const Permutation p = rcm(a);
  expect_permutation(p, 50);
  const Csr b = permute(a, p);
  EXPECT_EQ(b.nnz(), a.nnz());
  EXPECT_EQ(csr_structure_error(b.view()), "");
}

TEST(Reorder, RectangularMatricesAreRefused) {
  const Csr a = shared_matrix("well1033");  // 1033 x 320
  EXPECT_NE(error_of([&] { rcm(a); }).find("a square matrix"), std::string::npos);
  PlanOptions opt;
  opt.reorder = Reorder::Rcm;
  EXPECT_NE(error_of([&] { make_plan(a, Backend::Omp, "csr", opt); }).find("rectangular one is not reordered"),
            std::string::npos);
}

TEST(Reorder, SinglePrecisionWrongSizesAndThePermutationsApi) {
  const Csr a = scrambled_grid(20, 9);
  PlanOptions opt;
  opt.reorder = Reorder::Rcm;
  opt.precision = Precision::Single;
  const auto plan = make_plan(a, Backend::Omp, "csr", opt);
  std::vector<double> x = make_vector("random:6", static_cast<std::size_t>(a.cols));
  const CheckedProduct got = checked_product(*plan, a, x);
  EXPECT_TRUE(got.check.passed) << got.check.message;
  std::vector<float> xs(x.begin(), x.end() - 1);  // one value short
  EXPECT_NE(error_of([&] { plan->set_x(std::span<const float>(xs)); }).find("expected 400"), std::string::npos);
  const Permutation p = rcm(a);
  std::vector<double> in(400, 1.0), out(399);
  EXPECT_NE(error_of([&] { to_new(p, in, out); }).find("to_new: vectors of 400 and 399"), std::string::npos);
  Permutation half = p;
  half.position.clear();
  EXPECT_NE(error_of([&] { permute(a, half); }).find("position 0"), std::string::npos);
  // to_new then to_old is the identity.
  std::vector<double> back(400), mid(400);
  to_new(p, x, mid);
  to_old(p, mid, back);
  EXPECT_EQ(back, x);
}

TEST(Reorder, EveryCpuKernelMultipliesInTheUsersNumbering) {
  const Csr grid = scrambled_grid(30, 5);
  const Csr cage = shared_matrix("cage9");
  for (const Csr* a : {&grid, &cage})
    for (const KernelSpec& spec : kernels()) {
      if (spec.backend == Backend::Cuda || spec.baseline) continue;
      for (const int k : {1, 3})
        for (const Layout layout : {Layout::RowMajor, Layout::ColMajor})
          for (const Operation op : {Operation::NoTranspose, Operation::Transpose}) {
            if ((k > 1 && !spec.spmm) || (k == 1 && layout == Layout::ColMajor)) continue;
            SCOPED_TRACE(spec.name + " k=" + std::to_string(k) + (layout == Layout::ColMajor ? " col" : " row") +
                         (op == Operation::Transpose ? " A^T" : " A"));
            PlanOptions opt;
            opt.k = k;
            opt.layout = layout;
            opt.operation = op;
            opt.reorder = Reorder::Rcm;
            opt.threads = 2;
            opt.products = 10;
            const auto plan = make_plan(*a, spec.backend, spec.name, opt);
            EXPECT_NE(plan->detail.find("reordered rcm"), std::string::npos) << plan->detail;
            const Csr at = op == Operation::Transpose ? transpose(a->view()) : Csr{};
            const CsrView m = op == Operation::Transpose ? at.view() : a->view();
            std::vector<double> x = make_vector("random:3", static_cast<std::size_t>(m.cols) * k);
            const CheckedProduct got = checked_product(*plan, m, x, k, layout);
            EXPECT_TRUE(got.check.passed) << got.check.message;
            // alpha and beta through the permutations; the resident interface too.
            std::vector<double> y = make_vector("random:4", got.y.size()), y0 = y;
            plan->multiply(x, y, -2.0, 0.5);
            for (std::size_t i = 0; i < y.size(); ++i)
              ASSERT_NEAR(y[i], -2.0 * got.y[i] + 0.5 * y0[i], 1e-12 * (2 * std::abs(got.y[i]) + 1)) << i;
            std::vector<double> resident(got.y.size());
            plan->set_x(x);
            plan->run(1);
            plan->get_y(resident);
            for (std::size_t i = 0; i < y.size(); ++i)
              ASSERT_NEAR(resident[i], got.y[i], 1e-12 * (std::abs(got.y[i]) + 1)) << i;
          }
    }
}

}  // namespace
}  // namespace spmv
