// Structure-alike generator. Three passes: row lengths (per-row random streams, then a global
// correction to the requested mean/std with fixed-order reductions), a prefix sum, and the
// columns/values of each row (again per-row streams). Everything per row depends only on
// (seed, row), so the result is identical for any thread count.
#include <spmv/generate.hpp>
#include <spmv/io.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <numeric>
#include <omp.h>
#include <sstream>

namespace spmv::gen {

namespace {

constexpr int kGeneratorVersion = 2;  // bump when the output for a spec changes (cache key)

// splitmix64: a tiny counter-based generator; seeding it with a hash of (seed, row, stream)
// gives every row an independent, reproducible stream.
struct Rng {
  std::uint64_t s;
  std::uint64_t next() {
    std::uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }  // [0, 1)
  double normal() {  // Box-Muller
    const double u1 = std::max(uniform(), 1e-300), u2 = uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }
  std::uint64_t below(std::uint64_t n) { return n ? next() % n : 0; }
};

Rng row_rng(std::uint64_t seed, std::int64_t row, std::uint64_t stream) {
  Rng r{seed * 0xD1B54A32D192ED03ull ^ (static_cast<std::uint64_t>(row) + 1) * 0x9E3779B97F4A7C15ull ^
        stream * 0xA24BAED4963EE407ull};
  r.next();
  return r;
}

constexpr std::int64_t kChunk = 1 << 16;  // rows per partial sum: fixes the reduction order

// Sum of f(r) over rows in a fixed order (parallel partials per fixed chunk, then sequential).
template <class F>
double ordered_sum(index_t rows, F f) {
  const std::int64_t chunks = (rows + kChunk - 1) / kChunk;
  std::vector<double> part(chunks, 0.0);
#pragma omp parallel for schedule(dynamic, 1) if (chunks > 1)
  for (std::int64_t c = 0; c < chunks; ++c) {
    double s = 0;
    const index_t e = static_cast<index_t>(std::min<std::int64_t>(rows, (c + 1) * kChunk));
    for (index_t r = static_cast<index_t>(c * kChunk); r < e; ++r) s += f(r);
    part[c] = s;
  }
  double s = 0;
  for (double p : part) s += p;
  return s;
}

// ---- column pickers -------------------------------------------------------------------------

// Appends `len` distinct columns from [lo, hi) (hi - lo >= len) to out, not sorted.
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

// Sorts and removes duplicates, then tops up with uniform columns until `len` distinct.
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

// `len` distinct columns from a window of [0, cols) centred at `centre`, widened as needed.
void pick_window(Rng& g, index_t cols, index_t centre, offset_t len, offset_t half,
                 std::vector<index_t>& out, index_t lo_bound = 0, index_t hi_bound = -1) {
  if (hi_bound < 0) hi_bound = cols;
  const offset_t span = static_cast<offset_t>(hi_bound) - lo_bound;
  len = std::min(len, span);
  half = std::max<offset_t>(half, len);  // window >= 2*len+1 wide, ample room
  offset_t lo = static_cast<offset_t>(centre) - half, hi = static_cast<offset_t>(centre) + half + 1;
  if (lo < lo_bound) { hi += lo_bound - lo; lo = lo_bound; }
  if (hi > hi_bound) { lo -= hi - hi_bound; hi = hi_bound; }
  lo = std::max<offset_t>(lo, lo_bound);
  pick_unique(g, static_cast<index_t>(lo), static_cast<index_t>(hi), len, out);
}

// Grid neighbour offsets sorted by distance (then lexicographically, for determinism).
struct Offset { int dx, dy, dz; };
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

// ---- row lengths ----------------------------------------------------------------------------

struct Lengths {
  std::vector<offset_t> len;
  std::vector<char> fixed;  // rows the nnz adjustment must not touch (circuit's long rows)
};

// Distributes `diff` (+/- 1 per visit) over rows in a coprime stride order.
void adjust_total(std::vector<offset_t>& len, const std::vector<char>& fixed, offset_t diff,
                  offset_t min_len, offset_t max_len) {
  const std::int64_t n = static_cast<std::int64_t>(len.size());
  if (n == 0 || diff == 0) return;
  std::int64_t stride = 7919;
  while (std::gcd(stride, n) != 1) stride += 2;
  std::int64_t pos = 0, idle = 0;
  while (diff != 0 && idle < n) {
    pos = (pos + stride) % n;
    if (!fixed.empty() && fixed[pos]) { ++idle; continue; }
    if (diff > 0 && len[pos] < max_len) { ++len[pos]; --diff; idle = 0; }
    else if (diff < 0 && len[pos] > min_len) { --len[pos]; ++diff; idle = 0; }
    else ++idle;
  }
}

Lengths row_lengths(const GenSpec& s, index_t cols, offset_t target) {
  const index_t n = s.rows;
  Lengths L;
  L.len.assign(n, 0);
  if (n == 0) return L;
  const double mean = static_cast<double>(target) / n;
  const offset_t max_len = cols;
  const offset_t min_len = std::min<offset_t>(1, max_len);
  std::vector<double> d(n);

  // Circuit: h long rows carry the variance, the short rows the rest of the nonzeros.
  offset_t h = 0, long_len = 0;
  double short_mean = mean;
  const double var_total = static_cast<double>(n) * s.std * s.std;
  const double l0 = std::min(0.9 * cols, 100000.0);
  // Only a variance worth at least a quarter of one long row calls for long rows.
  if (s.kind == Kind::Circuit && var_total >= 0.25 * l0 * l0) {
    h = std::clamp<offset_t>(std::llround(var_total / (l0 * l0)), 1, std::max<offset_t>(1, n / 100));
    long_len = std::min<offset_t>(cols, std::llround(std::sqrt(var_total / h)));
    // Keep at least one entry per short row.
    long_len = std::min<offset_t>(long_len, std::max<offset_t>(1, (target - (n - h)) / h));
    short_mean = static_cast<double>(target - h * long_len) / std::max<offset_t>(1, n - h);
    L.fixed.assign(n, 0);
    for (offset_t j = 0; j < h; ++j) L.fixed[static_cast<std::size_t>((2 * j + 1) * n / (2 * h))] = 1;
  }

  const bool heavy = s.kind == Kind::Powerlaw;
  // Lognormal 1 + D with E[D] = mean - 1 and sd(D) = std: lengths >= 1 with a long tail.
  const double dm = std::max(mean - 1.0, 1e-3);
  const double sig2 = std::log1p((s.std * s.std) / (dm * dm));
  const double mu = std::log(dm) - 0.5 * sig2, sig = std::sqrt(sig2);
  const double short_std = s.kind == Kind::Circuit ? 0.5 * short_mean : s.std;
#pragma omp parallel for schedule(static)
  for (index_t r = 0; r < n; ++r) {
    Rng g = row_rng(s.seed, r, 1);
    d[r] = heavy ? mu + sig * g.normal() : g.normal();  // heavy: the log of the draw
  }
  // Correct to the exact mean (and, for normal draws, the exact std) over the whole matrix.
  const double* dp = d.data();
  const std::vector<char>& fx = L.fixed;
  auto is_free = [&](index_t r) { return fx.empty() || !fx[r]; };
  const double cnt = ordered_sum(n, [&](index_t r) { return is_free(r) ? 1.0 : 0.0; });
  const double sm = ordered_sum(n, [&](index_t r) { return is_free(r) ? dp[r] : 0.0; }) / std::max(cnt, 1.0);
  const double sv = ordered_sum(n, [&](index_t r) { return is_free(r) ? (dp[r] - sm) * (dp[r] - sm) : 0.0; }) /
                    std::max(cnt, 1.0);
  const double sd = std::sqrt(sv);
  double target_std = s.kind == Kind::Circuit && h > 0 ? short_std : s.std;
  // Stochastic rounding adds about 1/12 to the variance; take it out beforehand.
  if (target_std * target_std > 1.0 / 12) target_std = std::sqrt(target_std * target_std - 1.0 / 12);

  // Heavy tails: a sample of a lognormal has a smaller spread than its law (the tail is barely
  // sampled), so raise the draws to the power p whose sample CV equals the target CV.
  double pw = 1.0, pm = sm;
  if (heavy) {
    const double want_cv = s.std / dm;
    auto cv_of = [&](double p, double* mean_out) {
      const double m1 = ordered_sum(n, [&](index_t r) { return std::exp(p * dp[r]); }) / n;
      const double m2 = ordered_sum(n, [&](index_t r) { return std::exp(2 * p * dp[r]); }) / n;
      *mean_out = m1;
      return std::sqrt(std::max(0.0, m2 - m1 * m1)) / std::max(m1, 1e-300);
    };
    double lo = 0.25, hi = 4.0, m1 = 0;
    for (int it = 0; it < (s.std > 0 ? 20 : 0); ++it) {
      const double mid = 0.5 * (lo + hi);
      (cv_of(mid, &m1) < want_cv ? lo : hi) = mid;
    }
    pw = s.std > 0 ? 0.5 * (lo + hi) : 1.0;
    cv_of(pw, &pm);
  }
#pragma omp parallel for schedule(static)
  for (index_t r = 0; r < n; ++r) {
    if (!is_free(r)) { L.len[r] = long_len; continue; }
    double v;
    if (heavy) v = 1.0 + std::exp(pw * dp[r]) * (short_mean - 1.0) / std::max(pm, 1e-300);
    else v = short_mean + (sd > 0 ? (dp[r] - sm) * (target_std / sd) : 0.0);
    Rng g = row_rng(s.seed, r, 2);
    const double rounded = std::floor(v + g.uniform());  // stochastic rounding keeps the mean
    L.len[r] = std::clamp<offset_t>(static_cast<offset_t>(std::max(rounded, -1.0)), min_len, max_len);
  }
  offset_t sum = 0;
  for (offset_t v : L.len) sum += v;
  adjust_total(L.len, L.fixed, target - sum, min_len, max_len);
  return L;
}

}  // namespace

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
  return {Kind::Stencil3d, Kind::Mesh2d, Kind::Powerlaw, Kind::Road,
          Kind::Kkt,       Kind::Circuit, Kind::Random,  Kind::Fem};
}

