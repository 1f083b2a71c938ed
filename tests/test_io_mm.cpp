// Matrix Market reader on hand-written files (tests/data/mm): every header combination gives the
// exact expanded matrix, every malformed file the exact "file:line: reason".
#include <gtest/gtest.h>
#include <spmv/io.hpp>

#include <algorithm>
#include <cmath>
#include <string>
#include <tuple>
#include <vector>

using namespace spmv;

namespace {

const std::string kDir = std::string(SPMV_TEST_DATA) + "/mm";

// One entry, 1-based as in the files.
struct E {
  int r, c;
  double v, im = 0.0;
  auto key() const { return std::tie(r, c, v, im); }
  bool operator<(const E& o) const { return key() < o.key(); }
  bool operator==(const E& o) const { return key() == o.key(); }
};

std::ostream& operator<<(std::ostream& os, const E& e) {
  return os << "(" << e.r << "," << e.c << ": " << e.v << (e.im != 0 ? " + i*" + std::to_string(e.im) : "") << ")";
}

std::vector<E> entries(const Coo& a) {
  std::vector<E> v;
  for (offset_t e = 0; e < a.nnz(); ++e)
    v.push_back({a.row[e] + 1, a.col[e] + 1, a.val[e], a.is_complex() ? a.imag[e] : 0.0});
  std::sort(v.begin(), v.end());
  return v;
}

void expect_matrix(const std::string& file, index_t rows, index_t cols, Field field, Symmetry sym,
                   std::vector<E> expected) {
  SCOPED_TRACE(file);
  const Coo a = io::read_matrix(kDir + "/" + file);
  EXPECT_EQ(a.rows, rows);
  EXPECT_EQ(a.cols, cols);
  EXPECT_EQ(a.field, field);
  EXPECT_EQ(a.symmetry, sym);
  EXPECT_EQ(a.imag.size(), field == Field::Complex ? a.row.size() : 0u);
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(entries(a), expected);
}

std::string error_of(const std::string& path) {
  try {
    io::read_matrix(path);
  } catch (const ParseError& e) {
    return e.what();
  }
  return "no error";
}

void expect_error(const std::string& file, const std::string& line_and_reason) {
  const std::string path = kDir + "/" + file;
  EXPECT_EQ(error_of(path), path + ":" + line_and_reason) << file;
}

constexpr auto R = Field::Real, I = Field::Integer, P = Field::Pattern, C = Field::Complex;
constexpr auto G = Symmetry::General, S = Symmetry::Symmetric, K = Symmetry::SkewSymmetric, H = Symmetry::Hermitian;

}  // namespace

TEST(MatrixMarketRead, CoordinateReal) {
  expect_matrix("coord_real_general.mtx", 3, 4, R, G,
                {{1, 1, 1.5}, {2, 3, -2.25}, {3, 4, 1000}, {1, 4, 0.0}, {3, 1, 7}});
  expect_matrix("coord_real_symmetric.mtx", 3, 3, R, S,
                {{1, 1, 4}, {2, 1, -1}, {1, 2, -1}, {3, 1, 2.5}, {1, 3, 2.5}, {3, 3, 6}});
  // The explicit zero on the diagonal is kept (as a stored entry) and not mirrored.
  expect_matrix("coord_real_skew.mtx", 3, 3, R, K, {{2, 1, 1.5}, {1, 2, -1.5}, {3, 2, -2}, {2, 3, 2}, {1, 1, 0}});
}

TEST(MatrixMarketRead, CoordinateInteger) {
  expect_matrix("coord_integer_general.mtx", 2, 3, I, G, {{1, 1, 7}, {2, 3, -12}, {1, 2, 3}});
  expect_matrix("coord_integer_symmetric.mtx", 2, 2, I, S, {{1, 1, 5}, {2, 1, -3}, {1, 2, -3}});
  expect_matrix("coord_integer_skew.mtx", 3, 3, I, K, {{2, 1, 4}, {1, 2, -4}, {3, 1, -9}, {1, 3, 9}});
}

TEST(MatrixMarketRead, CoordinatePattern) {
  expect_matrix("coord_pattern_general.mtx", 3, 2, P, G, {{1, 1, 1}, {2, 2, 1}, {3, 1, 1}});
  expect_matrix("coord_pattern_symmetric.mtx", 3, 3, P, S, {{1, 1, 1}, {3, 1, 1}, {1, 3, 1}, {3, 2, 1}, {2, 3, 1}});
}

