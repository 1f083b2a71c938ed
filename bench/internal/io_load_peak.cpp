// One read of a Matrix Market file into CSR in a process of its own, for its peak memory: the
// seconds, the process's peak RSS (getrusage, so the one read's), the CSR's bytes and the peak
// against the reader's bound (1.2x the CSR + 64 MiB a thread), with the read straight into CSR
// (src/io/mm_direct) forced, refused or left to the reader. --generate writes a test file first, its
// entries in row or column order (SuiteSparse's files are in column order). A developer's tool (it
// sees the library's internals); run it under /usr/bin/time -v for the kernel's view as well.
//   io_load_peak FILE.mtx [--threads T] [--straight auto|always|never|once] [--float]
//   cat FILE.mtx | io_load_peak /dev/stdin ...  (a pipe: read once)
//   io_load_peak FILE.mtx --generate M [--order rows|columns] [--symmetric]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <numeric>
#include <random>
#include <string>
#include <tuple>
#include <sys/resource.h>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <omp.h>

#include "io/byte_source.hpp"
#include "io/io_internal.hpp"

using namespace spmv;

namespace {

// About m entries of a square matrix of m / 12 rows, 12 distinct random positions a column (or a
// row), values with 17 significant digits, in that order; `lower`: a symmetric file, the positions
// below the diagonal kept (about half). Made in per-thread buffers, then written after the header.
void generate(const std::string& path, std::int64_t m, bool by_columns, bool lower) {
  const std::int64_t n = std::max<std::int64_t>(m / 12, 12);
  const std::int64_t piece = 1 << 16;
  std::vector<std::string> out(static_cast<std::size_t>((n + piece - 1) / piece));
  std::vector<std::int64_t> lines(out.size(), 0);
#pragma omp parallel for schedule(dynamic, 1)
  for (std::size_t b = 0; b < out.size(); ++b) {
    const std::int64_t lo = static_cast<std::int64_t>(b) * piece, hi = std::min(n, lo + piece);
    std::mt19937_64 rng(static_cast<std::uint64_t>(lo) * 7919 + 1);
    std::uniform_int_distribution<std::int64_t> pick(0, n - 1);
    std::uniform_real_distribution<double> value(-1.0, 1.0);
    fmt::memory_buffer buf;
    for (std::int64_t j = lo; j < hi; ++j) {
      std::int64_t at[12];
      for (int k = 0; k < 12; ++k) {
        at[k] = pick(rng);
        for (int q = 0; q < k; ++q)
          if (at[q] == at[k]) at[k] = (at[k] + 1) % n, q = -1;  // distinct positions
      }
      std::sort(at, at + 12);
      for (const std::int64_t i : at) {
        const std::int64_t r = by_columns ? i : j, c = by_columns ? j : i;
        const double v = value(rng);
        if (lower && r < c) continue;
        fmt::format_to(std::back_inserter(buf), "{} {} {:.17g}\n", r + 1, c + 1, v);
        ++lines[b];
      }
    }
    out[b].assign(buf.data(), buf.size());
  }
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) throw std::runtime_error("cannot write " + path);
  fmt::print(f, "%%MatrixMarket matrix coordinate real {}\n% io_load_peak: 12 a {}\n{} {} {}\n",
             lower ? "symmetric" : "general", by_columns ? "column" : "row", n, n,
             std::accumulate(lines.begin(), lines.end(), std::int64_t{0}));
  for (const std::string& s : out) std::fwrite(s.data(), 1, s.size(), f);
  std::fclose(f);
}

double peak_rss_mb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"io_load_peak: one read into CSR, its seconds and peak memory"};
  std::string path, straight = "auto", order = "columns";
  int threads = 0;
  std::int64_t generate_entries = 0;
  app.add_option("FILE", path, "A Matrix Market file (written first with --generate)")->required();
  app.add_option("--threads", threads, "Reader threads (default: OpenMP's maximum)")->check(CLI::Range(1, 4096));
  app.add_option("--straight", straight, "Straight into CSR: auto, always, never or once (row groups, as for a pipe)")
      ->check(CLI::IsMember({"auto", "always", "never", "once"}))
      ->capture_default_str();
  app.add_option("--generate", generate_entries, "Write FILE first with this many entries, then exit")
      ->check(CLI::PositiveNumber);
  app.add_option("--order", order, "The generated file's order: rows or columns")
      ->check(CLI::IsMember({"rows", "columns"}))
      ->capture_default_str();
  bool in_float = false;
  app.add_flag("--float", in_float, "Read the values in single precision (a CsrF32)");
  bool lower = false;
  app.add_flag("--symmetric", lower, "Generate a symmetric file (the entries below the diagonal)");
  CLI11_PARSE(app, argc, argv);
  try {
    if (generate_entries > 0) {
      generate(path, generate_entries, order == "columns", lower);
      return 0;
    }
    const int t = threads > 0 ? threads : omp_get_max_threads();
    using io::detail::StraightToCsr;
    const StraightToCsr how = straight == "always"  ? StraightToCsr::Always
                              : straight == "never" ? StraightToCsr::Never
                              : straight == "once"  ? StraightToCsr::Once
                                                    : StraightToCsr::Auto;
    const double before = peak_rss_mb();
    const auto t0 = std::chrono::steady_clock::now();
    io::detail::ByteSource src = io::detail::ByteSource::open(path);
    const auto read = [&]<class V>(V) {
      const io::detail::BasicParsedCsr<V> r = io::detail::parse_csr<V>(src, {.threads = t}, {.straight_to_csr = how});
      return std::tuple{r.straight, r.csr.nnz(), r.csr.row_ptr.size()};
    };
    const auto [straight_taken, nnz, row_ptrs] = in_float ? read(0.0f) : read(0.0);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double peak = peak_rss_mb();
    const double value_bytes = in_float ? 4.0 : 8.0;
    const double csr_mb =
        (8.0 * static_cast<double>(row_ptrs) + (4.0 + value_bytes) * static_cast<double>(nnz)) / (1 << 20);
    const double bound = 1.2 * csr_mb + 64.0 * t;
    const double bytes = static_cast<double>(src.content_size());  // -1 for a pipe or gzip: no rate
    fmt::print(
        "file {} threads {} {}straight {} ({}) nnz {} seconds {:.3f} MB/s {} peak_rss_MiB {:.0f} "
        "(before the read {:.0f}) csr_MiB {:.0f} peak/csr {:.2f} bound_MiB {:.0f} within {}\n",
        path, t, in_float ? "float " : "", straight, straight_taken ? "taken" : "through the COO", nnz, s,
        bytes > 0 ? fmt::format("{:.0f}", bytes / s * 1e-6) : std::string("-"), peak, before, csr_mb, peak / csr_mb,
        bound, peak <= bound ? "yes" : "NO");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "io_load_peak: %s\n", e.what());
    return 1;
  }
  return 0;
}
