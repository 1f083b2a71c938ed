// The default suite (real matrices + structure-alikes of the missing seed matrices) and the
// default sweep, both sized to the machine.
#include <spmv/bench/bench.hpp>
#include <spmv/formats/limits.hpp>
#include <spmv/io.hpp>
#include <spmv/params.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <set>
#include <sstream>

#include "shared_path.hpp"

namespace spmv::bench {

namespace fs = std::filesystem;

namespace {

bool is_matrix_file(const fs::path& p) {
  const std::string n = p.filename().string();
  return n.ends_with(".mtx") || n.ends_with(".mtx.gz") || n.ends_with(".spmvbin");
}

std::string matrix_name(const fs::path& p) {
  std::string n = p.filename().string();
  for (const char* ext : {".gz", ".mtx", ".spmvbin"})
    if (n.ends_with(ext)) n.resize(n.size() - std::strlen(ext));
  return n;
}

}  // namespace

std::string default_matrices_dir() { return shared_path("SPMV_SHARED_MATRICES", "matrices", true); }

std::string default_cache_dir() {
  if (const char* e = std::getenv("SPMV_CACHE_DIR"); e && *e) return e;
  if (const char* e = std::getenv("XDG_CACHE_HOME"); e && *e) return (fs::path(e) / "spmv" / "matrices").string();
  if (const char* e = std::getenv("HOME"); e && *e) return (fs::path(e) / ".cache" / "spmv" / "matrices").string();
  return ".cache/matrices";
}

std::vector<MatrixSource> default_suite(const SuiteOptions& opt, std::vector<std::string>* notes) {
  std::vector<MatrixSource> v;
  const std::string dir = opt.matrices_dir.empty() ? default_matrices_dir() : opt.matrices_dir;
  std::set<std::string> have, listed;
  std::error_code ec;
  const fs::path manifest = fs::path(dir) / "MANIFEST.tsv";
  if (std::ifstream f(manifest); f) {
    // name, file, rows, cols, stored_entries, expanded_nnz, ...
    std::string line;
    std::getline(f, line);
    while (std::getline(f, line)) {
      std::vector<std::string> c;
      std::stringstream ss(line);
      for (std::string x; std::getline(ss, x, '\t');) c.push_back(x);
      if (c.size() < 6) continue;
      offset_t nnz = 0;
      try {
        nnz = std::stoll(c[5]);
      } catch (const std::exception&) {}
      if ((opt.max_real_nnz > 0 && nnz > opt.max_real_nnz) || nnz < opt.min_nnz) continue;
      MatrixSource s;
      s.name = c[0];
      s.path = (fs::path(dir) / c[1]).string();
      s.kind = "SuiteSparse";
      have.insert(s.name);
      listed.insert(c[1]);
      v.push_back(std::move(s));
    }
    // Files put beside the listed ones are benchmarked too (after them), not ignored; their sizes
    // are unknown here, so --quick (a size cap) leaves them out.
    for (const auto& s : opt.max_real_nnz > 0 ? std::vector<MatrixSource>{} : sources_from_paths({dir})) {
      if (listed.count(fs::path(s.path).filename().string()) || have.count(s.name)) continue;
      if (notes)
        notes->push_back(
            fmt::format("{}: not in {}; benchmarked after the listed matrices", s.path, manifest.string()));
      have.insert(s.name);
      v.push_back(s);
    }
  } else if (fs::is_directory(dir, ec)) {
    for (const auto& s : sources_from_paths({dir})) {
      have.insert(s.name);
      v.push_back(s);
    }
  }
  std::vector<MatrixSource> seeds;  // --seed-suite: the seed matrices in the suite's order
  for (const gen::SeedEntry& e : gen::read_seed_suite(opt.seed_suite)) {
    if (opt.seed_only && e.nnz >= opt.min_nnz)
      if (auto it = std::find_if(v.begin(), v.end(), [&](const MatrixSource& s) { return s.name == e.name; });
          it != v.end()) {
        seeds.push_back(*it);
        continue;
      }
    if (have.count(e.name) || e.nnz < opt.min_nnz) continue;
    MatrixSource s;
    s.name = e.name;
    s.kind = e.kind_text;
    double scale = 1.0;
    if (!opt.full && opt.small_machine && e.nnz > opt.scaled_max_nnz)
      scale = static_cast<double>(opt.scaled_max_nnz) / static_cast<double>(e.nnz);
    s.spec = gen::spec_like(e, scale);
    s.scale = static_cast<double>(s.spec->rows) / e.rows;
    s.origin = scale < 1.0 ? "synthetic-scaled" : "synthetic";
    (opt.seed_only ? seeds : v).push_back(std::move(s));
  }
  if (opt.seed_only) v = std::move(seeds);
  if (opt.max_matrices > 0 && static_cast<int>(v.size()) > opt.max_matrices) v.resize(opt.max_matrices);
  return v;
}

namespace {
// A file made by `spmv generate` says so (io::generated_description): label it synthetic.
MatrixSource source_from_file(const fs::path& f) {
  MatrixSource s;
  s.name = matrix_name(f);
  s.path = f.string();
  if (std::string g = io::generated_description(s.path); !g.empty()) {
    s.origin = "synthetic";
    s.kind = std::move(g);
  }
  return s;
}
}  // namespace

std::vector<MatrixSource> sources_from_paths(const std::vector<std::string>& paths) {
  std::vector<MatrixSource> v;
  std::error_code ec;
  for (const auto& p : paths) {
    if (fs::is_directory(p, ec)) {
      std::vector<fs::path> files;
      for (const auto& de : fs::directory_iterator(p, ec))
        if (de.is_regular_file() && is_matrix_file(de.path())) files.push_back(de.path());
      std::sort(files.begin(), files.end());
      for (const auto& f : files) v.push_back(source_from_file(f));
    } else {
      v.push_back(source_from_file(p));
    }
  }
  return v;
}

Csr load_source(const MatrixSource& src, const SuiteOptions& opt) {
  if (src.spec) {
    // Room for the matrix, a converted copy or two and the reference vectors.
    gen::check_generate_memory(*src.spec, src.name, 3.0);
    return gen::generate_cached(*src.spec, opt.cache_dir);
  }
  // The vectors, reference and plans' copies of the sweep's largest k count in the read's budget,
  // as run counts them: a file of 2^31 rows and one entry is refused at its size line.
  const auto [per_row, per_col] = checked_product_memory(opt.max_k);
  io::ReadOptions ro;
  ro.extra_bytes_per_row = per_row;
  ro.extra_bytes_per_col = per_col;
  ro.extra_what = opt.max_k == 1 ? "x, y, the reference and the plans' copies"
                                 : fmt::format("X and Y at k = {}, the reference and the plans' copies", opt.max_k);
  return io::load_csr(src.path, ro);
}

SweepConfig default_sweep(const MachineInfo& m, bool small, bool quick) {
  SweepConfig c;
  const int cores = std::max(1, m.cores);
  if (quick) {
    c.sweep = {{"threads", {1, 2}}, {"hack", {32}}, {"block_size", {256}}};
    c.repeat = 3;
    c.min_sample_seconds = 0.002;
    c.max_config_seconds = 0.2;
    return c;
  }
  std::set<long long> t{1, cores, 2 * cores};
  if (!small) {
    // The reports' range 1..2*cores, in powers of two (plus the core count itself).
    for (int i = 2; i < 2 * cores; i *= 2) t.insert(i);
  } else {
    c.repeat = 5;
    c.min_sample_seconds = 0.02;
    c.max_config_seconds = 0.5;
  }
  c.sweep = {{"threads", {t.begin(), t.end()}}};
  for (const ParamSpec& p : kernel_params())  // block sizes, hack sizes, CSR-adaptive row blocks
    if (!p.sweep.empty()) c.sweep[p.name] = p.sweep;
  if (m.gpus == 0) c.backends = {Backend::Serial, Backend::Omp};
  return c;
}

}  // namespace spmv::bench
