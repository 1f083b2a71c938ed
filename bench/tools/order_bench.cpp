// Orders for locality, measured on the product in the new numbering (what a user who iterates
// there runs): per matrix, the planner's plan (auto) on the matrix as given, renumbered by RCM, by
// decreasing in-degree (hubs first: a cheap order for power-law graphs) and, where built with
// METIS, by a k-way partition into parts of about --part-rows rows. Each order's making time, and
// each plan's product time against the original's, interleaved (timing.hpp).
//
//   order_bench [--backend omp|cuda] [--threads T] [--metis] [--part-rows N] FILES...
#include <spmv/bench/generate.hpp>
#include <spmv/formats/reorder.hpp>
#include <spmv/formats/transpose.hpp>
#include <spmv/spmv.hpp>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <fmt/format.h>
#include <numeric>

#ifdef SPMV_BENCH_HAVE_METIS
#include <metis.h>
#endif

using namespace spmv;

namespace {

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

// Rows and columns by decreasing in-degree (stable: ties keep their order).
Permutation by_in_degree(const Csr& a) {
  std::vector<offset_t> in(static_cast<std::size_t>(a.cols), 0);
  for (const index_t c : a.col) ++in[static_cast<std::size_t>(c)];
  std::vector<index_t> order(static_cast<std::size_t>(a.rows));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](index_t x, index_t y) {
    return in[static_cast<std::size_t>(x)] > in[static_cast<std::size_t>(y)];
  });
  return permutation_from_order(std::move(order));
}

#ifdef SPMV_BENCH_HAVE_METIS
// METIS k-way on the pattern of A + A^T without the diagonal; vertices by part, then index.
Permutation by_partition(const Csr& a, index_t part_rows) {
  const Transposed at = transpose_as_stored(a.view(), {});
  const CsrView t = at.view();
  idx_t n = a.rows;
  std::vector<idx_t> xadj(static_cast<std::size_t>(n) + 1, 0), adj, nb;
  for (idx_t v = 0; v < n; ++v) {
    nb.clear();
    for (offset_t q = a.row_ptr[v]; q < a.row_ptr[v + 1]; ++q)
      if (a.col[q] != v) nb.push_back(a.col[q]);
    for (offset_t q = t.row_ptr[v]; q < t.row_ptr[v + 1]; ++q)
      if (t.col[q] != v) nb.push_back(t.col[q]);
    std::sort(nb.begin(), nb.end());
    nb.erase(std::unique(nb.begin(), nb.end()), nb.end());
    adj.insert(adj.end(), nb.begin(), nb.end());
    xadj[static_cast<std::size_t>(v) + 1] = static_cast<idx_t>(adj.size());
  }
  idx_t ncon = 1, parts = std::max<idx_t>(2, (n + part_rows - 1) / part_rows), cut = 0;
  std::vector<idx_t> part(static_cast<std::size_t>(n));
  idx_t options[METIS_NOPTIONS];
  METIS_SetDefaultOptions(options);
  if (METIS_PartGraphKway(&n, &ncon, xadj.data(), adj.data(), nullptr, nullptr, nullptr, &parts, nullptr, nullptr,
                          options, &cut, part.data()) != METIS_OK)
    throw Error("METIS_PartGraphKway failed");
  std::vector<index_t> order(static_cast<std::size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](index_t x, index_t y) {
    return part[static_cast<std::size_t>(x)] < part[static_cast<std::size_t>(y)];
  });
  return permutation_from_order(std::move(order));
}
#endif

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Orders for locality: the planner's product in each new numbering against the original"};
  std::string backend = "omp";
  int threads = 0;
  bool metis = false;
  index_t part_rows = 4096;
  std::vector<std::string> files;
  app.add_option("--backend", backend, "omp or cuda")->check(CLI::IsMember({"omp", "cuda"}));
  app.add_option("--threads", threads, "OpenMP threads (0: all)");
  app.add_flag("--metis", metis, "also a METIS k-way partition (where built with METIS; slow on large graphs)");
  app.add_option("--part-rows", part_rows, "rows a METIS part")->check(CLI::PositiveNumber);
  app.add_option("files", files, "matrices (Matrix Market or .spmvbin)")->required();
  CLI11_PARSE(app, argc, argv);
#ifndef SPMV_BENCH_HAVE_METIS
  if (metis) {
    fmt::print(stderr, "order_bench: built without METIS\n");
    return 2;
  }
#endif
  const Backend b = backend == "cuda" ? Backend::Cuda : Backend::Omp;
  PlanOptions opt;
  opt.threads = threads;
  fmt::print("matrix,order,made_s,bandwidth,kernel,us_per_product,vs_original\n");
  for (const std::string& f : files) {
    const Csr a = io::load_csr(f);
    struct Order {
      std::string name;
      Csr m;
      double made_s;
    };
    std::vector<Order> orders;
    orders.push_back({"original", a, 0});
    const auto add = [&](const std::string& name, const auto& make) {
      const double t0 = now();
      const Permutation p = make();
      Csr m = permute(a.view(), p);
      orders.push_back({name, std::move(m), now() - t0});
    };
    add("rcm", [&] { return rcm(a.view()); });
    add("in-degree", [&] { return by_in_degree(a); });
#ifdef SPMV_BENCH_HAVE_METIS
    if (metis) add(fmt::format("metis/{}", part_rows), [&] { return by_partition(a, part_rows); });
#endif
    std::vector<std::unique_ptr<Plan>> plans;
    std::vector<Plan*> ptrs;
    for (const Order& o : orders) {
      plans.push_back(make_plan(o.m, b, "auto", opt));
      std::vector<double> x(static_cast<std::size_t>(o.m.cols), 1.0);
      plans.back()->set_x(x);
      ptrs.push_back(plans.back().get());
    }
    const ProductTiming base = time_products(*plans[0], 0.02, 7);
    const std::vector<double> ratio = interleaved_ratios(ptrs, 0.02, 9);
    for (std::size_t i = 0; i < orders.size(); ++i)
      fmt::print("{},{},{:.3f},{},{},{:.1f},{:.3f}\n", f, orders[i].name, orders[i].made_s,
                 bandwidth(orders[i].m.view()), plans[i]->chosen, base.median_s * ratio[i] * 1e6, 1.0 / ratio[i]);
  }
}
