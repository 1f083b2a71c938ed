// The Matrix Market reader's parse stage alone (pass 2, src/io/mm_parse), on one thread: the data
// section of a coordinate file as one chunk, parsed again and again into COO arrays faulted in
// beforehand, so that neither the file's reading nor the kernel's zeroing of fresh pages is timed.
// The best of --repeat parses, as MB/s of the data section. A developer's tool for the reader's
// inner loop (it sees the library's internals, unlike the tools in bench/tools); whole reads are
// io_bench's.
//   io_parse_bench FILE.mtx [--repeat N]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "io/mm_parse.hpp"

using namespace spmv::io::detail;

int main(int argc, char** argv) {
  CLI::App app{"io_parse_bench: the reader's parse stage alone, one thread, best of N parses"};
  std::string path;
  int repeat = 8;
  app.add_option("FILE", path, "A coordinate real/integer/pattern general file (not gzipped)")
      ->required()
      ->check(CLI::ExistingFile);
  app.add_option("--repeat", repeat, "Parses; the best is reported")->capture_default_str()->check(CLI::Range(1, 1000));
  CLI11_PARSE(app, argc, argv);

  std::ifstream in(path, std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::size_t pos = 0;
  i64 line = 1;
  while (pos < text.size() && text[pos] == '%') pos = text.find('\n', pos) + 1, ++line;  // banner, comments
  MmHeader h;
  long long rows = 0, cols = 0, nnz = 0;
  if (std::sscanf(text.c_str() + pos, "%lld %lld %lld", &rows, &cols, &nnz) != 3 || nnz <= 0) {
    std::fprintf(stderr, "%s: no coordinate size line after the header\n", path.c_str());
    return 1;
  }
  if (text.compare(0, 40, "%%MatrixMarket matrix coordinate integer") == 0) h.field = spmv::Field::Integer;
  if (text.compare(0, 40, "%%MatrixMarket matrix coordinate pattern") == 0) h.field = spmv::Field::Pattern;
  h.rows = rows, h.cols = cols, h.entries = nnz;
  pos = text.find('\n', pos) + 1;
  ++line;
  std::vector<spmv::index_t> r(static_cast<std::size_t>(nnz)), c(static_cast<std::size_t>(nnz));
  std::vector<double> v(static_cast<std::size_t>(nnz));
  const CooArrays<double> out{r.data(), c.data(), v.data(), nullptr};
  double best = 1e300;
  for (int i = 0; i < repeat; ++i) {
    std::vector<Chunk> chunks(1);
    chunks[0].begin = pos;
    chunks[0].end = text.size();
    chunks[0].first_line = line;
    chunks[0].entries = nnz;
    const auto t0 = std::chrono::steady_clock::now();
    parse_chunks(text.data(), h, chunks, nnz, 1, out, path);
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    if (chunks[0].parsed != nnz) {
      std::fprintf(stderr, "%s: parsed %lld of %lld entries\n", path.c_str(), static_cast<long long>(chunks[0].parsed),
                   nnz);
      return 1;
    }
  }
  double sum = 0;  // the result used, so that nothing is optimised away
  for (std::size_t k = 0; k < v.size(); ++k) sum += v[k] + r[k] + c[k];
  std::printf("%.4f s  %.0f MB/s  (%lld entries, %zu bytes of data; checksum %.6g)\n", best,
              static_cast<double>(text.size() - pos) / best / 1e6, nnz, text.size() - pos, sum);
}