Kind parse_kind(std::string_view s) {
  std::string names;
  for (Kind k : all_kinds()) {
    if (s == to_string(k)) return k;
    names += (names.empty() ? "" : ", ") + std::string(to_string(k));
  }
  throw Unsupported(fmt::format("unknown matrix kind '{}' (expected one of: {})", s, names));
}

Kind kind_from_description(std::string_view text) {
  std::string t(text);
  std::transform(t.begin(), t.end(), t.begin(), [](unsigned char c) { return std::tolower(c); });
  auto has = [&](const char* w) { return t.find(w) != std::string::npos; };
  if (has("circuit")) return Kind::Circuit;
  if (has("kkt") || has("optimization")) return Kind::Kkt;
  if (has("road")) return Kind::Road;
  if (has("web") || has("power law") || has("co-purchase") || has("social")) return Kind::Powerlaw;
  if (has("thermal")) return Kind::Mesh2d;
  if (has("fem") || has("structural")) return Kind::Stencil3d;
  if (has("fluid") || has("electromagnetic") || has("astrophysics") || has("chemical") ||
      has("economic"))
    return Kind::Fem;
  return Kind::Random;
}

// ---- seed suite -----------------------------------------------------------------------------

namespace {
// Compiled-in copy of ../shared/suite/seed_suite.tsv (the 30 matrices of the course reports).
constexpr const char* kBuiltinSeedSuite =
    "name\trows\tnnz\tnnz_per_row_mean\tnnz_per_row_std\tkind\n"
    "cage4\t9\t49\t5.44444\t0.496904\tdirected weighted graph (DNA electrophoresis)\n"
    "mhda416\t416\t8562\t20.5817\t6.322128\telectromagnetics\n"
    "mcfe\t765\t24382\t31.8719\t16.91127\tastrophysics\n"
    "olm1000\t1000\t3996\t3.996\t1.997994\tcomputational fluid dynamics\n"
    "adder_dcop_32\t1813\t11246\t6.20298\t30.77715\tcircuit simulation (a few very long rows)\n"
    "west2021\t2021\t7353\t3.6383\t2.389425\tchemical process simulation\n"
    "cavity10\t2597\t76367\t29.4059\t14.94717\tcomputational fluid dynamics\n"
    "rdist2\t3198\t56934\t17.803\t13.75616\tchemical process simulation\n"
    "cant\t62451\t4007383\t64.1684\t14.05624\t2D/3D FEM (symmetric)\n"
    "olafu\t16146\t1015156\t62.8735\t12.40939\tstructural (symmetric)\n"
    "Cube_Coup_dt0\t2164760\t127206144\t58.7622\t4.471622\tstructural (symmetric)\n"
    "ML_Laplace\t377002\t27689972\t73.4478\t3.524812\tstructural\n"
    "bcsstk17\t10974\t428650\t39.0605\t15.41357\tstructural (symmetric)\n"
    "mac_econ_fwd500\t206500\t1273389\t6.16653\t4.435865\teconomic\n"
    "mhd4800a\t4800\t102252\t21.3025\t5.799509\telectromagnetics\n"
    "cop20k_A\t121192\t2624331\t21.6543\t13.79268\t2D/3D FEM (symmetric)\n"
    "raefsky2\t3242\t294276\t90.7699\t21.19257\tcomputational fluid dynamics\n"
    "af23560\t23560\t484256\t20.5542\t1.270752\tcomputational fluid dynamics\n"
    "lung2\t109460\t492564\t4.49995\t1.939095\tcomputational fluid dynamics\n"
    "PR02R\t161070\t8185136\t50.8173\t19.69827\tcomputational fluid dynamics\n"
    "FEM_3D_thermal1\t17880\t430740\t24.0906\t4.308782\tthermal\n"
    "thermal1\t82654\t574458\t6.95015\t0.876772\tthermal (symmetric)\n"
    "thermal2\t1228045\t8580313\t6.98697\t0.811404\tthermal (symmetric)\n"
    "thermomech_TK\t102158\t711558\t6.96527\t0.71524\tthermal (symmetric)\n"
    "nlpkkt80\t1062400\t28704672\t27.0187\t3.735117\toptimization KKT (symmetric)\n"
    "webbase-1M\t1000005\t3105536\t3.10552\t25.34522\tweb graph (power law)\n"
    "dc1\t116835\t766396\t6.55964\t361.4983\tcircuit simulation (rows of ~100k entries)\n"
    "amazon0302\t262111\t1234877\t4.71127\t0.951538\tco-purchase graph (pattern)\n"
    "af_1_k101\t503625\t17550675\t34.8487\t1.256579\tstructural (symmetric)\n"
    "roadNet-PA\t1090920\t3083796\t2.82678\t1.025783\troad network graph (pattern, symmetric)\n";

std::vector<SeedEntry> parse_seed_suite(std::istream& in, const std::string& name) {
  std::vector<SeedEntry> v;
  std::string line;
  std::int64_t lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    if (line.empty() || line[0] == '#' || line.rfind("name\t", 0) == 0) continue;
    std::vector<std::string> f;
    std::stringstream ss(line);
    for (std::string x; std::getline(ss, x, '\t');) f.push_back(x);
    if (f.size() < 6) throw ParseError(name, lineno, "expected 6 tab-separated fields");
    SeedEntry e;
    try {
      e.name = f[0];
      e.rows = static_cast<index_t>(std::stoll(f[1]));
      e.nnz = std::stoll(f[2]);
      e.mean = std::stod(f[3]);
      e.std = std::stod(f[4]);
    } catch (const std::exception&) {
      throw ParseError(name, lineno, "rows, nnz, mean and std must be numbers");
    }
    e.kind_text = f[5];
    e.kind = kind_from_description(e.kind_text);
    v.push_back(std::move(e));
  }
  return v;
}
}  // namespace

