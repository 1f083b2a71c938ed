// What generating costs before it starts (the memory check) and the on-disk cache of generated
// matrices.
#include <spmv/bench/generate.hpp>
#include <spmv/formats/limits.hpp>
#include <spmv/io.hpp>

#include <filesystem>
#include <fmt/format.h>

#include "meminfo.hpp"

namespace spmv::gen {

namespace {
constexpr int kGeneratorVersion = 2;  // bump when the output for a spec changes (cache key)
}  // namespace

// ---- memory ---------------------------------------------------------------------------------

double estimate_bytes(const GenSpec& s) {
  const double n = s.rows;
  const double nnz = s.nnz ? static_cast<double>(s.nnz) : s.rows * s.mean;
  // CSR (8 B row pointer, 4 B column, 8 B value) + lengths (8 B), draws (8 B), flags.
  return 8.0 * (n + 1) + 12.0 * nnz + 17.0 * n;
}

double available_memory_bytes() { return meminfo_bytes("MemAvailable:"); }

void check_generate_memory(const GenSpec& spec, const std::string& name, double factor) {
  const double need = estimate_bytes(spec) * factor;
  const double avail = available_memory_bytes();
  const double nnz = spec.nnz ? static_cast<double>(spec.nnz) : spec.rows * spec.mean;  // (--nnz-per-row: rows x mean)
  if (avail > 0 && need > 0.85 * avail)
    throw Unsupported(fmt::format("generating {} ({} rows, {:.0f} nonzeros) needs {}, only {} available", name,
                                  spec.rows, nnz, memory_size_text(need), memory_size_text(avail)));
}

// ---- cache ----------------------------------------------------------------------------------

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