TEST(MatrixMarketRead, CoordinateComplex) {
  expect_matrix("coord_complex_general.mtx", 2, 2, C, G, {{1, 1, 1, 2}, {2, 1, -3.5, 0.5}});
  expect_matrix("coord_complex_symmetric.mtx", 2, 2, C, S, {{1, 1, 1, -1}, {2, 1, 2, 3}, {1, 2, 2, 3}});
  expect_matrix("coord_complex_skew.mtx", 2, 2, C, K, {{2, 1, 2, 3}, {1, 2, -2, -3}});
  // Hermitian mirrors the conjugate.
  expect_matrix("coord_complex_hermitian.mtx", 2, 2, C, H, {{1, 1, 4, 0}, {2, 1, 2, 3}, {1, 2, 2, -3}});
}

TEST(MatrixMarketRead, SymmetricUpperOrMixedTriangles) {
  expect_matrix("coord_symmetric_upper.mtx", 3, 3, R, S, {{1, 2, 5}, {2, 1, 5}, {1, 3, 6}, {3, 1, 6}, {2, 2, 1}});
  expect_matrix("coord_symmetric_mixed.mtx", 3, 3, R, S, {{2, 1, 5}, {1, 2, 5}, {1, 3, 6}, {3, 1, 6}, {3, 3, 1}});
}

TEST(MatrixMarketRead, DuplicatesKeptInCooSummedInCsrExplicitZeroKept) {
  expect_matrix("coord_duplicates.mtx", 2, 2, R, G, {{1, 1, 1}, {1, 1, 2}, {2, 2, 0}, {1, 1, 4}});
  const Csr a = io::load_csr(kDir + "/coord_duplicates.mtx");
  ASSERT_EQ(a.nnz(), 2);
  EXPECT_EQ(a.row_ptr, (std::vector<offset_t>{0, 1, 2}));
  EXPECT_EQ(a.col, (std::vector<index_t>{0, 1}));
  EXPECT_EQ(a.val, (std::vector<double>{7, 0}));
}

TEST(MatrixMarketRead, EmptyMatrix) { expect_matrix("coord_empty.mtx", 0, 0, R, G, {}); }

TEST(MatrixMarketRead, ArrayReal) {
  expect_matrix("array_real_general.mtx", 3, 2, R, G,
                {{1, 1, 1}, {2, 1, 2}, {3, 1, 0}, {1, 2, 4}, {2, 2, 5}, {3, 2, 6}});
  expect_matrix("array_real_symmetric.mtx", 3, 3, R, S,
                {{1, 1, 1}, {2, 1, 2}, {3, 1, 3}, {2, 2, 4}, {3, 2, 5}, {3, 3, 6}, {1, 2, 2}, {1, 3, 3}, {2, 3, 5}});
  // Skew arrays list the entries below the diagonal only.
  expect_matrix("array_real_skew.mtx", 3, 3, R, K,
                {{2, 1, 1}, {3, 1, 2}, {3, 2, 3}, {1, 2, -1}, {1, 3, -2}, {2, 3, -3}});
}

TEST(MatrixMarketRead, ArrayInteger) {
  expect_matrix("array_integer_general.mtx", 2, 2, I, G, {{1, 1, 1}, {2, 1, -2}, {1, 2, 3}, {2, 2, 0}});
  expect_matrix("array_integer_symmetric.mtx", 2, 2, I, S, {{1, 1, 1}, {2, 1, 2}, {2, 2, 3}, {1, 2, 2}});
  expect_matrix("array_integer_skew.mtx", 2, 2, I, K, {{2, 1, 5}, {1, 2, -5}});
}

TEST(MatrixMarketRead, ArrayComplex) {
  expect_matrix("array_complex_general.mtx", 2, 1, C, G, {{1, 1, 1, 2}, {2, 1, 3, 4}});
  expect_matrix("array_complex_symmetric.mtx", 2, 2, C, S, {{1, 1, 1, 1}, {2, 1, 2, 3}, {2, 2, 4, 0}, {1, 2, 2, 3}});
  expect_matrix("array_complex_skew.mtx", 2, 2, C, K, {{2, 1, 2, 3}, {1, 2, -2, -3}});
  expect_matrix("array_complex_hermitian.mtx", 2, 2, C, H, {{1, 1, 1, 0}, {2, 1, 2, 3}, {2, 2, 4, 0}, {1, 2, 2, -3}});
}

