// Matrix Market reader throughput: generates a coordinate real general file of about --mb MB,
// reads it with 1, 2, 4, ..., N threads (file in page cache; median of --repeat reads each, 3 by default) and reports
// MB/s of text parsed, to COO (read_matrix) and to CSR (load); then the same for the binary cache.
// With --gzip, the file gzipped: its decompression alone with zlib's inflate and with ISA-L's (the
// reader's), and the whole read of the .mtx.gz against the .mtx.
#include <spmv/bench/generate.hpp>
#include <spmv/io.hpp>
#include <spmv/timing.hpp>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <cstdio>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <isa-l/igzip_lib.h>
#include <omp.h>
#include <string>
#include <type_traits>
#include <vector>
#include <zlib.h>

namespace {

using spmv::seconds_since;

// Rows of 12 uniform columns, values with 17 significant digits (what SuiteSparse files look
// like): about `mb` MB of text at 2 * digits(rows) + 23 bytes a line.
void generate(const std::string& path, double mb) {
  double rows = 1000;
  for (int i = 0; i < 3; ++i)  // the line length depends on the row count's digits
    rows = std::max(1000.0, mb * 1e6 / (12 * (2 * std::floor(std::log10(rows) + 1) + 23)));
  const spmv::Csr a = spmv::gen::random_rows(static_cast<spmv::index_t>(rows), 12, spmv::gen::Spread::Uniform, 42);
  spmv::io::write_matrix_market(path, a, fmt::format("io_bench random_rows({}, 12)", a.rows));
}

// Median wall seconds of `reps` runs; `cpu` gets the process CPU seconds (all threads) of that
// run, which tells a busy machine (cpu << wall * threads) from a serial bottleneck. What f returns
// (a matrix) is freed after the clock stops: a read is timed, not a read and a free.
template <class F>
double median_seconds(F&& f, int reps = 3, double* cpu = nullptr) {
  std::vector<std::pair<double, double>> t;
  for (int r = 0; r < reps; ++r) {
    const std::clock_t c0 = std::clock();
    const auto t0 = std::chrono::steady_clock::now();
    if constexpr (std::is_void_v<decltype(f())>) {
      f();
      t.emplace_back(seconds_since(t0), static_cast<double>(std::clock() - c0) / CLOCKS_PER_SEC);
    } else {
      const auto kept = f();
      t.emplace_back(seconds_since(t0), static_cast<double>(std::clock() - c0) / CLOCKS_PER_SEC);
    }
  }
  std::sort(t.begin(), t.end());
  if (cpu) *cpu = t[t.size() / 2].second;
  return t[t.size() / 2].first;
}

std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), {}};
}

// zlib's streaming inflate of one gzip member into `out` (sized to fit); returns the bytes written.
std::size_t zlib_gunzip(const std::string& gz, std::string& out) {
  z_stream z{};
  if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) throw std::runtime_error("inflateInit2 failed");
  std::size_t in = 0, done = 0;
  int r = Z_OK;
  while (r == Z_OK) {  // avail_in/avail_out are 32-bit: fed in chunks of at most 1 GiB
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(gz.data())) + in;
    z.avail_in = static_cast<uInt>(std::min<std::size_t>(gz.size() - in, 1u << 30));
    z.next_out = reinterpret_cast<Bytef*>(out.data()) + done;
    z.avail_out = static_cast<uInt>(std::min<std::size_t>(out.size() - done, 1u << 30));
    const uInt avail_in = z.avail_in, avail_out = z.avail_out;
    r = inflate(&z, Z_NO_FLUSH);
    in += avail_in - z.avail_in;
    done += avail_out - z.avail_out;
  }
  inflateEnd(&z);
  if (r != Z_STREAM_END) throw std::runtime_error(fmt::format("zlib inflate failed: {}", r));
  return done;
}

// ISA-L's streaming inflate of one gzip member into `out` (sized to fit), as the reader runs it;
// returns the bytes written.
std::size_t isal_gunzip(const std::string& gz, std::string& out) {
  inflate_state st;
  isal_inflate_init(&st);
  st.crc_flag = ISAL_GZIP;
  std::size_t in = 0, done = 0;
  while (st.block_state != ISAL_BLOCK_FINISH) {  // fed 1 MiB at a time, as the reader does
    st.next_in = reinterpret_cast<std::uint8_t*>(const_cast<char*>(gz.data())) + in;
    st.avail_in = static_cast<std::uint32_t>(std::min<std::size_t>(gz.size() - in, 1u << 20));
    st.next_out = reinterpret_cast<std::uint8_t*>(out.data()) + done;
    st.avail_out = static_cast<std::uint32_t>(std::min<std::size_t>(out.size() - done, 1u << 30));
    const std::uint32_t avail_in = st.avail_in, avail_out = st.avail_out;
    if (isal_inflate(&st) < 0) throw std::runtime_error("isal_inflate failed");
    in += avail_in - st.avail_in;
    done += avail_out - st.avail_out;
    if (avail_in == st.avail_in && avail_out == st.avail_out) throw std::runtime_error("isal_inflate made no progress");
  }
  return done;
}

