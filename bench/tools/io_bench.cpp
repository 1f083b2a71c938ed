// Matrix Market reader throughput: generates a coordinate real general file of about --mb MB,
// reads it with 1, 2, 4, ..., N threads (file in page cache; median of 3 reads each) and reports
// MB/s of text parsed; then the same for the binary cache.
//
//   io_bench [--mb 500] [--threads N] [--keep] [PATH]      (PATH default /tmp/spmv_io_bench.mtx)
#include <spmv/io.hpp>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fmt/format.h>
#include <omp.h>
#include <random>
#include <string>
#include <vector>

#include <spmv/timing.hpp>

namespace {

using spmv::seconds_since;

// Rows in order, a few columns per row, values with 17 significant digits: what SuiteSparse
// files look like, at about 33 bytes a line.
void generate(const std::string& path, double mb) {
  const auto target = static_cast<std::int64_t>(mb * 1e6);
  const std::int64_t nnz = target / 33;
  const std::int32_t n = static_cast<std::int32_t>(std::max<std::int64_t>(1000, nnz / 12));
  std::mt19937_64 g(42);
  std::uniform_int_distribution<std::int32_t> col(1, n);
  std::uniform_real_distribution<double> val(-1.0, 1.0);
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) throw std::runtime_error("cannot write " + path);
  fmt::memory_buffer buf;
  auto it = std::back_inserter(buf);
  fmt::format_to(it, "%%MatrixMarket matrix coordinate real general\n% io_bench synthetic\n{} {} {}\n", n, n, nnz);
  for (std::int64_t e = 0; e < nnz; ++e) {
    fmt::format_to(it, "{} {} {:.17g}\n", 1 + e * n / nnz, col(g), val(g));
    if (buf.size() > (1 << 22)) {
      std::fwrite(buf.data(), 1, buf.size(), f);
      buf.clear();
    }
  }
  std::fwrite(buf.data(), 1, buf.size(), f);
  std::fclose(f);
}

// Median wall seconds of `reps` runs; `cpu` gets the process CPU seconds (all threads) of that
// run, which tells a busy machine (cpu << wall * threads) from a serial bottleneck.
template <class F>
double median_seconds(F&& f, int reps = 3, double* cpu = nullptr) {
  std::vector<std::pair<double, double>> t;
  for (int r = 0; r < reps; ++r) {
    const std::clock_t c0 = std::clock();
    const auto t0 = std::chrono::steady_clock::now();
    f();
    t.emplace_back(seconds_since(t0), static_cast<double>(std::clock() - c0) / CLOCKS_PER_SEC);
  }
  std::sort(t.begin(), t.end());
  if (cpu) *cpu = t[t.size() / 2].second;
  return t[t.size() / 2].first;
}

}  // namespace

int main(int argc, char** argv) {
  std::string path = "/tmp/spmv_io_bench.mtx";
  double mb = 500;
  int max_threads = omp_get_max_threads();
  bool keep = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--mb" && i + 1 < argc) mb = std::atof(argv[++i]);
    else if (a == "--threads" && i + 1 < argc) max_threads = std::atoi(argv[++i]);
    else if (a == "--keep") keep = true;
    else if (a == "--help" || a == "-h") {
      std::puts("usage: io_bench [--mb 500] [--threads N] [--keep] [PATH]");
      return 0;
    } else path = a;
  }
  try {
    auto t0 = std::chrono::steady_clock::now();
    generate(path, mb);
    const double bytes = static_cast<double>(std::filesystem::file_size(path));
    fmt::print("file: {}\nbytes: {:.0f}\ngenerate_s: {:.2f}\n", path, bytes, seconds_since(t0));

    spmv::Coo first = spmv::io::read_matrix(path, {.threads = max_threads});  // warms the page cache
    fmt::print("nnz: {}\n{:>8} {:>10} {:>10} {:>10}\n", first.nnz(), "threads", "median_s", "MB/s", "cpu_s");
    std::vector<int> counts;
    for (int t = 1; t < max_threads; t *= 2) counts.push_back(t);
    counts.push_back(max_threads);
    for (int t : counts) {
      double cpu = 0;
      const double s = median_seconds([&] {
        const spmv::Coo c = spmv::io::read_matrix(path, {.threads = t});
        if (c.nnz() != first.nnz()) throw std::runtime_error("nnz differs between reads");
      }, 3, &cpu);
      fmt::print("{:>8} {:>10.4f} {:>10.1f} {:>10.4f}\n", t, s, bytes / s * 1e-6, cpu);
    }

    const spmv::Csr a = spmv::coo_to_csr(first);
    first = {};
    const std::string cache = path + ".spmvbin";
    spmv::io::write_binary(cache, a);
    const double cbytes = static_cast<double>(std::filesystem::file_size(cache));
    (void)spmv::io::read_binary(cache);
    const double s = median_seconds([&] { (void)spmv::io::read_binary(cache); });
    fmt::print("binary_cache_bytes: {:.0f}\nbinary_cache_load_s: {:.4f}\nbinary_cache_MB/s: {:.1f}\n"
               "binary_cache_speedup_vs_text_{}t: load {:.1f}x faster than parsing\n",
               cbytes, s, cbytes / s * 1e-6, max_threads,
               median_seconds([&] { (void)spmv::io::read_matrix(path, {.threads = max_threads}); }, 1) / s);
    if (!keep) {
      std::filesystem::remove(path);
      std::filesystem::remove(cache);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "io_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
