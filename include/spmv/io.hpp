#pragma once
/// @file
/// Matrix Market and binary-cache input/output. Errors are ParseError("file:line: reason").
#include <spmv/matrix.hpp>

#include <string>
#include <vector>

namespace spmv::io {

struct ReadOptions {
  int threads = 0;  ///< 0: all available hardware threads for large files
  /// The most memory, in bytes, that the sizes in a file's header may ask for; 0: half of the
  /// machine's physical memory (input_memory_budget). Checked at the size line, before anything
  /// is allocated: "file:line: a R x C matrix with N entries needs X GiB (...); the memory budget is Y GiB".
  double memory_budget_bytes = 0;
  /// What the caller will allocate per row and per column beside the matrix (a command's x and y),
  /// counted in that check so that a hopeless file is refused before it is read; `extra_what`
  /// names it in the message.
  double extra_bytes_per_row = 0, extra_bytes_per_col = 0;
  std::string extra_what = "vectors";
};

/// Reads .mtx, .mtx.gz (ISA-L, streaming) or a binary cache (recognised by its magic number,
/// whatever the name, also gzipped). The path is opened once and read in order, so a FIFO or
/// /dev/stdin works, and memory is the matrix plus a bounded buffer, whatever the file's size.
/// Symmetric/hermitian files are expanded (diagonal never doubled), skew-symmetric ones mirrored
/// with the sign flipped; pattern entries get 1.0; duplicates are kept in the COO and summed by
/// coo_to_csr, except in a file that repeats a few positions many times (a sample of the entries
/// read shows at most a quarter distinct): there they are summed while reading, in file order
/// (float: in double, rounded once), so memory follows the distinct positions, not the lines, and
/// coo_to_csr gives the same matrix. Blank lines and `%` comment lines are tolerated anywhere, also inside the data;
/// symmetric files must not store both (i,j) and (j,i). Large files parse in parallel. Errors are
/// ParseError("file:line: reason"), quoting at most 80 bytes of an offending token.
Coo read_matrix(const std::string& path, const ReadOptions& opt = {});
/// Same, from text already in memory; `name` is used in error messages.
Coo parse_matrix_market(std::string_view text, const std::string& name, const ReadOptions& opt = {});
/// The same in single precision (see load_f32).
CooF32 parse_matrix_market_f32(std::string_view text, const std::string& name, const ReadOptions& opt = {});

/// A matrix read from a file, and what the file says made it. `matrix.field` and
/// `matrix.symmetry` are the file's own (a symmetric file's matrix is stored expanded, with
/// symmetry still Symmetric), so write_matrix_market can write it back as the file declared it.
template <class V>
struct BasicLoaded {
  BasicCsr<V> matrix;
  std::string generated;  ///< as generated_description: "" for real data
  /// A Matrix Market file's `%` comment lines between the banner and the size line, in order,
  /// trailing blanks cut, the "% spmv-generated" line left out (that is `generated`). At most 64
  /// KiB of them are kept; when there were more, the last line says how many were not kept
  /// ("% (spmv: N more comment lines of B bytes not kept: ...)"). Empty for a binary cache.
  std::vector<std::string> comments;
};
using LoadedMatrix = BasicLoaded<double>;
using LoadedMatrixF32 = BasicLoaded<float>;
/// Reads any supported file straight to CSR with one open of the path, and its provenance.
LoadedMatrix load(const std::string& path, const ReadOptions& opt = {});
/// The same with the values in float, for plans in single or mixed precision: each value is parsed
/// and rounded once, straight into float arrays (never a double copy of the matrix; 12 bytes an
/// entry while reading instead of 16), so the memory budget goes further. A value that would round
/// to infinity is refused with its file:line ("value 1e+300 does not fit in single precision").
/// Each stored entry is rounded as it is read; duplicates of a position are then summed in double
/// and the sum rounded once (a sum past float's range refused naming row and column; by the reader,
/// with the line where the position first occurs, in a file whose repeats it sums as it reads). So a file
/// whose duplicates cancel (1 1 16777217 and 1 1 -16777216: 0 here, 1 from load + to_float) can
/// differ from reading in double and rounding the sums; load() and a single plan round those.
/// Complex files are read in double only. A binary cache gives its values in float whatever it stores (a double
/// cache is converted after its checksum, holding the double values meanwhile).
LoadedMatrixF32 load_f32(const std::string& path, const ReadOptions& opt = {});

/// How write_matrix_market writes a matrix.
struct WriteOptions {
  /// Write a symmetric, skew-symmetric or hermitian matrix as general, both triangles stored.
  /// false: the banner keeps the matrix's symmetry and the file stores the lower triangle only
  /// (skew-symmetric: strictly below the diagonal), as Matrix Market requires.
  bool expand = false;
  /// What produced a synthetic matrix, written as "% spmv-generated: ..." right after the banner
  /// (see generated_description); "" for real data.
  std::string generated;
  /// Comment lines written after the banner (e.g. BasicLoaded::comments): each gets a line of its
  /// own (a '\n' inside one splits it), "% " put before one that does not start with '%'. Lines
  /// the writer writes itself ("% spmv-generated: ...", "% written by spmv...") are left out.
  std::vector<std::string> comments;
};

/// Coordinate writer, values with 17 significant digits (float values with their own shortest
/// round-trip digits), so they read back bit-identical. The banner keeps the matrix's field
/// (pattern: no values; integer: integers), except that a pattern matrix whose values are not all 1
/// and an integer one with values that are not 64-bit integers are written as real. Without
/// `opt.expand`, a symmetric / skew-symmetric / hermitian matrix keeps its symmetry and its lower
/// triangle is written, after checking that the upper one mirrors it exactly (a, -a, conj(a); a
/// skew diagonal 0, a hermitian one real): otherwise Error "path: cannot write the matrix as
/// symmetric: the entry (i,j) = x but its mirror (j,i) = y; ..." and the file is not touched.
/// A path ending in ".gz" is written gzip-compressed (one member, ISA-L level 1), through a
/// bounded buffer whatever the matrix's size.
void write_matrix_market(const std::string& path, const CsrView& a, const WriteOptions& opt);
/// The earlier form: always general (both triangles), field kept, `generated` as in WriteOptions.
void write_matrix_market(const std::string& path, const CsrView& a, const std::string& generated = "");

/// Dense vectors as Matrix Market `array real general` with one column (or k columns). The writer
/// gzip-compresses a path ending in ".gz", like write_matrix_market.
std::vector<double> read_dense_vector(const std::string& path, const ReadOptions& opt = {});
void write_dense_vector(const std::string& path, const std::vector<double>& v);

/// A dense matrix such as X or Y of k columns: rows x cols values in column-major order, the order
/// of a Matrix Market array (a coordinate file is summed into one).
struct DenseMatrix {
  index_t rows = 0, cols = 0;
  std::vector<double> values;
};
DenseMatrix read_dense_matrix(const std::string& path, const ReadOptions& opt = {});
/// Writes `values` (column-major, rows x cols) as `array real general`; ".gz" as above.
void write_dense_matrix(const std::string& path, const std::vector<double>& values, index_t rows, index_t cols);

/// Binary cache: magic, version, sizes, payload and a checksum; loads at disk speed. `generated`
/// marks a synthetic matrix (a flag in the header). The values are stored in the view's type:
/// double, or float for a view over val_f32 (CsrF32), half the values' bytes. A path ending in
/// ".gz" is written gzip-compressed (the readers recognise a gzipped cache by its content).
void write_binary(const std::string& path, const CsrView& a, bool generated = false);
Csr read_binary(const std::string& path, const ReadOptions& opt = {});
/// Whether the file starts with the binary cache's magic (opens and reads it: not for a FIFO that
/// is read afterwards; load() tells by itself).
bool is_binary_cache(const std::string& path);

/// Whether a file holds a matrix made by the generator, as the file itself records it: the
/// description from a "% spmv-generated: ..." comment line of a Matrix Market header, or
/// "spmv-generated" for a flagged binary cache; "" for anything else (a real matrix). Benchmarks of
/// files use it so that a structure-alike is never reported as a real matrix.
std::string generated_description(const std::string& path);

/// Convenience: load(path, opt).matrix.
Csr load_csr(const std::string& path, const ReadOptions& opt = {});

}  // namespace spmv::io
