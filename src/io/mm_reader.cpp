// Matrix Market reader: the pipeline (after fast_matrix_market's read_header / chunking /
// read_body split).
//
// 1. read_header (mm_header): banner, comments and size line, serially.
// 2. split_into_chunks (mm_chunks): the data section cut at newline boundaries.
// 3. count_chunks (mm_chunks), pass 1 in parallel: lines and entry lines per chunk. Skipped for a
//    lone chunk whose size line is plausible; recount_lone_chunk corrects it after pass 2.
// 4. number_chunks (mm_chunks): prefix sums give each chunk its first line and first entry.
// 5. parse_chunks (mm_parse), pass 2 in parallel: straight into the preallocated COO arrays. Every
//    error is recorded with its exact line; the earliest chunk's wins, as in a serial reader.
// 6. check_entry_count: the file holds as many entries as its size line says.
// 7. expand_symmetry (mm_symmetry): symmetric, skew and hermitian files get their mirrors.
//
// Tolerated: blank lines anywhere, `%` comment lines anywhere before the size line and also inside
// the data (like fast_matrix_market), CRLF, tabs, leading/trailing blanks, a UTF-8 BOM, numbers
// such as `1.`, `-.5e-3`, `+2`, `1E+02`, `inf`, `nan` (kept as values).
#include <spmv/formats/limits.hpp>
#include <algorithm>
#include <fmt/format.h>
#include <omp.h>

#include "io/io_internal.hpp"
#include "io/mm_chunks.hpp"
#include "io/mm_header.hpp"
#include "io/mm_parse.hpp"
#include "io/mm_symmetry.hpp"

namespace spmv::io::detail {

namespace {

int resolve_threads(int t) { return t > 0 ? t : std::max(1, omp_get_max_threads()); }

// The output with `stored` entries, and room for the mirrors up front so that expanding does not
// reallocate.
Parsed allocate_output(const MmHeader& h, i64 stored) {
  Parsed out;
  out.format = h.format;
  Coo& coo = out.coo;
  coo.rows = static_cast<index_t>(h.rows);
  coo.cols = static_cast<index_t>(h.cols);
  coo.field = h.field;
  coo.symmetry = h.symmetry;
  const bool cplx = h.field == Field::Complex;
  const std::size_t capacity = static_cast<std::size_t>(h.symmetry != Symmetry::General ? 2 * stored : stored);
  coo.row.reserve(capacity);
  coo.col.reserve(capacity);
  coo.val.reserve(capacity);
  if (cplx) coo.imag.reserve(capacity);
  coo.row.resize(stored);
  coo.col.resize(stored);
  coo.val.resize(stored);
  if (cplx) coo.imag.resize(stored);
  return out;
}

void check_entry_count(std::string_view text, const MmHeader& h, const std::vector<Chunk>& chunks,
                       const DataCounts& counted, const std::string& name) {
  if (counted.entries > h.entries)
    throw ParseError(name, line_of_entry(text.data(), chunks, h.entries),
                     fmt::format("too many entries: the size line says {}", h.entries));
  if (counted.entries < h.entries) {
    const bool open_last = text.size() > h.data_begin && text.back() != '\n';
    const i64 last_line = h.data_first_line - 1 + counted.newlines + (open_last ? 1 : 0);
    throw ParseError(name, std::max<i64>(last_line, 1),
                     fmt::format("unexpected end of file: {} of {} entries", counted.entries, h.entries));
  }
}

// Throws when an off-diagonal pair is stored in both triangles, then appends the mirrors.
void expand_symmetry(Coo& coo, int threads, const char* base, const std::vector<Chunk>& chunks,
                     const std::string& name) {
  const MirrorBlocks mb = count_mirrors(coo, threads);
  if (mb.both_triangles) {
    if (const auto pair = find_mirrored_pair(coo)) {
      const i64 first = pair->first, second = pair->second;
      throw ParseError(name, line_of_entry(base, chunks, second),
                       fmt::format("entry ({},{}) mirrors the entry ({},{}) on line {}: a {} file must store "
                                   "each off-diagonal pair once", coo.row[second] + 1, coo.col[second] + 1,
                                   coo.row[first] + 1, coo.col[first] + 1, line_of_entry(base, chunks, first),
                                   to_string(coo.symmetry)));
    }
  }
  append_mirrors(coo, mb);
}

}  // namespace

Parsed parse(std::string_view text, const std::string& name, int threads_opt) {
  const MmHeader h = read_header(text, name);  // 1
  const int threads = resolve_threads(threads_opt);
  const char* base = text.data();
  const std::size_t data_bytes = text.size() - h.data_begin;

  std::vector<Chunk> chunks = split_into_chunks(text, h.data_begin, threads);  // 2
  const int chunk_threads = static_cast<int>(std::min<std::size_t>(threads, chunks.size()));
  // 3. A lone chunk trusts the size line (the common, well-formed case) only when the data could
  // hold that many entries (an entry line takes >= 4 bytes), so that a lying size line cannot
  // make us allocate for entries that are not there.
  const bool trust_size_line = chunks.size() == 1 && h.entries <= static_cast<i64>((data_bytes + 1) / 4);
  if (trust_size_line) chunks[0].entries = h.entries;
  else count_chunks(base, chunks, chunk_threads);
  DataCounts counted = number_chunks(chunks, h.data_first_line);  // 4

  // 5. A lone chunk that skipped pass 1 gets its true counts once parsed.
  Parsed out = allocate_output(h, std::min(counted.entries, h.entries));
  Coo& coo = out.coo;
  const CooArrays arrays{coo.row.data(), coo.col.data(), coo.val.data(),
                         h.field == Field::Complex ? coo.imag.data() : nullptr};
  parse_chunks(base, h, chunks, h.entries, chunk_threads, arrays, name);
  if (trust_size_line) counted = recount_lone_chunk(base, chunks[0], h.entries);

  check_entry_count(text, h, chunks, counted, name);  // 6
  if (h.symmetry != Symmetry::General) expand_symmetry(coo, threads, base, chunks, name);  // 7
  return out;
}

}  // namespace spmv::io::detail