std::string default_seed_suite_path() {
  if (const char* e = std::getenv("SPMV_SEED_SUITE"); e && *e) return e;
  // ../shared/suite beside the checkout; a git worktree sits one level deeper.
  std::vector<std::string> cand;
#ifdef SPMV_SOURCE_DIR
  cand.push_back(std::string(SPMV_SOURCE_DIR) + "/../shared/suite/seed_suite.tsv");
  cand.push_back(std::string(SPMV_SOURCE_DIR) + "/../../shared/suite/seed_suite.tsv");
#endif
  cand.push_back("../shared/suite/seed_suite.tsv");
  std::error_code ec;
  for (const auto& c : cand)
    if (std::filesystem::exists(c, ec)) return c;
  return cand.front();
}

std::vector<SeedEntry> read_seed_suite(const std::string& path) {
  const char* env = std::getenv("SPMV_SEED_SUITE");
  const bool named = !path.empty() || (env && *env);  // a named file must open: no silent fallback
  std::string p = path.empty() ? default_seed_suite_path() : path;
  std::error_code ec;
  if (std::filesystem::is_directory(p, ec)) p += "/seed_suite.tsv";  // a folder holding it
  std::ifstream f(p);
  if (f) return parse_seed_suite(f, p);
  if (named) throw Error(fmt::format("{}: cannot open the seed suite{}", p, path.empty() ? " (SPMV_SEED_SUITE)" : ""));
  std::istringstream builtin(kBuiltinSeedSuite);
  return parse_seed_suite(builtin, "<built-in seed suite>");
}

