// The tools' shapes (generate.hpp): grid stencils, uniform, Pareto and few-long rows, all through
// one parallel row builder. A row's length, columns and values draw from their own streams of
// (seed, row), so the matrix is the same for any thread count.
#include <spmv/bench/generate.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fmt/format.h>
#include <limits>

#include "gen/row_rng.hpp"
#include "gen/shapes.hpp"

namespace spmv::gen {

namespace {

using detail::Rng;
using detail::row_rng;

// Streams of row_rng (generate() uses 1..3).
constexpr std::uint64_t kLengthStream = 11, kColumnStream = 12, kValueStream = 13;

// Builds a rows x cols CSR from `row(r, out)`, which appends row r's sorted, distinct columns. It
// runs twice per row (count, then fill), so it must depend on r alone.
template <class RowFn>
Csr build_rows(index_t rows, index_t cols, std::uint64_t seed, RowFn row) {
  if (rows < 0 || cols < 0) throw Error("tool shapes: negative size");
  Csr a;
  a.rows = rows;
  a.cols = cols;
  a.row_ptr.assign(static_cast<std::size_t>(rows) + 1, 0);
  auto each_row = [&](auto&& use) {
#pragma omp parallel
    {
      std::vector<index_t> c;
#pragma omp for schedule(dynamic, 1024)
      for (index_t r = 0; r < rows; ++r) {
        c.clear();
        row(r, c);
        use(r, c);
      }
    }
  };
  each_row([&](index_t r, const std::vector<index_t>& c) { a.row_ptr[r + 1] = static_cast<offset_t>(c.size()); });
  for (index_t r = 0; r < rows; ++r) a.row_ptr[r + 1] += a.row_ptr[r];
  a.col.resize(static_cast<std::size_t>(a.nnz()));
  a.val.resize(static_cast<std::size_t>(a.nnz()));
  each_row([&](index_t r, const std::vector<index_t>& c) {
    Rng g = row_rng(seed, r, kValueStream);
    const offset_t b = a.row_ptr[r];
    for (std::size_t j = 0; j < c.size(); ++j) {
      a.col[b + j] = c[j];
      a.val[b + j] = 2.0 * g.uniform() - 1.0;
    }
  });
  return a;
}

// Row r's columns: the dense columns 0 .. dense_cols-1, then the spread's picks, then topped up
// with uniform ones to exactly min(len, cols) distinct.
void random_columns(std::uint64_t seed, index_t r, index_t cols, offset_t len, Spread spread, int dense_cols,
                    std::vector<index_t>& out) {
  len = std::min<offset_t>(len, cols);
  if (len <= 0) return;
  Rng g = row_rng(seed, r, kColumnStream);
  const offset_t dense = std::min<offset_t>(std::max(dense_cols, 0), len);
  for (offset_t c = 0; c < dense; ++c) out.push_back(static_cast<index_t>(c));
  const offset_t rest = len - dense;
  if (spread == Spread::Uniform) {
    detail::pick_unique(g, 0, cols, rest, out);
  } else {
    const offset_t near = rest / 2, far = rest - near;
    for (offset_t k = 0; k < near; ++k) out.push_back(static_cast<index_t>((r + k) % cols));
    const offset_t stride = std::max<offset_t>(1, cols / std::max<offset_t>(far, 1));
    const offset_t start = static_cast<offset_t>(g.below(static_cast<std::uint64_t>(cols)));
    for (offset_t k = 0; k < far; ++k) out.push_back(static_cast<index_t>((start + k * stride) % cols));
  }
  detail::finish_row(g, cols, len, out);
}

// Uniform in [lo, hi]; check_range first (nothing may throw inside the parallel builder).
offset_t uniform_length(Rng& g, offset_t lo, offset_t hi) {
  return lo + static_cast<offset_t>(g.below(static_cast<std::uint64_t>(hi - lo + 1)));
}

void check_range(offset_t lo, offset_t hi) {
  if (lo < 0 || hi < lo) throw Error(fmt::format("tool shapes: bad short-row range [{}, {}]", lo, hi));
}

}  // namespace

Csr grid_stencil(int dims, index_t n, int points, std::uint64_t seed) {
  const bool ok = (dims == 2 && (points == 5 || points == 9)) || (dims == 3 && (points == 7 || points == 27));
  if (!ok) throw Error(fmt::format("grid_stencil: no {}-point stencil in {}D (2D: 5, 9; 3D: 7, 27)", points, dims));
  const double rows = std::pow(static_cast<double>(n), dims);
  if (n < 0 || rows > std::numeric_limits<index_t>::max())
    throw Error(fmt::format("grid_stencil: {}^{} rows do not fit index_t", n, dims));
  const bool full = points == 9 || points == 27;  // every neighbour, else only the axis ones
  const int dz_max = dims == 3 ? 1 : 0;
  const std::int64_t m = n;
  return build_rows(static_cast<index_t>(rows), static_cast<index_t>(rows), seed,
                    [=](index_t r, std::vector<index_t>& out) {
                      const std::int64_t x = r % m, y = (r / m) % m, z = r / (m * m);
                      for (int dz = -dz_max; dz <= dz_max; ++dz)
                        for (int dy = -1; dy <= 1; ++dy)
                          for (int dx = -1; dx <= 1; ++dx) {
                            if (!full && std::abs(dx) + std::abs(dy) + std::abs(dz) > 1) continue;
                            const std::int64_t X = x + dx, Y = y + dy, Z = z + dz;
                            if (X < 0 || Y < 0 || Z < 0 || X >= m || Y >= m || Z >= m) continue;
                            out.push_back(static_cast<index_t>((Z * m + Y) * m + X));
                          }
                    });
}

Csr random_rows(index_t rows, offset_t per_row, Spread spread, std::uint64_t seed) {
  return build_rows(rows, rows, seed, [=](index_t r, std::vector<index_t>& out) {
    random_columns(seed, r, rows, per_row, spread, 0, out);
  });
}

Csr pareto_rows(index_t rows, const ParetoLaw& law, Spread spread, std::uint64_t seed) {
  if (law.x_min <= 0 || law.alpha <= 0) throw Error("pareto_rows: x_min and alpha must be > 0");
  if (law.tail < 1.0) check_range(law.short_min, law.short_max);
  const double cap = static_cast<double>(law.cap);
  return build_rows(rows, rows, seed, [=](index_t r, std::vector<index_t>& out) {
    Rng g = row_rng(seed, r, kLengthStream);
    offset_t len;
    if (law.tail < 1.0 && g.uniform() >= law.tail) {
      len = uniform_length(g, law.short_min, law.short_max);
    } else {
      const double u = 1.0 - g.uniform();  // (0, 1]
      const double x = std::min(cap, law.x_min * std::pow(u, -1.0 / law.alpha));
      len = std::max<offset_t>(1, static_cast<offset_t>(x) - law.shift);
    }
    random_columns(seed, r, rows, len, spread, 0, out);
  });
}

Csr few_long_rows(index_t rows, const FewLongRows& shape, Spread spread, std::uint64_t seed) {
  check_range(shape.short_min, shape.short_max);
  // Long row i sits in the middle of the i-th of long_rows equal bands: distinct, sorted.
  std::vector<index_t> long_at;
  const std::int64_t count = std::min<std::int64_t>(std::max(shape.long_rows, 0), rows);
  for (std::int64_t i = 0; i < count; ++i) long_at.push_back(static_cast<index_t>((2 * i + 1) * rows / (2 * count)));
  return build_rows(rows, rows, seed, [=, &long_at](index_t r, std::vector<index_t>& out) {
    Rng g = row_rng(seed, r, kLengthStream);
    const bool is_long = std::binary_search(long_at.begin(), long_at.end(), r);
    const offset_t len = is_long ? shape.long_len : uniform_length(g, shape.short_min, shape.short_max);
    random_columns(seed, r, rows, len, spread, shape.dense_cols, out);
  });
}

}  // namespace spmv::gen
