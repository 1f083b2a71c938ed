#pragma once
/// @file
/// Basic types shared by every part of the library.
#include <cstdint>
#include <stdexcept>
#include <string>

namespace spmv {

/// Row and column indices are 32-bit (every SuiteSparse matrix fits); anything that counts
/// nonzeros, padded entries or bytes is 64-bit, because those exceed 2^31 on real matrices.
using index_t = std::int32_t;
using offset_t = std::int64_t;

enum class Field { Real, Integer, Pattern, Complex };
enum class Backend { Serial, Omp, Cuda };
enum class Layout { RowMajor, ColMajor };  ///< of dense multivectors X (cols x k) and Y (rows x k)
enum class Symmetry { General, Symmetric, SkewSymmetric, Hermitian };

const char* to_string(Field f);
const char* to_string(Symmetry s);

/// Base of every error the library throws on purpose; the CLI maps it to exit status 1.
struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Malformed input: the message is "file:line: reason".
struct ParseError : Error {
  ParseError(const std::string& file, std::int64_t line, const std::string& reason);
  std::string file;
  std::int64_t line;
  std::string reason;
};

/// A request the library refuses: complex values on a real-only kernel, a format whose memory
/// would exceed the budget, a kernel on a backend that is not built, ...
struct Unsupported : Error {
  using Error::Error;
};

}  // namespace spmv