std::optional<SeedEntry> find_seed(const std::vector<SeedEntry>& suite, std::string_view name) {
  for (const auto& e : suite)
    if (e.name == name) return e;
  return std::nullopt;
}

GenSpec spec_like(const SeedEntry& e, double scale, std::uint64_t seed) {
  GenSpec s;
  s.kind = e.kind;
  scale = std::clamp(scale, 0.0, 1.0);
  s.rows = std::max<index_t>(1, static_cast<index_t>(std::llround(e.rows * scale)));
  s.cols = s.rows;
  s.nnz = scale >= 1.0 ? e.nnz : std::llround(e.mean * s.rows);
  s.mean = static_cast<double>(s.nnz) / s.rows;
  s.std = e.std;
  s.seed = seed;
  return s;
}

// ---- memory ---------------------------------------------------------------------------------

double estimate_bytes(const GenSpec& s) {
  const double n = s.rows;
  const double nnz = s.nnz ? static_cast<double>(s.nnz) : s.rows * s.mean;
  // CSR (8 B row pointer, 4 B column, 8 B value) + lengths (8 B), draws (8 B), flags.
  return 8.0 * (n + 1) + 12.0 * nnz + 17.0 * n;
}

double available_memory_bytes() {
  std::ifstream f("/proc/meminfo");
  std::string key;
  double kb = 0;
  std::string unit;
  while (f >> key >> kb >> unit)
    if (key == "MemAvailable:") return kb * 1024.0;
  return 0;
}

