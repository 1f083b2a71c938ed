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
  index_t cols = 0;        // 0: square
  offset_t nnz = 0;        // 0: round(rows * mean)
  double mean = 0;         // row-length mean (nnz / rows)
  double std = 0;          // row-length population standard deviation
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
Csr generate_cached(const GenSpec& spec, const std::string& cache_dir, bool* from_cache = nullptr,
                    int threads = 0);

}  // namespace spmv::gen
