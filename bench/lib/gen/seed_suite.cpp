// The seed suite: the table of the course's matrices (seed_suite.tsv, or the copy compiled in
// here), the generator kind that imitates each, and the spec of a scaled-down alike.
#include <spmv/bench/generate.hpp>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <sstream>

#include "shared_path.hpp"

namespace spmv::gen {

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
  if (has("fluid") || has("electromagnetic") || has("astrophysics") || has("chemical") || has("economic"))
    return Kind::Fem;
  return Kind::Random;
}

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

std::string default_seed_suite_path() { return shared_path("SPMV_SEED_SUITE", "suite/seed_suite.tsv", false); }

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

}  // namespace spmv::gen