namespace spmv::io {

Coo parse_matrix_market(std::string_view text, const std::string& name, const ReadOptions& opt) {
  return detail::parse(text, name, opt.threads).coo;
}

Coo read_matrix(const std::string& path, const ReadOptions& opt) {
  const detail::LoadedFile bytes = detail::load_file(path);
  if (detail::has_binary_magic(bytes.view())) return csr_to_coo(read_binary(path));
  return detail::parse(bytes.view(), path, opt.threads).coo;
}

Csr load_csr(const std::string& path, const ReadOptions& opt) {
  if (is_binary_cache(path)) return read_binary(path);
  return coo_to_csr(read_matrix(path, opt));
}

std::vector<double> read_dense_vector(const std::string& path) {
  const detail::LoadedFile bytes = detail::load_file(path);
  if (detail::has_binary_magic(bytes.view()))
    throw ParseError(path, 0, "is a binary matrix cache, not a Matrix Market vector");
  detail::Parsed p = detail::parse(bytes.view(), path, 0);
  Coo& c = p.coo;
  if (c.is_complex()) throw ParseError(path, 0, "a vector must be real or integer, this file is complex");
  if (p.format == detail::MmFormat::Array) {
    if (c.symmetry != Symmetry::General)
      throw ParseError(path, 0, fmt::format("a vector must be a general array, this one is {}", to_string(c.symmetry)));
    return std::move(c.val);  // file order is column-major
  }
  check_input_memory(fmt::format("{}: a {} x {} vector", path, c.rows, c.cols),
                     8.0 * static_cast<double>(c.rows) * static_cast<double>(c.cols));
  std::vector<double> v(static_cast<std::size_t>(c.rows) * c.cols, 0.0);
  for (offset_t e = 0; e < c.nnz(); ++e) v[static_cast<std::size_t>(c.col[e]) * c.rows + c.row[e]] += c.val[e];
  return v;
}

}  // namespace spmv::io
