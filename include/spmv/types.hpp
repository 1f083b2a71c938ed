#pragma once
/// @file
/// Basic types shared by every part of the library.
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

namespace spmv {

/// Row and column indices are 32-bit (every SuiteSparse matrix fits); anything that counts
/// nonzeros, padded entries or bytes is 64-bit, because those exceed 2^31 on real matrices.
using index_t = std::int32_t;
using offset_t = std::int64_t;

enum class Field { Real, Integer, Pattern, Complex };
enum class Backend { Serial, Omp, Cuda };
enum class Layout { RowMajor, ColMajor };  ///< of dense multivectors X (cols x k) and Y (rows x k)
enum class Symmetry { General, Symmetric, SkewSymmetric, Hermitian };
/// What a plan multiplies by: A, or its transpose A^T (y = alpha A^T x + beta y; x of A's rows, y of
/// its columns).
enum class Operation { NoTranspose, Transpose };

/// A symmetric renumbering of a square matrix's rows and columns that a plan makes once and
/// multiplies in (PlanOptions::reorder): none, or reverse Cuthill-McKee (a band around the
/// diagonal: x's entries a row reads lie close together).
enum class Reorder { None, Rcm, Auto };

/// The arithmetic of a product: double (values, x, y and sums in double), single (all in float:
/// 8 bytes a nonzero instead of 12) or mixed (float matrix values; x, y and the sums in double, for
/// iterative solvers).
enum class Precision { Double, Single, Mixed };

/// The C++ types of a precision: the matrix's values (Value) and x, y and the sums (Vector).
template <Precision P>
struct PrecisionTypes {
  using Value = double;
  using Vector = double;
};
template <>
struct PrecisionTypes<Precision::Single> {
  using Value = float;
  using Vector = float;
};
template <>
struct PrecisionTypes<Precision::Mixed> {
  using Value = float;
  using Vector = double;
};
/// Bytes of one matrix value and of one element of x or y.
constexpr int value_bytes(Precision p) { return p == Precision::Double ? 8 : 4; }
constexpr int vector_bytes(Precision p) { return p == Precision::Single ? 4 : 8; }

const char* to_string(Field f);
const char* to_string(Symmetry s);
const char* to_string(Precision p);
const char* to_string(Operation op);  ///< "n", "t"
/// "n" (or "none"), "t" (or "transpose"); throws Unsupported on anything else.
Operation parse_operation(std::string_view s);
const char* to_string(Reorder r);           ///< "none", "rcm", "auto"
Reorder parse_reorder(std::string_view s);  ///< throws Unsupported on an unknown name
/// "double", "single" (or "float"), "mixed"; throws Unsupported on anything else.
Precision parse_precision(std::string_view s);

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
