// Symmetric reorderings (include/spmv/formats/reorder.hpp).
#include <spmv/formats/reorder.hpp>
#include <spmv/formats/transpose.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <limits>
#include <cstdint>
#include <cstdlib>
#include <numeric>

#include <omp.h>

namespace spmv {
namespace {

// Breadth-first searches spent looking for a pseudo-peripheral start (George and Liu: the
// eccentricity stops growing after two or three on meshes).
constexpr int kPeripheralTries = 8;

// The pattern of A + A^T without the diagonal, as adjacency lists.
struct Graph {
  std::vector<offset_t> ptr;
  std::vector<index_t> adj;
  index_t degree(index_t v) const { return static_cast<index_t>(ptr[v + 1] - ptr[v]); }
};

Graph symmetric_pattern(const CsrView& a, const ConvertOptions& opt) {
  const index_t n = a.rows;
  const int threads = conversion_threads(opt);
  Graph g;
  g.ptr.assign(static_cast<std::size_t>(n) + 1, 0);
  const bool symmetric = a.symmetry != Symmetry::General;  // stored expanded: A's pattern is A^T's
  Transposed at;
  if (!symmetric) at = transpose_as_stored(a, opt);
  const CsrView t = at.view();
  // Row v's neighbours: A's row v merged with A^T's (both sorted), the diagonal left out.
  const auto for_neighbours = [&](index_t v, auto&& f) {
    offset_t p = a.row_ptr[v], pe = a.row_ptr[v + 1];
    offset_t q = symmetric ? 0 : t.row_ptr[v], qe = symmetric ? 0 : t.row_ptr[v + 1];
    while (p < pe || q < qe) {
      index_t c;
      if (q >= qe || (p < pe && a.col[p] < t.col[q])) {
        c = a.col[p++];
      } else if (p >= pe || t.col[q] < a.col[p]) {
        c = t.col[q++];
      } else {
        c = a.col[p++];
        ++q;
      }
      if (c != v) f(c);
    }
  };
#pragma omp parallel for schedule(dynamic, 4096) num_threads(threads)
  for (index_t v = 0; v < n; ++v) {
    offset_t d = 0;
    for_neighbours(v, [&](index_t) { ++d; });
    g.ptr[static_cast<std::size_t>(v) + 1] = d;
  }
  for (std::size_t i = 1; i < g.ptr.size(); ++i) g.ptr[i] += g.ptr[i - 1];
  g.adj.resize(static_cast<std::size_t>(g.ptr.back()));
#pragma omp parallel for schedule(dynamic, 4096) num_threads(threads)
  for (index_t v = 0; v < n; ++v) {
    offset_t at = g.ptr[v];
    for_neighbours(v, [&](index_t c) { g.adj[static_cast<std::size_t>(at++)] = c; });
  }
  return g;
}

constexpr index_t kUnclaimed = std::numeric_limits<index_t>::max();
// Levels of at least this many vertices are expanded on several threads.
constexpr std::size_t kParallelLevel = 4096;

// Sorts out[first, last) by increasing (degree, index).
void sort_by_degree(const Graph& g, std::vector<index_t>& out, std::size_t first, std::size_t last,
                    std::vector<std::uint64_t>& key) {
  if (last - first < 2) return;
  key.clear();
  for (std::size_t k = first; k < last; ++k)
    key.push_back(static_cast<std::uint64_t>(g.degree(out[k])) << 32 | static_cast<std::uint32_t>(out[k]));
  std::sort(key.begin(), key.end());
  for (std::size_t k = first; k < last; ++k) out[k] = static_cast<index_t>(key[k - first]);
}

// Breadth-first search from `start` over vertices with level < 0, in the order of the sequential
// Cuthill-McKee search: a vertex reached from several vertices of a level is the child of the
// first of them in order, and each vertex's children follow it by increasing (degree, index) where
// `sorted` (the probes for a start need only the levels). The component's vertices are appended to
// `out` (reserved for every vertex) and their levels set. Wide levels on several threads: each
// unplaced neighbour claimed by the least position reaching it (owner[], kUnclaimed before and
// after), then each thread's vertices' children gathered, in order, and placed after the level.
// Returns the position in `out` where the last level starts.
std::size_t bfs(const Graph& g, index_t start, std::vector<index_t>& level, std::vector<index_t>& owner,
                std::vector<index_t>& out, bool sorted, int threads) {
  std::size_t b = out.size();
  out.push_back(start);
  level[start] = 0;
  std::vector<std::uint64_t> key;
  std::vector<std::vector<index_t>> part(static_cast<std::size_t>(threads));
  for (index_t depth = 0;; ++depth) {
    const std::size_t e = out.size();
    if (e - b < kParallelLevel || threads < 2) {
      for (std::size_t i = b; i < e; ++i) {
        const index_t v = out[i];
        const std::size_t first = out.size();
        for (offset_t q = g.ptr[v]; q < g.ptr[v + 1]; ++q)
          if (const index_t w = g.adj[static_cast<std::size_t>(q)]; level[w] < 0) {
            level[w] = depth + 1;
            out.push_back(w);
          }
        if (sorted) sort_by_degree(g, out, first, out.size(), key);
      }
    } else {
#pragma omp parallel for schedule(static) num_threads(threads)
      for (std::size_t i = b; i < e; ++i) {
        const index_t v = out[i];
        for (offset_t q = g.ptr[v]; q < g.ptr[v + 1]; ++q) {
          const index_t w = g.adj[static_cast<std::size_t>(q)];
          if (level[w] >= 0) continue;
          std::atomic_ref<index_t> o(owner[static_cast<std::size_t>(w)]);
          index_t cur = o.load(std::memory_order_relaxed);
          while (static_cast<index_t>(i) < cur && !o.compare_exchange_weak(cur, static_cast<index_t>(i))) {}
        }
      }
      for (auto& mine : part) mine.clear();  // a smaller team leaves some untouched
#pragma omp parallel num_threads(threads)
      {
        std::vector<index_t>& mine = part[static_cast<std::size_t>(omp_get_thread_num())];
        std::vector<std::uint64_t> k;
#pragma omp for schedule(static) nowait
        for (std::size_t i = b; i < e; ++i) {
          const index_t v = out[i];
          const std::size_t first = mine.size();
          for (offset_t q = g.ptr[v]; q < g.ptr[v + 1]; ++q) {
            const index_t w = g.adj[static_cast<std::size_t>(q)];
            if (level[w] < 0 && owner[static_cast<std::size_t>(w)] == static_cast<index_t>(i)) mine.push_back(w);
          }
          if (sorted) sort_by_degree(g, mine, first, mine.size(), k);
        }
      }
      // The threads' lists in thread order are the level's order (static chunks ascend).
      std::vector<std::size_t> at(part.size() + 1, e);
      for (std::size_t t = 0; t < part.size(); ++t) at[t + 1] = at[t] + part[t].size();
      out.resize(at.back());
#pragma omp parallel for schedule(static, 1) num_threads(threads)
      for (std::size_t t = 0; t < part.size(); ++t)
        for (std::size_t k = 0; k < part[t].size(); ++k) {
          const index_t w = part[t][k];
          level[w] = depth + 1;
          owner[static_cast<std::size_t>(w)] = kUnclaimed;
          out[at[t] + k] = w;
        }
    }
    if (out.size() == e) return b;
    b = e;
  }
}

}  // namespace

index_t bandwidth(const CsrView& a) {
  index_t b = 0;
#pragma omp parallel for reduction(max : b) schedule(static)
  for (index_t r = 0; r < a.rows; ++r)
    for (offset_t q = a.row_ptr[r]; q < a.row_ptr[r + 1]; ++q) b = std::max(b, std::abs(a.col[q] - r));
  return b;
}

Permutation rcm(const CsrView& a, const ConvertOptions& opt) {
  if (a.rows != a.cols)
    throw Unsupported(
        fmt::format("reorder rcm: a square matrix (this one is {} x {}); a rectangular one is not "
                    "reordered",
                    a.rows, a.cols));
  const index_t n = a.rows;
  const Graph g = symmetric_pattern(a, opt);
  // Components started from their least-degree vertices: the vertices by degree.
  std::vector<index_t> by_degree(static_cast<std::size_t>(n));
  std::iota(by_degree.begin(), by_degree.end(), 0);
  std::stable_sort(by_degree.begin(), by_degree.end(),
                   [&g](index_t x, index_t y) { return g.degree(x) < g.degree(y); });
  // level/owner: the final search's (level >= 0: placed); probe_level/probe_owner: the searches
  // for a start, reset over the component after each.
  const int threads = conversion_threads(opt);
  std::vector<index_t> level(static_cast<std::size_t>(n), -1), owner(static_cast<std::size_t>(n), kUnclaimed);
  std::vector<index_t> probe_level = level, probe_owner = owner, visit, order;
  order.reserve(static_cast<std::size_t>(n));
  visit.reserve(static_cast<std::size_t>(n));
  for (const index_t s : by_degree) {
    if (level[s] >= 0) continue;
    // A pseudo-peripheral start: from s, the least-degree vertex of the last level, while the
    // eccentricity grows (at most kPeripheralTries searches).
    index_t start = s, depth = -1;
    for (int tries = 0; tries < kPeripheralTries; ++tries) {
      visit.clear();
      const std::size_t last = bfs(g, start, probe_level, probe_owner, visit, false, threads);
      const index_t d = probe_level[visit.back()];
      index_t best = visit[last];
      for (std::size_t i = last; i < visit.size(); ++i)
        if (g.degree(visit[i]) < g.degree(best)) best = visit[i];
      for (const index_t v : visit) probe_level[v] = -1, probe_owner[v] = kUnclaimed;
      if (d <= depth) break;
      depth = d;
      start = best;
    }
    bfs(g, start, level, owner, order, true, threads);
  }
  std::reverse(order.begin(), order.end());
  return permutation_from_order(std::move(order));
}

Permutation permutation_from_order(std::vector<index_t> order) {
  Permutation p;
  p.order = std::move(order);
  const auto n = p.order.size();
  p.position.assign(n, -1);
  for (std::size_t i = 0; i < n; ++i) {
    const index_t o = p.order[i];
    if (o < 0 || static_cast<std::size_t>(o) >= n || p.position[static_cast<std::size_t>(o)] != -1)
      throw Error(fmt::format("permutation: entry {} is {}, not a new index of 0..{}", i, o, n - 1));
    p.position[static_cast<std::size_t>(o)] = static_cast<index_t>(i);
  }
  return p;
}

Csr permute(const CsrView& a, const Permutation& p, const ConvertOptions& opt) {
  if (a.rows != a.cols || p.size() != a.rows || p.position.size() != p.order.size())
    throw Error(fmt::format("permute: a {} x {} matrix and a permutation of {} (position {})", a.rows, a.cols, p.size(),
                            p.position.size()));
  if (a.is_complex()) throw Unsupported("permute: a real matrix");
  check_format_memory("permuted CSR", csr_storage_bytes(a), a, opt);
  const index_t n = a.rows;
  Csr b;
  b.rows = b.cols = n;
  b.field = a.field;
  b.symmetry = a.symmetry;
  b.row_ptr.resize(static_cast<std::size_t>(n) + 1);
  b.row_ptr[0] = 0;
  for (index_t i = 0; i < n; ++i) b.row_ptr[i + 1] = b.row_ptr[i] + a.row_length(p.order[static_cast<std::size_t>(i)]);
  b.col.resize(static_cast<std::size_t>(a.nnz()));
  b.val.resize(b.col.size());
  const bool f32 = a.values_in_float();
#pragma omp parallel num_threads(conversion_threads(opt))
  {
    std::vector<std::pair<index_t, double>> e;
#pragma omp for schedule(dynamic, 1024)
    for (index_t i = 0; i < n; ++i) {
      const index_t o = p.order[static_cast<std::size_t>(i)];
      e.clear();
      for (offset_t q = a.row_ptr[o]; q < a.row_ptr[o + 1]; ++q)
        e.emplace_back(p.position[static_cast<std::size_t>(a.col[q])], f32 ? a.val_f32[q] : a.val[q]);
      std::sort(e.begin(), e.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
      offset_t at = b.row_ptr[i];
      for (const auto& [c, v] : e) {
        b.col[static_cast<std::size_t>(at)] = c;
        b.val[static_cast<std::size_t>(at++)] = v;
      }
    }
  }
  return b;
}

namespace {
void check_vectors(const Permutation& p, std::size_t in, std::size_t out, const char* what) {
  if (in != p.order.size() || out != p.order.size())
    throw Error(fmt::format("{}: vectors of {} and {} values for a permutation of {}", what, in, out, p.order.size()));
}
}  // namespace

void to_new(const Permutation& p, std::span<const double> x, std::span<double> out) {
  check_vectors(p, x.size(), out.size(), "to_new");
  const auto n = p.order.size();
#pragma omp parallel for schedule(static) if (n > 65536)
  for (std::size_t i = 0; i < n; ++i) out[i] = x[static_cast<std::size_t>(p.order[i])];
}

void to_old(const Permutation& p, std::span<const double> in, std::span<double> y) {
  check_vectors(p, in.size(), y.size(), "to_old");
  const auto n = p.order.size();
#pragma omp parallel for schedule(static) if (n > 65536)
  for (std::size_t i = 0; i < n; ++i) y[static_cast<std::size_t>(p.order[i])] = in[i];
}

}  // namespace spmv