void check_generate_memory(const GenSpec& spec, const std::string& name, double factor) {
  const double need = estimate_bytes(spec) * factor;
  const double avail = available_memory_bytes();
  if (avail > 0 && need > 0.85 * avail)
    throw Unsupported(fmt::format("generating {} ({} rows, {} nonzeros) needs {:.1f} GiB, only "
                                  "{:.1f} GiB available",
                                  name, spec.rows, spec.nnz, need / (1 << 30), avail / (1 << 30)));
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
  const int nt = threads > 0 ? threads : omp_get_max_threads();
  const int saved = omp_get_max_threads();
  omp_set_num_threads(nt);

  Csr a;
  a.rows = s.rows;
  a.cols = s.cols;
  Lengths L = row_lengths(s, s.cols, target);
  a.row_ptr.assign(static_cast<std::size_t>(s.rows) + 1, 0);
  for (index_t r = 0; r < s.rows; ++r) a.row_ptr[r + 1] = a.row_ptr[r] + L.len[r];
  const offset_t nnz = a.row_ptr.back();
  a.col.resize(nnz);
  a.val.resize(nnz);
  offset_t max_len = 0;
  for (offset_t v : L.len) max_len = std::max(max_len, v);
  L.len.clear();
  L.len.shrink_to_fit();

  const index_t n = s.rows, cols = s.cols;
  Grid grid;
  if (s.kind == Kind::Stencil3d) grid = make_grid(3, cols, max_len);
  if (s.kind == Kind::Mesh2d) grid = make_grid(2, cols, max_len * 2);
  // KKT: H is the leading n1 x n1 block, J the trailing rows.
  const index_t n1 = std::max<index_t>(1, static_cast<index_t>(0.6 * n));
  std::vector<index_t> hubs;  // circuit: the long rows' indices double as "power net" columns
  for (index_t r = 0; r < n; ++r)
    if (!L.fixed.empty() && L.fixed[r]) hubs.push_back(r);

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
      const index_t diag = static_cast<index_t>(std::min<std::int64_t>(r, cols - 1));
      switch (s.kind) {
        case Kind::Stencil3d:
          grid_neighbours(grid, diag, cols, len, row);
          break;
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
            pick_window(g, cols, diag, std::min<offset_t>(in_h, n1), 2 * in_h + 8, row, 0,
                        std::min(n1, cols));
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
        case Kind::Random:
          pick_unique(g, 0, cols, len, row);
          break;
      }
      finish_row(g, cols, len, row);
      for (offset_t j = 0; j < len; ++j) {
        a.col[b + j] = row[j];
        a.val[b + j] = 2.0 * g.uniform() - 1.0;
      }
    }
  }
  omp_set_num_threads(saved);
  return a;
}

