// The reader's entry points: each path is opened once, its first bytes tell a binary cache from
// Matrix Market text (either may be gzipped), and the one source is read to the end.
#include <spmv/formats/limits.hpp>
#include <spmv/io.hpp>

#include <fmt/format.h>
#include <new>
#include <stdexcept>

#include "io/byte_source.hpp"
#include "io/io_internal.hpp"
#include "io/mm_header.hpp"
#include "io/text_blocks.hpp"

namespace spmv::io {

namespace {

// What one open of a path holds: a binary cache or a Matrix Market file, as CSR (AsCsr: the text
// through parse_csr, straight into CSR where it can be) or as parsed (the text's COO), values in V.
template <class V, bool AsCsr>
struct Read {
  bool binary = false;
  BasicCsr<V> csr;
  detail::BasicParsed<V> text;  // !AsCsr
  std::string generated;
  std::vector<std::string> comments;
};

template <class V, bool AsCsr>
Read<V, AsCsr> read_source(detail::ByteSource& src, const ReadOptions& opt) {
  Read<V, AsCsr> r;
  if (detail::has_binary_magic(src.head())) {
    bool gen = false;
    r.binary = true;
    r.csr = detail::read_binary<V>(src, opt, &gen);
    r.generated = gen ? "spmv-generated" : "";
  } else if constexpr (AsCsr) {
    detail::BasicParsedCsr<V> p = detail::parse_csr<V>(src, opt);
    r.csr = std::move(p.csr);
    r.generated = std::move(p.generated);
    r.comments = std::move(p.comments);
  } else {
    r.text = detail::parse<V>(src, opt);
    r.generated = r.text.generated;
    r.comments = std::move(r.text.comments);
  }
  return r;
}

template <class V, bool AsCsr>
Read<V, AsCsr> read_path(const std::string& path, const ReadOptions& opt) {
  detail::ByteSource src = detail::ByteSource::open(path);
  try {
    return read_source<V, AsCsr>(src, opt);
  } catch (const Unsupported& e) {  // float duplicates summing past float's range
    throw ParseError(path, 0, e.what());
  } catch (const std::bad_alloc&) {
    throw ParseError(path, 0, "out of memory while reading");
  } catch (const std::length_error&) {  // a size no check caught: still a message, never an abort
    throw ParseError(path, 0, "sizes beyond what can be allocated");
  }
}

template <class V>
BasicLoaded<V> load_as(const std::string& path, const ReadOptions& opt) {
  Read<V, true> r = read_path<V, true>(path, opt);
  BasicLoaded<V> m;
  m.matrix = std::move(r.csr);
  m.generated = std::move(r.generated);
  m.comments = std::move(r.comments);
  return m;
}

}  // namespace

Coo parse_matrix_market(std::string_view text, const std::string& name, const ReadOptions& opt) {
  detail::ByteSource src = detail::ByteSource::memory(text, name);
  return detail::parse(src, opt).coo;
}

CooF32 parse_matrix_market_f32(std::string_view text, const std::string& name, const ReadOptions& opt) {
  detail::ByteSource src = detail::ByteSource::memory(text, name);
  return detail::parse<float>(src, opt).coo;
}

Coo read_matrix(const std::string& path, const ReadOptions& opt) {
  Read<double, false> r = read_path<double, false>(path, opt);
  return r.binary ? csr_to_coo(r.csr) : std::move(r.text.coo);
}

LoadedMatrix load(const std::string& path, const ReadOptions& opt) { return load_as<double>(path, opt); }
LoadedMatrixF32 load_f32(const std::string& path, const ReadOptions& opt) { return load_as<float>(path, opt); }

Csr load_csr(const std::string& path, const ReadOptions& opt) { return load(path, opt).matrix; }

Csr read_binary(const std::string& path, const ReadOptions& opt) {
  detail::ByteSource src = detail::ByteSource::open(path);
  return detail::read_binary(src, opt, nullptr);
}

bool is_binary_cache(const std::string& path) {
  try {
    detail::ByteSource src = detail::ByteSource::open(path);
    return detail::has_binary_magic(src.head());
  } catch (const ParseError&) {
    return false;
  }
}

std::string generated_description(const std::string& path) {
  try {
    detail::ByteSource src = detail::ByteSource::open(path);
    if (detail::has_binary_magic(src.head())) {
      bool gen = false;
      (void)detail::read_binary(src, {}, &gen);
      return gen ? "spmv-generated" : "";
    }
    detail::TextBlocks lines(src, detail::kMaxLine);
    return detail::read_header(lines, path).generated;
  } catch (const Error&) {
    return "";  // not a matrix we can read: not one the generator made either
  }
}

std::vector<double> read_dense_vector(const std::string& path, const ReadOptions& opt) {
  return read_dense_matrix(path, opt).values;
}

DenseMatrix read_dense_matrix(const std::string& path, const ReadOptions& opt) {
  detail::ByteSource src = detail::ByteSource::open(path);
  return detail::dense_vector(src, opt);
}

}  // namespace spmv::io

namespace spmv::io::detail {

DenseMatrix dense_vector(ByteSource& src, const ReadOptions& opt) {
  const std::string& path = src.name();
  if (has_binary_magic(src.head())) throw ParseError(path, 0, "is a binary matrix cache, not a Matrix Market vector");
  Parsed p = parse(src, opt);
  Coo& c = p.coo;
  if (c.is_complex()) throw ParseError(path, 0, "a vector must be real or integer, this file is complex");
  if (p.format == MmFormat::Array) {
    if (c.symmetry != Symmetry::General)
      throw ParseError(path, 0, fmt::format("a vector must be a general array, this one is {}", to_string(c.symmetry)));
    return {c.rows, c.cols, std::vector<double>(c.val.begin(), c.val.end())};  // file order is column-major
  }
  check_input_memory(fmt::format("{}: a {} x {} vector", path, c.rows, c.cols),
                     8.0 * static_cast<double>(c.rows) * static_cast<double>(c.cols), opt.memory_budget_bytes);
  std::vector<double> v(static_cast<std::size_t>(c.rows) * c.cols, 0.0);
  for (offset_t e = 0; e < c.nnz(); ++e) v[static_cast<std::size_t>(c.col[e]) * c.rows + c.row[e]] += c.val[e];
  return {c.rows, c.cols, std::move(v)};
}

}  // namespace spmv::io::detail
