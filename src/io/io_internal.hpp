#pragma once
// Internals shared by the Matrix Market reader, the writers and the binary cache.
#include <spmv/io.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "io/byte_source.hpp"

namespace spmv::io::detail {

// True when the first bytes are the binary cache's magic.
bool has_binary_magic(std::string_view head);

enum class MmFormat { Coordinate, Array };

// A parsed file, its values in V (double, or float for a file read in single precision).
template <class V>
struct BasicParsed {
  BasicCoo<V> coo;
  MmFormat format = MmFormat::Coordinate;
  std::string generated;              // the header's "% spmv-generated: ..." description, if any
  std::vector<std::string> comments;  // the header's other comment lines (MmHeader::comments)
};
using Parsed = BasicParsed<double>;

// A parsed file as CSR (parse_csr).
template <class V>
struct BasicParsedCsr {
  BasicCsr<V> csr;
  std::string generated;
  std::vector<std::string> comments;
  bool straight = false;  // read straight into CSR (mm_direct, mm_row_groups), not through the COO
};

// When a coordinate file is read straight into CSR instead of through the COO: Auto for a mapped
// general file in row order (mm_direct, one pass), and for any other where the COO's row indices
// would take the read past its memory bound (mm_direct's two passes where the input can be read
// twice, mm_row_groups where not). Always: mm_direct wherever the input can be read twice, row
// groups elsewhere; Once: row groups whatever the input (tests and measurements).
enum class StraightToCsr { Auto, Always, Never, Once };

// Sizes of the reader's pieces; the defaults suit files of any size, the fuzz targets take tiny
// ones so that short inputs still cross block and chunk boundaries.
struct ParseTuning {
  std::size_t block_bytes = 0;                        // text a block holds; 0: 4 MiB a thread, at most 64 MiB
  std::size_t min_chunk = std::size_t{64} << 10;      // the smallest chunk a thread parses
  std::int64_t repeat_check = std::int64_t{1} << 21;  // entries held before repeats are first sampled (mm_repeats)
  StraightToCsr straight_to_csr = StraightToCsr::Auto;
};

// The whole reader (the pipeline in mm_reader.cpp): banner, header, size line, data a block at a
// time, symmetry expansion. V = float parses each value as a double and stores it rounded once, a
// value that would round to infinity refused on its line; complex files are read in double only.
template <class V = double>
BasicParsed<V> parse(ByteSource& src, const ReadOptions& opt, const ParseTuning& tune = {});

// The reader into CSR: through the COO and coo_to_csr, or straight into CSR for a coordinate file
// (mm_direct for a mapped file in row order, or in two passes; mm_row_groups read once, any input).
// The same matrix either way, its duplicates summed in file order as coo_to_csr(const Coo&) sums
// them (coo_to_csr(Coo&&) converting a large COO in place sums them in an order of its own: the last
// bit may differ), and the same errors, but for two read once from a stream (a mirrored pair of a
// symmetric file, float sums past float's range: found at the end, they name the entries without
// lines). Unsupported for float duplicates summing past float's range, as coo_to_csr.
template <class V = double>
BasicParsedCsr<V> parse_csr(ByteSource& src, const ReadOptions& opt, const ParseTuning& tune = {});

// A Matrix Market vector or dense matrix (array, or coordinate summed into a dense one), column-major.
DenseMatrix dense_vector(ByteSource& src, const ReadOptions& opt);

// A binary cache from its first byte (the magic) on: sizes checked against the memory budget and,
// for a plain file, against its size, before anything is allocated; the checksum after. Values are
// returned in V whatever type the cache stores (double read as float: range-checked).
template <class V = double>
BasicCsr<V> read_binary(ByteSource& src, const ReadOptions& opt, bool* generated);

// A plain binary cache's sizes and where its sections start, its header checked as read_binary
// checks it (the memory budget aside: each rank reads a part); nullopt for anything else (gzip, a
// pipe, Matrix Market). Complex caches refused.
struct BinaryLayout {
  index_t rows = 0, cols = 0;
  offset_t nnz = 0;
  Field field = Field::Real;
  Symmetry symmetry = Symmetry::General;
  std::uint32_t value_bytes = 8;
  std::uint64_t row_ptr_at = 0, col_at = 0, val_at = 0;
};
std::optional<BinaryLayout> binary_layout(const std::string& path);
// Its row offsets (rows + 1), and rows [r0, r1) alone (offsets from 0, global columns, values in
// double), read with pread: each rank of a distributed read takes its own. The checksum covers the
// whole file and is not checked here; each part's structure is.
std::vector<offset_t> read_binary_row_ptr(const std::string& path, const BinaryLayout& l);
Csr read_binary_rows(const std::string& path, const BinaryLayout& l, index_t r0, index_t r1);

// 64-bit checksum of a byte range, parallel over fixed-size blocks (deterministic whatever the
// thread count): a 4-lane multiply/rotate mix per block, block digests combined in order.
std::uint64_t checksum(const void* data, std::size_t bytes);
// Reads `bytes` of src into dst and returns their checksum: from memory (a mapped file) in
// parallel, each block digested right after its copy while it is in cache; otherwise read, then
// digested. ParseError "<what>: the file ended ..." when the source is shorter.
std::uint64_t copy_and_checksum(ByteSource& src, void* dst, std::size_t bytes, const char* what);

}  // namespace spmv::io::detail