std::string cache_name(const GenSpec& s) {
  const double mean = s.mean > 0 ? s.mean : (s.rows ? static_cast<double>(s.nnz) / s.rows : 0);
  return fmt::format("{}-r{}-c{}-n{}-m{:.6g}-s{:.6g}-seed{}-v{}.spmvbin", to_string(s.kind), s.rows,
                     s.cols > 0 ? s.cols : s.rows, s.nnz, mean, s.std, s.seed, kGeneratorVersion);
}

Csr generate_cached(const GenSpec& spec, const std::string& cache_dir, bool* from_cache, int threads) {
  namespace fs = std::filesystem;
  if (from_cache) *from_cache = false;
  const fs::path p = fs::path(cache_dir) / cache_name(spec);
  if (!cache_dir.empty()) {
    std::error_code ec;
    if (fs::exists(p, ec)) {
      try {
        Csr a = io::read_binary(p.string());
        if (from_cache) *from_cache = true;
        return a;
      } catch (const std::exception&) {
        // An unreadable or stale cache file is simply regenerated below.
      }
    }
  }
  Csr a = generate(spec, threads);
  if (!cache_dir.empty()) {
    try {
      std::error_code ec;
      fs::create_directories(cache_dir, ec);
      const fs::path tmp = p.string() + ".tmp";
      io::write_binary(tmp.string(), a, true);
      fs::rename(tmp, p, ec);  // atomic: a concurrent reader never sees half a file
    } catch (const std::exception&) {
      // Caching is an optimisation; generation already succeeded.
    }
  }
  return a;
}

}  // namespace spmv::gen
