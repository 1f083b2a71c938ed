#pragma once
// Structure-alike matrices: synthetic CSR matrices with a requested number of rows and nonzeros,
// a row-length profile matching a mean and standard deviation, and the column structure of a kind
// of application (3D stencil, 2D mesh, web graph, road network, KKT, circuit, ...). They stand in
// for the seed-suite matrices that are not available locally.
//
// Generation is deterministic: the same spec gives the same bytes whatever the thread count
// (every row draws from its own counter-based random stream; reductions run in a fixed order).
#include <spmv/matrix.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace spmv::gen {

enum class Kind {
  Stencil3d,  // 3D grid neighbourhoods (27-point at mean 27): 3D FEM, structural
  Mesh2d,     // 2D grid neighbourhoods with jitter (5/7-point): thermal meshes
  Powerlaw,   // heavy-tailed row lengths, hub columns: web and social graphs
  Road,       // 2-4 entries per row near the diagonal, a few long-range: road networks
  Kkt,        // [[H, J^T], [J, 0]] blocks: optimisation KKT systems
  Circuit,    // a few rows of ~100k entries plus many short ones: circuit simulation
  Random,     // uniformly spread columns, normal row lengths
  Fem,        // banded rows around the diagonal, normal row lengths
};
const char* to_string(Kind k);
Kind parse_kind(std::string_view s);  // throws Unsupported listing the kinds
std::vector<Kind> all_kinds();
// Maps a seed-suite "kind" description ("2D/3D FEM (symmetric)", "web graph (power law)", ...)
// to the generator that imitates it.
Kind kind_from_description(std::string_view text);

struct GenSpec {
  Kind kind = Kind::Random;
  index_t rows = 0;
  index_t cols = 0;  // 0: square
  offset_t nnz = 0;  // 0: round(rows * mean)
  double mean = 0;   // row-length mean (nnz / rows)
  double std = 0;    // row-length population standard deviation
  std::uint64_t seed = 1;
};

// One line of seed_suite.tsv.
struct SeedEntry {
  std::string name;
  index_t rows = 0;
  offset_t nnz = 0;
  double mean = 0, std = 0;
  std::string kind_text;
  Kind kind = Kind::Random;
};

// The seed suite's default location (../shared/suite/seed_suite.tsv beside the source tree;
// $SPMV_SEED_SUITE overrides it).
std::string default_seed_suite_path();
// Reads the table (a path may name the file or a folder holding seed_suite.tsv); with neither a
// path nor $SPMV_SEED_SUITE, a missing default falls back to the copy compiled into the library (so
// --like works on machines that lack the shared folder). Throws on malformed lines and on a named
// file that cannot be opened.
std::vector<SeedEntry> read_seed_suite(const std::string& path = {});
std::optional<SeedEntry> find_seed(const std::vector<SeedEntry>& suite, std::string_view name);

// The spec imitating a seed entry; `scale` < 1 shrinks rows and nnz by that factor while keeping
// the row-length mean and std (a "scaled-down alike").
GenSpec spec_like(const SeedEntry& e, double scale = 1.0, std::uint64_t seed = 1);

// Peak bytes generate() needs (the CSR plus its temporaries).
double estimate_bytes(const GenSpec& spec);
// MemAvailable from /proc/meminfo (0 when unknown).
double available_memory_bytes();
// Throws Unsupported("generating NAME needs X GiB, only Y GiB available") when the estimate times
// `factor` exceeds what is available. `factor` covers what the caller does with it afterwards.
void check_generate_memory(const GenSpec& spec, const std::string& name, double factor = 1.0);

// Generates the matrix. threads = 0: all available. Rows exact, nnz exact, row-length mean exact
// and std approximate (rounding and the kind's bounds, e.g. lengths >= 1).
Csr generate(const GenSpec& spec, int threads = 0);

// A file name that identifies the spec (kind, sizes, seed, generator version), for caches.
std::string cache_name(const GenSpec& spec);
// Loads the matrix from cache_dir/cache_name(spec) when that file reads back, otherwise
// generates it and tries to store it there (cache problems never fail the call). `from_cache`
// says which happened.
Csr generate_cached(const GenSpec& spec, const std::string& cache_dir, bool* from_cache = nullptr, int threads = 0);

// ---- Tool shapes ------------------------------------------------------------------------------
// Fixed families for the tools in bench/tools: exact grid stencils and simple random row laws, where
// generate() above matches a row-length profile instead. Columns sorted and distinct in every row,
// values uniform in [-1, 1), square; deterministic for a seed whatever the thread count (each row
// draws from its own stream). Lengths beyond the column count are clipped to it.

// The stencil on an n^dims grid, dims 2 (points 5 or 9) or 3 (points 7 or 27): row (z*n + y)*n + x
// holds the in-grid neighbours of point (x, y, z), so boundary rows are shorter (a 27-point corner
// row has 8 entries). Throws Error for other dims or points, or n^dims beyond index_t.
Csr grid_stencil(int dims, index_t n, int points, std::uint64_t seed = 1);

// Where a random row's columns lie.
enum class Spread {
  Uniform,       // anywhere in [0, cols)
  HalfDiagonal,  // half a run from the diagonal on (r, r+1, ...), half strided from a random start
};

// Every row `per_row` columns.
Csr random_rows(index_t rows, offset_t per_row, Spread spread = Spread::Uniform, std::uint64_t seed = 1);

// Heavy-tailed row lengths: a share `tail` of the rows (drawn at random) takes
// max(1, floor(min(cap, x_min * u^(-1/alpha))) - shift), u uniform in (0, 1]; the others a length
// uniform in [short_min, short_max].
struct ParetoLaw {
  double x_min = 3, alpha = 1.5;
  offset_t cap = 10000, shift = 0;
  double tail = 1.0;
  offset_t short_min = 0, short_max = 0;
};
Csr pareto_rows(index_t rows, const ParetoLaw& law, Spread spread = Spread::Uniform, std::uint64_t seed = 1);

// Short rows and a few long ones (circuit-like): `long_rows` rows of `long_len` entries spaced
// evenly over the matrix, the others a length uniform in [short_min, short_max]. With dense_cols > 0
// every row also holds columns 0 .. dense_cols-1, counted in its length.
struct FewLongRows {
  offset_t short_min = 2, short_max = 6;
  int long_rows = 8;
  offset_t long_len = 100000;
  int dense_cols = 0;
};
Csr few_long_rows(index_t rows, const FewLongRows& shape, Spread spread = Spread::Uniform, std::uint64_t seed = 1);

}  // namespace spmv::gen
