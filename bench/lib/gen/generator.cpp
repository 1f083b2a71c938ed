// Structure-alike generator: the kinds' names and generate(). Three passes: row lengths
// (row_lengths.cpp), a prefix sum, and the columns and values of each row (shapes.cpp).
// Everything per row depends only on (seed, row), so the result is identical for any thread count.
// The seed suite is in seed_suite.cpp, the memory check and the cache in gen_cache.cpp.
#include <spmv/bench/generate.hpp>
#include <spmv/plan.hpp>

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <omp.h>

#include "gen/shapes.hpp"

namespace spmv::gen {

// ---- kinds ----------------------------------------------------------------------------------

const char* to_string(Kind k) {
  switch (k) {
    case Kind::Stencil3d: return "stencil3d";
    case Kind::Mesh2d: return "mesh2d";
    case Kind::Powerlaw: return "powerlaw";
    case Kind::Road: return "road";
    case Kind::Kkt: return "kkt";
    case Kind::Circuit: return "circuit";
    case Kind::Random: return "random";
    case Kind::Fem: return "fem";
  }
  return "?";
}

std::vector<Kind> all_kinds() {
  return {Kind::Stencil3d, Kind::Mesh2d, Kind::Powerlaw, Kind::Road, Kind::Kkt, Kind::Circuit, Kind::Random, Kind::Fem};
}

Kind parse_kind(std::string_view s) {
  std::string names;
  for (Kind k : all_kinds()) {
    if (s == to_string(k)) return k;
    names += (names.empty() ? "" : ", ") + std::string(to_string(k));
  }
  throw Unsupported(fmt::format("unknown matrix kind '{}' (expected one of: {})", s, names));
}

// ---- generation -----------------------------------------------------------------------------

Csr generate(const GenSpec& spec_in, int threads) {
  GenSpec s = spec_in;
  if (s.rows < 0) throw Error("generate: rows must be >= 0");
  if (s.cols <= 0) s.cols = s.rows;
  if (s.mean <= 0 && s.nnz > 0 && s.rows > 0) s.mean = static_cast<double>(s.nnz) / s.rows;
  offset_t target = s.nnz > 0 ? s.nnz : std::llround(s.mean * s.rows);
  target = std::min<offset_t>(target, static_cast<offset_t>(s.rows) * s.cols);
  if (s.std < 0) throw Error("generate: std must be >= 0");
  const int nt = resolve_threads(threads);
  const int saved = omp_get_max_threads();
  omp_set_num_threads(nt);

  Csr a;
  a.rows = s.rows;
  a.cols = s.cols;
  detail::Lengths L = detail::row_lengths(s, s.cols, target);
  a.row_ptr.assign(static_cast<std::size_t>(s.rows) + 1, 0);
  for (index_t r = 0; r < s.rows; ++r) a.row_ptr[r + 1] = a.row_ptr[r] + L.len[r];
  const offset_t nnz = a.row_ptr.back();
  a.col.resize(nnz);
  a.val.resize(nnz);
  offset_t max_len = 0;
  for (offset_t v : L.len) max_len = std::max(max_len, v);
  L.len.clear();
  L.len.shrink_to_fit();

  detail::fill_rows(s, L.fixed, max_len, a);
  omp_set_num_threads(saved);
  return a;
}

}  // namespace spmv::gen