// Leading spaces before a lower-case banner, CRLF, tabs, comments and blank lines before and
// inside the data, trailing blanks, no final newline, and the number spellings real files use.
TEST(MatrixMarketRead, ToleratesWhatRealFilesContain) {
  const Coo a = io::read_matrix(kDir + "/tolerant.mtx");
  EXPECT_EQ(a.rows, 4);
  EXPECT_EQ(a.cols, 4);
  EXPECT_EQ(a.field, R);
  ASSERT_EQ(a.nnz(), 9);
  const std::vector<std::tuple<int, int, double>> want = {{0, 0, 1.0},      {1, 1, -0.5e-3},   {2, 2, 100.0},
                                                          {3, 3, INFINITY}, {0, 1, -INFINITY}, {0, 2, NAN},
                                                          {1, 0, 2.0},      {2, 0, 1e-320},    {3, 0, 0.25}};
  for (std::size_t e = 0; e < want.size(); ++e) {  // file order is kept
    SCOPED_TRACE(e);
    EXPECT_EQ(a.row[e], std::get<0>(want[e]));
    EXPECT_EQ(a.col[e], std::get<1>(want[e]));
    if (std::isnan(std::get<2>(want[e])))
      EXPECT_TRUE(std::isnan(a.val[e]));
    else
      EXPECT_EQ(a.val[e], std::get<2>(want[e]));
  }
}

TEST(MatrixMarketRead, MalformedBanner) {
  expect_error("bad_empty.mtx", " empty file: no %%MatrixMarket banner");
  expect_error("bad_no_banner.mtx",
               "1: missing banner: the first line must be '%%MatrixMarket matrix <format> <field> <symmetry>'");
  expect_error("bad_banner_object.mtx", "1: unknown object 'vector' in the banner (expected 'matrix')");
  expect_error("bad_banner_format.mtx", "1: unknown format 'sparse' in the banner (expected 'coordinate' or 'array')");
  expect_error("bad_banner_field.mtx",
               "1: unknown field 'float' in the banner (expected 'real', 'integer', 'pattern' or 'complex')");
  expect_error("bad_banner_symmetry.mtx",
               "1: unknown symmetry 'symmetrical' in the banner (expected 'general', "
               "'symmetric', 'skew-symmetric' or 'hermitian')");
  expect_error("bad_banner_missing_symmetry.mtx",
               "1: banner lacks the symmetry (expected 'general', 'symmetric', 'skew-symmetric' or 'hermitian')");
  expect_error("bad_banner_extra_word.mtx", "1: unexpected word 'extra' after the symmetry in the banner");
  expect_error("bad_hermitian_real.mtx", "1: hermitian symmetry needs the complex field, not real");
  expect_error("bad_array_pattern.mtx", "1: the pattern field is not valid with the array format");
  expect_error("bad_skew_pattern.mtx", "1: skew-symmetric symmetry is not valid with the pattern field");
}

TEST(MatrixMarketRead, MalformedSizeLine) {
  expect_error("bad_missing_size_line.mtx", "2: missing size line: the file ends before it");
  expect_error("bad_size_words.mtx", "3: bad size line: expected 'rows cols nnz', found '3 3'");
  expect_error("bad_array_size_words.mtx", "2: bad size line: expected 'rows cols', found '3 1 3'");
  expect_error("bad_size_not_integer.mtx", "2: bad size line: cols 'x' is not an integer");
  expect_error("bad_size_negative.mtx", "2: bad size line: negative rows -3");
  expect_error("bad_size_rows_overflow.mtx",
               "2: bad size line: rows 3000000000 exceeds the 32-bit index limit 2147483647");
  expect_error("bad_size_int64_overflow.mtx",
               "2: bad size line: nnz '99999999999999999999' overflows a 64-bit integer");
  expect_error("bad_nnz_too_large.mtx",
               "2: bad size line: nnz 5 exceeds 4, the most entries a 2 x 2 general matrix can store");
  expect_error("bad_nnz_symmetric_too_large.mtx",
               "2: bad size line: nnz 7 exceeds 6, the most entries a 3 x 3 symmetric matrix can store");
  expect_error("bad_symmetric_not_square.mtx", "2: a symmetric matrix must be square, this one is 3 x 4");
}

