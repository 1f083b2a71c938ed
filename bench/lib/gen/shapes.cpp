// Columns and values of each row, by kind: grid neighbourhoods (stencil3d, mesh2d), windows around
// the diagonal (fem, kkt, circuit), hubs (powerlaw, circuit), near and long-range links (road),
// uniform (random). Each row draws from its own stream, so any thread count gives the same matrix.
#include <algorithm>
#include <cmath>

#include "gen/row_rng.hpp"
#include "gen/shapes.hpp"

namespace spmv::gen::detail {

// ---- column pickers -------------------------------------------------------------------------

void pick_unique(Rng& g, index_t lo, index_t hi, offset_t len, std::vector<index_t>& out) {
  const offset_t range = static_cast<offset_t>(hi) - lo;
  if (len <= 0) return;
  if (len * 3 >= range) {
    // Selection sampling (Knuth's algorithm S): one pass over the range, exactly len picked.
    offset_t need = len;
    for (offset_t i = 0; i < range && need > 0; ++i)
      if (static_cast<double>(range - i) * g.uniform() < static_cast<double>(need)) {
        out.push_back(static_cast<index_t>(lo + i));
        --need;
      }
    return;
  }
  const std::size_t base = out.size();
  while (static_cast<offset_t>(out.size() - base) < len) {
    while (static_cast<offset_t>(out.size() - base) < len)
      out.push_back(static_cast<index_t>(lo + static_cast<offset_t>(g.below(range))));
    std::sort(out.begin() + base, out.end());
    out.erase(std::unique(out.begin() + base, out.end()), out.end());
  }
}

void finish_row(Rng& g, index_t cols, offset_t len, std::vector<index_t>& out) {
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  // Too many (a window pick plus the diagonal or a hub): drop random ones, keeping the spread.
  while (static_cast<offset_t>(out.size()) > len) out.erase(out.begin() + g.below(out.size()));
  while (static_cast<offset_t>(out.size()) < len) {
    // Top up in batches (one sort per batch, not per column).
    for (offset_t i = static_cast<offset_t>(out.size()); i < len; ++i)
      out.push_back(static_cast<index_t>(g.below(cols)));
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
  }
}

namespace {

// `len` distinct columns from a window of [0, cols) centred at `centre`, widened as needed.
void pick_window(Rng& g, index_t cols, index_t centre, offset_t len, offset_t half, std::vector<index_t>& out,
                 index_t lo_bound = 0, index_t hi_bound = -1) {
  if (hi_bound < 0) hi_bound = cols;
  const offset_t span = static_cast<offset_t>(hi_bound) - lo_bound;
  len = std::min(len, span);
  half = std::max<offset_t>(half, len);  // window >= 2*len+1 wide, ample room
  offset_t lo = static_cast<offset_t>(centre) - half, hi = static_cast<offset_t>(centre) + half + 1;
  if (lo < lo_bound) {
    hi += lo_bound - lo;
    lo = lo_bound;
  }
  if (hi > hi_bound) {
    lo -= hi - hi_bound;
    hi = hi_bound;
  }
  lo = std::max<offset_t>(lo, lo_bound);
  pick_unique(g, static_cast<index_t>(lo), static_cast<index_t>(hi), len, out);
}

// Grid neighbour offsets sorted by distance (then lexicographically, for determinism).
struct Offset {
  int dx, dy, dz;
};
std::vector<Offset> neighbour_offsets(int dims, int radius) {
  std::vector<Offset> v;
  const int rz = dims == 3 ? radius : 0;
  for (int dz = -rz; dz <= rz; ++dz)
    for (int dy = -radius; dy <= radius; ++dy)
      for (int dx = -radius; dx <= radius; ++dx) v.push_back({dx, dy, dz});
  std::stable_sort(v.begin(), v.end(), [](const Offset& a, const Offset& b) {
    return a.dx * a.dx + a.dy * a.dy + a.dz * a.dz < b.dx * b.dx + b.dy * b.dy + b.dz * b.dz;
  });
  return v;
}

struct Grid {
  int dims = 3;
  std::int64_t nx = 1, ny = 1, nz = 1;
  std::vector<Offset> offsets;
};

Grid make_grid(int dims, index_t n, offset_t max_len) {
  Grid gr;
  gr.dims = dims;
  if (dims == 3) {
    gr.nx = std::max<std::int64_t>(1, std::llround(std::cbrt(static_cast<double>(n))));
    gr.ny = gr.nx;
    gr.nz = (n + gr.nx * gr.ny - 1) / (gr.nx * gr.ny);
  } else {
    gr.nx = std::max<std::int64_t>(1, std::llround(std::sqrt(static_cast<double>(n))));
    gr.ny = (n + gr.nx - 1) / gr.nx;
  }
  // A corner point keeps only (R+1)^d of its (2R+1)^d neighbours: size R for the longest row.
  const offset_t want = std::min<offset_t>(max_len, 4096);
  int radius = 1;
  while (std::pow(radius + 1.0, dims) < static_cast<double>(want) && radius < 64) ++radius;
  gr.offsets = neighbour_offsets(dims, radius);
  return gr;
}

// The in-range grid neighbours of row r in distance order, at most `limit` of them.
void grid_neighbours(const Grid& gr, index_t r, index_t cols, offset_t limit, std::vector<index_t>& out) {
  const std::int64_t x = r % gr.nx, y = (r / gr.nx) % gr.ny, z = r / (gr.nx * gr.ny);
  for (const Offset& o : gr.offsets) {
    if (static_cast<offset_t>(out.size()) >= limit) break;
    const std::int64_t X = x + o.dx, Y = y + o.dy, Z = z + o.dz;
    if (X < 0 || X >= gr.nx || Y < 0 || Y >= gr.ny || Z < 0 || Z >= gr.nz) continue;
    const std::int64_t c = X + gr.nx * (Y + gr.ny * Z);
    if (c < cols) out.push_back(static_cast<index_t>(c));
  }
}

// What fill_rows needs of the matrix to pick a row's columns by its kind.
struct RowShape {
  const GenSpec& s;
  index_t n, cols;
  Grid grid;
  index_t n1;                 // KKT: H is the leading n1 x n1 block, J the trailing rows
  std::vector<index_t> hubs;  // circuit: the long rows' indices double as "power net" columns
};

// Row r's len columns (before finish_row sorts them and fills duplicates), by the matrix's kind;
// cand: scratch.
void kind_columns(const RowShape& shape, index_t r, offset_t len, Rng& g, std::vector<index_t>& row,
                  std::vector<index_t>& cand) {
  const GenSpec& s = shape.s;
  const index_t n = shape.n, cols = shape.cols, n1 = shape.n1;
  const Grid& grid = shape.grid;
  const std::vector<index_t>& hubs = shape.hubs;
  const index_t diag = static_cast<index_t>(std::min<std::int64_t>(r, cols - 1));
  switch (s.kind) {
    case Kind::Stencil3d: grid_neighbours(grid, diag, cols, len, row); break;
    case Kind::Mesh2d: {
      // Jitter: the diagonal plus a random choice among the nearest ~1.5*len neighbours.
      cand.clear();
      grid_neighbours(grid, diag, cols, len + len / 2 + 1, cand);
      row.push_back(cand.front());
      for (std::size_t i = 1; i < cand.size() && static_cast<offset_t>(row.size()) < len; ++i) {
        const std::size_t j = i + g.below(cand.size() - i);
        std::swap(cand[i], cand[j]);
        row.push_back(cand[i]);
      }
      break;
    }
    case Kind::Fem:
      row.push_back(diag);
      pick_window(g, cols, diag, len, 2 * len + 8, row);
      break;
    case Kind::Road:
      for (offset_t j = 0; j < len; ++j) {
        if (g.uniform() < 0.1) {
          row.push_back(static_cast<index_t>(g.below(cols)));
        } else {
          const std::int64_t off = static_cast<std::int64_t>(1 + g.below(64)) * (g.uniform() < 0.5 ? -1 : 1);
          row.push_back(static_cast<index_t>(std::clamp<std::int64_t>(diag + off, 0, cols - 1)));
        }
      }
      break;
    case Kind::Powerlaw:
      if (len * 3 >= cols) {
        pick_unique(g, 0, cols, len, row);
      } else {
        for (offset_t j = 0; j < len; ++j) {
          if (g.uniform() < 0.4) {
            const std::int64_t off = static_cast<std::int64_t>(g.below(513)) - 256;
            row.push_back(static_cast<index_t>(std::clamp<std::int64_t>(diag + off, 0, cols - 1)));
          } else {
            const double u = g.uniform();  // hubs: low indices are far more popular
            row.push_back(static_cast<index_t>(std::min<double>(cols - 1, cols * u * u * u)));
          }
        }
      }
      break;
    case Kind::Kkt:
      if (r < n1) {
        const offset_t in_h = std::max<offset_t>(1, (len * 3 + 3) / 4);
        row.push_back(diag);
        pick_window(g, cols, diag, std::min<offset_t>(in_h, n1), 2 * in_h + 8, row, 0, std::min(n1, cols));
        if (cols > n1) {
          const index_t c2 = static_cast<index_t>(n1 + static_cast<std::int64_t>(r) * (cols - n1) / n1);
          pick_window(g, cols, c2, std::min<offset_t>(len - in_h, cols - n1), len + 8, row, n1, cols);
        }
      } else {
        const index_t c1 = static_cast<index_t>(static_cast<std::int64_t>(r - n1) * n1 / std::max(1, n - n1));
        pick_window(g, cols, c1, std::min<offset_t>(len, n1), 2 * len + 8, row, 0, std::min(n1, cols));
      }
      break;
    case Kind::Circuit:
      if (len * 3 >= cols || len > 1000) {
        pick_unique(g, 0, cols, len, row);
      } else {
        row.push_back(diag);
        if (!hubs.empty() && g.uniform() < 0.5) row.push_back(hubs[g.below(hubs.size())]);
        pick_window(g, cols, diag, len, len + 4, row);
      }
      break;
    case Kind::Random: pick_unique(g, 0, cols, len, row); break;
  }
}

}  // namespace

void fill_rows(const GenSpec& s, const std::vector<char>& long_rows, offset_t max_len, Csr& a) {
  const index_t n = s.rows, cols = s.cols;
  RowShape shape{s, n, cols, {}, std::max<index_t>(1, static_cast<index_t>(0.6 * n)), {}};
  if (s.kind == Kind::Stencil3d) shape.grid = make_grid(3, cols, max_len);
  if (s.kind == Kind::Mesh2d) shape.grid = make_grid(2, cols, max_len * 2);
  for (index_t r = 0; r < n; ++r)
    if (!long_rows.empty() && long_rows[r]) shape.hubs.push_back(r);

#pragma omp parallel
  {
    std::vector<index_t> row;
    std::vector<index_t> cand;
#pragma omp for schedule(dynamic, 1024)
    for (index_t r = 0; r < n; ++r) {
      const offset_t b = a.row_ptr[r], len = a.row_ptr[r + 1] - b;
      if (len == 0) continue;
      Rng g = row_rng(s.seed, r, 3);
      row.clear();
      kind_columns(shape, r, len, g, row, cand);
      finish_row(g, cols, len, row);
      for (offset_t j = 0; j < len; ++j) {
        a.col[b + j] = row[j];
        a.val[b + j] = 2.0 * g.uniform() - 1.0;
      }
    }
  }
}

}  // namespace spmv::gen::detail