// The --gzip study: `path` gzipped at zlib's level 6 (gzip's default), then from memory into a
// preallocated buffer zlib's inflate and ISA-L's (decompression alone), then read_matrix of the
// .mtx.gz against the .mtx at `threads` threads.
void gzip_study(const std::string& path, double bytes, int threads, bool keep) {
  const std::string gz_path = path + ".gz";
  auto t0 = std::chrono::steady_clock::now();
  {
    const std::string text = slurp(path);
    gzFile g = gzopen(gz_path.c_str(), "wb6");
    if (!g || gzfwrite(text.data(), 1, text.size(), g) != text.size() || gzclose(g) != Z_OK)
      throw std::runtime_error("cannot write " + gz_path);
  }
  const std::string gz = slurp(gz_path);
  fmt::print("gzip_bytes: {}\ngzip_ratio: {:.2f}\ngzip_write_s: {:.2f}\n", gz.size(), bytes / gz.size(),
             seconds_since(t0));
  std::string out(static_cast<std::size_t>(bytes), '\0');
  const auto check = [&](std::size_t got) {
    if (got != out.size()) throw std::runtime_error("decompressed size differs from the file's");
  };
  const double zlib_s = median_seconds([&] { check(zlib_gunzip(gz, out)); });
  const double isal_s = median_seconds([&] { check(isal_gunzip(gz, out)); });
  fmt::print("{:>22} {:>10} {:>10}\n", "gunzip (1 thread)", "median_s", "MB/s out");
  fmt::print("{:>22} {:>10.4f} {:>10.1f}\n{:>22} {:>10.4f} {:>10.1f}\n", "zlib inflate", zlib_s, bytes / zlib_s * 1e-6,
             "ISA-L inflate", isal_s, bytes / isal_s * 1e-6);
  fmt::print("isal_speedup_vs_zlib: {:.2f}x\n", zlib_s / isal_s);
  const auto read_s = [&](const std::string& p) {
    return median_seconds([&] { return spmv::io::read_matrix(p, {.threads = threads}); });
  };
  const double gz_s = read_s(gz_path), mtx_s = read_s(path);
  fmt::print("{:>22} {:>10} {:>10}\n", fmt::format("read_matrix ({}t)", threads), "median_s", "MB/s text");
  fmt::print("{:>22} {:>10.4f} {:>10.1f}\n{:>22} {:>10.4f} {:>10.1f}\n", ".mtx.gz", gz_s, bytes / gz_s * 1e-6, ".mtx",
             mtx_s, bytes / mtx_s * 1e-6);
  fmt::print("gz_read_share_decompression: {:.0f}% (ISA-L alone / the whole .mtx.gz read)\n", 100 * isal_s / gz_s);
  if (!keep) std::filesystem::remove(gz_path);
}

}  // namespace

int main(int argc, char** argv) {
  std::string path = "/tmp/spmv_io_bench.mtx";
  double mb = 500;
  int max_threads = omp_get_max_threads();
  bool keep = false;
  int reps = 3;
  CLI::App app{"io_bench: Matrix Market parse throughput at 1, 2, 4, ... threads, then the binary cache"};
  app.add_option("PATH", path, "The generated file (its binary cache goes beside it)")->capture_default_str();
  app.add_option("--mb", mb, "Size of the generated file in MB")->capture_default_str()->check(CLI::PositiveNumber);
  app.add_option("--threads", max_threads, "The most threads to read with (default: OpenMP's maximum)")
      ->check(CLI::Range(1, 4096));
  bool gzip = false;
  app.add_option("--repeat", reps, "Reads a measurement takes the median of")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000));
  app.add_flag("--keep", keep, "Keep the file and its cache (and .gz) afterwards");
  app.add_flag("--gzip", gzip, "Also gzip the file: decompression MB/s with zlib and ISA-L, .mtx.gz vs .mtx read");
  CLI11_PARSE(app, argc, argv);
  try {
    auto t0 = std::chrono::steady_clock::now();
    generate(path, mb);
    const double bytes = static_cast<double>(std::filesystem::file_size(path));
    fmt::print("file: {}\nbytes: {:.0f}\ngenerate_s: {:.2f}\n", path, bytes, seconds_since(t0));

    spmv::Coo first = spmv::io::read_matrix(path, {.threads = max_threads});  // warms the page cache
    fmt::print("nnz: {}\n{:>8} {:>10} {:>10} {:>10} {:>12} {:>10}\n", first.nnz(), "threads", "median_s", "MB/s",
               "cpu_s", "csr_median_s", "csr_MB/s");
    std::vector<int> counts;
    for (int t = 1; t < max_threads; t *= 2) counts.push_back(t);
    counts.push_back(max_threads);
    for (int t : counts) {
      double cpu = 0;
      const double s = median_seconds(
          [&] {
            spmv::Coo c = spmv::io::read_matrix(path, {.threads = t});
            if (c.nnz() != first.nnz()) throw std::runtime_error("nnz differs between reads");
            return c;
          },
          reps, &cpu);
      const double cs = median_seconds(
          [&] {
            spmv::Csr c = spmv::io::load_csr(path, {.threads = t});
            if (c.nnz() != first.nnz()) throw std::runtime_error("nnz differs between reads");
            return c;
          },
          reps);
      fmt::print("{:>8} {:>10.4f} {:>10.1f} {:>10.4f} {:>12.4f} {:>10.1f}\n", t, s, bytes / s * 1e-6, cpu, cs,
                 bytes / cs * 1e-6);
    }

    const spmv::Csr a = spmv::coo_to_csr(first);
    first = {};
    const std::string cache = path + ".spmvbin";
    spmv::io::write_binary(cache, a);
    const double cbytes = static_cast<double>(std::filesystem::file_size(cache));
    (void)spmv::io::read_binary(cache);
    const double s = median_seconds([&] { return spmv::io::read_binary(cache); }, reps);
    fmt::print(
        "binary_cache_bytes: {:.0f}\nbinary_cache_load_s: {:.4f}\nbinary_cache_MB/s: {:.1f}\n"
        "binary_cache_speedup_vs_text_{}t: load {:.1f}x faster than parsing\n",
        cbytes, s, cbytes / s * 1e-6, max_threads,
        median_seconds([&] { return spmv::io::read_matrix(path, {.threads = max_threads}); }, 1) / s);
    if (gzip) gzip_study(path, bytes, max_threads, keep);
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
