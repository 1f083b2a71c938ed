#pragma once
/// @file
/// Matrix Market and binary-cache input/output. Errors are ParseError("file:line: reason").
#include <spmv/matrix.hpp>

#include <string>
#include <vector>

namespace spmv::io {

struct ReadOptions {
  int threads = 0;  ///< 0: all available hardware threads for large files
};

/// Reads .mtx, .mtx.gz (libdeflate) or a binary cache (recognised by its magic number, whatever the
/// name). Symmetric/hermitian files are expanded (diagonal never doubled), skew-symmetric ones
/// mirrored with the sign flipped; pattern entries get 1.0; duplicates are kept in the COO and
/// summed by coo_to_csr. Blank lines and `%` comment lines are tolerated anywhere, also inside
/// the data; symmetric files must not store both (i,j) and (j,i). Large files parse in parallel.
Coo read_matrix(const std::string& path, const ReadOptions& opt = {});
/// Same, from text already in memory; `name` is used in error messages.
Coo parse_matrix_market(std::string_view text, const std::string& name, const ReadOptions& opt = {});

/// Coordinate writer (general symmetry, 17 significant digits). `generated`: what produced a
/// synthetic matrix (see generated_description); empty for real data.
void write_matrix_market(const std::string& path, const CsrView& a, const std::string& generated = "");

/// Dense vectors as Matrix Market `array real general` with one column (or k columns).
std::vector<double> read_dense_vector(const std::string& path);
void write_dense_vector(const std::string& path, const std::vector<double>& v);

/// Binary cache: magic, version, sizes, payload and a checksum; loads at disk speed. `generated`
/// marks a synthetic matrix (a flag in the header).
void write_binary(const std::string& path, const CsrView& a, bool generated = false);
Csr read_binary(const std::string& path);
bool is_binary_cache(const std::string& path);

/// Whether a file holds a matrix made by the generator, as the file itself records it: the
/// description from a "% spmv-generated: ..." comment line of a Matrix Market header, or
/// "spmv-generated" for a flagged binary cache; "" for anything else (a real matrix). Benchmarks of
/// files use it so that a structure-alike is never reported as a real matrix.
std::string generated_description(const std::string& path);

/// Convenience: read any supported file straight to CSR.
Csr load_csr(const std::string& path, const ReadOptions& opt = {});

}  // namespace spmv::io