TEST(MatrixMarketRead, MalformedEntries) {
  expect_error("bad_index_zero.mtx", "4: row index 0 out of range 1..3");
  expect_error("bad_col_index_beyond.mtx", "4: column index 5 out of range 1..4");
  expect_error("bad_index_huge.mtx", "3: row index '99999999999999999999' out of range 1..3");
  expect_error("bad_index_not_integer.mtx", "4: row index '1.5' is not an integer");
  expect_error("bad_value_not_number.mtx", "4: value 'abc' is not a number");
  expect_error("bad_value_suffix.mtx", "4: value '1.0x' is not a number");
  expect_error("bad_missing_value.mtx", "4: missing value");
  expect_error("bad_missing_column.mtx", "4: missing column index");
  expect_error("bad_missing_imag.mtx", "4: missing imaginary part");
  expect_error("bad_integer_value.mtx", "4: value '1.5' is not an integer (the field is integer)");
  expect_error("bad_trailing_garbage.mtx", "4: unexpected '7' after the entry");
  expect_error("bad_pattern_with_value.mtx", "4: unexpected '1.0' after the entry");
  expect_error("bad_skew_diagonal.mtx", "4: nonzero diagonal entry (2,2) in a skew-symmetric matrix");
  // (It used to be read, and refused only when written back: naming the output file.)
  expect_error("bad_hermitian_diagonal.mtx",
               "5: diagonal entry (3,3) of a hermitian matrix has imaginary part 5: it must be real");
  expect_error("bad_symmetric_both_triangles.mtx",
               "6: entry (1,2) mirrors the entry (2,1) on line 3: a symmetric file must store each off-diagonal "
               "pair once");
}

TEST(MatrixMarketRead, WrongEntryCount) {
  expect_error("bad_truncated.mtx", "5: unexpected end of file: 3 of 4 entries");
  expect_error("bad_too_many.mtx", "6: too many entries: the size line says 2");
  expect_error("bad_array_truncated.mtx", "5: unexpected end of file: 3 of 4 entries");
  expect_error("bad_array_too_many.mtx", "6: too many entries: the size line says 3");
}

TEST(MatrixMarketRead, MissingFile) {
  const std::string path = kDir + "/no_such_file.mtx";
  EXPECT_EQ(error_of(path), path + ": cannot open: No such file or directory");
  EXPECT_THROW(io::load_csr(path), ParseError);
}

TEST(MatrixMarketRead, InMemoryTextUsesTheGivenName) {
  const Coo a = io::parse_matrix_market("%%MatrixMarket matrix coordinate real general\n2 2 1\n2 1 3.5\n", "mem");
  EXPECT_EQ(entries(a), (std::vector<E>{{2, 1, 3.5}}));
  try {
    io::parse_matrix_market("%%MatrixMarket matrix coordinate real general\n2 2 1\n2 3 3.5\n", "mem");
    FAIL() << "no error";
  } catch (const ParseError& e) {
    EXPECT_EQ(std::string(e.what()), "mem:3: column index 3 out of range 1..2");
    EXPECT_EQ(e.file, "mem");
    EXPECT_EQ(e.line, 3);
    EXPECT_EQ(e.reason, "column index 3 out of range 1..2");
  }
}

TEST(DenseVector, ReadsArrayAndCoordinate) {
  EXPECT_EQ(io::read_dense_vector(kDir + "/vector_array.mtx"), (std::vector<double>{1.5, -2, 300}));
  EXPECT_EQ(io::read_dense_vector(kDir + "/vector_coordinate.mtx"), (std::vector<double>{0, 5, 0, -1}));
  // n x k arrays come back column-major, as stored.
  EXPECT_EQ(io::read_dense_vector(kDir + "/array_integer_general.mtx"), (std::vector<double>{1, -2, 3, 0}));
  EXPECT_THROW(io::read_dense_vector(kDir + "/array_complex_general.mtx"), ParseError);
  EXPECT_THROW(io::read_dense_vector(kDir + "/array_real_symmetric.mtx"), ParseError);
}
